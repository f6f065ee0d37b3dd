"""Cases the coverage meta-test asked of the reductions (kernels/reduce.py, norms.py):
``in_dtype`` and ``out_dtype`` on every reduce op and frobenius_norm, forward from float32
X and gradient-checked in float64; ``reduce_all`` on reduce_min/amin; the AxisTensor /
AxisTensorList inputs of amax, amin, all and any.

PaddlePaddle 3.3.1 (legacy static executor, float32 X, dim [1]; /tmp/pr.py of this
change) reads ``out_dtype`` on reduce_sum only (declared and run float64) and ``in_dtype``
nowhere: reduce_mean/max/prod/amax and frobenius_norm with in_dtype and/or out_dtype
FP64 declared and returned float32. fluidscope cast X and Out on all of them (fixed).
reduce_all/reduce_any give bool whatever is set.
"""
import numpy as np

from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase

rng = np.random.default_rng(171)
FP32, FP64 = pb.VarType.FP32, pb.VarType.FP64
X32 = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
X64 = rng.uniform(0.5, 1.5, (3, 4))
_NP = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "amax": np.max,
       "amin": np.min, "prod": np.prod}


def _ref(fn, axis, dtype=None):
    """X reduced in its own dtype; Out converted to ``dtype`` when given."""
    def ref(i, a):
        out = np.asarray(fn(i["X"], axis=axis))
        return out.astype(dtype) if dtype is not None else out
    return ref


def _fro(axis):
    return lambda i, a: np.sqrt((i["X"] * i["X"]).sum(axis=axis))


def _dtype_is(dtype):
    def check(outs, i, a):
        assert outs["Out"].dtype == dtype, (outs["Out"].dtype, a)
    return check


_is_bool = _dtype_is(np.bool_)


CASES = []
for _op, _fn in _NP.items():
    CASES += [
        OpCase(f"reduce_{_op}", {"X": X32}, _ref(_fn, 1), attrs={"dim": [1], "in_dtype": FP64},
               grad=(), name="in_dtype_not_read", rtol=1e-6, check=_dtype_is(np.float32)),
        OpCase(f"reduce_{_op}", {"X": X32},
               _ref(_fn, 0, np.float64 if _op == "sum" else None),
               attrs={"dim": [0], "out_dtype": FP64}, grad=(),
               name="out_dtype_fp64" if _op == "sum" else "out_dtype_not_read", rtol=1e-6,
               check=_dtype_is(np.float64 if _op == "sum" else np.float32)),
        OpCase(f"reduce_{_op}", {"X": X64}, _ref(_fn, 1),
               attrs={"dim": [1], "in_dtype": FP64, "out_dtype": FP64}, name="dtypes_grad"),
    ]
CASES += [
    OpCase("frobenius_norm", {"X": X32}, _fro(1),
           attrs={"dim": [1], "in_dtype": FP64, "out_dtype": FP64}, grad=(),
           name="dtypes_not_read", rtol=1e-6, check=_dtype_is(np.float32)),
    OpCase("frobenius_norm", {"X": X64}, _fro(1),
           attrs={"dim": [1], "in_dtype": FP64, "out_dtype": FP64}, name="dtypes_grad"),
    OpCase("reduce_min", {"X": X64}, _ref(np.min, None), attrs={"reduce_all": True},
           name="reduce_all"),
    OpCase("reduce_amin", {"X": X64}, _ref(np.min, None), attrs={"dim": [1], "reduce_all": True},
           name="reduce_all"),
    OpCase("reduce_amin", {"X": X64, "AxisTensor": np.array([1], np.int64)}, _ref(np.min, 1),
           attrs={"dim": [0]}, name="axis_tensor"),
    OpCase("reduce_amax", {"X": X64, "AxisTensorList": [np.array([0], np.int64)]},
           _ref(np.max, 0), attrs={"dim": [1]}, name="axis_tensor_list"),
]
_BITS = rng.integers(0, 2, (3, 4)).astype(np.float32)
for _op, _fn in (("all", np.all), ("any", np.any)):
    CASES += [
        OpCase(f"reduce_{_op}", {"X": _BITS, "AxisTensorList": [np.array([1], np.int64)]},
               lambda i, a, fn=_fn: fn(i["X"], axis=1), attrs={"dim": [0]},
               name="axis_tensor_list"),
        OpCase(f"reduce_{_op}", {"X": _BITS, "AxisTensor": np.array([0], np.int64)},
               lambda i, a, fn=_fn: fn(i["X"], axis=0), attrs={"dim": [1]}, name="axis_tensor"),
        OpCase(f"reduce_{_op}", {"X": _BITS}, lambda i, a, fn=_fn: fn(i["X"], axis=1),
               attrs={"dim": [1], "in_dtype": FP64, "out_dtype": FP32}, check=_is_bool,
               name="dtypes_not_read"),
    ]
