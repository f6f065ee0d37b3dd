"""OpDescs written as wire bytes (descs.fill_op, op_attrs.checked_and_encoded) are the
messages the field-by-field construction makes, for the values whose encoding depends
on more than equality: 0.0 and -0.0, nan, bool / int / float of equal value in a Scalar
attribute, an IntFlag, numpy numbers, float lists, non-ASCII names; and the attribute
memos hand out fresh values and refuse what parse_attrs refuses."""
import math

import numpy as np
import pytest

from fluidscope.engine.errors import SchemaError
from fluidscope.engine.ir import descs, op_attrs, registry
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
    for k, site in enumerate(["", "a.py:1", "b.py:2"]):
        given = given_as_framework_gives(attrs, f"/layer_{k}/", [site] if site else [])
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
