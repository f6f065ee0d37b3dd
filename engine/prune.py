"""Prune a training program into an inference program PaddlePaddle and Netron accept.

``prune_for_inference(desc, feeds, fetches)`` keeps block 0's forward ops that the
fetches need (with the sub-blocks those ops own), sets ``is_test``, and wraps the
result in Paddle's feed/fetch convention (shared/paddle_compat.md, "What Paddle needs
to accept a hand-built file"): holder vars ``feed`` (FEED_MINIBATCH) and ``fetch``
(FETCH_LIST), one ``feed`` op per input and one ``fetch`` op per output with ``col``.
"""
from __future__ import annotations

from .ir import paddle_ops, registry
from .ir.descs import add_op, add_var, copy_op, copy_var, set_attr
from .errors import FluidscopeError
from .ir.proto import framework_pb2 as pb
from .ir.registry import AttrType
from .ir.names import EMPTY_VAR, GRAD_OP_SUFFIX
from .ir.roles import is_training_role, role_of
from .ir.validate import validate_program

PADDLE_VERSION = 3003001  # paddlepaddle 3.3.1, as major*1e6 + minor*1e3 + patch
_VT = pb.VarType
_HOLDERS = (_VT.FEED_MINIBATCH, _VT.FETCH_LIST, _VT.RAW)


def _op_names(op, which):
    return [n for v in (op.inputs if which == "in" else op.outputs) for n in v.arguments
            if n != EMPTY_VAR]


def _sub_blocks(op):
    out = []
    for a in op.attrs:
        if a.type == AttrType.BLOCK:
            out.append(a.block_idx)
        elif a.type == AttrType.BLOCKS:
            out.extend(a.blocks_idx)
    return out


def _block_tree(desc, b, seen=None):
    """Block ``b`` and every block its ops reference, transitively."""
    seen = set() if seen is None else seen
    if b in seen or not 0 <= b < len(desc.blocks):
        return seen
    seen.add(b)
    for op in desc.blocks[b].ops:
        for sub in _sub_blocks(op):
            _block_tree(desc, sub, seen)
    return seen


def _effective_io(desc, op):
    """(reads, writes) of an op, counting what its sub-blocks use from outer blocks."""
    reads, writes = set(_op_names(op, "in")), set(_op_names(op, "out"))
    for sub in _sub_blocks(op):
        tree = _block_tree(desc, sub)
        local = {v.name for b in tree for v in desc.blocks[b].vars}
        for b in tree:
            for inner in desc.blocks[b].ops:
                reads.update(n for n in _op_names(inner, "in") if n not in local)
                writes.update(n for n in _op_names(inner, "out") if n not in local)
    return reads, writes


def _is_forward(op):
    return not is_training_role(role_of(op)) and not op.type.endswith(GRAD_OP_SUFFIX)


def _holder_op(block, type, var, holder, col):
    add_op(block, type, {"X": [holder if type == "feed" else var]},
           {"Out": [var if type == "feed" else holder]}, {"col": col})


