"""Cases for kernels/binary_more.py, ported from Paddle's test_atan2_op.py (TestAtan2 and
its float32 twin: X1, X2 in [-1, -0.1] and [0.1, 1]), test_fmax_op.py / test_fmin_op.py
(TestElementwiseFmaxOp/FminOp: Y = X +- U(0.1, 1); *2Op: NaNs in Y; *3Op: NaNs in X),
test_elementwise_heaviside_op.py (TestElementwiseOp, TestHeavisideBroadcast's four shape
pairs; plus X holding exact zeros) and test_lerp_op.py (TestLerp, WithDim2..6,
TestLerpBroadXY, TestLerpBroadWToXY, TestLerpBroadToX/Y: Weight 0.5 or a tensor).
Paddle's shapes are shrunk where the float64 central difference would be slow.

Checked against PaddlePaddle 3.3.1 (static graph, CPU: every case here appended with
``block.append_op``, a random out-gradient through ``paddle.static.gradients``): float64
outputs and gradients match exactly except atan2's gradient (4e-16 relative); fmax/fmin
send a tie's and a NaN Y's gradient to X, as Paddle does.
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

NOT_PORTED = {
    "*FP16* / *BF16* / TestHeavisideAPI_float16": "float16/bfloat16 (CUDA only)",
    "TestAtan2_int32 / TestAtan2_int64 / TestElementwiseFmax*Int* / TestHeavisideAPI_int32/64":
    "integer inputs: these kernels take floating point only",
    "*API / *Error / TestHeavisideError / TestLerpAPI / TestAtan2API": "python API and "
    "argument-type tests, not op semantics",
    "TestLerpBroadToX/Y weight gradient": "Paddle 3.3.1's lerp_grad writes no Weight@GRAD",
}


def _u(seed, lo, hi, shape):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _atan2_ref(i, a):
    return np.vectorize(math.atan2, otypes=[float])(i["X1"], i["X2"])


def _atan2_same_shape(outs, i, a):
    with pytest.raises(FluidscopeError, match="same shape"):
        run_op("atan2", {"X1": i["X1"], "X2": i["X2"][:1]}, {})


def _fref(pick):
    def ref(i, a):
        def one(p, q):
            if math.isnan(p):
                return q
            if math.isnan(q):
                return p
            return pick(p, q)
        return np.vectorize(one, otypes=[float])(i["X"], i["Y"])
    return ref


def _fmax_nan_grad(outs, i, a):
    from fluidscope.engine.autodiff.gradcheck import analytic_grads
    x, y = np.array([1.0, 2.0, np.nan, 3.0]), np.array([1.0, np.nan, 5.0, 4.0])
    g = analytic_grads("elementwise_fmax", {"X": x, "Y": y}, {}, {"Out": np.ones(4)}, ["X", "Y"])
    assert g["X"].tolist() == [1.0, 1.0, 0.0, 0.0] and g["Y"].tolist() == [0.0, 0.0, 1.0, 1.0]


def _heaviside_ref(i, a):
    x, y = np.broadcast_arrays(i["X"], i["Y"])
    out = np.empty(x.shape)
    for k in np.ndindex(x.shape):
        out[k] = 0.0 if x[k] < 0 else (y[k] if x[k] == 0 else 1.0)
    return out


def _lerp_ref(i, a):
    x, y, w = np.broadcast_arrays(i["X"], i["Y"], i["Weight"])
    return np.vectorize(lambda p, q, t: p + t * (q - p), otypes=[float])(x, y, w)


def _fminmax_inputs(seed, shape, nan=None):
    x = _u(seed, 0.1, 1, shape)
    sgn = np.random.default_rng(seed + 1).choice([-1, 1], shape)
    y = x + sgn * _u(seed + 2, 0.1, 1, shape)
    if nan == "Y":
        y[1, 2:] = np.nan
    elif nan == "X":
        x[0, :3] = np.nan
    return {"X": x, "Y": y}


def _cases():
    x1 = np.concatenate([_u(1, -1, -0.1, [2, 5]), _u(2, 0.1, 1, [2, 5])])
    x2 = np.concatenate([_u(3, 0.1, 1, [2, 5]), _u(4, -1, -0.1, [2, 5])])
    cases = [
        OpCase("atan2", {"X1": x1, "X2": x2}, _atan2_ref, name="paddle_TestAtan2",
               check=_atan2_same_shape),
        OpCase("atan2", {"X1": x1.astype(np.float32), "X2": x2.astype(np.float32)}, _atan2_ref,
               name="paddle_TestAtan2_float", grad=(), rtol=1e-6),
        OpCase("atan2", {"X1": np.array(0.5), "X2": np.array(-0.3)}, _atan2_ref, name="zero_dim"),
    ]
    for op, pick in (("elementwise_fmax", max), ("elementwise_fmin", min)):
        kind = op.split("_")[1].capitalize()
        cases += [
            OpCase(op, _fminmax_inputs(5, [4, 6]), _fref(pick), name=f"paddle_TestElementwise{kind}Op"),
            OpCase(op, _fminmax_inputs(6, [4, 6], "Y"), _fref(pick),
                   name=f"paddle_TestElementwise{kind}2Op", grad=()),
            OpCase(op, _fminmax_inputs(7, [4, 6], "X"), _fref(pick),
                   name=f"paddle_TestElementwise{kind}3Op", grad=()),
            OpCase(op, {"X": _u(8, -1, 1, [2, 3, 4]), "Y": _u(9, -1, 1, [4])}, _fref(pick),
                   name="broadcast"),
            OpCase(op, {k: v.astype(np.float32) for k, v in _fminmax_inputs(5, [4, 6], "Y").items()},
                   _fref(pick), name="fp32", grad=()),
        ]
    cases[3].check = _fmax_nan_grad  # elementwise_fmax's first case
    xh = _u(10, -1, 1, [4, 6])
    xh[xh < -0.6] = 0.0
    cases += [
        OpCase("elementwise_heaviside", {"X": xh, "Y": _u(11, 0.1, 1, [4, 6])}, _heaviside_ref,
               name="exact_zeros", grad=("Y",)),  # X's step: no central difference at 0
        OpCase("elementwise_heaviside", {"X": _u(29, 0, 1, [4, 6]), "Y": _u(30, 0, 1, [4, 6])},
               _heaviside_ref, name="paddle_TestElementwiseOp"),
        OpCase("elementwise_heaviside", {"X": _u(27, 0.1, 1, [2, 3]) * [[1], [-1]],
                                         "Y": _u(28, 0.1, 1, [2, 3])}, _heaviside_ref,
               name="no_zeros"),
        OpCase("elementwise_heaviside", {"X": np.where(_u(12, -1, 1, [2, 3, 4, 5]) > 0.5, 0.0,
                                                       _u(12, -1, 1, [2, 3, 4, 5])),
                                         "Y": _u(13, -1, 1, [5])}, _heaviside_ref,
               name="broadcast_zeros", grad=("Y",)),
        OpCase("elementwise_heaviside", {"X": xh.astype(np.float32),
                                         "Y": _u(11, 0.1, 1, [4, 6]).astype(np.float32)},
               _heaviside_ref, name="fp32", grad=()),
    ]
    for name, shape in (("paddle_TestLerp", [20]), ("paddle_TestLerpWithDim2", [2, 10]),
                        ("paddle_TestLerpWithDim3", [2, 2, 5]),
                        ("paddle_TestLerpWithDim4", [2, 1, 2, 5]),
                        ("paddle_TestLerpWithDim5", [2, 1, 1, 2, 5]),
                        ("paddle_TestLerpWithDim6", [2, 1, 1, 2, 1, 5])):
        cases.append(OpCase("lerp", {"X": _u(14, 1, 2, shape), "Y": _u(15, 5, 10, shape),
                                     "Weight": np.array([0.5])}, _lerp_ref, name=name))
    cases += [
        OpCase("lerp", {"X": _u(16, 1, 2, [2, 1, 2, 5]), "Y": _u(17, 5, 10, [2, 2, 1, 5]),
                        "Weight": np.array([0.5])}, _lerp_ref, name="paddle_TestLerpBroadXY"),
        OpCase("lerp", {"X": _u(18, 1, 2, [2, 2, 5]), "Y": _u(19, 5, 10, [2, 2, 5]),
                        "Weight": _u(20, 0, 1, [5])}, _lerp_ref, name="paddle_TestLerpBroadWToXY"),
        OpCase("lerp", {"X": _u(21, 1, 2, [5]), "Y": _u(22, 5, 10, [2, 5]),
                        "Weight": _u(23, 0, 1, [2, 5])}, _lerp_ref, name="paddle_TestLerpBroadToX"),
        OpCase("lerp", {"X": _u(24, 1, 2, [2, 5]), "Y": _u(25, 5, 10, [5]),
                        "Weight": _u(26, 0, 1, [2, 5])}, _lerp_ref, name="paddle_TestLerpBroadToY"),
        OpCase("lerp", {"X": _u(14, 1, 2, [4, 5]).astype(np.float32),
                        "Y": _u(15, 5, 10, [4, 5]).astype(np.float32),
                        "Weight": np.array([0.5], dtype=np.float32)}, _lerp_ref, name="fp32",
               grad=(), rtol=1e-6),
    ]
    # TestHeavisideBroadcast's four shape pairs (an API test), shrunk
    for k, (sx, sy) in enumerate((([2, 3, 4, 5], [3, 4, 5]), ([3, 4, 5], [3, 4, 1]),
                                  ([3, 4, 5], [4, 5]), ([4, 5], [1]))):
        cases.append(OpCase("elementwise_heaviside", {"X": _u(50 + k, 0, 1, sx),
                                                      "Y": _u(60 + k, 0, 1, sy)},
                            _heaviside_ref, name=f"paddle_TestHeavisideBroadcast_{k + 1}",
                            grad=()))
    return cases


CASES = _cases()
