"""Building bare ProgramDescs by hand: one var or op at a time, attrs typed by the registry.

The designer is the friendly way to build programs; these two helpers serve engine
code (gradient checks, backward) and tests that need a desc without the designer.
"""
from . import registry
from .dtypes import to_var_type
from .proto import framework_pb2 as pb


def add_var(block, name, dims=(), dtype="float32", *, persistable=False, is_parameter=False,
            stop_gradient=False, lod_level=0, kind=pb.VarType.DENSE_TENSOR):
    """Declare a variable in ``block`` (a BlockDesc); dims use -1 for unknown."""
    v = block.vars.add(name=name, persistable=persistable)
    if is_parameter:
        v.is_parameter = True
    if stop_gradient:
        v.stop_gradient = True
    v.type.type = kind
    if kind == pb.VarType.DENSE_TENSOR:
        v.type.dense_tensor.tensor.data_type = to_var_type(dtype)
        v.type.dense_tensor.tensor.dims.extend(int(d) for d in dims)
        if lod_level:
            v.type.dense_tensor.legacy_lod_level = lod_level
    return v


def add_op(block, type, inputs=None, outputs=None, attrs=None, **more_attrs):
    """Append an op to ``block``; each attribute gets the AttrType the registry declares
    (``sub_block``-style BLOCK attrs included)."""
    opdef = registry.get(type)
    op = block.ops.add(type=type)
    for slot, names in (inputs or {}).items():
        op.inputs.add(parameter=slot, arguments=list(names))
    for slot, names in (outputs or {}).items():
        op.outputs.add(parameter=slot, arguments=list(names))
    for name, value in {**(attrs or {}), **more_attrs}.items():
        spec = opdef.attr_by_name.get(name)
        attr_type = spec.type if spec is not None else registry.AttrType.BLOCK
        registry.attr_to_proto(name, attr_type, value, op.attrs.add())
    return op


def set_attr(op, name, attr_type, value):
    """Set (replace) attribute ``name`` of OpDesc ``op``."""
    for a in op.attrs:
        if a.name == name:
            op.attrs.remove(a)
            break
    registry.attr_to_proto(name, attr_type, value, op.attrs.add())


def new_program():
    """A ProgramDesc with its root block (idx 0, parent -1); returns (desc, block 0)."""
    desc = pb.ProgramDesc()
    return desc, desc.blocks.add(idx=0, parent_idx=-1)


def visible_vars(program_desc, block_idx):
    """name -> VarDesc of what block ``block_idx`` can see, searched as Paddle's
    ``BlockDesc::FindVarRecursive`` does: the block, then (breadth first) its forward
    block (a grad block reads the forward step's vars) and its parent. The nearest
    declaration wins; broken or cyclic block links end the walk instead of failing
    (``validate`` reports them)."""
    out, frontier, seen = {}, [block_idx], set()
    n_blocks = len(program_desc.blocks)
    while frontier:
        idx = frontier.pop(0)
        if idx in seen or not 0 <= idx < n_blocks:
            continue
        seen.add(idx)
        block = program_desc.blocks[idx]
        for v in block.vars:
            out.setdefault(v.name, v)
        if block.forward_block_idx >= 0:
            frontier.append(block.forward_block_idx)
        if idx != 0:
            frontier.append(block.parent_idx)
    return out
