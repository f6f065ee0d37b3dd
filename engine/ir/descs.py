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
    v = block.vars.add(name=name, persistable=persistable)
    if stop_gradient:
        v.stop_gradient = True
    if is_parameter:
        v.is_parameter = True
    if need_check_feed:
        v.need_check_feed = True
    v.type.type = kind
    if kind == pb.VarType.DENSE_TENSOR:
        v.type.dense_tensor.tensor.data_type = to_var_type(dtype)
        if dims is not None:
            v.type.dense_tensor.tensor.dims.extend(-1 if d is None else int(d) for d in dims)
        if lod_level:
            v.type.dense_tensor.legacy_lod_level = lod_level
    return v


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
    op.type = type
    for slot, names in (inputs or {}).items():
        op.inputs.add(parameter=slot, arguments=list(names))
    for slot, names in (outputs or {}).items():
        op.outputs.add(parameter=slot, arguments=list(names))
    for name, value in (attrs or {}).items():
        spec = opdef.attr_spec(name)  # declared, or one of Paddle's extra attributes
        attr_type = spec.type if spec is not None else registry.AttrType.BLOCK
        registry.attr_to_proto(name, attr_type, value, op.attrs.add())
    return op


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


__all__ = ["add_var", "add_var_typed_as", "copy_var", "fill_op", "make_op", "add_op", "copy_op",
           "set_attr", "remove_attr", "new_program", "add_block"]
