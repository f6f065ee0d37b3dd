"""Cases for cast, shape, fill_any_like and range (kernels/cast.py).

Ported from Paddle's test_cast_op.py (fp32 -> fp64, fp64 -> fp32, int32 -> fp32, bool,
0-d; the fp16/bf16 classes are not), test_shape_op.py, test_fill_any_like_op.py and
test_arange.py (the legacy ``range`` op). Every case here was rerun in PaddlePaddle 3.3.1
(legacy static mode, same inputs and attributes): outputs equal exactly, output dtypes
equal (``shape`` gives int32 there too), and cast's gradient (a cast back) equals.
``check_dtypes`` also holds the dtype shape inference declares to the one computed.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import build_single_op, run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.dtypes import to_numpy_dtype

from . import OpCase

rng = np.random.default_rng(41)

NOT_PORTED = {
    "TestCastOpFp16ToFp32 / Fp32ToFp16 / BF16 / complex": "fp16/bf16/complex kernels are "
    "not ported (fp16 casts work through numpy, untested against Paddle)",
    "TestCastOpError / TestCastDoubleGradCheck / TestCastTripleGradCheck": "API errors, "
    "double/triple grad",
    "TestFillAnyLikeOpBfloat16 / Float16": "fp16/bf16 are not supported",
    "TestArangeAPI / TestArangeImperative": "Python API (paddle.arange), not the op",
}


def check_dtypes(outs, inputs, attrs, op):
    """The dtype inferred for each output equals the dtype the kernel produced."""
    _, _, names, inferred = build_single_op(op, inputs, attrs)
    for slot in names:
        values = outs[slot] if isinstance(outs[slot], list) else [outs[slot]]
        for meta, value in zip(inferred.get(slot) or [], values):
            if value is not None:
                assert to_numpy_dtype(meta.dtype) == np.asarray(value).dtype, (
                    f"{op} {slot}: inferred {to_numpy_dtype(meta.dtype)}, got "
                    f"{np.asarray(value).dtype}")


def _dtype_check(op, extra=None):
    def check(outs, i, a):
        check_dtypes(outs, i, a, op)
        if extra:
            extra(outs, i, a)
    return check


def _cast_ref(i, a):
    return i["X"].astype(to_numpy_dtype(a["out_dtype"]))


X = rng.standard_normal((3, 4)) * 4
CAST = [("fp32_to_fp64", X.astype(np.float32), 5, 6, ()),
        ("fp64_to_fp32", X, 6, 5, ()),
        ("fp64_to_fp64_grad", X, 6, 6, "auto"),
        ("int32_to_fp32", X.astype(np.int32), 2, 5, ()),
        ("fp32_to_int32_truncates", X.astype(np.float32), 5, 2, ()),
        ("fp64_to_int64", X, 6, 3, ()),
        ("fp32_to_bool", (X > 1) * X.astype(np.float32), 5, 0, ()),
        ("bool_to_int64", X > 0, 0, 3, ()),
        ("int64_to_uint8", np.arange(-3, 9).reshape(3, 4).astype(np.int64), 3, 20, ()),
        ("zero_dim", np.asarray(2.75), 6, 2, ())]


def _check_cast_grad_op(outs, i, a):
    """cast's gradient is another cast, back to the input dtype (Paddle's maker)."""
    from fluidscope.engine.ir.registry import OpView, get
    made = get("cast").grad_maker(OpView("cast", {"X": ["x"]}, {"Out": ["y"]},
                                         {"in_dtype": 5, "out_dtype": 6}))
    assert [(g.type, g.inputs, g.outputs, g.attrs) for g in made] == [
        ("cast", {"X": ["y@GRAD"]}, {"Out": ["x@GRAD"]}, {"in_dtype": 6, "out_dtype": 5})]


def _check_range_errors(outs, i, a):
    one = np.array([1], np.int64)
    for start, end, step, message in ((1, 5, 0, "must not be 0"), (1, 5, -1, "points away")):
        with pytest.raises(FluidscopeError, match=message):
            run_op("range", {"Start": one * start, "End": one * end, "Step": one * step})


def _range_ref(i, a):
    start, end, step = (i[s].reshape(-1)[0] for s in ("Start", "End", "Step"))
    # Paddle's size: ceil(|End - Start| / |Step|), then Step added to a running value.
    count = int(np.ceil(abs((end - start) / step)))
    values, v = [], start
    for _ in range(count):
        values.append(v)
        v = v + step
    return np.array(values, dtype=i["Start"].dtype)


def _scalars(dtype, start, end, step, shape=(1,)):
    return {"Start": np.full(shape, start, dtype), "End": np.full(shape, end, dtype),
            "Step": np.full(shape, step, dtype)}


CASES = [
    OpCase("cast", {"X": x}, _cast_ref, attrs={"in_dtype": i, "out_dtype": o}, grad=g,
           check=_dtype_check("cast", _check_cast_grad_op if g else None), name=name)
    for name, x, i, o, g in CAST
] + [
    OpCase("shape", {"Input": rng.standard_normal((2, 3, 4))},
           lambda i, a: np.array([2, 3, 4], np.int32), check=_dtype_check("shape"),
           name="paddle_op"),
    OpCase("shape", {"Input": np.asarray(1.0)}, lambda i, a: np.zeros((0,), np.int32),
           check=_dtype_check("shape"), name="zero_dim"),
    OpCase("shape", {"Input": np.zeros((0, 5), np.int64)}, lambda i, a: np.array([0, 5], np.int32),
           name="zero_size"),
    OpCase("fill_any_like", {"X": rng.standard_normal((2, 3))},
           lambda i, a: np.full((2, 3), 0.0), check=_dtype_check("fill_any_like"),
           name="paddle_default"),
    OpCase("fill_any_like", {"X": rng.standard_normal((2, 3)).astype(np.float32)},
           lambda i, a: np.full((2, 3), -2.5, np.float32), attrs={"value": -2.5},
           check=_dtype_check("fill_any_like"), name="paddle_value"),
    OpCase("fill_any_like", {"X": rng.standard_normal((2, 3)).astype(np.float32)},
           lambda i, a: np.full((2, 3), 2, np.int64), attrs={"value": 2.5, "dtype": 3},
           check=_dtype_check("fill_any_like"), name="to_int64_truncates"),
    OpCase("fill_any_like", {"X": np.zeros((4,), np.int32)},
           lambda i, a: np.full((4,), 7, np.int32), attrs={"value": 7.0},
           check=_dtype_check("fill_any_like"), name="int32_same_dtype"),
    OpCase("fill_any_like", {"X": np.zeros((2, 2))}, lambda i, a: np.ones((2, 2), bool),
           attrs={"value": 1.0, "dtype": 0}, check=_dtype_check("fill_any_like"), name="bool"),
    OpCase("range", _scalars(np.float32, 1.0, 5.0, 1.5), _range_ref,
           check=_dtype_check("range", _check_range_errors), name="float32"),
    OpCase("range", _scalars(np.int64, 0, 10, 3), _range_ref, check=_dtype_check("range"),
           name="int64"),
    OpCase("range", _scalars(np.int32, 1, -5, -2, ()), _range_ref, check=_dtype_check("range"),
           name="int32_negative_step_0d"),
    OpCase("range", _scalars(np.float64, 0.0, 1.0, 0.1), _range_ref, name="float64_tenths"),
    OpCase("range", _scalars(np.int64, 3, 3, 1), _range_ref, name="empty"),
    # assign_value: values written as Paddle 3.3.1 writes them (SCALARS: floats as FLOAT64,
    # ints as LONG, bools as BOOLEAN).
    OpCase("assign_value", {}, lambda i, a: np.array([[1.5, 2], [3, 4]], np.float32),
           attrs={"shape": [2, 2], "dtype": 5, "values": [1.5, 2.0, 3.0, 4.0]},
           check=_dtype_check("assign_value"), name="paddle_fp32"),
    OpCase("assign_value", {}, lambda i, a: np.array([1, 2, -3], np.int64),
           attrs={"shape": [3], "dtype": 3, "values": [1, 2, -3]},
           check=_dtype_check("assign_value"), name="paddle_int64"),
    OpCase("assign_value", {}, lambda i, a: np.array([7, -8], np.int32),
           attrs={"shape": [2], "dtype": 2, "values": [7, -8]}, name="paddle_int32"),
    OpCase("assign_value", {}, lambda i, a: np.array([True, False]),
           attrs={"shape": [2], "dtype": 0, "values": [True, False]}, name="paddle_bool"),
    OpCase("assign_value", {"ValuesTensor": np.array([1.0, 2.0])},
           lambda i, a: np.array([[1.0, 2.0]]), attrs={"shape": [1, 2], "dtype": 6},
           name="values_tensor"),
]
