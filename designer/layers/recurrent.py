"""Recurrent layer groups (reference/000): ``recurrent_group``, ``memory``, ``StaticInput``.

``recurrent_group(step, input)`` calls ``step`` once, inside a new sub-block, to build
the step net of one time step. Its arguments are, per entry of ``input``, the current
time step of a sequence (an in-link) or, for a ``StaticInput``, the whole per-sequence
value. ``memory(name, size, boot_layer)`` inside ``step`` is the previous time step's
value of the step-net layer called ``name`` (linked by name, as in Paddle v1). What
``step`` returns are the out-links, gathered back into sequences.

It lowers to one ``recurrent`` op (Fluid's schema) whose ``sub_block`` is the step net;
the engine unrolls it frame by frame (engine/recurrent.py).
"""
from __future__ import annotations

from fluidscope.engine.errors import DesignError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.names import EMPTY_VAR

from .. import framework, unique_name
from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper

__all__ = ["recurrent_group", "memory", "StaticInput"]


class StaticInput:
    """An input of a recurrent group that is not split over time: every step reads the
    row of its own sequence (e.g. an encoder's summary vector), ``[num_sequences, size]``.
    Its gradient is summed over the steps. (Outer variables that are the same for every
    sequence, such as a table, can simply be used inside ``step``.)"""

    def __init__(self, input, is_seq=False, size=None):
        if is_seq:
            raise DesignError(
                f"StaticInput('{input.name}', is_seq=True): a whole sequence per step is not "
                "supported; pool it first (sequence_pool) or use it as an outer variable")
        if input.lod_level:
            raise DesignError(
                f"StaticInput('{input.name}'): it has LoD level {input.lod_level}; a static "
                "input has one row per sequence (pool the sequence first)")
        if size is not None and input.shape[-1] != size:
            raise DesignError(f"StaticInput('{input.name}'): size {size} but the input has "
                              f"shape {list(input.shape)}")
        self.input = input


class _Memory:
    def __init__(self, ex_state, link, boot):
        self.ex_state, self.link, self.boot = ex_state, link, boot


class _Group:
    """The recurrent group being built (for ``memory`` calls inside ``step``)."""

    def __init__(self, name, block, dtype):
        self.name, self.block, self.memories, self.dtype = name, block, [], dtype


_BUILDING: list[_Group] = []


@layer_spec("recurrent", inputs={"boot_layer": "tensor?"}, types={"size": "int"},
            structural=("name",))
def memory(name, size, boot_layer=None, is_seq=False):
    """Inside a recurrent group's ``step``: the value the step-net layer (or variable)
    called ``name`` had at the previous time step; zeros, or ``boot_layer`` (one row per
    sequence, ``[num_sequences, size]``), at the first step."""
    if not _BUILDING:
        raise DesignError(f"memory('{name}'): call it inside the step function of a "
                          "recurrent_group")
    group = _BUILDING[-1]
    block = framework.default_main_program().current_block()
    if block.idx != group.block.idx:
        raise DesignError(f"memory('{name}'): call it in the step of recurrent group "
                          f"'{group.name}' itself, not in a nested block")
    if is_seq:
        raise DesignError(f"memory('{name}', is_seq=True): sequence memories are not supported")
    if not isinstance(size, int) or size <= 0:
        raise DesignError(f"memory('{name}'): size must be a positive int, got {size!r}")
    dtype = group.dtype  # a memory without boot has the dtype of the group's sequences
    if boot_layer is not None:
        if boot_layer.lod_level or len(boot_layer.shape) != 2 or boot_layer.shape[-1] != size:
            raise DesignError(
                f"memory('{name}'): boot_layer '{boot_layer.name}' has shape "
                f"{list(boot_layer.shape)} (LoD level {boot_layer.lod_level}); it needs one row "
                f"of size {size} per sequence: [-1, {size}] without LoD")
        dtype = boot_layer.dtype
    ex = block.create_var(name=unique_name.generate(f"{name}@PRE"), shape=[-1, size], dtype=dtype)
    group.memories.append(_Memory(ex.name, name, boot_layer))
    return ex


