"""Small pieces of the graph view: op roles and modes, DOT-safe text, var descriptions.

Everything here is a pure function of protobuf descs or plain values; ``drawing``
puts the pieces together.
"""
from __future__ import annotations

import re

import graphviz

from fluidscope.engine import registry
from fluidscope.engine.ir.dtypes import dtype_name
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import REQUIRED, AttrType
from fluidscope.engine.ir.roles import ROLE_ATTR, role_kind  # noqa: F401  (re-exported by render)

MODES = ("forward", "backward", "all")
# What a person reads on the switch between the three modes.
MODE_LABELS = {"forward": "forward only", "backward": "with gradients", "all": "with optimizer"}
# role kind -> (fill colour, legend text); Paddle's OpRole bits decide the kind.
ROLE_STYLE = {
    "forward": ("#dae8fc", "forward"),
    "loss": ("#f8cecc", "loss"),
    "backward": ("#ffe6cc", "backward"),
    "loss_grad": ("#ffc285", "loss gradient seed"),
    "optimize": ("#d5e8d4", "optimize"),
}
MODE_ROLES = {
    "forward": frozenset({"forward", "loss"}),
    "backward": frozenset({"forward", "loss", "backward", "loss_grad"}),
    "all": frozenset(ROLE_STYLE),
}
# role kind -> phase: what a collapsed layer is split by (its forward ops, its grad ops).
PHASE_OF_ROLE = {"forward": "forward", "loss": "forward", "backward": "backward",
                 "loss_grad": "backward", "optimize": "optimize"}
HOLDER_TYPES = (pb.VarType.FEED_MINIBATCH, pb.VarType.FETCH_LIST)
_HIDDEN_ATTRS = {"op_role", "op_callstack"}  # role is the colour; call stacks are long
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


def safe(name: str) -> str:
    """Reversible DOT-safe spelling: keeps ``[A-Za-z0-9_.]``, writes others as -hex-.

    The output never holds ``@`` or ``:``, so a suffix such as ``@2`` cannot clash
    with a spelled name, and no node name reads as DOT's ``node:port`` syntax."""
    return _UNSAFE.sub(lambda m: f"-{ord(m.group()):x}-", name)


def text(*lines) -> str:
    """An escString of literal ``lines``: backslashes doubled (so ``\\N`` or ``\\l``
    in a name stay text), lines joined by DOT's ``\\n``, never read as HTML."""
    return graphviz.nohtml("\\n".join(str(s).replace("\\", "\\\\") for s in lines))


def attr_values(op) -> dict:
    """name -> (AttrType, decoded value) of an OpDesc's attributes."""
    out = {}
    for a in op.attrs:
        try:
            out[a.name] = (a.type, registry.attr_from_proto(a))
        except FluidscopeError:
            out[a.name] = (a.type, "?")  # SCALAR and friends: shown, not decoded
    return out


def role_of(attrs: dict) -> str:
    value = attrs.get(ROLE_ATTR, (AttrType.INT, 0))[1]
    return role_kind(value if isinstance(value, int) else 0)


def namescope_of(attrs: dict) -> str:
    """The op's ``op_namescope`` ("/fc_0/", "/encoder/fc_0/"); "/" when it has none."""
    value = attrs.get("op_namescope", (AttrType.STRING, "/"))[1]
    return value if isinstance(value, str) and value else "/"


def sub_blocks(attrs: dict) -> list:
    return [b for attr_type, value in attrs.values()
            for b in ([value] if attr_type == AttrType.BLOCK else
                      value if attr_type == AttrType.BLOCKS else [])]


def dims_text(dims) -> str:
    """``[?, 128]`` (-1 or None shown as ``?``)."""
    return "[" + ", ".join("?" if d is None or d < 0 else str(d) for d in dims) + "]"


def _dtype_text(data_type) -> str:
    try:
        return dtype_name(data_type)
    except FluidscopeError:  # bf16, complex...: no numpy dtype, still has a name
        if data_type in pb.VarType.Type.values():
            return pb.VarType.Type.Name(data_type).lower()
        return str(data_type)


def tensor_of(var):
    """(TensorDesc, lod level, prefix) of a tensor-like VarDesc; None for other kinds."""
    kind = var.type.type
    if kind == pb.VarType.DENSE_TENSOR:
        return var.type.dense_tensor.tensor, var.type.dense_tensor.legacy_lod_level, ""
    if kind == pb.VarType.SELECTED_ROWS:
        return var.type.selected_rows, 0, "rows "
    if kind == pb.VarType.DENSE_TENSOR_ARRAY:
        return var.type.tensor_array.tensor, var.type.tensor_array.legacy_lod_level, "array of "
    return None


def describe_var_type(var) -> str:
    """``'[?, 10] float32'`` for a dense tensor VarDesc (-1 shown as ``?``); other
    kinds get a short phrase (``'rows [?, 8] float32'``, ``'step_scopes'``)."""
    found = tensor_of(var)
    if found is None:
        return pb.VarType.Type.Name(var.type.type).lower()
    tensor, lod, prefix = found
    text_ = f"{prefix}{dims_text(tensor.dims)} {_dtype_text(tensor.data_type)}"
    return text_ + (f" lod={lod}" if lod else "")


def _format_value(name, attr_type, value) -> str:
    if attr_type == AttrType.INT and name.endswith("dtype"):
        return _dtype_text(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        items = [f"{v:g}" if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)
                 for v in value[:8]]
        return "[" + ", ".join(items) + (", ..." if len(value) > 8 else "") + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _same(value, default) -> bool:
    """Equality that forgives float32 rounding (proto stores FLOAT as float32)."""
    if isinstance(value, list) and isinstance(default, list):
        return len(value) == len(default) and all(_same(a, b) for a, b in zip(value, default))
    if isinstance(value, float) and isinstance(default, (int, float)):
        return abs(value - default) <= 1e-6 * max(1.0, abs(default))
    return value == default


def non_default_attrs(op_type: str, attrs: dict) -> list:
    """``[(name, text)]`` of the attributes of an op that differ from the registry's
    defaults, without Paddle's runtime-only extras (all of them for an op the registry
    does not know)."""
    opdef = registry.get(op_type) if registry.has(op_type) else None
    out = []
    for name, (attr_type, value) in sorted(attrs.items()):
        if name in _HIDDEN_ATTRS:
            continue
        spec = opdef.attr_spec(name) if opdef else None
        if spec is not None and (spec.extra or spec.default is not REQUIRED
                                 and _same(value, spec.default)):
            continue  # a default, or a Paddle runtime-only attribute (use_cudnn...)
        out.append((name, _format_value(name, attr_type, value)))
    return out
