"""Structural validation of a ProgramDesc: the rules PaddlePaddle 3.3.1 and Netron enforce.

``validate_program(desc)`` collects *every* problem it finds and raises one
``ValidationError`` listing them all; ``find_problems(desc)`` returns the same list
without raising (for views that want to show them). Each message names the block,
the op index, the op type and the slot or attribute concerned.

Checked (see shared/paddle_compat.md, "What Paddle needs to accept a hand-built file"):

* proto2 required fields (Paddle's C++ parser and Netron reject a file lacking one;
  Python's upb parser does not complain, so we must ask);
* block 0 has ``idx 0`` and ``parent_idx -1``; block ``i`` has ``idx i`` and a parent
  ``0 <= p < i``; ``forward_block_idx`` names an existing block;
* variable names are unique in a block; a DENSE_TENSOR var carries its TensorDesc;
* every op type is registered, or is a PaddlePaddle op fluidscope does not implement
  (``paddle_ops``: such a program loads for viewing and re-saving; running it fails,
  see ``runtime.plan``); a registered op's slots exist, a non-duplicable slot holds at
  most one name and a non-dispensable input slot is not empty; an unimplemented
  Paddle op's slots are the ones Paddle declares;
* every variable an op uses is declared in its block or an ancestor
  (``@EMPTY@`` placeholders excepted);
* every attribute is declared by the op (or is one of Paddle's runtime-only "extra"
  attributes of that op type, which Paddle writes into its files: any type accepted),
  has the declared AttrType and a value its checker accepts (a range, one of a set: the
  check ``append_op`` makes, so a file cannot bring what the designer refuses), appears
  once, and no attribute without a default is missing; BLOCK/BLOCKS attributes name
  existing blocks other than the op's own;
* ``feed`` reads a FEED_MINIBATCH var and ``fetch`` writes a FETCH_LIST var.
"""
from __future__ import annotations

from . import paddle_ops, registry
from .lookup import visible_vars
from ..errors import SchemaError, ValidationError
from .proto import framework_pb2 as pb
from .registry import REQUIRED, AttrType
from .names import EMPTY_VAR

_VT = pb.VarType
_HOLDER_TYPE = {"feed": ("X", _VT.FEED_MINIBATCH), "fetch": ("Out", _VT.FETCH_LIST)}


def _type_name(enum, value):
    try:
        return enum.Name(value)
    except ValueError:
        return str(value)


def _block_problems(desc, b, block):
    out = []
    if block.HasField("idx") and block.idx != b:
        out.append(f"block {b}: idx is {block.idx}, expected {b} (a block's idx is its position)")
    if block.HasField("parent_idx"):
        if b == 0 and block.parent_idx != -1:
            out.append(f"block 0: parent_idx is {block.parent_idx}, expected -1 (the root block)")
        elif b > 0 and not 0 <= block.parent_idx < b:
            out.append(f"block {b}: parent_idx is {block.parent_idx}; it must name an earlier "
                       f"block (0..{b - 1}); only block 0 has parent -1")
    fwd = block.forward_block_idx
    if block.HasField("forward_block_idx") and fwd != -1 and not 0 <= fwd < len(desc.blocks):
        out.append(f"block {b}: forward_block_idx {fwd} names no block "
                   f"(the program has {len(desc.blocks)})")
    seen = set()
    for v in block.vars:
        if v.name in seen:
            out.append(f"block {b}: variable '{v.name}' is declared twice")
        seen.add(v.name)
        if v.type.type == _VT.DENSE_TENSOR and not v.type.HasField("dense_tensor"):
            out.append(f"block {b}: variable '{v.name}' is DENSE_TENSOR but has no "
                       f"dense_tensor.tensor (data_type, dims)")
    return out


def _visible_names(desc, b):
    """Names block ``b`` can see (itself, its forward block, its ancestors)."""
    return set(visible_vars(desc, b))


def _visible_types(desc, b):
    return {name: v.type.type for name, v in visible_vars(desc, b).items()}


def _slot_problems(where, opdef, op, visible):
    out = []
    for kind, vars_, slots in (("input", op.inputs, opdef.inputs),
                               ("output", op.outputs, opdef.outputs)):
        by_name = {s.name: s for s in slots}
        given = {}
        for var in vars_:
            slot = by_name.get(var.parameter)
            if var.parameter in given:
                out.append(f"{where}: {kind} slot {var.parameter} appears twice")
            given[var.parameter] = list(var.arguments)
            if slot is None:
                out.append(f"{where}: unknown {kind} slot '{var.parameter}'; {opdef.type} has "
                           f"{[s.name for s in slots]}")
            elif not slot.duplicable and len(var.arguments) > 1:
                out.append(f"{where}: {kind} slot {var.parameter} takes one variable, got "
                           f"{list(var.arguments)}")
            for name in var.arguments:
                if name != EMPTY_VAR and name not in visible:
                    out.append(f"{where}: {kind} slot {var.parameter}: variable '{name}' is "
                               f"not declared in this block or its ancestors")
        if kind == "input":
            for slot in slots:
                if not slot.dispensable and not given.get(slot.name):
                    out.append(f"{where}: input slot {slot.name} is empty; it is not dispensable")
    return out


