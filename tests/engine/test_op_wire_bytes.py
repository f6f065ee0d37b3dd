"""OpDescs written as wire bytes (descs.fill_op, op_attrs.checked_and_encoded) are the
messages the field-by-field construction makes, for the values whose encoding depends
on more than equality: 0.0 and -0.0, nan, bool / int / float of equal value in a Scalar
attribute, an IntFlag, numpy numbers, float lists, non-ASCII names; and the attribute
memos hand out fresh values and refuse what parse_attrs refuses."""
import math

import numpy as np
import pytest

from fluidscope.engine.errors import FluidscopeError, SchemaError
from fluidscope.engine.ir import descs, dtypes, op_attrs, registry
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.roles import OpRole


def field_by_field(type, inputs, outputs, attrs):
    """The OpDesc as it was built before the byte path: one protobuf call per field."""
    opdef = registry.get(type)
    op = pb.OpDesc()
    op.type = type
    for slot, names in inputs.items():
        op.inputs.add(parameter=slot, arguments=list(names))
    for slot, names in outputs.items():
        op.outputs.add(parameter=slot, arguments=list(names))
    for name, value in attrs.items():
        spec = opdef.attr_spec(name)
        registry.attr_to_proto(name, spec.type, value, op.attrs.add())
    return op


def both(type, inputs, outputs, attrs):
    """fill_op twice (the second from the memo) and the reference, serialised."""
    ref = field_by_field(type, inputs, outputs, attrs)
    made = [descs.make_op(type, inputs, outputs, attrs) for _ in range(2)]
    assert [m == ref for m in made] == [True, True]
    return [m.SerializeToString(deterministic=True) for m in made], ref.SerializeToString(
        deterministic=True)


CASES = [
    ("scale", {"scale": 0.0, "bias": -0.0}),
    ("scale", {"scale": -0.0, "bias": 0.0}),
    ("scale", {"scale": math.nan, "bias": math.inf}),
    ("scale", {"scale": np.float32(0.5), "bias": np.float64(-2.0), "bias_after_scale": False}),
    ("scale", {"scale": 1.0, "op_role": OpRole.BACKWARD | OpRole.LOSS}),
    ("scale", {"scale": 1.0, "op_role": np.int64(1)}),
    ("scale", {"scale": 3.0, "op_namescope": "/résumé/ü/", "op_callstack": ["ü.py:3", ""]}),
    ("scale", {"scale": 1.0, "op_callstack": [], "op_role_var": ["w", "w@GRAD"]}),
]


@pytest.mark.parametrize("type,attrs", CASES)
def test_fill_op_writes_the_field_by_field_message(type, attrs):
    made, ref = both(type, {"X": ["x\u00e9"]}, {"Out": ["y.tmp_0"]}, attrs)
    assert made == [ref, ref]


def test_zero_and_negative_zero_stay_apart_in_the_memo():
    plus = descs.make_op("scale", {"X": ["x"]}, {"Out": ["y"]}, {"scale": 0.0})
    minus = descs.make_op("scale", {"X": ["x"]}, {"Out": ["y"]}, {"scale": -0.0})
    assert math.copysign(1, plus.attrs[0].f) == 1 and math.copysign(1, minus.attrs[0].f) == -1


@pytest.mark.parametrize("values", [[1, 2.0, True], [True, 2, 2.5], [2.0, 1, False], [], [0.0, -0.0]])
def test_scalar_lists_keep_each_elements_kind(values):
    attrs = {"values": values, "shape": [len(values)], "dtype": 5}
    made, ref = both("assign_value", {}, {"Out": ["v"]}, attrs)
    assert made == [ref, ref]
    kinds = [s.type for s in descs.make_op("assign_value", {}, {"Out": ["v"]}, attrs).attrs[0].scalars]
    want = {bool: pb.Scalar.BOOLEAN, int: pb.Scalar.LONG, float: pb.Scalar.FLOAT64}
    assert kinds == [want[type(v)] for v in values]


def test_a_non_string_argument_still_fails_as_protobuf_fails():
    with pytest.raises(TypeError):
        descs.make_op("scale", {"X": [3]}, {"Out": ["y"]}, {"scale": 1.0})


def given_as_framework_gives(attrs, namescope="/fc_0/", callstack=()):
    return {**attrs, "op_role": OpRole.FORWARD, "op_namescope": namescope,
            "op_callstack": list(callstack)}


def kinds(attrs):
    """Each value's type, and a list's elements' types (a Scalar list keeps them)."""
    return [(type(v), [type(x) for x in v] if isinstance(v, list) else None)
            for v in attrs.values()]


