"""Sibling activations of one gate split, run as one call in every driver (issue #16).

An LSTM step cuts its gate sums into column blocks with one ``split`` and applies
``sigmoid`` to three adjacent blocks (the input, forget and output gates): three
dispatches of four ufunc calls each on ``[n, H]`` views, per frame. Here the first of
those steps to run in a frame runs the op's kernel once on the contiguous column range
of all of them (``X[:, H:4H]``, copied piece-major so that each piece's result is
contiguous, as its own call's is), and each step, at its own position, binds its own
piece of that result (a view) as its output. So every step still appears in every
frame with its live value, and writes only its own output.

Which steps (``find_sibling_groups``): steps of one element-wise unary type
(``MERGEABLE``), equal attributes, each reading one piece of the same rank-2 column
``split`` (sizes fixed by its attributes), the pieces adjacent and of one width; each
piece and each output written by that one step only, the split's X by one step at most.

Bits: these kernels compute each output element from the same input element by the
same ufunc loop, whatever the array's extent, shape or strides, so a step's piece of
the merged result is the bytes its own call gives (tests/engine/test_recurrent_sibling_
activations.py checks that per op type and dtype, and that a plain run, the debugger
and the NaN guard agree). All drivers run the merged form (it replaces the steps'
``run``), so they agree by construction too.

Why the merged result cannot go stale: it is kept in the frame's slot list, in a slot
after the block's own (``cache_slot``, one per group; no variable, so the debugger's
frame values and scopes do not show it), together with the X array it was made from.
A step uses it only while the split's X slot still holds that very array: X is written
by one op at most and kernels write no input in place, so while it is the same array
the pieces are its columns. Time travel that undoes X's producer and runs it again
gives a new array, and the next sibling makes the result again. A slot list without
the cache slot (another driver of the block's plan), an X that is not the declared
rank-2 matrix, or a kernel that fails on the merged range: the step runs its own op.
"""
from __future__ import annotations

from ..ir.registry import COMMON_ATTR_NAMES, OUTPUTS_WANTED
from .column_splits import column_split

MERGEABLE = frozenset({"sigmoid", "tanh", "relu"})


class SiblingGroup:
    """Steps run as one call: the kernel over columns ``lo:hi`` of the split's X
    (``width`` columns in all), ``len(members)`` pieces of ``piece`` columns each;
    ``members``: (step, k) with ``k`` the step's piece in the merged result."""
    __slots__ = ("x_slot", "lo", "hi", "width", "piece", "kernel", "attrs", "cache_slot",
                 "members")

    def __init__(self, x_slot, lo, hi, width, first, cache_slot, members):
        self.x_slot, self.lo, self.hi, self.width = x_slot, lo, hi, width
        self.piece = (hi - lo) // len(members)
        self.kernel, self.attrs = first.kernel, first.attrs
        self.cache_slot, self.members = cache_slot, members

    def make(self, xp, x):
        """The kernel over X's columns ``lo:hi``, piece-major: ``[pieces, rows, piece]``,
        so that each step's output is a contiguous ``[rows, piece]`` array as its own call
        gives (a column view of a ``[rows, lo:hi]`` result would be strided, and every op
        reading it, forward and backward, slower)."""
        rows, count = x.shape[0], len(self.members)
        packed = xp.ascontiguousarray(
            x[:, self.lo:self.hi].reshape(rows, count, self.piece).transpose(1, 0, 2))
        return self.kernel(xp, self.attrs, packed)


def _own_attrs(step):
    return {k: v for k, v in step.attrs.items()
            if k not in COMMON_ATTR_NAMES and k != OUTPUTS_WANTED}


def find_sibling_groups(plan, first_cache_slot):
    """The groups of ``plan``'s steps to run as one call (module docstring), their cache
    slots numbered from ``first_cache_slot``."""
    writes = {}
    for step in plan.steps:
        for s in step.output_slots():
            writes[s] = writes.get(s, 0) + 1
    groups = []
    for pos, split in enumerate(plan.steps):
        if split.type != "split" or split.control is not None:
            continue
        found = column_split(plan, split)
        if found is None or writes.get(found[0], 0) > 1:
            continue
        x, pieces, spans = found
        index_of = {p: i for i, p in enumerate(pieces) if p and writes.get(p) == 1}
        readers = {}  # op type -> {piece index: step}
        for step in plan.steps[pos + 1:]:
            if (step.type not in MERGEABLE or step.control is not None or len(step.ins) != 1
                    or step.ins[0] not in index_of or len(step.outs) != 1):
                continue
            (out,) = step.outs
            if not isinstance(out, int) or not out or writes.get(out) != 1:
                continue
            readers.setdefault(step.type, {}).setdefault(index_of[step.ins[0]], step)
        for by_piece in readers.values():
            for run in _adjacent_runs(by_piece, spans):
                lo, hi = spans[run[0]][0], spans[run[-1]][1]
                members = [(by_piece[i], k) for k, i in enumerate(run)]
                groups.append(SiblingGroup(x, lo, hi, spans[-1][1], by_piece[run[0]],
                                           first_cache_slot + len(groups), members))
    return groups


def _adjacent_runs(by_piece, spans):
    """Runs of two or more adjacent pieces of one width whose steps share kernel and
    attrs."""
    runs, run = [], []
    width = [b - a for a, b in spans]
    for i in sorted(by_piece):
        first = by_piece[run[0]] if run else None
        if run and i == run[-1] + 1 and width[i] == width[run[0]] \
                and by_piece[i].kernel is first.kernel \
                and _own_attrs(by_piece[i]) == _own_attrs(first):
            run.append(i)
            continue
        if len(run) > 1:
            runs.append(run)
        run = [i]
    if len(run) > 1:
        runs.append(run)
    return runs


def sibling_run(step, group, k, xp):
    """``run(vals)`` for a member ``step`` of ``group``: piece ``k`` of the group's merged
    result (made at the first member to run in the frame), else the step's own run
    (module docstring)."""
    own, (out,) = step.run, step.outs
    x_slot, cache, width = group.x_slot, group.cache_slot, group.width

    def run(vals):
        if len(vals) > cache:
            x, made = vals[x_slot], vals[cache]
            if made is None or made[0] is not x:
                made = None
                if getattr(x, "ndim", 0) == 2 and x.shape[1] == width:
                    try:
                        made = (x, group.make(xp, x))
                    except Exception:  # noqa: BLE001  (the step's own run reports it)
                        made = None
                vals[cache] = made
            if made is not None:
                vals[out] = made[1][k]
                return
        own(vals)
    run.merged_sibling = True  # (so preparing the group again does not wrap it twice)
    return run


def merge_siblings(plan, first_cache_slot, xp):
    """Find the groups and rebind their steps' ``run``; returns the groups."""
    groups = find_sibling_groups(plan, first_cache_slot)
    for group in groups:
        for step, k in group.members:
            if not getattr(step.run, "merged_sibling", False):
                step.run = sibling_run(step, group, k, xp)
    return groups


__all__ = ["MERGEABLE", "SiblingGroup", "find_sibling_groups", "sibling_run", "merge_siblings"]
