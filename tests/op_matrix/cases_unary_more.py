"""Cases for kernels/unary_more.py, ported from Paddle's test_activation_op.py (TestTan,
TestAcos, TestAsin, TestAtan, TestSinh, TestCosh, TestAsinh, TestAcosh, TestAtanh,
TestBRelu / TestHardtanh, TestSTanh, TestSTanhScaleA, TestSTanhScaleB and their _ZeroDim
twins: input ranges and attributes), test_trunc_op.py, test_logit_op.py (TestLogitOp,
TestLogitOpFp32, eps 1e-8 and the default), test_rrelu_op.py (TestRReluOpInference:
is_test forward and gradient; TestRReLUOp: the training draw's properties) and
test_maxout_op.py (TestMaxOutOp, TestMaxOutOpAxis0/1, TestMaxOutOpGroups, TestMaxOutOpFP32:
groups 2 and 3, axis 1, -1, 3). Paddle's [11, 17] inputs are kept
for the float32 forwards; the float64 gradient cases use [3, 5] of the same range.

Checked against PaddlePaddle 3.3.1 (static graph, CPU: every non-random case here appended
with ``block.append_op``, a random out-gradient through ``paddle.static.gradients``):
float64 outputs and gradients match to 3e-15 relative (trunc, brelu, maxout, rrelu with
is_test exactly: FLOAT attributes are used rounded to float32, as Paddle's kernels see
them), float32 outputs to 3e-7 (another libm).
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

NOT_PORTED = {
    "*FP16* / *BF16* / *_Fp16 / TestLogitOpFp16": "float16/bfloat16 (CUDA only)",
    "*Complex64 / *Complex128 (tan, asin, acos, atan, sinh, cosh, ...)": "complex dtypes "
    "are not supported",
    "*API / *Error / TestTruncAPI / TestMaxoutAPI / TestRReluAPI / TestLogitAPI": "python "
    "API and argument-type tests, not op semantics",
    "*Prim* / *Comp*": "prim/composite variants of the same op",
    "TestTruncInt32 / TestTruncInt64": "integer inputs: these kernels take floating point only",
    "TestRReluOp training gradient": "the slopes are random each run: the gradient check "
    "runs with is_test, and training is checked by Out == X * Noise",
}

SCALAR = {"tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
          "sinh": math.sinh, "cosh": math.cosh, "asinh": math.asinh, "acosh": math.acosh,
          "atanh": math.atanh, "trunc": math.trunc}
# Paddle's input range per op (test_activation_op.py)
RANGE = {"tan": (-1, 1), "asin": (-0.95, 0.95), "acos": (-0.95, 0.95), "atan": (-1, 1),
         "sinh": (-1, 1), "cosh": (-1, 1), "asinh": (1, 2), "acosh": (2, 3),
         "atanh": (-0.9, 0.9), "trunc": (-10, 10)}


def _u(seed, lo, hi, shape, dtype=np.float64):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def _ref(op):
    f = SCALAR[op]
    return lambda i, a: np.vectorize(lambda v: float(f(v)), otypes=[float])(i["X"])


def _unary_cases(op):
    lo, hi = RANGE[op]
    x = _u(1024, lo, hi, [3, 5])
    if op == "trunc":  # keep the central difference off the integer jumps
        x = np.where(np.abs(x - np.round(x)) < 0.01, x + 0.05, x)
    return [OpCase(op, {"X": x}, _ref(op)),
            OpCase(op, {"X": np.array(x[0, 0])}, _ref(op), name="zero_dim"),
            OpCase(op, {"X": _u(1024, lo, hi, [11, 17], np.float32)}, _ref(op), name="fp32",
                   grad=(), rtol=1e-6, atol=1e-6, check=_keeps_float32)]


def _keeps_float32(outs, inputs, attrs):
    assert outs["Out"].dtype == np.float32, outs["Out"].dtype


def _nan_outside(outs, inputs, attrs):
    got = run_op("asin", {"X": np.array([2.0, -1.5, 0.5])}, {})["Out"]
    assert np.isnan(got[:2]).all() and got[2] == pytest.approx(math.asin(0.5))


# ----------------------------------------------------------------------- logit
def _logit_ref(i, a):
    eps = a.get("eps", 1e-6)
    def one(v):
        if eps == 0 and not 0 <= v <= 1:
            return float("nan")
        p = min(max(v, eps), 1 - eps)
        return math.log(p / (1 - p))
    return np.vectorize(one, otypes=[float])(i["X"])


def _logit_outside(outs, i, a):
    x = np.array([-0.5, 0.0000001, 0.5, 1.5])
    clipped = run_op("logit", {"X": x}, {"eps": 1e-3})["Out"]
    np.testing.assert_allclose(clipped, _logit_ref({"X": x}, {"eps": 1e-3}))
    assert np.isnan(run_op("logit", {"X": x}, {"eps": 0.0})["Out"][[0, 3]]).all()


# ----------------------------------------------------------------- brelu, stanh
def _brelu_ref(i, a):
    return np.vectorize(lambda v: min(max(v, a.get("t_min", 0.0)), a.get("t_max", 24.0)),
                        otypes=[float])(i["X"])


def _brelu_x(shape, t_min, t_max, seed=1024, dtype=np.float64):
    x = _u(seed, -5, 10, shape, dtype)
    # Paddle's TestBRelu: move values off the kinks so the numeric gradient is defined
    x[np.abs(x - t_min) < 0.005] = t_min + 0.02
    x[np.abs(x - t_max) < 0.005] = t_max + 0.02
    return x


def _stanh_ref(i, a):
    return a.get("scale_b", 1.7159) * np.tanh(a.get("scale_a", 0.67) * i["X"])


# ------------------------------------------------------------------- rrelu
def _rrelu_test_ref(i, a):
    x, mid = i["X"], (a["lower"] + a["upper"]) / 2
    noise = np.where(x < 0, mid, 1.0)
    return {"Out": x * noise, "Noise": noise}


def _rrelu_training(outs, i, a):
    x, out, noise = i["X"], outs["Out"], outs["Noise"]
    neg = x < 0
    assert (noise[~neg] == 1).all()
    assert ((noise[neg] >= a["lower"]) & (noise[neg] <= a["upper"])).all()
    assert len(np.unique(noise[neg])) > 1, "slopes are drawn per element"
    np.testing.assert_allclose(out, x * noise, rtol=1e-6)
    with pytest.raises(FluidscopeError, match="lower"):
        run_op("rrelu", {"X": x}, {"lower": 0.4, "upper": 0.2})


# ------------------------------------------------------------------ maxout
def _maxout_ref(i, a):
    x, g, axis = i["X"], a["groups"], a.get("axis", 1)
    if axis in (-1, 3):
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    out = np.empty((n, c // g, h, w))
    for ci in range(c // g):
        out[:, ci] = x[:, ci * g:(ci + 1) * g].max(axis=1)
    return out.transpose(0, 2, 3, 1) if axis in (-1, 3) else out


def _maxout_first_tie(outs, i, a):
    # a tie sends the gradient to the first of the group only, as Paddle's loop does
    from fluidscope.engine import registry
    with pytest.raises(FluidscopeError, match="groups"):
        run_op("maxout", {"X": np.ones((1, 4, 1, 1))}, {"groups": 1})  # Paddle refuses 1 too
    x = np.array([1.0, 1.0, 0.0, 2.0]).reshape(1, 4, 1, 1)
    kernel = registry.get("maxout_grad").kernel_for("cpu")
    attrs = {"groups": 2, "axis": 1}
    out = x.reshape(1, 2, 2, 1, 1).max(axis=2)
    dx = kernel(np, attrs, x, out, np.ones_like(out))
    assert dx.reshape(-1).tolist() == [1.0, 0.0, 0.0, 1.0]


def _cases():
    cases = []
    for op in SCALAR:
        cases += _unary_cases(op)
    cases.append(OpCase("asin", {"X": _u(3, -0.95, 0.95, [2, 3])}, _ref("asin"),
                        name="nan_outside_domain", check=_nan_outside))
    x = _u(7, 0.01, 0.99, [3, 5])
    xl = _u(10, -1, 1, [24])  # TestLogitOp's range: below eps X is clipped (gradient 0)
    xl[np.abs(xl) < 0.01] = 0.05
    cases += [
        OpCase("logit", {"X": xl}, _logit_ref, attrs={"eps": 1e-8}, name="paddle_TestLogitOp"),
        OpCase("logit", {"X": x}, _logit_ref, name="default_eps"),
        OpCase("logit", {"X": _u(7, 0.01, 0.99, [11, 17], np.float32)}, _logit_ref,
               attrs={"eps": 1e-8}, grad=(), rtol=1e-5, atol=1e-5, name="fp32",
               check=_keeps_float32),
        OpCase("logit", {"X": np.array([0.2, 0.5, 0.9])}, _logit_ref, attrs={"eps": 1e-3},
               name="clip_and_nan", check=_logit_outside),
        OpCase("brelu", {"X": _brelu_x([3, 5], 1.0, 4.0)}, _brelu_ref,
               attrs={"t_min": 1.0, "t_max": 4.0}, name="paddle_TestBRelu"),
        OpCase("brelu", {"X": _brelu_x([3, 5], -1.0, 1.0)}, _brelu_ref,
               attrs={"t_min": -1.0, "t_max": 1.0}, name="hardtanh"),
        OpCase("brelu", {"X": _brelu_x([11, 17], 0.0, 24.0, dtype=np.float32)}, _brelu_ref,
               name="default_fp32", grad=(), check=_keeps_float32),
        OpCase("brelu", {"X": np.array(2.5)}, _brelu_ref, attrs={"t_min": 1.0, "t_max": 4.0},
               name="zero_dim"),
    ]
    xs = _u(1024, 0.1, 1, [3, 5])
    for name, attrs in (("paddle_TestSTanh", {}), ("paddle_TestSTanhScaleA", {"scale_a": 2.0}),
                        ("paddle_TestSTanhScaleB", {"scale_b": 0.5})):
        cases.append(OpCase("stanh", {"X": xs}, _stanh_ref, attrs=attrs, name=name))
    cases.append(OpCase("stanh", {"X": _u(1024, 0.1, 1, [11, 17], np.float32)}, _stanh_ref,
                        name="fp32", grad=(), rtol=1e-6, atol=1e-6, check=_keeps_float32))
    xr = _u(5, -1, 1, [2, 3, 4])
    xr[np.abs(xr) < 0.01] = 0.05
    rr = {"lower": 0.1, "upper": 0.3}
    cases += [
        OpCase("rrelu", {"X": xr}, _rrelu_test_ref, attrs=dict(rr, is_test=True),
               name="paddle_TestRReluOpInference"),
        OpCase("rrelu", {"X": _u(5, -100, 10, [32])}, None, attrs={"lower": 0.0, "upper": 0.5},
               grad=(), name="paddle_TestRReLUOp_training", check=_rrelu_training),
    ]
    for name, g, axis in (("paddle_TestMaxOutOp", 2, 1), ("paddle_TestMaxOutOpAxis0", 2, -1),
                          ("paddle_TestMaxOutOpAxis1", 2, 3), ("paddle_TestMaxOutOpGroups", 3, 1)):
        cases.append(OpCase("maxout", {"X": _u(11, -1, 1, [3, 6, 2, 4])}, _maxout_ref,
                            attrs={"groups": g, "axis": axis}, name=name))
    cases.append(OpCase("maxout", {"X": _u(11, -1, 1, [3, 6, 2, 4], np.float32)}, _maxout_ref,
                        attrs={"groups": 2, "axis": 1}, name="paddle_TestMaxOutOpFP32", grad=(),
                        check=_keeps_float32))
    cases.append(OpCase("maxout", {"X": _u(11, -1, 1, [1, 4, 1, 1])}, _maxout_ref,
                        attrs={"groups": 2}, name="tie_first", check=_maxout_first_tie))
    return cases


CASES = _cases()