def _attr_problems(where, opdef, op, b, n_blocks):
    out, seen = [], {}
    for attr in op.attrs:
        # Paddle 3.3.1 writes mkldnn_data_type and use_quantizer twice, with one value, on
        # every reshape2 of a legacy training program: only differing copies are an error.
        if attr.name in seen:
            if seen[attr.name] != attr:
                out.append(f"{where}: attribute '{attr.name}' appears twice with different "
                           "values")
            continue
        seen[attr.name] = attr
        spec = opdef.attr_spec(attr.name)
        if spec is not None and spec.extra and spec.name not in opdef.attr_by_name:
            continue  # runtime-only: Paddle ignores it too, whatever its type
        if spec is None:
            out.append(f"{where}: unknown attribute '{attr.name}'; {opdef.type} takes "
                       f"{sorted(a.name for a in opdef.attrs)}")
            continue
        if attr.HasField("type") and attr.type != spec.type:
            out.append(f"{where}: attribute '{attr.name}' has type "
                       f"{_type_name(AttrType, attr.type)}, expected {AttrType.Name(spec.type)}")
            continue
        if spec.checker is not None:
            value = registry.attr_from_proto(attr)
            problem = spec.checker(value)
            if problem:
                out.append(f"{where}: attribute '{attr.name}'={value!r} {problem}")
                continue
        if spec.type == AttrType.BLOCK:
            targets = [attr.block_idx]
        elif spec.type == AttrType.BLOCKS:
            targets = list(attr.blocks_idx)
        else:
            continue
        for t in targets:
            if not 0 <= t < n_blocks:
                out.append(f"{where}: attribute '{attr.name}' names block {t}, which does not "
                           f"exist (the program has {n_blocks})")
            elif t == b:
                out.append(f"{where}: attribute '{attr.name}' names the op's own block {t}")
    for spec in opdef.attrs:
        if spec.default is REQUIRED and spec.name not in seen:
            out.append(f"{where}: required attribute '{spec.name}' "
                       f"({AttrType.Name(spec.type)}) is missing")
    return out


def _unimplemented_op_problems(where, op, visible):
    """A Paddle op fluidscope has no record of: its slots are among Paddle's (when
    Paddle's data lists them) and its variables are declared; attributes are not checked
    (their meaning is Paddle's)."""
    out = []
    for kind, vars_ in (("input", op.inputs), ("output", op.outputs)):
        known = paddle_ops.slot_names(op.type, kind + "s")
        for var in vars_:
            if known is not None and var.parameter not in known:
                out.append(f"{where}: unknown {kind} slot '{var.parameter}'; Paddle's "
                           f"{op.type} has {known}")
            for name in var.arguments:
                if name != EMPTY_VAR and name not in visible:
                    out.append(f"{where}: {kind} slot {var.parameter}: variable '{name}' is "
                               f"not declared in this block or its ancestors")
    return out


def _op_problems(desc, b, block):
    out = []
    visible = _visible_names(desc, b)
    types = None
    for i, op in enumerate(block.ops):
        where = f"block {b}, op #{i} ({op.type or '?'})"
        if not op.type:
            continue  # reported as a missing required field
        if not registry.has(op.type) and paddle_ops.is_paddle_op(op.type):
            out += _unimplemented_op_problems(where, op, visible)
            continue
        try:
            opdef = registry.get(op.type)
        except SchemaError as exc:
            out.append(f"{where}: {exc}")
            continue
        out += _slot_problems(where, opdef, op, visible)
        out += _attr_problems(where, opdef, op, b, len(desc.blocks))
        if op.type in _HOLDER_TYPE:
            types = types if types is not None else _visible_types(desc, b)
            slot, want = _HOLDER_TYPE[op.type]
            vars_ = op.inputs if slot == "X" else op.outputs
            for var in vars_:
                if var.parameter != slot:
                    continue
                for name in var.arguments:
                    if name in types and types[name] != want:
                        out.append(f"{where}: {slot} '{name}' has type "
                                   f"{_type_name(_VT.Type, types[name])}, expected "
                                   f"{_VT.Type.Name(want)} (the holder var)")
    return out


def find_problems(desc) -> list:
    """Every structural problem of ``desc`` (a ProgramDesc), as messages; [] when valid."""
    problems = [f"missing required field {path}" for path in desc.FindInitializationErrors()]
    if len(desc.blocks) == 0:
        problems.append("the program has no blocks; block 0 (idx 0, parent_idx -1) is required")
    for b, block in enumerate(desc.blocks):
        problems += _block_problems(desc, b, block)
        problems += _op_problems(desc, b, block)
    return problems


def validate_program(desc) -> None:
    """Raise ``ValidationError`` listing every problem of ``desc``; return None if valid.

    The exception's ``problems`` attribute holds the individual messages."""
    problems = find_problems(desc)
    if problems:
        head = f"the program has {len(problems)} problem{'s' if len(problems) > 1 else ''}:"
        error = ValidationError("\n  - ".join([head] + problems))
        error.problems = problems
        raise error


__all__ = ["validate_program", "find_problems"]
