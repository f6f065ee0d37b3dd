"""The only builders of OpDescs and VarDescs: one var or op at a time, attrs typed by the registry.

The designer, backward, gradient checks, pruning and tests all build descs through
these functions, so an op's slot layout and an attribute's AttrType are decided in one
place (the registry's record of the op).
"""
from __future__ import annotations

from . import registry
from .dtypes import to_var_type
from .proto import framework_pb2 as pb


def add_var(block, name, dims=(), dtype="float32", *, persistable=False, is_parameter=False,
            stop_gradient=False, lod_level=0, kind=pb.VarType.DENSE_TENSOR,
            need_check_feed=False):
    """Declare a variable in ``block`` (a BlockDesc); dims use -1 (or None) for unknown,
    ``dims=None`` leaves them to shape inference."""
    dense = kind == pb.VarType.DENSE_TENSOR
    data_type = to_var_type(dtype) if dense else None
    shape = None if dims is None or not dense else tuple(-1 if d is None else int(d) for d in dims)
    key = (kind, data_type, shape, lod_level, persistable, bool(is_parameter),
           bool(stop_gradient), bool(need_check_feed))
    rest = _VAR_TEMPLATES.get(key)
    if rest is None or name.__class__ is not str:
        rest = _var_template(key)
        if rest is None or name.__class__ is not str:
            return _add_var_fields(block.vars.add(name=name, persistable=persistable), *key)
    raw = name.encode()
    v = block.vars.add()
    v.MergeFromString(_TAG_PARAMETER + _varint(len(raw)) + raw + rest)
    return v


def _add_var_fields(v, kind, data_type, shape, lod_level, persistable, is_parameter,
                    stop_gradient, need_check_feed):
    """Fill the VarDesc ``v`` (its name and persistable set) field by field."""
    if stop_gradient:
        v.stop_gradient = True
    if is_parameter:
        v.is_parameter = True
    if need_check_feed:
        v.need_check_feed = True
    v.type.type = kind
    if kind == pb.VarType.DENSE_TENSOR:
        v.type.dense_tensor.tensor.data_type = data_type
        if shape is not None:
            v.type.dense_tensor.tensor.dims.extend(shape)
        if lod_level:
            v.type.dense_tensor.legacy_lod_level = lod_level
    return v


# Why: a cold build of a 1,000-layer design declares ~7,000 variables, a handful of
# kinds (an fc's temporaries, its weight of a few shapes); field by field each is ~10
# protobuf calls. A VarDesc is its name's bytes followed by the rest, which is the same
# for every variable of one key: made once by ``_add_var_fields`` and kept.
_VAR_TEMPLATES: dict = {}
_VAR_TEMPLATES_MAX = 4096


def _var_template(key):
    """The bytes after the name of a VarDesc of ``key`` (None: not kept)."""
    wire = _add_var_fields(pb.VarDesc(name="", persistable=key[4]), *key).SerializeToString()
    if not wire.startswith(b"\x0a\x00"):  # the name first, as upb writes fields in order
        return None
    if len(_VAR_TEMPLATES) >= _VAR_TEMPLATES_MAX:
        _VAR_TEMPLATES.clear()
    rest = _VAR_TEMPLATES[key] = wire[2:]
    return rest


def add_var_typed_as(block, name, var_type=None):
    """Declare ``name`` in ``block`` with a copy of ``var_type`` (a VarType message; None:
    a float32 dense tensor of unknown shape). Gradients are declared like their vars."""
    v = block.vars.add(name=name)
    if var_type is not None:
        v.type.CopyFrom(var_type)
    else:
        v.type.type = pb.VarType.DENSE_TENSOR
        v.type.dense_tensor.tensor.data_type = pb.VarType.FP32
    return v


def copy_var(block, var_desc):
    """Append a copy of ``var_desc`` to ``block``; returns the copy."""
    v = block.vars.add()
    v.CopyFrom(var_desc)
    return v


def fill_op(op, type, inputs=None, outputs=None, attrs=None):
    """Fill the empty OpDesc ``op``: slot -> names maps in the given order, and each
    attribute with the AttrType the registry declares for ``type`` (undeclared ones, such
    as a ``sub_block`` given to a test op, are written as BLOCK)."""
    opdef = registry.get(type)
    if fill_op_encoded(op, type, inputs, outputs, attr_entries(opdef, attrs or {})):
        return op
    op.type = type
    for slot, names in (inputs or {}).items():
        op.inputs.add(parameter=slot, arguments=list(names))
    for slot, names in (outputs or {}).items():
        op.outputs.add(parameter=slot, arguments=list(names))
    for name, value in (attrs or {}).items():
        registry.attr_to_proto(name, _attr_type(opdef, name), value, op.attrs.add())
    return op


def _attr_type(opdef, name):
    spec = opdef.attr_spec(name)  # declared, or one of Paddle's extra attributes
    return spec.type if spec is not None else registry.AttrType.BLOCK


# Why bytes: setting an OpDesc field by field from Python costs a upb call per field
# (~11 us for a ``mul``), and a cold build of a 1,000-layer design writes ~5,000 ops
# with ~26,000 attributes, most of them the same (op_role 0, x_num_col_dims 1, a layer's
# namescope on each of its ops). The wire form of each attribute is made once by
# ``attr_to_proto`` itself and kept; an op is then its slots' and attributes' bytes
# joined and parsed in one ``MergeFromString``: the same message, field for field.
_ATTR_ENTRIES: dict = {}
_ATTR_ENTRIES_MAX = 8192  # namescopes are per layer: emptied when full, not grown forever
_TAG_INPUT, _TAG_OUTPUT, _TAG_TYPE, _TAG_ATTR = b"\x0a", b"\x12", b"\x1a", b"\x22"
_TAG_PARAMETER, _TAG_ARGUMENT = b"\x0a", b"\x12"
_SMALL_LENGTHS = [bytes((n,)) for n in range(0x80)]


