"""Step ops a plain run of a recurrent group does once over every frame's rows (issue #16).

Some ops of a step block read no memory: a GRU step adds its bias to the projected
in-link and splits the sum into gate blocks before anything reads ``h_{t-1}``. Frame by
frame they cost a Python dispatch per op per time step for a few rows each. A plain run
(``RecurrentForward.run``) instead runs them once on the in-links of all frames (batch
order, so frame ``t`` is the contiguous rows ``start:stop``) and binds each frame's rows
of their outputs, as it binds the in-links; the other ops run per frame as before.

Only ops whose every output row is computed from the same row of their row inputs, by
an exactly rounded operation, are hoisted (``ROW_WISE``): element-wise add, subtract,
multiply (Y another row input, or a parameter that broadcasts over the trailing dims
only) and ``split`` along a dim other than the rows. For those a row's bits do not depend
on how many rows one call holds, and a frame's rows of the whole output are laid out as
the per-frame output would be (a row slice keeps the strides), so each frame holds the
bits the debugger's op-by-op run computes (``tests/engine/test_recurrent_hoist_*``). A
product (``matmul_v2``, ``mul``) is never hoisted: BLAS rounds a row differently
depending on the number of rows it multiplies at once.

The debugger and the NaN guard drive ``unroll`` and run every op in every frame.
"""
from __future__ import annotations

from .common import INLINK, OUTER

ELEMENTWISE = {"elementwise_add", "elementwise_sub", "elementwise_mul"}
ROW_WISE = ELEMENTWISE | {"split"}


def _rank(plan, slot):
    """The declared rank of the step-block variable in ``slot`` (None: not declared)."""
    desc = plan.var_descs.get(plan.names[slot])
    if desc is None or not desc.type.HasField("dense_tensor"):
        return None
    return len(desc.type.dense_tensor.tensor.dims)


def _row_wise(step, plan, rows, outer):
    """True when ``step`` computes each output row from the same row of its inputs only
    (``rows``: slots holding rows of the frames; ``outer``: parameter slots)."""
    if step.type == "split":
        x, axis_tensor, sections = step.ins
        rank = _rank(plan, x)
        if x not in rows or axis_tensor or sections or rank is None:
            return False
        axis = step.attrs.get("axis", 0)
        return 0 < (axis + rank if axis < 0 else axis) < rank
    x, y = step.ins
    if x not in rows:
        return False
    if y in rows:
        return True
    if y not in outer:
        return False
    x_rank, y_rank, axis = _rank(plan, x), _rank(plan, y), step.attrs.get("axis", -1)
    if x_rank is None or y_rank is None:
        return False
    # Y's dims line up with X's from ``axis`` (-1: trailing): they must miss the row dim
    return axis >= 1 if axis != -1 else y_rank < x_rank


def find_hoisted(op):
    """Positions of the step block's steps a plain run of ``op`` (a ``RecurrentForward``)
    runs once over all rows: row-wise (above), reading only in-links, parameters and
    outputs of earlier hoisted steps, writing no memory's state and no variable another
    step writes too; in-links and parameters a step writes over are not read."""
    plan = op.fwd
    writes = {}
    for step in plan.steps:
        for s in step.output_slots():
            writes[s] = writes.get(s, 0) + 1
    rows = {slot for slot, kind, _ in op.bind if kind == INLINK and slot not in writes}
    outer = {slot for slot, kind, _ in op.bind if kind == OUTER and slot not in writes}
    states = set(op.state_slots)
    found = []
    for pos, step in enumerate(plan.steps):
        if step.type not in ROW_WISE or step.control is not None:
            continue
        outs = step.output_slots()
        if any(s in states or writes[s] > 1 for s in outs):
            continue
        if len(step.ins) != (3 if step.type == "split" else 2) or not outs:
            continue
        if any(isinstance(s, tuple) for s in step.ins[:1 if step.type == "split" else 2]):
            continue
        if _row_wise(step, plan, rows, outer):
            found.append(pos)
            rows.update(outs)
    return found


def run_hoisted(plan, positions, wvals, total):
    """Run the steps at ``positions`` on ``wvals`` (the slot list of all rows); returns
    [(slot, array of all rows)] of their outputs, or None when any step failed or gave
    an output without ``total`` rows (the frames then run every op themselves, and a
    failing op fails there, in its frame, with the usual message)."""
    try:
        for pos in positions:
            plan.steps[pos].run(wvals)
    except Exception:  # noqa: BLE001  (reported by the per-frame run instead)
        return None
    outs = []
    for pos in positions:
        for slot in plan.steps[pos].output_slots():
            value = wvals[slot]
            if getattr(value, "ndim", 0) < 1 or value.shape[0] != total:
                return None
            outs.append((slot, value))
    return outs


__all__ = ["ROW_WISE", "find_hoisted", "run_hoisted"]
