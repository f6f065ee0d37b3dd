"""The links of a recurrent op between its block and its step block (engine/recurrent.py).

A ``recurrent`` op runs its ``sub_block`` (the step block) once per frame. Besides the
ops' own edges, the graph shows how values cross between frames and blocks:

* memory (dashed): ``states[i]`` of frame t becomes ``ex_states[i]`` of frame t + 1;
* boot (solid): ``initial_states[i]`` (an outer var, ``@EMPTY@`` for zeros) is
  ``ex_states[i]`` at the first frame; a memory that names its own ex_state is a
  static input (the same row at every frame) and has a boot link only;
* in-link / out-link (solid, grey): an outer sequence and the step var of the same name
  that holds one time step of it.

``recurrent_grad`` owns the step block's grad block (``forward_block_idx`` set); its
links carry gradients the other way: memory gradients (dashed) from ``ex_state@GRAD``
of frame t to ``state@GRAD`` of frame t - 1, boot gradients to ``initial_state@GRAD``,
in-link gradients to the outer ``input@GRAD``.

Any op with ``states`` and ``ex_states`` attributes and a sub-block is drawn this way.
"""
from __future__ import annotations

from dataclasses import dataclass

from fluidscope.engine.ir.registry import AttrType
from fluidscope.engine.ir.names import EMPTY_VAR, grad_name

MEMORY_KINDS = ("memory", "memory grad")


@dataclass(frozen=True)
class Link:
    """An edge between two vars, each seen from a block: ``(block, name)``."""
    kind: str          # memory, boot, static, in-link, out-link, and "... grad"
    tail: tuple
    head: tuple
    gradient: bool = False


def _strings(attrs, name):
    attr_type, value = attrs.get(name, (None, None))
    return list(value) if attr_type == AttrType.STRINGS else None


def _args(slots, slot):
    return [n for v in slots if v.parameter == slot for n in v.arguments]


def is_recurrent(attrs) -> bool:
    """True for an op whose attributes pair memories: ``states`` and ``ex_states``."""
    return _strings(attrs, "states") is not None and _strings(attrs, "ex_states") is not None


def recurrent_links(op, attrs, block: int, sub: int, sub_is_grad: bool) -> list:
    """The Links of recurrent op ``op`` (in ``block``) with its sub-block ``sub``;
    ``sub_is_grad``: ``sub`` is a grad block (the op is ``recurrent_grad``)."""
    states, ex_states = _strings(attrs, "states"), _strings(attrs, "ex_states")
    boots = _args(op.inputs, "initial_states")
    inputs, outputs = _args(op.inputs, "inputs"), _args(op.outputs, "outputs")
    if sub_is_grad:
        return _grad_links(op, block, sub, states, ex_states, boots, inputs)
    links = []
    for i, (state, ex) in enumerate(zip(states, ex_states)):
        boot = boots[i] if i < len(boots) else EMPTY_VAR
        if state != ex:
            links.append(Link("memory", (sub, state), (sub, ex)))
        if boot != EMPTY_VAR:
            links.append(Link("boot" if state != ex else "static", (block, boot), (sub, ex)))
    links += [Link("in-link", (block, n), (sub, n)) for n in inputs if n != EMPTY_VAR]
    links += [Link("out-link", (sub, n), (block, n)) for n in outputs if n != EMPTY_VAR]
    return links


def _grad_links(op, block, sub, states, ex_states, boots, inputs):
    written = {n for v in op.outputs for n in v.arguments if n != EMPTY_VAR}
    links = []
    for i, (state, ex) in enumerate(zip(states, ex_states)):
        if state != ex:
            links.append(Link("memory grad", (sub, grad_name(ex)), (sub, grad_name(state)), True))
        boot = boots[i] if i < len(boots) else EMPTY_VAR
        if boot != EMPTY_VAR and grad_name(boot) in written:
            links.append(Link("boot grad", (sub, grad_name(ex)), (block, grad_name(boot)), True))
    links += [Link("in-link grad", (sub, grad_name(n)), (block, grad_name(n)), True)
              for n in inputs if grad_name(n) in written]
    return links