@layer_spec("recurrent", inputs={"input": "group"}, structural=("step",), outputs=("outs*",))
def recurrent_group(step, input, reverse=False, name=None):
    """Run ``step`` over every time step of the sequences in ``input``.

    input: a sequence Variable (LoD level 1), a ``StaticInput``, or a list of them (all
    sequences must hold the same sequences at run time). ``step(*args)`` gets one
    argument per input and returns a Variable or a list of them (the out-links).
    reverse: walk each sequence from its end. Returns the out-link sequence(s), with
    the input's LoD."""
    helper = LayerHelper("recurrent_group", name)
    inputs = list(input) if isinstance(input, (list, tuple)) else [input]
    seqs = [x for x in inputs if not isinstance(x, StaticInput)]
    if not seqs:
        raise DesignError(f"recurrent_group '{helper.name}': needs at least one sequence input")
    for x in seqs:
        if x.lod_level < 1:
            raise DesignError(
                f"recurrent_group '{helper.name}': input '{x.name}' has shape {list(x.shape)} "
                "and no LoD; declare it as a sequence (data(..., lod_level=1))")
    program = framework.default_main_program()
    parent = program.current_block()
    sub = program._create_block()
    group = _Group(helper.name, sub, seqs[0].dtype)
    _BUILDING.append(group)
    try:
        args = [_step_argument(sub, group, x) for x in inputs]
        outs = step(*args)
        single = not isinstance(outs, (list, tuple))
        outs = _out_links(helper, sub, [outs] if single else list(outs))
        states = [_resolve_link(helper, sub, m) for m in group.memories]
    except BaseException:
        _BUILDING.pop()
        program._rollback()
        _drop_last_block(program, sub)
        raise
    _BUILDING.pop()
    program._rollback()
    outer_outs = [parent.create_var(name=o.name, shape=o.shape, dtype=o.dtype,
                                    lod_level=seqs[0].lod_level) for o in outs]
    scopes = parent.create_var(name=unique_name.generate(f"{helper.name}.step_scopes"),
                               type=pb.VarType.STEP_SCOPES, stop_gradient=True)
    helper.append_op(
        "recurrent",
        {"inputs": seqs,
         "initial_states": [m.boot.name if m.boot is not None else EMPTY_VAR
                            for m in group.memories],
         "parameters": _outer_reads(program, sub, {x.name for x in seqs})},
        {"outputs": outer_outs, "step_scopes": scopes},
        {"sub_block": sub.idx, "ex_states": [m.ex_state for m in group.memories],
         "states": states, "reverse": bool(reverse), "has_states": bool(group.memories)})
    return outer_outs[0] if single else outer_outs


def _step_argument(sub, group, x):
    if isinstance(x, StaticInput):
        # v1's way: a memory booted with the input that links to itself.
        v = x.input
        ex = sub.create_var(name=unique_name.generate(f"{v.name}@STATIC"), shape=v.shape,
                            dtype=v.dtype)
        group.memories.append(_Memory(ex.name, ex.name, v))
        return ex
    # An in-link keeps the outer name inside the step block (Fluid's convention).
    return sub.create_var(name=x.name, shape=x.shape, dtype=x.dtype,
                          stop_gradient=x.stop_gradient)


def _produced(block):
    return {n for op in block.desc.ops for v in op.outputs for n in v.arguments}


def _out_links(helper, sub, outs):
    """Out-links must be computed by the step; an in-link or memory returned as is gets
    an ``assign`` so its outer sequence has a name of its own."""
    produced, result = _produced(sub), []
    for o in outs:
        if not hasattr(o, "name") or not hasattr(o, "block"):
            raise DesignError(f"recurrent_group '{helper.name}': step must return Variables, "
                              f"got {type(o).__name__}")
        if o.block.idx != sub.idx and not sub.has_var(o.name):
            raise DesignError(f"recurrent_group '{helper.name}': step returned '{o.name}', "
                              "which is not a variable of its step")
        if o.name not in produced:
            copy = helper.create_tmp(o.dtype)
            helper.append_op("assign", {"X": o}, {"Out": copy})
            o = copy
        result.append(o)
    return result


def _resolve_link(helper, sub, mem):
    """The step var a memory links to: a var of that name, else the output of the last
    op of the layer of that name (``op_namescope`` ends in ``/name/``)."""
    if mem.link == mem.ex_state:  # a static input links to itself
        return mem.ex_state
    target = None
    if sub.has_var(mem.link) and mem.link in _produced(sub):
        target = sub.var(mem.link)
    else:
        for op in reversed(sub.desc.ops):
            scope = next((a.s for a in op.attrs if a.name == "op_namescope"), "")
            if scope.rstrip("/").split("/")[-1] == mem.link and op.outputs:
                target = sub._find_var_recursive(op.outputs[0].arguments[0])
                break
    if target is None:
        raise DesignError(
            f"recurrent_group '{helper.name}': memory('{mem.link}') links to no layer of the "
            f"step; name the layer whose value it remembers (e.g. fc(..., name='{mem.link}'))")
    size = sub.var(mem.ex_state).shape[-1]
    if len(target.shape) != 2 or target.shape[-1] != size:
        raise DesignError(
            f"recurrent_group '{helper.name}': memory('{mem.link}') has size {size} but layer "
            f"'{mem.link}' gives '{target.name}' of shape {list(target.shape)}")
    return target.name


def _outer_reads(program, sub, in_links):
    """Outer variables the step (and any block nested in it) reads: its ``parameters``."""
    names, seen = [], set()

    def visit(block, outer_local):
        local = outer_local | {v.name for v in block.desc.vars}
        for op in block.desc.ops:
            for v in op.inputs:
                for n in v.arguments:
                    if n not in local and n not in in_links and n != EMPTY_VAR and n not in seen \
                            and sub._find_var_recursive(n) is not None:
                        seen.add(n)
                        names.append(n)
            for a in op.attrs:
                if a.type == pb.AttrType.BLOCK:
                    visit(program.block(a.block_idx), local)

    visit(sub, set())
    return names


def _drop_last_block(program, sub):
    """Undo a failed step: remove its block when nothing was built after it."""
    if sub.idx == len(program.desc.blocks) - 1:
        del program.desc.blocks[-1]
        program.sync_blocks()
