"""Mapping between Paddle's VarType.Type data types and numpy dtypes."""
import numpy as np

from ..errors import FluidscopeError
from .proto import framework_pb2 as pb

VarTypes = pb.VarType

_TO_NUMPY = {
    VarTypes.BOOL: np.dtype(np.bool_),
    VarTypes.INT16: np.dtype(np.int16),
    VarTypes.INT32: np.dtype(np.int32),
    VarTypes.INT64: np.dtype(np.int64),
    VarTypes.FP16: np.dtype(np.float16),
    VarTypes.FP32: np.dtype(np.float32),
    VarTypes.FP64: np.dtype(np.float64),
    VarTypes.UINT8: np.dtype(np.uint8),
    VarTypes.INT8: np.dtype(np.int8),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}
_NAMES = {
    "bool": VarTypes.BOOL, "int16": VarTypes.INT16, "int32": VarTypes.INT32,
    "int64": VarTypes.INT64, "float16": VarTypes.FP16, "float32": VarTypes.FP32,
    "float64": VarTypes.FP64, "uint8": VarTypes.UINT8, "int8": VarTypes.INT8,
}


def to_numpy_dtype(var_type):
    """VarType.Type enum value -> numpy dtype."""
    try:
        return _TO_NUMPY[var_type]
    except KeyError:
        raise FluidscopeError(
            f"data type {VarTypes.Type.Name(var_type) if var_type in VarTypes.Type.values() else var_type}"
            " has no numpy equivalent here") from None


def to_var_type(dtype):
    """A dtype given as VarType enum, numpy dtype, or name ('float32') -> VarType enum."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) in _TO_NUMPY:
            return int(dtype)
        raise FluidscopeError(f"unknown data type enum {dtype}")
    if isinstance(dtype, str) and dtype in _NAMES:
        return _NAMES[dtype]
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise FluidscopeError(
            f"unsupported dtype {dtype!r}; use one of {sorted(_NAMES)}") from None


# numpy's dtype.name is computed on every access (slow: ~7,000 calls per cold build
# of a 1,000-layer design), so the names are read once here.
_NAME_OF = {k: v.name for k, v in _TO_NUMPY.items()}


def dtype_name(var_type):
    """VarType enum -> short name such as 'float32'."""
    try:
        return _NAME_OF[var_type]
    except (KeyError, TypeError):  # unknown: to_numpy_dtype raises the usual error
        return to_numpy_dtype(var_type).name
