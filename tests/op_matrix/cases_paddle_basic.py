"""Paddle's OpTests of mean, sum, fill_constant, fill_zeros_like and assign, ported
(PaddlePaddle/Paddle test/legacy_test/test_mean_op.py, test_sum_op.py,
test_fill_constant_op.py, test_fill_zeros_like_op.py, test_assign_op.py).

Shapes as Paddle's where nothing is differentiated (fill_*), reduced for the float64
gradient checks (assign 100 x 10 -> 10 x 10). fill_constant's output dtype is its
``dtype`` attribute (FP32 by default, whatever Paddle's test class calls its dtype).

Compared with Paddle 3.3.1 (static, CPU, same inputs): mean, sum, assign and
fill_constant outputs match exactly (mean to 2e-16), gradients exactly. Paddle 3.3.1
registers no fill_zeros_like kernel any more; those cases follow Paddle's references.
"""
import numpy as np

from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(1419)

NOT_PORTED = {
    "TestMeanOpError": "Python API type checks",
    "TestFP16MeanOp": "float16 on CUDA only", "TestBF16MeanOp": "bfloat16 (CPU with AVX512-BF16)",
    "TestReduceMean*": "reduce_mean: another op (cases_reduce.py)",
    "TestMeanAPI": "Python/dygraph API", "TestMeanWithTensorAxis1/2": "reduce_mean API",
    "TestMeanDoubleGradCheck and later classes": "double/triple gradients",
    "TestSelectedRowsSumOp": "SelectedRows inputs", "TestSelectedRowsSumOpInt": "SelectedRows",
    "TestSelectedRowsSumBF16Op": "SelectedRows, bfloat16",
    "TestSelectedRowsSumBF16OpBigRow": "SelectedRows, bfloat16",
    "TestLoDTensorAndSelectedRowsOp": "SelectedRows input",
    "TestAFP16SumOp": "float16 on CUDA only", "TestSumBF16Op": "bfloat16",
    "API_Test_Add_n (dygraph parts)": "dygraph; its static part is ported",
    "TestRaiseSumError and later classes": "Python API checks, inference predictor, double grad",
    "TestFillConstantBF16Op": "bfloat16, CUDA only",
    "TestFillConstantOpWithSelectedRows": "Out as SelectedRows",
    "TestFillConstantImperative": "dygraph; its nan/inf values are ported as str_value cases",
    "TestFillConstantOpError": "Python API type checks",
    "TestAssignOpComplex64": "complex64: fluidscope has no complex dtypes",
    "TestAssignOpComplex128": "complex128",
    "TestAssignFP16Op": "float16 on CUDA only", "TestAssignBFP16Op": "bfloat16, CUDA only",
    "TestAssignOpWithLoDTensorArray": "LoDTensorArray (array_write/array_read programs)",
    "TestAssignOpError": "Python API type checks",
    "TestAssignOApi": "Python/dygraph API (assign_value for numpy arrays)",
    "TestAssignOApiFP16": "float16/bfloat16 on CUDA only",
    "TestAssignOpErrorApi": "Python API type checks",
    "TestAssignDoubleGradCheck": "double gradient", "TestAssignTripleGradCheck": "triple gradient",
}

# ------------------------------------------------------------------ mean / sum
CASES = []
CASES += port("mean", "TestMeanOp", {"X": rng.random((10, 10))},
              lambda i, a: np.array(np.mean(i["X"])))
CASES += port("mean", "TestMeanOp_ZeroDim", {"X": np.array(rng.random())},
              lambda i, a: np.array(np.mean(i["X"])))
CASES += port("sum", "TestSumOp", {"X": [rng.random((3, 40)) for _ in range(3)]},
              lambda i, a: i["X"][0] + i["X"][1] + i["X"][2], attrs={"use_mkldnn": False})
# API_Test_Add_n, static: add_n of two int64 fill_constant tensors (5 and 3) is 8
CASES.append(OpCase("sum", {"X": [np.full((2, 3), 5, np.int64), np.full((2, 3), 3, np.int64)]},
                    lambda i, a: np.full((2, 3), 8, np.int64), grad=(),
                    name="paddle_API_Test_Add_n_int64"))


# -------------------------------------------------------------- fill_constant
def _full(shape, value, dtype=np.float32):
    return lambda i, a: np.full(shape, value, dtype)


def _fill(name, inputs, attrs, ref, **kw):
    return OpCase("fill_constant", inputs, ref, attrs=attrs, grad=(), rtol=0, atol=0,
                  name=f"paddle_{name}", **kw)