def _varint(n):
    if n < 0x80:
        return _SMALL_LENGTHS[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _delimited(tag, payload):
    return tag + _varint(len(payload)) + payload


def value_key(value):
    """A hashable key of an attribute value that tells apart values that encode
    differently: a bool, int or float of equal value (a Scalar attribute keeps the
    kind), 0.0 and -0.0. None: not keyed (a float list, a numpy number, a mixed list)."""
    kind = value.__class__
    if kind is str:
        return value
    if kind is int or kind is bool:
        return (kind, value)
    if kind is float:
        return (kind, value if value else value.hex())
    if kind is list or kind is tuple:
        first = value[0].__class__ if value else str
        if (first is int or first is str) and all(v.__class__ is first for v in value):
            return (list, first, tuple(value))
    elif isinstance(value, int):  # an IntFlag such as op_role's OpRole: written as its int
        return (int, int(value))
    return None


def _attr_key(op_type, name, value):
    """The key of ``name`` = ``value`` in an op of ``op_type`` (which fixes the AttrType)."""
    key = value_key(value)
    return None if key is None else (op_type, name, key)


def _attr_entry(opdef, name, value):
    """The bytes of attribute ``name`` = ``value`` as one entry of OpDesc.attrs."""
    key = _attr_key(opdef.type, name, value)
    entry = _ATTR_ENTRIES.get(key) if key is not None else None
    if entry is None:
        msg = registry.attr_to_proto(name, _attr_type(opdef, name), value)
        entry = _delimited(_TAG_ATTR, msg.SerializeToString())
        if key is not None:
            if len(_ATTR_ENTRIES) >= _ATTR_ENTRIES_MAX:
                _ATTR_ENTRIES.clear()
            _ATTR_ENTRIES[key] = entry
    return entry


_SLOT_PREFIX: dict = {}  # slot name -> the bytes of Var.parameter


def _slot_entries(tag, slots, parts):
    """Append one OpDesc.Var entry per slot to ``parts``; False where a slot or a name is
    not a str."""
    for slot, names in slots.items():
        prefix = _SLOT_PREFIX.get(slot)
        if prefix is None:
            if slot.__class__ is not str:
                return False
            raw = slot.encode()
            prefix = _SLOT_PREFIX[slot] = _TAG_PARAMETER + _varint(len(raw)) + raw
        var = [prefix]
        for n in names:
            if n.__class__ is not str:
                return False
            raw = n.encode()
            var += (_TAG_ARGUMENT, _varint(len(raw)), raw)
        parts.append(_delimited(tag, b"".join(var)))
    return True


def attr_entries(opdef, attrs):
    """``attrs`` (name -> checked value) as the bytes of OpDesc.attrs entries, in order
    (what ``fill_op_encoded`` takes)."""
    return b"".join([_attr_entry(opdef, name, value) for name, value in attrs.items()])


def fill_op_encoded(op, type, inputs, outputs, attr_bytes):
    """``fill_op`` with the attributes given as ``attr_entries``' bytes; False (``op``
    untouched) where a slot or argument is not a str: call ``fill_op`` then."""
    parts = []
    if type.__class__ is not str or not (_slot_entries(_TAG_INPUT, inputs or {}, parts)
                                         and _slot_entries(_TAG_OUTPUT, outputs or {}, parts)):
        return False
    parts.append(_delimited(_TAG_TYPE, type.encode()))
    parts.append(attr_bytes)
    op.MergeFromString(b"".join(parts))
    return True


def make_op(type, inputs=None, outputs=None, attrs=None):
    """A new OpDesc (not in any block); see ``fill_op``."""
    return fill_op(pb.OpDesc(), type, inputs, outputs, attrs)


def add_op(block, type, inputs=None, outputs=None, attrs=None, **more_attrs):
    """Append an op to ``block`` (see ``fill_op``); returns it."""
    return fill_op(block.ops.add(), type, inputs, outputs, {**(attrs or {}), **more_attrs})


def copy_op(block, op_desc):
    """Append a copy of ``op_desc`` to ``block``; returns the copy."""
    op = block.ops.add()
    op.CopyFrom(op_desc)
    return op


def set_attr(op, name, attr_type, value):
    """Set (replace) attribute ``name`` of OpDesc ``op``."""
    remove_attr(op, name)
    registry.attr_to_proto(name, attr_type, value, op.attrs.add())


def remove_attr(op, name):
    """Remove attribute ``name`` of OpDesc ``op`` if it has one."""
    for a in op.attrs:
        if a.name == name:
            op.attrs.remove(a)
            return


def new_program():
    """A ProgramDesc with its root block (idx 0, parent -1); returns (desc, block 0)."""
    desc = pb.ProgramDesc()
    return desc, desc.blocks.add(idx=0, parent_idx=-1)


def add_block(program_desc, parent_idx, forward_block_idx=None):
    """Append a block to ``program_desc`` (its idx is its position); returns it."""
    block = program_desc.blocks.add(idx=len(program_desc.blocks), parent_idx=parent_idx)
    if forward_block_idx is not None:
        block.forward_block_idx = forward_block_idx
    return block


__all__ = ["add_var", "add_var_typed_as", "copy_var", "fill_op", "fill_op_encoded", "attr_entries",
           "value_key", "make_op", "add_op", "copy_op",
           "set_attr", "remove_attr", "new_program", "add_block"]
