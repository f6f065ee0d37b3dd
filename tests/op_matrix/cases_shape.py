"""Cases for concat, split, reshape2, transpose2 and assign (kernels/shape.py).

Ported from Paddle's test_concat_op.py (TestConcatOp, 2, 4, 5, 6 and the AxisTensor
variants, shapes made smaller for the float64 gradient check) and test_reshape_op.py
(TestReshapeOp, ZeroDim1-3, ZeroSize, DimInfer1/2, WithInputShape, attr_ShapeTensor,
attr_OnlyShape, Bool, Int8/Uint8 on CPU). concat's merged LoD on axis 0 and reshape2 of a
zero-size X matched PaddlePaddle 3.3.1 exactly (the zero-size rule: X [0, 2] to [2, 0]
gives [2, 0], X [2, 0] to [0, 5] gives [0, 5], to [0, -1] is an error).
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase

NOT_PORTED = {
    "TestConcatOp3": "1x256x170x256 inputs: a size test, no new configuration",
    "TestConcatOp7": "same configuration as TestConcatOp",
    "TestConcatOp*_Fp16 / _Bf16": "fp16/bf16 are not supported",
    "TestConcatOpError / TestConcatAPI / TestConcatDoubleGrad*": "Python API and double grad",
    "TestReshapeOp_ZeroDim4": "oneDNN only",
    "TestReshapeBF16Op / TestReshapeFP16Op": "fp16/bf16 are not supported",
    "TestReshapeAPI* / TestReshapeOpError / TestDygraph*": "Python API and dygraph tests",
}

rng = np.random.default_rng(14)
A, B, C = rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 4))
X = rng.standard_normal((2, 6, 3))


def _with_xshape(out, x):
    return {"Out": out, "XShape": np.zeros((0,) + x.shape)}


def _lod_value(x):
    return np.asarray(getattr(x, "value", x))


def _check_concat_lod(expected):
    def check(outs, i, a):
        out = run_op("concat", i, a, return_lod=True)["Out"]
        assert out.lod() == expected, out.lod()
    return check


def _check_reshape_errors(outs, i, a):
    zero = np.zeros((0, 2))
    for shape, message in (([0, -1], "could be any number"), ([3, 2], "0 elements")):
        with pytest.raises(FluidscopeError, match=message):
            run_op("reshape2", {"X": zero}, {"shape": shape})


P0, P1, P2 = (rng.standard_normal((2, n, 2, 3)) for n in (1, 2, 3))
SEQS = [LoDTensor(rng.standard_normal((5, 2)), [[0, 2, 5]]),
        LoDTensor(rng.standard_normal((3, 2)), [[0, 1, 3]])]
LONG = [LoDTensor(rng.standard_normal(100), [[0, 20, 100]]) for _ in range(3)]
NESTED = [LoDTensor(rng.standard_normal((4, 1)), [[0, 1, 2], [0, 3, 4]]),
          LoDTensor(rng.standard_normal((3, 1)), [[0, 2], [0, 1, 3]])]


def _cat_values(i, a):
    return np.concatenate([_lod_value(x) for x in i["X"]], axis=0)


CASES = [
    OpCase("concat", {"X": [P0, P1, P2]}, lambda i, a: np.concatenate(i["X"], axis=1),
           attrs={"axis": 1}, name="paddle_op"),
    OpCase("concat", {"X": [P1, P1, 0 * P1[:0]]}, lambda i, a: np.concatenate(i["X"], axis=0),
           attrs={"axis": 0}, grad=(), name="paddle_op4_zero_rows"),
    OpCase("concat", {"X": [P0, P1, P2]}, lambda i, a: np.concatenate(i["X"], axis=1),
           attrs={"axis": -3}, name="paddle_op5_negative"),
    OpCase("concat", {"X": [P0, P1, P2], "AxisTensor": np.array([-3], np.int32)},
           lambda i, a: np.concatenate(i["X"], axis=1), name="paddle_op5_axis_tensor"),
    OpCase("concat", {"X": LONG}, _cat_values, grad=(),
           check=_check_concat_lod([[0, 20, 100, 120, 200, 220, 300]]),
           name="paddle_op6_lod_merged"),
    OpCase("concat", {"X": SEQS}, _cat_values, check=_check_concat_lod([[0, 2, 5, 6, 8]]),
           name="lod_merged_grad"),
    OpCase("concat", {"X": NESTED}, _cat_values, grad=(),
           check=_check_concat_lod([[0, 1, 2, 4], [0, 3, 4, 5, 7]]), name="lod_two_levels"),
    OpCase("concat", {"X": [SEQS[0], _lod_value(SEQS[1])]}, _cat_values, grad=(),
           check=_check_concat_lod([]), name="lod_mixed_dropped"),
    OpCase("concat", {"X": [SEQS[0], SEQS[0]]},
           lambda i, a: np.concatenate([_lod_value(x) for x in i["X"]], 1),
           attrs={"axis": 1}, grad=(), check=_check_concat_lod([[0, 2, 5]]),
           name="lod_axis1_keeps_first"),
    OpCase("reshape2", {"X": np.zeros((0, 2))},
           lambda i, a: _with_xshape(np.zeros((2, 0)), i["X"]), attrs={"shape": [2, 0]},
           grad=(), check=_check_reshape_errors, name="paddle_zero_size"),
    OpCase("reshape2", {"X": np.zeros((2, 0))},
           lambda i, a: _with_xshape(np.zeros((0, 5)), i["X"]), attrs={"shape": [0, 5]},
           grad=(), name="zero_size_literal_0"),
    OpCase("reshape2", {"X": np.zeros((0, 2))},
           lambda i, a: _with_xshape(np.zeros((0,)), i["X"]), attrs={"shape": [-1]},
           grad=(), name="zero_size_infer"),
    OpCase("reshape2", {"X": np.asarray(1.5)},
           lambda i, a: _with_xshape(i["X"].reshape(1), i["X"]), attrs={"shape": [1]},
           name="paddle_zero_dim1"),
    OpCase("reshape2", {"X": np.asarray(1.5)},
           lambda i, a: _with_xshape(i["X"].reshape(1), i["X"]), attrs={"shape": [-1]},
           name="paddle_zero_dim2"),
    OpCase("reshape2", {"X": np.array([2.5])},
           lambda i, a: _with_xshape(i["X"].reshape(()), i["X"]), attrs={"shape": []},
           name="paddle_zero_dim3"),
    OpCase("reshape2", {"X": rng.standard_normal((5, 4))},
           lambda i, a: _with_xshape(i["X"].reshape(5, 2, 2), i["X"]),
           attrs={"shape": [5, -1, 2]}, name="paddle_dim_infer1"),
    OpCase("reshape2", {"X": rng.standard_normal((2, 2, 6))},
           lambda i, a: _with_xshape(i["X"].reshape(2, 2, 3, 2), i["X"]),
           attrs={"shape": [2, 0, 3, -1]}, name="paddle_dim_infer2"),
    OpCase("reshape2", {"X": rng.standard_normal((6, 2)), "Shape": np.array([2, 3, 2], np.int32)},
           lambda i, a: _with_xshape(i["X"].reshape(2, 3, 2), i["X"]),
           attrs={"shape": [0, -1, 2]}, name="paddle_with_input_shape"),
    OpCase("reshape2", {"X": rng.standard_normal((2, 2, 6)),
                        "ShapeTensor": [np.array([d], np.int32) for d in (2, 0, 3, -1)]},
           lambda i, a: _with_xshape(i["X"].reshape(2, 2, 3, 2), i["X"]),
           attrs={"shape": [2, 0, 3, -1]}, name="paddle_attr_shape_tensor"),
    OpCase("reshape2", {"X": rng.random((4, 3)) > 0.5},
           lambda i, a: _with_xshape(i["X"].reshape(2, 6), i["X"]), attrs={"shape": [2, 6]},
           grad=(), name="paddle_bool"),
    OpCase("reshape2", {"X": rng.integers(0, 127, (4, 2, 6)).astype(np.uint8)},
           lambda i, a: _with_xshape(i["X"].reshape(4, 2, 3, 2), i["X"]),
           attrs={"shape": [4, 0, 3, -1]}, grad=(), name="paddle_uint8"),
    OpCase("concat", {"X": [A, B, C]}, lambda i, a: np.concatenate(i["X"], axis=1),
           attrs={"axis": -1}, name="negative_axis"),
    OpCase("concat", {"X": [A, 2 * A]}, lambda i, a: np.concatenate(i["X"], axis=0)),
    OpCase("concat", {"X": [A, B, C], "AxisTensor": np.array([1], np.int32)},
           lambda i, a: np.concatenate(i["X"], axis=1), name="axis_tensor"),
    OpCase("split", {"X": X}, lambda i, a: {"Out": np.split(i["X"], 3, axis=1)},
           attrs={"num": 3, "axis": 1}, name="num"),
    OpCase("split", {"X": X}, lambda i, a: {"Out": np.split(i["X"], [1, 4], axis=1)},
           attrs={"sections": [1, -1, 2], "axis": -2}, name="sections_rest"),
    OpCase("split", {"X": X, "AxisTensor": np.array([2], np.int64),
                     "SectionsTensorList": [np.array([2], np.int32), np.array([1], np.int32)]},
           lambda i, a: {"Out": np.split(i["X"], [2], axis=2)},
           attrs={"sections": [0, 0]}, name="tensors"),
    OpCase("reshape2", {"X": X}, lambda i, a: _with_xshape(i["X"].reshape(2, 18), i["X"]),
           attrs={"shape": [0, -1]}, name="copy_and_infer"),
    OpCase("reshape2", {"X": X}, lambda i, a: _with_xshape(i["X"].reshape(4, 3, 3), i["X"]),
           attrs={"shape": [4, 3, 3]}, name="explicit"),
    OpCase("reshape2", {"X": X, "ShapeTensor": [np.array([9], np.int32),
                                                np.array([-1], np.int32)]},
           lambda i, a: _with_xshape(i["X"].reshape(9, 4), i["X"]),
           attrs={"shape": [1]}, name="shape_tensor_list"),
    OpCase("reshape2", {"X": X, "Shape": np.array([3, 0, 2], np.int64)},
           lambda i, a: _with_xshape(i["X"].reshape(3, 6, 2), i["X"]), name="shape_tensor"),
    OpCase("transpose2", {"X": X},
           lambda i, a: _with_xshape(i["X"].transpose(2, 0, 1), i["X"]),
           attrs={"axis": [2, 0, 1]}),
    OpCase("transpose2", {"X": X},
           lambda i, a: _with_xshape(i["X"].transpose(0, 2, 1), i["X"]),
           attrs={"axis": [0, -1, 1]}, name="negative_axis"),
    OpCase("assign", {"X": X}, lambda i, a: i["X"]),
]