def prune_for_inference(desc, feed_names, fetch_names):
    """A new ProgramDesc computing ``fetch_names`` from ``feed_names`` and parameters.

    Keeps the forward ops of block 0 that the fetches need (and the sub-blocks they
    own), sets ``is_test`` where an op has it, adds the ``feed``/``fetch`` holder vars
    and one ``feed``/``fetch`` op per name (``col`` = position), version 3003001.
    Raises FluidscopeError naming a var the fetches need that nothing provides."""
    feeds, fetches = list(feed_names), list(fetch_names)
    if not desc.blocks:
        raise FluidscopeError("the program has no blocks; there is nothing to export")
    block0 = desc.blocks[0]
    declared = {v.name: v for v in block0.vars}
    for kind, names in (("feed", feeds), ("fetch", fetches)):
        if len(set(names)) != len(names):
            raise FluidscopeError(f"{kind} names repeat: {names}")
        for n in names:
            if n not in declared or declared[n].type.type in _HOLDERS:
                raise FluidscopeError(f"{kind} target '{n}' is not a variable of block 0")
    if not fetches:
        raise FluidscopeError("an inference model needs at least one fetch target")
    for holder in ("feed", "fetch"):
        if holder in declared and declared[holder].type.type not in _HOLDERS:
            raise FluidscopeError(f"variable '{holder}' clashes with Paddle's holder var of "
                                  f"that name; rename it before exporting")
    for n in feeds:
        if declared[n].persistable:
            raise FluidscopeError(f"feed '{n}' is persistable (a parameter); feed data vars only")
    sources = set(feeds) | {n for n, v in declared.items()
                            if v.persistable and v.type.type not in _HOLDERS}
    needed = {n: "fetch target" for n in fetches if n not in feeds}
    kept = []
    for i in range(len(block0.ops) - 1, -1, -1):
        op = block0.ops[i]
        if op.type in ("feed", "fetch") or not _is_forward(op):
            continue
        reads, writes = _effective_io(desc, op)
        if not writes & needed.keys():
            continue
        kept.append((op, reads, writes))
        for n in writes:
            needed.pop(n, None)
        needed.update({n: f"op #{i} ({op.type})" for n in reads if n not in feeds})
    missing = sorted(n for n in needed if n not in sources)
    if missing:
        n = missing[0]
        raise FluidscopeError(
            f"cannot compute {fetches} from feeds {feeds}: '{n}' (read by {needed[n]}) is "
            f"not fed, not a parameter and no forward op computes it; add it to the feeds"
            + (f" (also missing: {missing[1:]})" if len(missing) > 1 else ""))
    kept.reverse()
    return _assemble(desc, kept, feeds, fetches)


def _assemble(desc, kept, feeds, fetches):
    """Build the pruned program from the kept ops (forward order) of block 0."""
    blocks = {0}
    for op, _, _ in kept:
        for sub in _sub_blocks(op):
            _block_tree(desc, sub, blocks)
    order = sorted(blocks)
    new_idx = {old: new for new, old in enumerate(order)}
    out = pb.ProgramDesc()
    used = set(feeds) | set(fetches)
    read = set(fetches)
    for _, reads, writes in kept:
        used |= reads | writes
        read |= reads
    for old in order:
        src = desc.blocks[old]
        parent = src.parent_idx
        while parent > 0 and parent not in new_idx:
            parent = desc.blocks[parent].parent_idx
        block = out.blocks.add(idx=new_idx[old], parent_idx=new_idx.get(parent, -1))
        if src.HasField("forward_block_idx") and src.forward_block_idx in new_idx:
            block.forward_block_idx = new_idx[src.forward_block_idx]
        if old == 0:
            for name, var_type in (("feed", _VT.FEED_MINIBATCH), ("fetch", _VT.FETCH_LIST)):
                add_var(block, name, persistable=True, kind=var_type)
            for v in src.vars:
                if v.name in used and v.name not in ("feed", "fetch"):
                    new = copy_var(block, v)
                    if v.persistable and v.name not in read:
                        new.persistable = False  # written, never read: not a weight
            for col, name in enumerate(feeds):
                _holder_op(block, "feed", name, "feed", col)
            ops = [op for op, _, _ in kept]
        else:
            block.vars.extend(src.vars)
            ops = list(src.ops)
        for op in ops:
            new = copy_op(block, op)
            _prepare_for_inference(new, new_idx)
        if old == 0:
            for col, name in enumerate(fetches):
                _holder_op(block, "fetch", name, "fetch", col)
    out.version.version = PADDLE_VERSION
    if desc.HasField("op_version_map"):
        out.op_version_map.CopyFrom(desc.op_version_map)
    validate_program(out)
    return out


def _prepare_for_inference(op, new_idx):
    for a in op.attrs:
        if a.type == AttrType.BLOCK:
            a.block_idx = new_idx[a.block_idx]
        elif a.type == AttrType.BLOCKS:
            a.blocks_idx[:] = [new_idx[b] for b in a.blocks_idx]
    if ("is_test" in registry.get(op.type).attr_by_name if registry.has(op.type)
            else paddle_ops.declares(op.type, "is_test")):  # as Paddle's own pruning does
        set_attr(op, "is_test", AttrType.BOOLEAN, True)


__all__ = ["PADDLE_VERSION", "prune_for_inference"]
