"""Cases for ``slice`` (kernels/slicing.py): bounds from attributes and tensors, Paddle's
clamping of negative and out-of-range bounds, decrease_axis, empty results, LoD."""
import numpy as np
import pytest

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase

rng = np.random.default_rng(21)
X = rng.standard_normal((3, 4, 5))
SEQ = LoDTensor(rng.standard_normal((5, 6)), [[0, 2, 5]])


def _value(x):
    return np.asarray(getattr(x, "value", x))


def _check_lod(expected_lod):
    def check(outs, i, a):
        out = run_op("slice", i, a, return_lod=True)["Out"]
        assert (out.lod() or []) == expected_lod
    return check


def _check_bad_attrs_raise(outs, i, a):
    bad = [({"axes": [-1], "starts": [0], "ends": [1]}, r"axis -1 is not in \[0, 3\)"),
           ({"axes": [1, 1], "starts": [0, 0], "ends": [1, 1]}, "name a dim twice"),
           ({"axes": [1], "starts": [0, 1], "ends": [1]}, "one start and one end each"),
           ({"axes": [1], "starts": [0], "ends": [2], "decrease_axis": [1]},
            "only dims of size 1 can be dropped")]
    for attrs, message in bad:
        with pytest.raises(FluidscopeError, match=message):
            run_op("slice", i, attrs)


CASES = [
    OpCase("slice", {"Input": X}, lambda i, a: i["Input"][:, 1:3, 2:5],
           attrs={"axes": [1, 2], "starts": [1, -3], "ends": [3, 100]},
           check=_check_bad_attrs_raise, name="negative_and_clamped"),
    OpCase("slice", {"Input": X}, lambda i, a: i["Input"][1, :, 0:2],
           attrs={"axes": [0, 2], "starts": [1, -10], "ends": [2, 2], "decrease_axis": [0]},
           name="decrease_axis"),
    OpCase("slice", {"Input": X}, lambda i, a: np.asarray(i["Input"][2, 3, 4]),
           attrs={"axes": [0, 1, 2], "starts": [-1, 3, 4], "ends": [3, 4, 5],
                  "decrease_axis": [0, 1, 2]}, name="to_0d"),
    OpCase("slice", {"Input": X}, lambda i, a: i["Input"][:, :, 3:3],
           attrs={"axes": [2], "starts": [3], "ends": [1]}, grad=(), name="empty"),
    OpCase("slice", {"Input": X, "StartsTensor": np.array([0, 1], np.int64),
                     "EndsTensor": np.array([2, -1], np.int64)},
           lambda i, a: i["Input"][0:2, :, 1:4],
           attrs={"axes": [0, 2], "starts": [9, 9], "ends": [9, 9], "infer_flags": [-1, -1]},
           name="bound_tensors"),
    OpCase("slice", {"Input": X, "StartsTensorList": [np.array([1], np.int32)],
                     "EndsTensorList": [np.array([4], np.int32)]},
           lambda i, a: i["Input"][:, 1:4],
           attrs={"axes": [1], "starts": [-1], "ends": [-1], "infer_flags": [-1]},
           name="bound_tensor_lists"),
    OpCase("slice", {"Input": SEQ}, lambda i, a: _value(i["Input"])[:, 2:5],
           attrs={"axes": [1], "starts": [2], "ends": [5]}, check=_check_lod([[0, 2, 5]]),
           name="columns_keep_lod"),
    OpCase("slice", {"Input": SEQ}, lambda i, a: _value(i["Input"])[1:4],
           attrs={"axes": [0], "starts": [1], "ends": [4]}, check=_check_lod([]),
           name="rows_drop_lod"),
]