S = [123, 92]
LIST = [np.array([123], np.int32), np.array([92], np.int32)]
F32 = np.float32
CASES += [
    _fill("TestFillConstantOp", {}, {"shape": S, "value": 0.0}, _full(S, 0.0)),
    _fill("TestFillConstantFP32Op", {}, {"shape": S, "value": 3.8}, _full(S, F32(3.8))),
    _fill("TestFillConstantFP16Op", {}, {"shape": S, "value": 3.8}, _full(S, F32(3.8))),
    _fill("TestFillConstantINT64Op", {}, {"shape": S, "value": 10000000000},
          _full(S, 1e10)),
    _fill("TestFillConstantINT32Op", {}, {"shape": S, "value": 3}, _full(S, 3.0)),
    # the shape attribute holds -1 where ShapeTensorList gives the size (as the
    # Python API writes it for paddle.full([n, 92]) with a tensor n)
    _fill("TestFillConstantOp1_ShapeTensorList", {"ShapeTensorList": LIST},
          {"shape": [-1, 92], "value": 3.8}, _full(S, F32(3.8))),
    _fill("TestFillConstantOp2_ShapeTensorList", {"ShapeTensorList": LIST},
          {"shape": [-1, -1]}, _full(S, 0.0)),
    _fill("TestFillConstantOp3_ShapeTensorList", {"ShapeTensorList": LIST},
          {"shape": [123, -1], "value": 10000000000}, _full(S, 1e10)),
    _fill("TestFillConstantOp4_ShapeTensorList", {"ShapeTensorList": LIST},
          {"shape": [123, -1], "value": 3}, _full(S, 3.0)),
    _fill("TestFillConstantOp1_ShapeTensor", {"ShapeTensor": np.array(S, np.int32)},
          {"value": 3.8}, _full(S, F32(3.8))),
    # ValueTensor wins over the value attribute
    _fill("TestFillConstantOp1_ValueTensor", {"ShapeTensor": np.array(S, np.int32),
                                              "ValueTensor": np.array([3.8], np.float32)},
          {"value": 4.8}, _full(S, F32(3.8))),
    _fill("TestFillConstantOp2_ValueTensor", {"ShapeTensor": np.array(S, np.int32),
                                              "ValueTensor": np.array([3], np.int32)},
          {"value": 3, "dtype": pb.VarType.INT32}, _full(S, 3, np.int32)),
]
# TestFillConstantAPI: [1, 2] float32 1.1 from an attribute shape, a shape tensor list of
# int32 and int64 tensors, int32/int64 shape tensors, float32/float64 value tensors
ONE_ONE = np.full((1, 2), 1.1, np.float32)
for name, inputs in (
        ("attr_shape", {}),
        ("list_int32", {"ShapeTensorList": [np.array([1], np.int64), np.array([2], np.int32)]}),
        ("list_int64", {"ShapeTensorList": [np.array([1], np.int64), np.array([2], np.int64)]}),
        ("shape_int32", {"ShapeTensor": np.array([1, 2], np.int32)}),
        ("shape_int64", {"ShapeTensor": np.array([1, 2], np.int64)}),
        ("value_f32", {"ShapeTensor": np.array([1, 2], np.int64),
                       "ValueTensor": np.array([1.1], np.float32)}),
        ("value_f64", {"ShapeTensor": np.array([1, 2], np.int64),
                       "ValueTensor": np.array([1.1], np.float64)})):
    shape = [1, 2] if not inputs else ([1, -1] if "ShapeTensorList" in inputs else [])
    CASES.append(_fill(f"TestFillConstantAPI_{name}", inputs,
                       {"shape": shape, "value": 1.1, "dtype": pb.VarType.FP32},
                       lambda i, a: ONE_ONE))
# TestFillConstantImperative: nan and +-inf (the Python API writes them as str_value)
for name, text in (("nan", "nan"), ("inf", "inf"), ("ninf", "-inf")):
    CASES.append(_fill(f"TestFillConstantImperative_{name}", {},
                       {"shape": [1], "value": float(text), "str_value": text,
                        "dtype": pb.VarType.FP32},
                       lambda i, a: np.full([1], float(a["str_value"]), np.float32)))


# ------------------------------------------------------------ fill_zeros_like
CASES += [
    OpCase("fill_zeros_like", {"X": rng.random((219, 232)).astype(dt)},
           lambda i, a: np.zeros(i["X"].shape, i["X"].dtype), grad=(), rtol=0, atol=0,
           name=f"paddle_{name}")
    for name, dt in (("TestFillZerosLikeOp", np.float32), ("TestFillZerosLikeOpFp16", np.float16))
]


# --------------------------------------------------------------------- assign
CASES += port("assign", "TestAssignOp", {"X": rng.random((10, 10))}, lambda i, a: i["X"])
CASES += port("assign", "TestAssignOp_ZeroDim", {"X": np.array(rng.random())},
              lambda i, a: i["X"])


# Regressions (Paddle 3.3.1's precedence, checked with Paddle itself): ShapeTensor over
# ShapeTensorList, ValueTensor over str_value over value. fluidscope had both reversed,
# and refused a -1 in the shape attribute next to a ShapeTensorList.
CASES += [
    OpCase("fill_constant", {"ShapeTensor": np.array([2, 3], np.int32),
                             "ShapeTensorList": [np.array([4], np.int32),
                                                 np.array([5], np.int32)]},
           _full([2, 3], 1.0), attrs={"value": 1.0}, grad=(), name="shape_tensor_first"),
    OpCase("fill_constant", {"ValueTensor": np.array([7.0], np.float32)}, _full([2], 7.0),
           attrs={"shape": [2], "value": 1.0, "str_value": "2.5"}, grad=(),
           name="value_tensor_over_str_value"),
    OpCase("fill_constant", {}, _full([2], 2.5), attrs={"shape": [2], "value": 1.0,
                                                         "str_value": "2.5"}, grad=(),
           name="str_value_over_value"),
]
