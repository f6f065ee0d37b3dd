"""Cases for ``set_value`` and ``set_value_grad`` (kernels/set_value.py).

Paddle's test_set_value_op.py tests set_value through ``paddle.static.setitem`` (and
``x[...] = v`` in dygraph); the attributes below are the ones Paddle 3.3.1's
``paddle.static.setitem`` wrote for each of those index forms (dumped from its legacy
static program: starts/ends of 2**31-1 and -2**31 are its "to the end" markers), and the
reference is numpy's own ``x[index] = value``. Every forward configuration here was run
in PaddlePaddle 3.3.1 (legacy static mode, same input): outputs agree exactly. The
gradients (Input@GRAD, ValueTensor@GRAD through a weighted mean) agree with Paddle 3.3.1's
set_value_grad to 2e-16 (relative), except where the window is all of Input (ItemSlice,
ItemEllipsis4, ItemNone1): Paddle leaves Input@GRAD an uninitialised empty tensor there,
ours is the zeros it stands for.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(140)
BIG, SMALL = 2 ** 31 - 1, -2 ** 31

NOT_PORTED = {
    "TestSetValueItemSliceInWhile": "needs the while op (not registered); the set_value "
                                    "it makes is ItemInt's with a StartsTensorList",
    "TestSetValueItemBool* / TestSetValueItemTensor(bool index)": "Paddle 3.3.1 lowers "
                                    "boolean-mask assignment to where/index_put, not set_value",
    "TestSetValueValueShape* with fp16/bf16, TestSetValueFP16/BF16*": "fp16/bf16 are not "
                                                                       "supported",
    "TestSetValueApi dygraph halves, TestError / TestSetValueInplace*": "dygraph API, "
                                    "Python argument checks and inplace version counters",
    "TestSetValueItemTensor*": "ported as the StartsTensorList/EndsTensorList/StepsTensorList "
                               "cases (what those Tensor bounds become)",
}


def _attrs(axes, starts, ends, steps, decrease=(), nones=(), shape=(1,), values=(6.0,)):
    out = {"axes": list(axes), "starts": list(starts), "ends": list(ends), "steps": list(steps),
           "decrease_axes": list(decrease), "none_axes": list(nones), "dtype": 5}
    if values is not None:
        out.update(shape=list(shape), values=list(values))
    return out


def _ref(index, value_slot="ValueTensor", const=None):
    def ref(i, a):
        out = np.array(i["Input"], copy=True)
        if value_slot in i:
            out[index] = i[value_slot]
        else:
            out[index] = np.asarray(a["values"]).reshape(a["shape"]) if const is None else const
        return out
    return ref


# (name, Input shape, numpy index, attributes Paddle 3.3.1 wrote, value)
S = np.s_
PADDLE = [
    ("Base", (2, 3, 4), S[0, 0], _attrs([0, 1], [0, 0], [1, 1], [1, 1], [0, 1])),
    ("ItemInt", (2, 3, 4), S[0], _attrs([0], [0], [1], [1], [0])),
    ("ItemSlice", (2, 3, 4), S[0:2], _attrs([], [], [], [])),
    ("ItemSlice2", (2, 3, 4), S[0:-1], _attrs([0], [0], [-1], [1])),
    ("ItemSlice3", (2, 3, 4), S[0:-1, 0:2], _attrs([0, 1], [0, 0], [-1, 2], [1, 1])),
    ("ItemSlice4", (2, 3, 4), S[0:, 1:2, :], _attrs([1], [1], [2], [1])),
    ("ItemSlice5_empty", (2, 3, 4), S[0:, 1:1, :], _attrs([1], [1], [1], [1])),
    ("ItemSliceStep", (5, 5, 5), S[0:2:2], _attrs([0], [0], [2], [2])),
    ("ItemSliceStep2", (7, 5, 5), S[0:-1:3], _attrs([0], [0], [-1], [3])),
    ("ItemSliceStep3", (2, 3, 4), S[0:-1, 0:2, ::2],
     _attrs([0, 1, 2], [0, 0, 0], [-1, 2, BIG], [1, 1, 2])),
    ("ItemSliceNegativeStep", (5, 2), S[5:2:-1], _attrs([0], [5], [2], [-1], shape=[2],
                                                         values=[3, 4])),
    ("ItemSliceNegativeStep2", (5,), S[1::-1], _attrs([0], [1], [SMALL], [-1], shape=[2],
                                                      values=[3, 4])),
    ("ItemSliceNegativeStep3", (3,), S[::-1], _attrs([0], [BIG], [SMALL], [-1], shape=[3],
                                                     values=[3, 4, 5])),
    ("ItemSliceNegativeStep4", (3, 4, 5), S[2:0:-1, 0:2, ::-1],
     _attrs([0, 1, 2], [2, 0, BIG], [0, 2, SMALL], [-1, 1, -1])),
    ("ItemEllipsis1", (2, 3, 4), S[0:, ..., 1:], _attrs([2], [1], [BIG], [1])),
    ("ItemEllipsis4", (2, 3, 4), S[...], _attrs([], [], [], [])),
    ("ItemNone1", (2, 3, 4), S[None], _attrs([], [], [], [], nones=[0])),
    ("ItemNone2", (2, 3, 4), S[0, None, 1], _attrs([0, 1], [0, 1], [1, 2], [1, 1], [0, 1], [1])),
    ("ItemNone3", (2, 3, 4), S[:, None, None, 1], _attrs([1], [1], [2], [1], [1], [1, 2])),
    ("ItemNone5", (2, 3, 4), S[0, None, 0, None, 1],
     _attrs([0, 1, 2], [0, 0, 1], [1, 1, 2], [1, 1, 1], [0, 1, 2], [1, 3])),
    ("ItemNone7", (2, 3, 4), S[:, None, 1], _attrs([1], [1], [2], [1], [1], [1], shape=[2, 1, 4],
                                                   values=[0.0] * 8)),
    ("ItemNone8", (2, 3, 4), S[:, 1, None], _attrs([1], [1], [2], [1], [1], [2], shape=[2, 1, 4],
                                                   values=[0.0] * 8)),
    ("value_broadcast", (2, 3, 4), S[0:2, 1], _attrs([1], [1], [2], [1], [1], shape=[4],
                                                     values=[0.0, 1.0, 2.0, 3.0])),
    ("negative_index_step_none", (4, 5, 6), S[-1, ::-2, None],
     _attrs([0, 1], [-1, BIG], [BIG, SMALL], [1, -2], [0], [2], values=[3.0])),
]


def _check_errors(outs, i, a):
    bad = [({**a, "axes": [3]}, r"axes \[3\]: 3 is not in \[0, 3\)"),
           ({**a, "steps": [0, 1, 1]}, "steps must not be 0"),
           ({**_attrs([1], [2], [0], [1], values=None)}, "end 0 must not be before start 2")]
    for attrs, message in bad:
        with pytest.raises(FluidscopeError, match=message):
            run_op("set_value", i, attrs)
    with pytest.raises(FluidscopeError, match=r"does not broadcast to the window \[3, 5\]"):
        run_op("set_value", {"Input": i["Input"], "ValueTensor": np.ones((3, 4))},
               _attrs([1], [1], [2], [1], [1], values=None))


X = rng.standard_normal((3, 4, 5))
NO_VALUES = dict(values=None)
CASES = [
    OpCase("set_value", {"Input": rng.standard_normal(shape)}, _ref(index), attrs=attrs,
           name=f"paddle_{name}")
    for name, shape, index, attrs in PADDLE
] + [
    # ValueTensor: both gradients are checked.
    OpCase("set_value", {"Input": X, "ValueTensor": rng.standard_normal((2, 4))},
           _ref(S[1:3, 0, 1:5]), attrs=_attrs([0, 1, 2], [1, 0, 1], [3, 1, 5], [1, 1, 1], [1],
                                              **NO_VALUES),
           check=_check_errors, name="value_tensor_decrease"),
    OpCase("set_value", {"Input": X, "ValueTensor": rng.standard_normal((5,))},
           _ref(S[0:3:2, 1:3]), attrs=_attrs([0, 1], [0, 1], [3, 3], [2, 1], **NO_VALUES),
           name="value_tensor_broadcast"),
    OpCase("set_value", {"Input": X, "ValueTensor": rng.standard_normal((2, 1))},
           _ref(S[::-2, 1:3, -1]), attrs=_attrs([0, 1, 2], [BIG, 1, -1], [SMALL, 3, BIG],
                                                [-2, 1, 1], [2], **NO_VALUES),
           name="value_tensor_negative_step_keepdim_broadcast"),
    OpCase("set_value", {"Input": X, "ValueTensor": rng.standard_normal((1, 4, 5))},
           _ref(S[2]), attrs=_attrs([0], [2], [3], [1], [0], **NO_VALUES),
           name="value_tensor_higher_rank"),
    OpCase("set_value", {"Input": X, "ValueTensor": rng.standard_normal((3, 1, 5)),
                         "StartsTensorList": [np.array([1], np.int32)],
                         "EndsTensorList": [np.array([2], np.int64)],
                         "StepsTensorList": [np.array([1], np.int32)]},
           _ref(S[:, 1, None]), attrs=_attrs([1], [-9], [-9], [9], [1], [2], **NO_VALUES),
           name="tensor_lists_none_axis"),
    OpCase("set_value", {"Input": rng.integers(-5, 5, (3, 4)).astype(np.int64)},
           _ref(S[:, ::3]), attrs=_attrs([1], [0], [BIG], [3], shape=[1], values=[7]),
           grad=(), name="int64_input"),
    OpCase("set_value", {"Input": rng.standard_normal((3, 4)).astype(np.float32)},
           _ref(S[1]), attrs=_attrs([0], [1], [2], [1], [0], shape=[4], values=[1, 2.5, -3, 0]),
           name="float32_mixed_scalars"),
    OpCase("set_value", {"Input": np.zeros((2, 3), bool)}, _ref(S[:, 1]),
           attrs=_attrs([1], [1], [2], [1], [1], values=[True]), grad=(), name="bool_input"),
]
