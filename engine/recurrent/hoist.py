"""Step ops a run of a recurrent group does once over every frame's rows (issue #16).

Some ops of a step block read no memory: a general group's ``fc([x_t, h_prev])``
multiplies the in-link ``x_t`` by its weight, and a GRU step adds its bias to the
projected in-link and splits the sum into gate blocks, before anything reads
``h_{t-1}``. Frame by frame they cost a Python dispatch per op per time step for a few
rows each. A plain run (``RecurrentForward.run``) instead runs them once on the in-links
of all frames (batch order, so frame ``t`` is the contiguous rows ``start:stop``) and
binds each frame's rows of their outputs, as it binds the in-links; the other ops run per
frame as before.

Two kinds of op are hoisted, reading only in-link rows (or rows an earlier hoisted op
made) and parameters, writing no memory's state and no variable another step writes:

* ``ROW_WISE``: element-wise add, subtract, multiply (Y another row input, or a
  parameter that broadcasts over the trailing dims only) and ``split`` along a dim other
  than the rows. Each output row is computed from the same row of the inputs by an
  exactly rounded operation, so a row's bits do not depend on how many rows one call
  holds: the debugger runs these ops in every frame, on the frame's rows, and gets the
  bits of the hoisted run (a frame's rows of the whole output are laid out as the
  per-frame output would be: a row slice keeps the strides).
* ``PRODUCTS``: ``mul`` (``x_num_col_dims`` 1) and ``matmul_v2`` (X a matrix, not
  transposed, times a parameter matrix). BLAS may round a row differently depending on
  how many rows one call multiplies, so frame by frame they would not give the bits of
  the hoisted run. They are hoisted in **every** driver instead: the op's product of all
  frames' rows is made once per execution of the group (``HoistedRows``: at the plain
  run's start, or where the debugger or the NaN guard first runs the op) and the op's
  step, run in frame ``t``, binds rows ``start:stop`` of it (``frame_bound_run``), so
  the op still appears in every frame with its live output, and a plain run, the
  debugger (time travel included) and the NaN guard hold the same bits.

Why the all-rows product cannot go stale: it reads the in-links in batch order and the
parameters, which one execution of the group fixes when it starts (``Unroll``); the
debugger changes no tensor (its views are read-only), and stepping back before the
group's first frame drops that execution, so stepping in again makes a new one. The
product is a fresh array no kernel writes into (kernels write no input in place, and a
step block's plan recycles no buffer).

How a step finds its frame: a frame's slot list holds, after the step block's slots,
one more entry (``frame_slot``): ``(HoistedRows, start, stop)`` (after it come the
sibling activations' results: ``siblings``). A slot list without it (any other driver
of the block's plan) runs the op itself.

The whole run is ``run_hoisted``: when a hoisted op fails or gives no row per row of
the frames, nothing is hoisted and every op runs in its frame (where a failing op fails
with the usual message).
"""
from __future__ import annotations

from .common import INLINK, OUTER

ELEMENTWISE = {"elementwise_add", "elementwise_sub", "elementwise_mul"}
ROW_WISE = ELEMENTWISE | {"split"}
PRODUCTS = {"mul", "matmul_v2"}


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
    if step.type in PRODUCTS:
        return y in outer and _row_product(step, plan, x, y)
    if y in rows:
        return True
    if y not in outer:
        return False
    x_rank, y_rank, axis = _rank(plan, x), _rank(plan, y), step.attrs.get("axis", -1)
    if x_rank is None or y_rank is None:
        return False
    # Y's dims line up with X's from ``axis`` (-1: trailing): they must miss the row dim
    return axis >= 1 if axis != -1 else y_rank < x_rank


def _row_product(step, plan, x, y):
    """True when the product ``step`` of rows ``x`` and parameter ``y`` gives one output
    row per row of X: ``mul`` flattening X after its first dim, ``matmul_v2`` of an
    untransposed matrix X by a matrix Y (a batched Y would put its batch dims first)."""
    x_rank, y_rank = _rank(plan, x), _rank(plan, y)
    if x_rank is None or y_rank is None:
        return False
    if step.type == "mul":
        return step.attrs.get("x_num_col_dims") == 1 and x_rank >= 2
    return x_rank == 2 and y_rank == 2 and not step.attrs.get("trans_x")


def find_hoisted(op):
    """Positions of the step block's steps a plain run of ``op`` (a ``RecurrentForward``)
    runs once over all rows: row-wise or a row product (module docstring), reading only
    in-links, parameters and outputs of earlier hoisted steps, writing no memory's state
    and no variable another step writes too; in-links and parameters a step writes over
    are not read."""
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
        if step.type not in ROW_WISE and step.type not in PRODUCTS or step.control is not None:
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


def products_of(plan, positions):
    """The hoisted positions whose step is a product (``PRODUCTS``): the steps every
    driver binds the rows of (module docstring)."""
    return [pos for pos in positions if plan.steps[pos].type in PRODUCTS]


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


class HoistedRows:
    """The hoisted steps' outputs over all rows for one execution of a group, made once
    at first need (``outputs``) from ``wvals``, the slot list of the execution's in-link
    rows and parameters. Holds no frame (a frame's slot list refers to it)."""
    __slots__ = ("plan", "positions", "wvals", "total", "made", "by_slot")

    def __init__(self, plan, positions, wvals, total):
        self.plan, self.positions, self.wvals, self.total = plan, positions, wvals, total
        self.made, self.by_slot = None, None

    def outputs(self):
        """[(slot, array of all rows)] of the hoisted steps, or None (``run_hoisted``)."""
        if self.wvals is not None:
            wvals, self.wvals = self.wvals, None
            self.made = run_hoisted(self.plan, self.positions, wvals, self.total)
            self.by_slot = dict(self.made) if self.made is not None else {}
        return self.made

    def rows(self, slot):
        """All rows of the hoisted output in ``slot`` (None: nothing was hoisted)."""
        if self.by_slot is None:
            self.outputs()
        return self.by_slot.get(slot)


def frame_bound_run(step, frame_slot):
    """``run(vals)`` for a hoisted product's step: in a frame (``vals[frame_slot]`` holds
    ``(HoistedRows, start, stop)``) its output is rows ``start:stop`` of the product of
    all rows; elsewhere (or when nothing could be hoisted) the step's own run."""
    whole, (out,) = step.run, step.output_slots()

    def run(vals):
        where = vals[frame_slot] if len(vals) > frame_slot else None
        if where is not None:
            source, start, stop = where
            rows = source.rows(out)
            if rows is not None:
                vals[out] = rows[start:stop]
                return
        whole(vals)
    run.binds_frame_rows = True  # (so preparing the group again does not wrap it twice)
    return run


__all__ = ["ROW_WISE", "PRODUCTS", "find_hoisted", "products_of", "run_hoisted",
           "HoistedRows", "frame_bound_run"]
