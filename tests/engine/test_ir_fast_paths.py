"""The memos of engine/ir's hot paths give what the slow paths gave, errors included."""
import numpy as np
import pytest

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import dtypes, registry
from fluidscope.engine.ir.proto import framework_pb2 as pb

AttrType = pb.AttrType


NAMED = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]


def test_dtype_name_is_numpys_name_for_every_supported_enum():
    for name in NAMED:
        enum_value = dtypes.to_var_type(name)
        assert dtypes.dtype_name(enum_value) == name == dtypes.to_numpy_dtype(enum_value).name
        assert dtypes.dtype_name(np.int64(enum_value)) == name


def test_dtype_name_of_an_enum_without_numpy_type_raises_as_before():
    supported = {dtypes.to_var_type(n) for n in NAMED}
    others = [v for v in pb.VarType.Type.values() if v not in supported]
    assert others
    for enum_value in others:
        with pytest.raises(FluidscopeError, match="has no numpy equivalent here"):
            dtypes.dtype_name(enum_value)
    with pytest.raises(FluidscopeError, match="has no numpy equivalent here"):
        dtypes.dtype_name(12345)


@pytest.mark.parametrize("attr_type", [AttrType.INT, AttrType.BLOCK])
def test_int_and_block_attrs_still_refuse_values_outside_int32(attr_type):
    assert registry.coerce_attr(attr_type, 2**31 - 1) == 2**31 - 1
    with pytest.raises(ValueError, match=r"^2147483648 does not fit in int32$"):
        registry.coerce_attr(attr_type, 2**31)


def test_long_attr_takes_values_outside_int32():
    assert registry.coerce_attr(AttrType.LONG, 2**40) == 2**40


def test_attr_coercion_refuses_wrong_types_with_the_same_message():
    with pytest.raises(TypeError, match=r"^expected a list, got int 3$"):
        registry.coerce_attr(AttrType.INTS, 3)
    with pytest.raises(TypeError, match=r"^expected a string, got int 3$"):
        registry.coerce_attr(AttrType.STRING, 3)
    with pytest.raises(TypeError, match=r"^expected an int, got bool True$"):
        registry.coerce_attr(AttrType.INT, True)
