"""Readable listing of a Program: blocks, variables with shapes, ops with slots and attrs."""
from fluidscope.engine import registry
from fluidscope.engine.ir.dtypes import dtype_name
from fluidscope.engine.ir.proto import framework_pb2 as pb

_HIDDEN = {"op_callstack", "op_namescope", "op_device", "with_quant_attr"}


def _var_line(v, with_details):
    t = v.type
    kind = pb.VarType.Type.Name(t.type)
    if t.HasField("dense_tensor"):
        dims = ", ".join("?" if d < 0 else str(d) for d in t.dense_tensor.tensor.dims)
        kind += f"[{dims}] {dtype_name(t.dense_tensor.tensor.data_type)}"
        if t.dense_tensor.legacy_lod_level:
            kind += f" lod_level={t.dense_tensor.legacy_lod_level}"
    tags = []
    if v.is_parameter:
        tags.append("param" if not v.stop_gradient else "param(frozen)")
    elif v.persistable:
        tags.append("persist")
    if with_details and v.stop_gradient and not v.is_parameter:
        tags.append("stop_gradient")
    prefix = " ".join(tags) + " " if tags else ""
    return f"    {prefix}var {v.name} : {kind}"


def _attr_text(op, with_details):
    opdef = registry.get(op.type) if registry.has(op.type) else None
    parts = []
    for a in op.attrs:
        if a.name in _HIDDEN and not with_details:
            continue
        value = registry.attr_from_proto(a)
        spec = opdef.attr_spec(a.name) if opdef else None
        if not with_details and spec is not None and a.name != "op_role" and (
                spec.extra or spec.default == value):
            continue  # a default, or a Paddle runtime-only attribute (use_cudnn...)
        parts.append(f"{a.name}={value!r}")
    return ", ".join(parts)


def _op_line(i, op, with_details):
    outs = ", ".join(f"{v.parameter}={list(v.arguments)}" for v in op.outputs)
    ins = ", ".join(f"{v.parameter}={list(v.arguments)}" for v in op.inputs)
    attrs = _attr_text(op, with_details)
    return f"    #{i} {{{outs}}} = {op.type}({ins}{', ' if attrs and ins else ''}{attrs})"


def program_to_string(program, with_details=False) -> str:
    """The listing ``Program.to_string`` returns."""
    desc = getattr(program, "desc", program)
    lines = []
    for block in desc.blocks:
        lines.append(f"{{ // block {block.idx} (parent {block.parent_idx})")
        lines.extend(_var_line(v, with_details) for v in block.vars)
        lines.append("")
        lines.extend(_op_line(i, op, with_details) for i, op in enumerate(block.ops))
        lines.append("}")
    return "\n".join(lines)
