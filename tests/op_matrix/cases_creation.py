"""Cases for the creation ops of kernels/creation.py (the random ones:
cases_creation_random.py).

Ported from Paddle's test_fill_constant_batch_size_like.py, test_linspace.py,
test_logspace.py, test_tril_indices_op.py / test_triu_indices_op.py, test_size_op.py,
test_is_empty_op.py, test_increment.py, test/sequence/test_sequence_mask.py and
test_empty_op.py (configurations and references rewritten).

Compared with PaddlePaddle 3.3.1 itself (legacy static mode, the op appended directly,
same inputs and attributes; /tmp/fs14_creation/paddle_cmp.py): fill_constant_batch_size_like
(with and without LoD), linspace (float and int, both directions, Num 1), logspace
(float, int32, negative and zero base), tril_indices, triu_indices, size, shape64,
is_empty, increment, sequence_mask (attr, -1 and MaxLenTensor) equal exactly, output
dtypes and shapes equal; ``empty`` matched in shape and dtype. ``fill`` cannot run in
Paddle 3.3.1 (its ``fill`` kernel now is the in-place one with an input), so it follows
Paddle 1.x's fill_op.h. None of these ops has a gradient in Paddle; ``increment``'s
"grad op" in Paddle's legacy backward is another ``increment`` (step negated) that
restores X, not a gradient, so none is made here.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.dtypes import to_numpy_dtype

from . import OpCase
from .paddle_port import lod_tensor

rng = np.random.default_rng(1414)
BOOL, INT32, INT64, FP32, FP64, UINT8 = 0, 2, 3, 5, 6, 20

NOT_PORTED = {
    "TestFillConstantBatchSizeLikeFP16Op / BF16Op": "fp16/bf16 are not supported",
    "TestLinspaceOp*FP16 / *BF16": "fp16/bf16 are not supported",
    "TestLinspaceAPI / TestLinspaceOpError": "Python API (paddle.linspace) checks, not the op",
    "TestTrilIndicesAPICase* / TestTriuIndicesAPICase*": "Python API; their configurations "
    "are the op cases ported here",
    "TestIncrement.test_no_inplace_increment / TestInplaceApiWithDataTransform": "PIR "
    "increment gradient / GPU data transform",
    "TestIncrement_ZeroSize": "dygraph only: Paddle 3.3.1's legacy increment refuses a "
    "0-element X (InferMeta), as here",
    "TestSequenceMaskOpError / TestSequenceMaskWithEmptyTensor": "Python API checks",
    "TestEmptyOp_* with fp16/bf16 / TestEmptyError": "fp16/bf16; Python API checks",
    "TestLogspaceFP16Op / BF16Op / TestLogspaceAPI / TestLogspaceOpError": "fp16/bf16; "
    "Python API checks (the int32 config of test_imperative is ported)",
}


def _full(shape, value, dtype):
    return lambda i, a: np.full(shape, value, dtype)


# ------------------------------------------------ fill_constant_batch_size_like
FCBSL = [
    OpCase("fill_constant_batch_size_like", {"Input": np.zeros((10, 10))},
           _full((10, 10), 100, np.float32), attrs={"shape": [10, 10], "value": 100.0,
                                                    "dtype": FP32},
           name="paddle_TestFillConstantBatchSizeLike1"),
    OpCase("fill_constant_batch_size_like", {"Input": np.zeros((3, 5))},
           _full((2, 5, 4), 7, np.int64),
           attrs={"shape": [2, -1, 4], "value": 7.9, "dtype": INT64, "input_dim_idx": 1,
                  "output_dim_idx": 1}, name="dim_idx_int64_truncates"),
    OpCase("fill_constant_batch_size_like", {"Input": np.zeros((3, 2))},
           _full((3, 2), 0.1, np.float64),
           attrs={"shape": [-1, 2], "value": 0.0, "str_value": "0.1", "dtype": FP64},
           name="str_value_wins"),
    # an RNN's initial state: one row per sequence, not per time step
    OpCase("fill_constant_batch_size_like", {"Input": lod_tensor(np.zeros((5, 3)), [[2, 3]])},
           _full((2, 4), 0, np.float32), attrs={"shape": [-1, 4], "dtype": FP32},
           name="lod_batch_is_sequence_count"),
]


def _check_fcbsl_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="output_dim_idx"):
        run_op("fill_constant_batch_size_like", {"Input": np.zeros((2, 2))},
               {"shape": [-1, 2], "output_dim_idx": 2})


FCBSL[0].check = _check_fcbsl_errors


# ------------------------------------------------------------------- linspace
def _linspace_ref(i, a):
    dtype = to_numpy_dtype(a["dtype"])
    start, stop = (float(i[s].reshape(-1)[0].astype(dtype)) for s in ("Start", "Stop"))
    n = int(i["Num"][0])
    if n == 1:
        return np.array([start], dtype)
    step = (stop - start) / (n - 1)
    values = [start + step * k if k < n // 2 else stop - step * (n - k - 1) for k in range(n)]
    return np.array([int(v) if np.issubdtype(dtype, np.integer) else v for v in values]
                    ).astype(dtype)


def _lin(start, stop, num, dtype, in_dtype="float32"):
    return {"Start": np.array([start], in_dtype), "Stop": np.array([stop], in_dtype),
            "Num": np.array([num], np.int32)}


LINSPACE = [
    OpCase("linspace", _lin(0, 10, 11, FP32), _linspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLinspaceOpCommonCase"),
    OpCase("linspace", _lin(10, 0, 11, FP32), _linspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLinspaceOpReverseCase"),
    OpCase("linspace", _lin(10, 0, 1, FP32), _linspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLinspaceOpNumOneCase"),
    OpCase("linspace", _lin(0, 10, 7, INT32, "int32"), _linspace_ref, attrs={"dtype": INT32},
           name="int32_truncates"),
    OpCase("linspace", _lin(-1.3, 2.9, 6, FP64, "float64"), _linspace_ref,
           attrs={"dtype": FP64}, rtol=0, atol=0, name="float64_exact"),
]


# ------------------------------------------------------------------- logspace
def _logspace_ref(i, a):
    dtype = to_numpy_dtype(a["dtype"])
    base = float(i["Base"][0].astype(dtype))
    exps = _linspace_ref({k: i[k] for k in ("Start", "Stop", "Num")}, {"dtype": FP64})
    values = [base ** float(e) for e in exps]
    return np.array([int(v) if np.issubdtype(dtype, np.integer) else v for v in values]
                    ).astype(dtype)


def _log(start, stop, num, base, dtype="float32"):
    return dict(_lin(start, stop, num, FP32, dtype), Base=np.array([base], dtype))


LOGSPACE = [
    OpCase("logspace", _log(0, 10, 11, 2), _logspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLogspaceOpCommonCase"),
    OpCase("logspace", _log(10, 0, 11, 2), _logspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLogspaceOpReverseCase"),
    OpCase("logspace", _log(10, 0, 1, 2), _logspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLogspaceOpNumOneCase"),
    OpCase("logspace", _log(0, 10, 11, -2), _logspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLogspaceOpMinusBaseCase"),
    OpCase("logspace", _log(0, 10, 11, 0), _logspace_ref, attrs={"dtype": FP32},
           name="paddle_TestLogspaceOpZeroBaseCase"),
    OpCase("logspace", _log(0, 10, 5, 2, "int32"), _logspace_ref, attrs={"dtype": INT32},
           name="paddle_TestLogspaceAPI_int32_truncates"),
    OpCase("logspace", _log(1.5, -2.25, 6, 3, "float64"), _logspace_ref, attrs={"dtype": FP64},
           name="float64"),
]


# --------------------------------------------------------- tril/triu_indices
def _tri_ref(lower, r, c):
    def ref(i, a):
        make = np.tril_indices if lower else np.triu_indices
        out = np.array(make(a[r], a["offset"], a[c]), dtype=to_numpy_dtype(a.get("dtype", INT64)))
        return {"out": out.reshape(2, -1)}
    return ref


TRI = [
    OpCase("tril_indices", {}, _tri_ref(True, "rows", "cols"), attrs=dict(rows=r, cols=c, offset=o),
           name=f"paddle_{n}")
    for n, r, c, o in (("TestTrilIndicesOp", 4, 4, -1), ("TestTrilIndicesOpCase1", 0, 0, 0),
                       ("TestTrilIndicesOpCase2", 4, 4, 2), ("rect", 5, 3, 1))
] + [
    OpCase("triu_indices", {}, _tri_ref(False, "row", "col"), attrs=dict(row=r, col=c, offset=o),
           name=f"paddle_{n}")
    for n, r, c, o in (("TestTriuIndicesOp", 4, 4, -1), ("TestTriuIndicesOp2", 0, 0, 0),
                       ("TestTriuIndicesOp3", 3, 2, 2), ("rect", 4, 3, 0))
] + [OpCase("tril_indices", {}, _tri_ref(True, "rows", "cols"),
            attrs=dict(rows=3, cols=3, offset=0, dtype=INT32), name="int32")]


# ----------------------------------------------------- size, shape64, is_empty
X234 = rng.standard_normal((2, 3, 4))
SIZES = [
    OpCase("size", {"Input": X234}, lambda i, a: np.array(24, np.int64), name="paddle_TestSizeOp"),
    OpCase("size", {"Input": np.zeros((0, 3), np.float32)}, lambda i, a: np.array(0, np.int64),
           name="zero_size"),
    OpCase("size", {"Input": np.asarray(2.0)}, lambda i, a: np.array(1, np.int64), name="zero_dim"),
    OpCase("shape64", {"input": X234}, lambda i, a: {"out": np.array([2, 3, 4], np.int64)},
           name="op"),
    OpCase("is_empty", {"X": X234}, lambda i, a: np.array(False), name="paddle_TestEmpty"),
    OpCase("is_empty", {"X": np.zeros((0, 3))}, lambda i, a: np.array(True),
           name="paddle_TestNotEmpty_zero_size"),
]


# ------------------------------------------------------------------ increment
def _check_increment_refuses(outs, i, a):
    with pytest.raises(FluidscopeError, match="one value"):
        run_op("increment", {"X": np.zeros((2,))}, {"step": 1.0})


INCREMENT = [
    OpCase("increment", {"X": np.array([5], np.int64)}, lambda i, a: np.array([8], np.int64),
           attrs={"step": 3.0}, check=_check_increment_refuses, name="paddle_TestIncrement"),
    OpCase("increment", {"X": np.array([1.5], np.float32)},
           lambda i, a: np.array([1.0], np.float32), attrs={"step": -0.5}, name="float32"),
    OpCase("increment", {"X": np.array([0.25])}, lambda i, a: np.array([1.25]), name="default"),
]


# -------------------------------------------------------------- sequence_mask
def _mask_ref(i, a):
    x = i["X"]
    maxlen = int(i["MaxLenTensor"][0]) if "MaxLenTensor" in i else a.get("maxlen", -1)
    maxlen = int(x.max()) if maxlen < 0 else maxlen
    y = np.zeros(x.shape + (maxlen,), dtype=bool)
    for idx in np.ndindex(*x.shape):
        y[idx][:x[idx]] = True
    return {"Y": y.astype(to_numpy_dtype(a["out_dtype"]))}


LENS = np.array([[0, 3, 4], [5, 7, 9]], np.int64)
MASK = [
    OpCase("sequence_mask", {"X": LENS}, _mask_ref, attrs={"maxlen": 10, "out_dtype": d},
           name=f"paddle_{n}")
    for n, d in (("SequenceMaskTestBase", INT64), ("SequenceMaskTest1", BOOL),
                 ("SequenceMaskTest2", UINT8), ("SequenceMaskTest3", INT32),
                 ("SequenceMaskTest4", FP32), ("SequenceMaskTest5", FP64))
] + [
    OpCase("sequence_mask", {"X": LENS}, _mask_ref, attrs={"maxlen": -1, "out_dtype": INT64},
           name="paddle_SequenceMaskTest6"),
] + [
    OpCase("sequence_mask", {"X": LENS, "MaxLenTensor": np.array([10], np.int32)}, _mask_ref,
           attrs={"out_dtype": d}, name=f"paddle_{n}_tensor_attr")
    for n, d in (("SequenceMaskTestBase", INT64), ("SequenceMaskTest1", BOOL),
                 ("SequenceMaskTest4", FP32))
] + [
    OpCase("sequence_mask", {"X": np.array([2, 0, 1], np.int32)}, _mask_ref,
           attrs={"maxlen": 3, "out_dtype": FP32}, name="int32_lengths"),
]


# ---------------------------------------------------------------- empty, fill
def _check_empty(shape, dtype):
    def check(outs, i, a):
        out = outs["Out"]
        assert out.shape == shape and out.dtype == dtype
    return check


EMPTY = [
    OpCase("empty", {}, None, attrs={"shape": [2, 3], "dtype": FP32},
           check=_check_empty((2, 3), np.float32), name="paddle_TestEmptyOp"),
    OpCase("empty", {"ShapeTensor": np.array([4, 2], np.int64)}, None, attrs={"dtype": INT64},
           check=_check_empty((4, 2), np.int64), name="paddle_TestEmptyOp_ShapeTensor"),
    OpCase("empty", {"ShapeTensorList": [np.array([3], np.int64), np.array([2], np.int32)]},
           None, attrs={"dtype": BOOL}, check=_check_empty((3, 2), np.bool_),
           name="paddle_TestEmptyOp_ShapeTensorList"),
    OpCase("fill", {}, lambda i, a: np.array([[1, 2], [3, 4.5]], np.float32),
           attrs={"value": [1.0, 2.0, 3.0, 4.5], "shape": [2, 2]}, name="float32"),
    OpCase("fill", {}, lambda i, a: np.array([1, -2, 3], np.int64),
           attrs={"value": [1.9, -2.7, 3.0], "shape": [3], "dtype": INT64}, name="int64_truncates"),
]


CASES = FCBSL + LINSPACE + LOGSPACE + TRI + SIZES + INCREMENT + MASK + EMPTY
