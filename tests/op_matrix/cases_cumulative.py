"""Cases for ``cumsum`` (kernels/cumulative.py).

Ported from Paddle's test/legacy_test/test_cumsum_op.py (TestSumOp1..7, the exclusive
and reverse-exclusive classes, its API cases; shapes shrunk for the float64 gradient
check); references are element-by-element loops. Every case also matched PaddlePaddle
3.3.1 (legacy static executor, gradients from paddle.static.gradients) on the same
inputs (worst float64 relative difference 0).
"""
import numpy as np

from . import OpCase

NOT_PORTED = {
    "TestCumsumFP16": "float16 (also every *_Fp16 / *_BF16 class)",
    "TestSumOpExclusiveFP16": "float16",
    "BadInputTest": "Python API type check",
    "TestTensorAxis": "axis given as a tensor: PIR/inference API, the legacy op has no such input",
    "TestCumsumOp.run_cases dtype=": "the dtype argument is a cast op the Python API adds",
}
R = np.random.default_rng(41)


def _ref(i, a):
    """Sum element by element: Out[..., j, ...] over the chosen window along the axis."""
    x = i["X"].reshape(-1) if a.get("flatten") or i["X"].ndim == 0 else i["X"]
    axis = 0 if a.get("flatten") or i["X"].ndim == 0 else a.get("axis", -1) % x.ndim
    out = np.zeros_like(x)
    n = x.shape[axis]
    for idx in np.ndindex(*x.shape):
        j = idx[axis]
        if a.get("reverse"):
            window = range(j + 1 if a.get("exclusive") else j, n)
        else:
            window = range(0, j if a.get("exclusive") else j + 1)
        for k in window:
            out[idx] += x[idx[:axis] + (k,) + idx[axis + 1:]]
    return out if a.get("flatten") else out.reshape(i["X"].shape)


def _c(shape, attrs, name, dtype=np.float64):
    return OpCase("cumsum", {"X": R.random(shape).astype(dtype)}, _ref, attrs=attrs, name=name)


CASES = [
    _c((3, 4, 5), {"axis": 2}, "TestSumOp1"),
    _c((), {"axis": 0}, "TestSumOp1_ZeroDim"),
    _c((3, 4, 5), {"axis": -1, "reverse": True}, "TestSumOp2"),
    _c((3, 4, 5), {"axis": 1}, "TestSumOp3"),
    _c((3, 4, 5), {"axis": 0}, "TestSumOp4"),
    _c((3, 8), {}, "TestSumOp5"),
    _c((3, 4, 3), {"axis": -1, "flatten": True}, "TestSumOp6"),
    _c((20,), {}, "TestSumOp7"),
    _c((2, 3, 8), {"axis": 2, "exclusive": True}, "TestSumOpExclusive1"),
    _c((1, 1, 20), {"axis": 2, "exclusive": True}, "TestSumOpExclusive2"),
    _c((2, 3, 6), {"axis": 2, "reverse": True, "exclusive": True}, "TestSumOpReverseExclusive"),
    _c((2, 3, 4), {"axis": 0, "flatten": True, "exclusive": True, "reverse": True},
       "flatten_exclusive_reverse"),
    _c((3, 4), {"axis": -2}, "axis_minus2"),
    OpCase("cumsum", {"X": np.arange(12).reshape(3, 4)}, _ref, attrs={"flatten": True},
           grad=(), name="int64_api"),
    OpCase("cumsum", {"X": np.arange(12, dtype=np.int32).reshape(3, 4)}, _ref,
           attrs={"axis": 0}, grad=(), name="int32_axis0"),
    _c((4, 5), {"axis": 1}, "float32", dtype=np.float32),
]
