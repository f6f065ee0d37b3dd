"""Cases for losses (kernels/loss.py): softmax_with_cross_entropy, cross_entropy2."""
import numpy as np
import pytest

from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.autodiff.gradcheck import run_op

from . import OpCase

rng = np.random.default_rng(11)
N, C = 5, 4
LOGITS = rng.standard_normal((N, C))
LABEL = rng.integers(0, C, (N, 1)).astype(np.int64)
LABEL_IGNORED = LABEL.copy()
LABEL_IGNORED[[1, 3]] = -100
SOFT = rng.uniform(0.1, 1.0, (N, C))
SOFT /= SOFT.sum(axis=1, keepdims=True)  # Paddle's gradient assumes rows summing to 1
PROBS = rng.uniform(0.2, 1.0, (N, C))
PROBS /= PROBS.sum(axis=1, keepdims=True)
LOGITS_3D = rng.standard_normal((2, C, 3))  # classes on axis 1
LABEL_3D = rng.integers(0, C, (2, 1, 3)).astype(np.int64)


def _log_softmax(x, axis):
    # Paddle clips the max-shifted logits at -64 before exp (phi's ValueClip)
    shifted = np.maximum(x - x.max(axis=axis, keepdims=True), -64.0)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _swce_ref(i, a):
    axis = a.get("axis", -1)
    logits, label = i["Logits"], i["Label"]
    if a.get("use_softmax", True):
        log_probs = _log_softmax(logits, axis)
        probs = np.exp(log_probs)
    else:
        probs, log_probs = logits, np.maximum(np.log(logits), -1e20)  # Paddle: log 0 = -1e20
    if a.get("soft_label", False):
        loss = -(label * log_probs).sum(axis=axis, keepdims=True)
    else:
        ignore = a.get("ignore_index", -100)
        safe = np.where(label == ignore, 0, label)
        loss = -np.take_along_axis(log_probs, safe, axis=axis)
        loss[label == ignore] = 0.0
    return {"Softmax": probs, "Loss": loss}


def _ce2_ref(i, a):
    x, label = i["X"], i["Label"]
    ignore = a.get("ignore_index", -100)
    safe = np.where(label == ignore, 0, label)
    match = np.take_along_axis(x, safe, axis=-1)
    match[label == ignore] = 0.0
    y = -np.log(np.where(label == ignore, 1.0, match))
    return {"Y": y, "MatchX": match, "XShape": np.empty((0,) + x.shape)}


def _check_big_logits_stable(outs, i, a):
    # 1000 above the rest would overflow exp() without the log-sum-exp shift.
    assert np.isfinite(outs["Loss"]).all() and np.isfinite(outs["Softmax"]).all()


def _check_float32_kept(outs, i, a):
    assert outs["Softmax"].dtype == np.float32 and outs["Loss"].dtype == np.float32


def _check_bad_labels_raise(outs, i, a):
    for bad in (C, -1):
        label = i["Label"].copy()
        label[2, 0] = bad
        with pytest.raises(ExecutionError, match=f"Label holds class {bad}"):
            run_op("softmax_with_cross_entropy", dict(i, Label=label), a)


LOSS_ONLY = ("Loss",)  # Paddle's grad op reads Loss@GRAD only, not Softmax@GRAD