@pytest.mark.parametrize("op_type,attrs", [
    ("mul", {"x_num_col_dims": 1, "y_num_col_dims": 1}),
    ("fill_constant", {"value": -0.0, "shape": [4], "dtype": 5}),
    ("fill_constant", {"value": 0.0, "shape": [4], "dtype": 5}),
    ("uniform_random", {"min": -0.5, "max": 0.5, "seed": 0, "shape": [3, 4], "dtype": 5}),
    ("assign_value", {"values": [1, True, 1.0], "shape": [3], "dtype": 5}),
    ("assign_value", {"values": [1.0, 1, True], "shape": [3], "dtype": 5}),
])
def test_checked_and_encoded_is_parse_attrs_and_its_bytes_every_time(op_type, attrs):
    opdef = registry.get(op_type)
    places = [("/fc_0/", ""), ("/fc_0/", "a.py:1"), ("/fc_0/", "b.py:2"), ("/fc_1/", "b.py:2"),
              ("/", "")]  # one layer's ops on several lines, and another layer's
    for scope, site in places:
        given = given_as_framework_gives(attrs, scope, [site] if site else [])
        checked, encoded = op_attrs.checked_and_encoded(opdef, given)
        want = opdef.parse_attrs(given)
        assert checked == want and list(checked) == list(want)
        assert kinds(checked) == kinds(want)
        ref = field_by_field(op_type, {}, {}, {n: want[n] for n in given})
        op = pb.OpDesc()
        op.MergeFromString(encoded)
        assert list(op.attrs) == list(ref.attrs)
        for value in checked.values():  # the caller may change its lists: never the memo's
            if isinstance(value, list):
                value.append("changed")


def test_checked_and_encoded_refuses_what_parse_attrs_refuses_memo_or_not():
    opdef = registry.get("mul")
    good = given_as_framework_gives({"x_num_col_dims": 1})
    op_attrs.checked_and_encoded(opdef, good)  # now in the memo
    with pytest.raises(SchemaError, match="op_namescope"):
        op_attrs.checked_and_encoded(opdef, {**good, "op_namescope": 7})
    with pytest.raises(SchemaError, match="unknown attribute 'nope'"):
        op_attrs.checked_and_encoded(opdef, given_as_framework_gives({"nope": 1}))
    with pytest.raises(SchemaError, match="x_num_col_dims"):
        op_attrs.checked_and_encoded(opdef, given_as_framework_gives({"x_num_col_dims": True}))


def var_field_by_field(name, dims, dtype, persistable, is_parameter, stop_gradient, lod_level,
                       kind, need_check_feed):
    """A VarDesc as add_var built it before the byte path."""
    v = pb.BlockDesc().vars.add(name=name, persistable=persistable)
    if stop_gradient:
        v.stop_gradient = True
    if is_parameter:
        v.is_parameter = True
    if need_check_feed:
        v.need_check_feed = True
    v.type.type = kind
    if kind == pb.VarType.DENSE_TENSOR:
        v.type.dense_tensor.tensor.data_type = dtypes.to_var_type(dtype)
        if dims is not None:
            v.type.dense_tensor.tensor.dims.extend(-1 if d is None else int(d) for d in dims)
        if lod_level:
            v.type.dense_tensor.legacy_lod_level = lod_level
    return v


DENSE = pb.VarType.DENSE_TENSOR
VARS = [
    ("fc_0.tmp_0", None, "float32", False, False, False, 0, DENSE, False),
    ("fc_0.w_0", [32, 33], "float32", True, True, False, 0, DENSE, False),
    ("x", [None, 32], "float64", False, False, True, 0, DENSE, True),
    ("ids\u00e9", (np.int64(-1), 1), "int64", False, False, False, 2, DENSE, True),
    ("lr", [1], np.float32, True, False, 1, 0, DENSE, False),
    ("scopes", None, "float32", False, False, False, 0, pb.VarType.STEP_SCOPES, False),
    ("arr", [3], "float32", False, False, False, 1, pb.VarType.DENSE_TENSOR_ARRAY, False),
    ("empty", [], "bool", 0, 0, 0, 0, DENSE, 0),
]


@pytest.mark.parametrize("args", VARS, ids=[v[0] for v in VARS])
def test_add_var_writes_the_field_by_field_message(args):
    name, dims, dtype, persistable, is_parameter, stop_gradient, lod_level, kind, feed = args
    ref = var_field_by_field(*args)
    block = pb.BlockDesc()
    for _ in range(2):  # the second from the memo
        v = descs.add_var(block, name, dims, dtype, persistable=persistable,
                          is_parameter=is_parameter, stop_gradient=stop_gradient,
                          lod_level=lod_level, kind=kind, need_check_feed=feed)
        assert v == ref and v.SerializeToString() == ref.SerializeToString()
    assert len(block.vars) == 2


def test_add_var_with_an_unknown_dtype_raises_and_adds_nothing():
    block = pb.BlockDesc()
    with pytest.raises(FluidscopeError, match="unsupported dtype"):
        descs.add_var(block, "x", [1], "complex7")
    assert len(block.vars) == 0
