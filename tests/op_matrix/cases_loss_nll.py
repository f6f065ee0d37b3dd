"""Cases for the class-index losses (kernels/loss_nll.py): nll_loss, label_smooth and the
v1 cross_entropy op.

The ``paddle_*`` cases port Paddle's test/legacy_test OpTests (test_nll_loss.py,
test_label_smooth_op.py, test_cross_entropy_op.py): their shapes (smaller), attributes and
label kinds; the references are written here with loops, independently of the kernels.

Checked against PaddlePaddle 3.3.1 itself (each case's op appended directly to a legacy
static program, input gradients seeded with random out-gradients): every float64 case
matched Paddle's outputs (Out and Total_weight, Y) and X gradients to rtol 1e-9, the
float32 ones to rtol 2e-5. Paddle's shapes kept: nll_loss gives Out [] and Total_weight []
when reduced, Out [N] / [N, H, W] and Total_weight 0 with reduction 'none'; nll_loss takes
only 2-D and 4-D X; cross_entropy's Y drops the trailing 1 when Label does; label_smooth
computes 1 - epsilon and epsilon / C in float32 (its float64 results carry that rounding).

A Paddle 3.3.1 bug not copied: with reduction 'mean' or 'sum', its CPU nll_loss writes 0 to
Out[i] for every ignored row i although Out has one element, so an ignored row past the
first corrupts the heap (``ignore_index_mean`` aborts Paddle: "free(): invalid next
size"). That case was compared with only row 0 ignored (Paddle then computes the intended
value, as here; matched to rtol 1e-12, mean and sum, with Weight).
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import build_single_op, run_op
from fluidscope.engine.errors import ExecutionError, ShapeError

from . import OpCase


# ---------------------------------------------------------------------- nll_loss
def _nll_ref(i, a):
    x, label, weight = i["X"], i["Label"], i.get("Weight")
    ignore = a.get("ignore_index", -100)
    out = np.zeros(label.shape)
    total = 0.0
    for idx in np.ndindex(label.shape):
        cls = int(label[idx])
        if cls == ignore:
            continue
        w = 1.0 if weight is None else weight[cls]
        total += w
        out[idx] = -w * x[(idx[0], cls) + idx[1:]]
    reduction = a.get("reduction", "mean")
    if reduction == "none":
        return {"Out": out, "Total_weight": np.array(0.0)}
    value = out.sum()
    if reduction == "mean" and total != 0:
        value /= total
    return {"Out": np.array(value), "Total_weight": np.array(total)}


def _nll_case(name, x_shape, reduction, weight=False, ignore=None, dtype=np.float64, **kw):
    gen = np.random.default_rng(len(name) + 700)
    x = gen.uniform(0.1, 0.8, x_shape)
    label = gen.integers(0, x_shape[1], (x_shape[0],) + tuple(x_shape[2:])).astype(np.int64)
    attrs = {"reduction": reduction}
    if ignore is not None:
        label.reshape(-1)[::3] = ignore
        attrs["ignore_index"] = ignore
    inputs = {"X": x.astype(dtype), "Label": label}
    if weight:
        inputs["Weight"] = gen.uniform(0.1, 0.8, x_shape[1]).astype(dtype)
    return OpCase("nll_loss", inputs, _nll_ref, attrs=attrs, grad_outputs=("Out",),
                  name=name, **kw)


def _check_nll_errors(outs, i, a):
    bad = i["Label"].copy()
    bad[0] = i["X"].shape[1]
    with pytest.raises(ExecutionError, match="nll_loss: slot Label holds class"):
        run_op("nll_loss", dict(i, Label=bad), a)
    with pytest.raises(ShapeError, match="nll_loss: slot X"):
        build_single_op("nll_loss", {"X": np.ones((2, 3, 4)), "Label": np.zeros((2, 4), np.int64)},
                        {})
    with pytest.raises(ShapeError, match="nll_loss: slot Label"):
        build_single_op("nll_loss", {"X": np.ones((2, 3)), "Label": np.zeros((2, 1), np.int64)},
                        {})


def _check_nll_all_ignored(outs, i, a):
    label = np.full(i["Label"].shape, -100, np.int64)
    got = run_op("nll_loss", dict(i, Label=label), {})
    assert float(got["Out"]) == 0.0 and float(got["Total_weight"]) == 0.0  # Paddle: 0, not nan


CASES = [
    # Paddle's TestNLLLossOp1DWithReduce / 1DNoReduce (10x10) and 2D (N, 3, 5, 5), with and
    # without Weight (its test_check_output_with_weight / test_check_grad use the weight)
    _nll_case("paddle_1DWithReduce", (6, 5), "mean", check=_check_nll_errors),
    _nll_case("paddle_1DWithReduce_weight", (6, 5), "mean", weight=True,
              check=_check_nll_all_ignored),
    _nll_case("paddle_1DNoReduce", (6, 5), "none"),
    _nll_case("paddle_1DNoReduce_weight", (6, 5), "none", weight=True),
    _nll_case("paddle_2DWithReduce", (2, 3, 3, 3), "mean"),
    _nll_case("paddle_2DWithReduce_weight", (2, 3, 3, 3), "mean", weight=True),
    _nll_case("paddle_2DNoReduce", (2, 3, 3, 3), "none"),
    _nll_case("paddle_2DNoReduce_weight", (2, 3, 3, 3), "none", weight=True),
    # TestNLLLoss API tests: sum, ignore_index
    _nll_case("sum_weight", (6, 5), "sum", weight=True),
    _nll_case("2D_sum", (2, 3, 2, 3), "sum"),
    _nll_case("ignore_index_mean", (6, 5), "mean", weight=True, ignore=2),
    _nll_case("ignore_index_none_2D", (2, 3, 2, 3), "none", ignore=1),
    _nll_case("float32", (4, 3), "mean", weight=True, dtype=np.float32, grad=(), rtol=1e-5,
              atol=1e-6),
]


# ------------------------------------------------------------------ label_smooth
def _label_smooth_ref(i, a):
    x, prior = i["X"], i.get("PriorDist")
    eps, classes = a["epsilon"], i["X"].shape[-1]
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        p = 1.0 / classes if prior is None else prior.reshape(-1)[idx[-1]]
        out[idx] = (1 - eps) * x[idx] + eps * p
    return out


def _one_hot(batch, classes, gen):
    label = np.zeros((batch, classes))
    label[np.arange(batch), gen.integers(0, classes, batch)] = 1
    return label


_LS_GEN = np.random.default_rng(800)
_LS_X = _one_hot(6, 4, _LS_GEN)
_LS_PRIOR = _LS_GEN.random((1, 4))

CASES += [
    # Paddle's TestLabelSmoothOp, WithPriorDist, Op3D, WithPriorDist3D (10x12 -> 6x4)
    OpCase("label_smooth", {"X": _LS_X}, _label_smooth_ref, attrs={"epsilon": 0.1},
           name="paddle_TestLabelSmoothOp"),
    OpCase("label_smooth", {"X": _LS_X, "PriorDist": _LS_PRIOR}, _label_smooth_ref,
           attrs={"epsilon": 0.1}, name="paddle_WithPriorDist"),
    OpCase("label_smooth", {"X": _LS_X.reshape(2, 3, 4)}, _label_smooth_ref,
           attrs={"epsilon": 0.1}, name="paddle_Op3D"),
    OpCase("label_smooth", {"X": _LS_X.reshape(2, 3, 4), "PriorDist": _LS_PRIOR},
           _label_smooth_ref, attrs={"epsilon": 0.1}, name="paddle_WithPriorDist3D"),
    OpCase("label_smooth", {"X": _LS_X, "PriorDist": _LS_PRIOR.reshape(4)},
           _label_smooth_ref, attrs={"epsilon": 0.25}, name="prior_1d"),
    OpCase("label_smooth", {"X": _LS_X.astype(np.float32)}, _label_smooth_ref,
           attrs={"epsilon": 0.1}, grad=(), rtol=1e-6, atol=1e-7, name="float32"),
]


# ------------------------------------------------------------- cross_entropy (v1)
def _tolerable_log(p):
    return max(math.log(p), -1e20) if p > 0 else -1e20  # Paddle: log 0 = -1e20


def _ce_ref(i, a):
    x, label = i["X"], i["Label"]
    classes = x.shape[-1]
    rows = x.reshape(-1, classes)
    if a.get("soft_label", False):
        soft = label.reshape(-1, classes)
        y = np.array([-sum(soft[r, c] * _tolerable_log(rows[r, c]) for c in range(classes))
                      for r in range(rows.shape[0])])
        return {"Y": y.reshape(x.shape[:-1] + (1,))}
    ignore = a.get("ignore_index", -100)
    ids = label.reshape(-1)
    y = np.array([0.0 if ids[r] == ignore else -math.log(rows[r, ids[r]])
                  for r in range(rows.shape[0])])
    shape = label.shape if label.ndim == x.ndim - 1 else x.shape[:-1] + (1,)
    return {"Y": y.reshape(shape)}


def _probs(rows, classes, gen):
    p = gen.uniform(0.1, 1.0, (rows, classes))  # Paddle's randomize_probability
    return p / p.sum(axis=1, keepdims=True)


def _ce_case(name, lead, classes, kind, ignore=None, **kw):
    gen = np.random.default_rng(len(name) + 900)
    rows = int(np.prod(lead))
    x = _probs(rows, classes, gen).reshape(tuple(lead) + (classes,))
    attrs = {}
    if kind == "soft":
        soft = gen.uniform(0.1, 1.0, (rows, classes))
        label = (soft / soft.sum(axis=1, keepdims=True)).reshape(x.shape)
        attrs["soft_label"] = True
    elif kind == "onehot":
        label = np.zeros((rows, classes))
        label[np.arange(rows), gen.integers(0, classes, rows)] = 1
        label = label.reshape(x.shape)
        attrs["soft_label"] = True
    else:
        shape = tuple(lead) + ((1,) if kind == "hard" else ())
        label = gen.integers(0, classes, shape).astype(np.int64)
    if ignore is not None:
        attrs["ignore_index"] = ignore
        label.reshape(-1)[::4] = ignore
    return OpCase("cross_entropy", {"X": x, "Label": label}, _ce_ref, attrs=attrs, name=name,
                  **kw)


def _check_ce_bad_label(outs, i, a):
    bad = i["Label"].copy()
    bad[0, 0] = i["X"].shape[-1]
    with pytest.raises(ExecutionError, match="cross_entropy: slot Label holds class"):
        run_op("cross_entropy", dict(i, Label=bad), a)


CASES += [
    # Paddle's TestCrossEntropyOp, RemoveLastDim, Op2 (soft), Op3 (one-hot soft), Op4 (high
    # rank), Op4RemoveLastDim, Op5 (high-rank soft), Op6 (high-rank one-hot), Op7
    # (ignore_index), Op7RemoveLastDim
    _ce_case("paddle_TestCrossEntropyOp", (6,), 5, "hard", check=_check_ce_bad_label),
    _ce_case("paddle_RemoveLastDim", (6,), 5, "flat"),
    _ce_case("paddle_Op2_soft", (3,), 7, "soft"),
    _ce_case("paddle_Op3_onehot_soft", (3,), 6, "onehot"),
    _ce_case("paddle_Op4_high_rank", (3, 2, 2), 4, "hard"),
    _ce_case("paddle_Op4RemoveLastDim", (3, 2, 2), 4, "flat"),
    _ce_case("paddle_Op5_high_rank_soft", (2, 3), 5, "soft"),
    _ce_case("paddle_Op6_high_rank_onehot", (2, 3, 2), 4, "onehot"),
    _ce_case("paddle_Op7_ignore_index", (8,), 5, "hard", ignore=3),
    _ce_case("paddle_Op7RemoveLastDim", (8,), 5, "flat", ignore=3),
    OpCase("cross_entropy", {"X": np.array([[0.0, 1.0], [0.5, 0.5]]),
                             "Label": np.array([[0.0, 1.0], [0.5, 0.5]])},
           _ce_ref, attrs={"soft_label": True}, grad=(), name="soft_zero_probability"),
]
CASES.append(_ce_case("float32", (5,), 4, "hard", grad=(), rtol=1e-6, atol=1e-6))
CASES[-1].inputs["X"] = CASES[-1].inputs["X"].astype(np.float32)


NOT_PORTED = {
    "TestNLLLoss": "paddle.nn.NLLLoss dygraph/static API runs; their configurations "
                   "(1-D/2-D, weight, sum/mean/none) are ported as op cases",
    "TestNLLLossName": "layer name prefix of the Python API",
    "TestNLLLossInvalidArgs": "Python API argument checks (reduction string, X rank); the "
                              "op's rank and label checks are in _check_nll_errors",
    "TestLabelSmoothOpBF16": "bfloat16 on CUDA",
    "TestLabelSmoothFP16OP": "float16 kernel",
    "TestLabelSmoothFP16OPWithPriorDist": "float16 kernel",
    "TestLabelSmoothBF16OPWithPriorDist": "bfloat16 on CUDA",
    "TestLabelSmoothOp3DBF16": "bfloat16 on CUDA",
    "TestLabelSmoothFP16OP3D": "float16 kernel",
    "TestLabelSmoothFP16OPWithPriorDist3D": "float16 kernel",
    "TestLabelSmoothBF16OpWithPriorDist3D": "bfloat16 on CUDA",
    "TestCrossEntropyF16Op*": "float16 on CUDA (create_test_class variants)",
    "TestCrossEntropyOpError": "Python API type/rank errors of paddle.nn.functional.cross_entropy",
}


def _keeps_float32(check):
    """The ``float32`` cases also assert every float output stays float32."""
    def run(outs, i, a):
        for slot, value in outs.items():
            value = np.asarray(value)
            assert value.dtype.kind != "f" or value.dtype == np.float32, f"{slot}: {value.dtype}"
        if check is not None:
            check(outs, i, a)
    return run


for _case in CASES:
    if _case.name == "float32":
        _case.check = _keeps_float32(_case.check)
