"""Which forward op each grad op is the gradient of.

``engine/backward.py`` makes the grad ops of a block by walking its forward ops in
reverse and asking each op's registry record for its grad ops. The ProgramDesc keeps no
link back, so the pairing is recovered from what a grad op reads and writes:

* its type: ``T_grad`` (or the registry's ``grad_of``) is the gradient of a ``T`` op;
* its data flow: it reads ``y@GRAD`` for an output ``y`` of the forward op and writes
  ``x@GRAD`` for an input ``x`` (fan-in renames ``x@GRAD@RENAME@...`` and seeds
  ``x@GRAD@SEED`` count as ``x@GRAD``), and it reads the forward op's own inputs and
  outputs by name;
* the order: grad ops come in the reverse order of their forward ops, which breaks ties
  between equal candidates (the same op applied twice to the same vars).

A grad op of another type (``sum``'s gradient is one ``scale`` per input) is paired
when it both reads the gradient of the forward op's output and writes the gradient of
its input. Bookkeeping ops of the backward (the loss seed ``fill_constant``, fan-in
``sum``, ``fill_zeros_like``) are the gradient of no single op and stay unpaired.

The grad ops of a grad block (``forward_block_idx`` set, e.g. the step block's
gradient inside ``recurrent_grad``) are paired with the ops of that forward block.
"""
from __future__ import annotations

from fluidscope.engine import registry
from fluidscope.engine.ir.names import EMPTY_VAR, GRAD_SUFFIX, forward_name

from .text import attr_values, role_of

_FORWARD_ROLES = ("forward", "loss")


def forward_type(grad_type: str):
    """The forward op type ``grad_type`` is the gradient of, or None."""
    if registry.has(grad_type) and registry.get(grad_type).grad_of:
        return registry.get(grad_type).grad_of
    return grad_type[:-len("_grad")] if grad_type.endswith("_grad") else None




def _names(slots):
    return {n for v in slots for n in v.arguments if n != EMPTY_VAR}


class _ForwardOps:
    """The forward ops of one block, indexed by the names they read and write."""

    def __init__(self, block, roles):
        self.type, self.ins, self.outs = {}, {}, {}
        self.by_name = {}  # var name -> indices of forward ops reading or writing it
        for i, op in enumerate(block.ops):
            if roles[i] not in _FORWARD_ROLES:
                continue
            self.type[i], self.ins[i], self.outs[i] = op.type, _names(op.inputs), _names(op.outputs)
            for n in self.ins[i] | self.outs[i]:
                self.by_name.setdefault(n, []).append(i)

    def candidates(self, names):
        return {i for n in names for i in self.by_name.get(n, ())}


def _rank(fwd, i, ftype, reads_grad, writes_grad, plain):
    """How well forward op ``i`` explains a grad op (None: not at all)."""
    flow = len(reads_grad & fwd.outs[i]) + len(writes_grad & fwd.ins[i])
    shared = len(plain & (fwd.ins[i] | fwd.outs[i]))
    if fwd.type[i] == ftype:
        return (1, flow, shared) if flow or shared else None
    # Another type: only a full gradient step (reads dOut, writes dIn) of another var.
    if reads_grad & fwd.outs[i] and writes_grad & fwd.ins[i] and not reads_grad & writes_grad:
        return (0, flow, shared)
    return None


def pair_grad_ops(program, block_idx: int, roles=None) -> dict:
    """``{grad op index: (forward block, forward op index)}`` for the grad ops of block
    ``block_idx`` of ``program`` (a Program or a ProgramDesc).

    A grad op is an op whose ``op_role`` is backward (not the loss seed); see the
    module docstring for how its forward op is found. Grad ops nothing explains are
    left out. ``roles``: the role kinds of every op, ``roles[block][idx]``, when the
    caller has them already (they are read from the ops otherwise)."""
    desc = getattr(program, "desc", program)
    block = desc.blocks[block_idx]
    fwd_idx = block.forward_block_idx if block.forward_block_idx >= 0 else block_idx
    if roles is None:
        roles = {b: [role_of(attr_values(op)) for op in desc.blocks[b].ops]
                 for b in {block_idx, fwd_idx}}
    fwd = _ForwardOps(desc.blocks[fwd_idx], roles[fwd_idx])
    pairs, paired, last = {}, {}, None
    for g, op in enumerate(block.ops):
        if roles[block_idx][g] != "backward":
            continue
        ftype = forward_type(op.type)
        reads, writes = _names(op.inputs), _names(op.outputs)
        reads_grad = {forward_name(n) for n in reads if GRAD_SUFFIX in n}
        writes_grad = {forward_name(n) for n in writes if GRAD_SUFFIX in n}
        plain = {n for n in reads if GRAD_SUFFIX not in n}
        ranked = {}
        for i in fwd.candidates(reads_grad | writes_grad | plain):
            rank = _rank(fwd, i, ftype, reads_grad, writes_grad, plain)
            if rank is not None:
                ranked[i] = rank
        if not ranked:
            continue
        best = max(ranked.values())
        tied = [i for i, rank in ranked.items() if rank == best]
        # A tie (the same op twice on the same vars): the forward op with the fewest grad
        # ops so far, then, as the backward runs in reverse, the nearest one at or
        # before the forward op paired last.
        fewest = min(paired.get(i, 0) for i in tied)
        tied = [i for i in tied if paired.get(i, 0) == fewest]
        before = [i for i in tied if last is None or i <= last]
        last = max(before or tied)
        paired[last] = paired.get(last, 0) + 1
        pairs[g] = (fwd_idx, last)
    return pairs