CASES = [
    OpCase("softmax_with_cross_entropy", {"Logits": LOGITS, "Label": LABEL}, _swce_ref,
           grad_outputs=LOSS_ONLY, check=_check_bad_labels_raise, name="hard"),
    OpCase("softmax_with_cross_entropy", {"Logits": LOGITS, "Label": LABEL_IGNORED}, _swce_ref,
           grad_outputs=LOSS_ONLY, name="ignore_index"),
    OpCase("softmax_with_cross_entropy", {"Logits": LOGITS, "Label": LABEL}, _swce_ref,
           attrs={"ignore_index": int(LABEL[0, 0])}, grad_outputs=LOSS_ONLY,
           name="ignore_a_real_class"),
    OpCase("softmax_with_cross_entropy", {"Logits": LOGITS, "Label": SOFT}, _swce_ref,
           attrs={"soft_label": True}, grad_outputs=LOSS_ONLY, name="soft"),
    OpCase("softmax_with_cross_entropy", {"Logits": LOGITS_3D, "Label": LABEL_3D}, _swce_ref,
           attrs={"axis": 1}, grad_outputs=LOSS_ONLY, name="axis1"),
    OpCase("softmax_with_cross_entropy", {"Logits": PROBS, "Label": LABEL_IGNORED}, _swce_ref,
           attrs={"use_softmax": False}, grad_outputs=LOSS_ONLY, name="probs_hard"),
    OpCase("softmax_with_cross_entropy", {"Logits": PROBS, "Label": SOFT}, _swce_ref,
           attrs={"use_softmax": False, "soft_label": True}, grad_outputs=LOSS_ONLY,
           name="probs_soft"),
    OpCase("softmax_with_cross_entropy",
           {"Logits": np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]]),
            "Label": np.array([[2], [1]], np.int64)},
           _swce_ref, check=_check_big_logits_stable, grad=(), name="large_logits"),
    OpCase("softmax_with_cross_entropy",
           {"Logits": LOGITS.astype(np.float32), "Label": LABEL}, _swce_ref,
           check=_check_float32_kept, grad=(), rtol=1e-5, atol=1e-6, name="float32"),
    OpCase("cross_entropy2", {"X": PROBS, "Label": LABEL}, _ce2_ref, name="hard"),
    OpCase("cross_entropy2", {"X": PROBS, "Label": LABEL_IGNORED}, _ce2_ref,
           name="ignore_index"),
]


# Ported from Paddle's test/legacy_test/test_cross_entropy2_op.py (CrossEntropy2OpTest*):
# its configurations (rank, ignore_index, Label with or without the last dim) at smaller
# sizes so the float64 gradient check stays fast; its reference is rewritten here.
def _paddle_ce2_ref(i, a):
    x, label = i["X"], i["Label"]
    flat_label = label.reshape(-1)
    flat_x = x.reshape(-1, x.shape[-1])
    match = np.zeros(flat_label.shape)
    loss = np.zeros(flat_label.shape)
    for row, cls in enumerate(flat_label):
        if cls != a.get("ignore_index", -100):
            match[row] = flat_x[row, cls]
            loss[row] = -np.log(match[row])
    return {"Y": loss.reshape(label.shape), "MatchX": match.reshape(x.shape[:-1] + (1,))}


def _paddle_ce2_case(name, shape, ignore_index, drop_last_dim):
    gen = np.random.default_rng(len(name))
    x = gen.random(shape) + 1
    label_shape = shape[:-1] if drop_last_dim else shape[:-1] + (1,)
    label = gen.integers(0, shape[-1], label_shape).astype(np.int64)
    return OpCase("cross_entropy2", {"X": x, "Label": label}, _paddle_ce2_ref,
                  attrs={"ignore_index": ignore_index}, grad_outputs=("Y",),
                  name=f"paddle_{name}")


CASES += [
    _paddle_ce2_case("Base", (8, 6), -100, False),
    _paddle_ce2_case("Test2", (8, 6), 3, False),
    _paddle_ce2_case("Test2RemoveLastDim", (8, 6), 3, True),
    _paddle_ce2_case("Test3", (2, 3, 4, 5), -100, False),
    _paddle_ce2_case("Test3RemoveLastDim", (2, 3, 4, 5), -100, True),
    _paddle_ce2_case("Test4", (2, 3, 4, 5), 3, False),
]

# A zero probability at the label: Paddle 3.3.1's cross_entropy2 gives 1e20 (TolerableValue).
_ZERO_AT_LABEL = np.array([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]])
CASES.append(OpCase("cross_entropy2", {"X": _ZERO_AT_LABEL, "Label": np.array([[0], [2]])},
                    lambda i, a: {"Y": np.array([[1e20], [-np.log(0.5)]])}, grad=(),
                    name="zero_probability_costs_1e20"))
