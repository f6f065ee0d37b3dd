"""In-link gradients written straight into their buffer of all rows (issue #16).

``recurrent_grad`` gathers each frame's in-link gradient into a buffer of all rows in
batch order (``BackUnroll.end_frame``), one copy of ``[n, width]`` per frame. In an LSTM
or GRU group that gradient is the ``split_grad`` of the gate gradients (a concatenation),
handed on unchanged by ``elementwise_add_grad`` (dX = dOut for operands of one shape)
and identity ``scale`` ops. A plain run instead binds the ``split_grad`` to the frame's
rows of the buffer: it concatenates into them (``numpy.concatenate(..., out=rows)``, the
bytes a fresh concatenation has), the ops after it hand on that very view, and
``end_frame`` finds the in-link gradient already in place: no copy per frame (a 64 -> 512
LSTM: 14 MB a call, the hand-written loop's own d_z).

Only a plain run does this (``RecurrentBackward.run``); the debugger and the NaN guard
run the ``split_grad`` whole and ``end_frame`` copies, with the same bits. Where an op
after it does not hand the view on (another shape, a changed op), ``end_frame`` sees an
array that is not the view and moves the in-link to a buffer of its own
(``diverge``): the view, which other values of the frame may still be, is
never written again.

The parts that ``split_grad`` concatenated are then columns of the in-link's buffer: an
LSTM's or GRU's gate gradients, which are also the ``dOut`` of the step's products by a
parameter (``batched_grads``). ``lend_columns`` offers those columns to the products'
sinks in every driver, so the frames' ``dOut`` is read there when the gradient is taken
instead of being copied once more per frame (``frame_keep``).
"""
from __future__ import annotations

from operator import itemgetter


def _identity_scale(step):
    attrs = step.attrs
    return (attrs.get("scale") == 1.0 and attrs.get("bias") == 0.0
            and not step.ins[1] and not step.ins[2])


def find_row_writers(op):
    """{grad-block position of a ``split_grad``: in-link index} of the in-links whose
    gradient is that ``split_grad``'s output handed on by pass-through ops (``op``: a
    prepared ``RecurrentBackward``; its ``batched`` found already)."""
    grad = op.grad
    writers = {}
    for pos, step in enumerate(grad.steps):
        for s in step.output_slots():
            writers.setdefault(s, []).append(pos)
    taken_after = {b.inlink for b in op.batched.values() if b.inlink is not None}
    found, twice = {}, set()
    for i, slot in enumerate(op.in_grad_step):
        if not slot or i in taken_after:
            continue
        for _ in range(len(grad.steps)):
            ws = writers.get(slot, ())
            if len(ws) != 1:
                break
            step = grad.steps[ws[0]]
            if step.type == "split_grad":
                parts = step.ins[1]
                if (not step.ins[0] and isinstance(parts, tuple) and parts and all(parts)
                        and step.outs == (slot,)):
                    twice.update({ws[0]} & set(found))
                    found[ws[0]] = i
                break
            if step.type == "elementwise_add_grad" and slot in step.outs:
                slot = step.ins[2]
            elif step.type == "scale" and _identity_scale(step):
                slot = step.ins[0]
            else:
                break
    return {pos: i for pos, i in found.items() if pos not in twice}


def row_writer(frames, i, step, xp):
    """``run(gvals)`` of ``split_grad`` ``step`` in a plain run of ``frames`` (a
    ``BackUnroll``): the concatenation into in-link ``i``'s rows of the frame
    (``frames.row_views[i]``) when the parts fit them, else the op as always."""
    parts, (out,), whole = step.ins[1], step.outs, step.run
    views = frames.row_views
    if step.attrs["axis"] not in (1, -1):
        return whole
    gather = itemgetter(*parts) if len(parts) > 1 else (lambda vals: (vals[parts[0]],))
    concatenate = xp.concatenate

    def run(gvals):
        view = views[i]
        douts = gather(gvals)
        if view is not None and _fit(view, douts):
            gvals[out] = concatenate(douts, axis=1, out=view)
        else:
            whole(gvals)
    return run


def write_rows(frames):
    """Let the split_grads of ``op.row_writers`` write the in-link gradients of
    ``frames`` (a ``BackUnroll`` of a plain run) into their buffers of all rows."""
    op = frames.op
    frames.row_views = [None] * len(op.in_names)
    frames.row_links = sorted(set(op.row_writers.values()))
    for i in frames.row_links:
        like = frames.vals[op.in_slots[i]]
        frames.in_grads[i] = op.spares.empty(("in_rows", i), (frames.seq.total,) + like.shape[1:],
                                             like.dtype)


def diverge(frames, i):
    """In-link ``i``'s gradient of this frame is not the rows its split_grad wrote: from
    now on a buffer of its own (the earlier frames' rows copied), so that what the
    frame's values hold of the old one is never written again. Returns the new buffer."""
    old = frames.in_grads[i]
    new = frames.in_grads[i] = frames.op.xp.empty_like(old)
    new[...] = old
    frames.row_views[i] = None
    frames.row_links.remove(i)
    return new


def split_parts(op):
    """{in-link index: (split_grad output slot, its part slots)} of ``op.row_writers`` (a
    prepared ``RecurrentBackward``) that concatenate along the columns."""
    grad = op.grad
    return {i: (grad.steps[pos].outs[0], grad.steps[pos].ins[1])
            for pos, i in op.row_writers.items() if grad.steps[pos].attrs["axis"] in (1, -1)}


def lend_columns(frames, i, g, buf, gvals, copied):
    """Offer the parts of in-link ``i``'s split_grad as columns of its buffer ``buf`` (for
    ``Sink.put``'s ``copied``: id(part) -> (part, column view of all rows)) when the frame's
    in-link gradient ``g``, just placed in ``buf``, is that split's output handed on: then
    its rows of ``buf`` hold each part's bytes (``frames``: a ``BackUnroll``)."""
    out, parts = frames.op.split_parts[i]
    if gvals[out] is not g or g.ndim != 2 or g.dtype != buf.dtype:
        return
    lo, spans = 0, []
    for slot in parts:
        a = gvals[slot]
        if a is None or a.ndim != 2 or len(a) != len(g) or a.dtype != g.dtype:
            return
        spans.append((slot, a, lo, lo + a.shape[1]))
        lo += a.shape[1]
    if lo != g.shape[1]:
        return
    handed = (out, False, frames.op.in_grad_step[i])  # KeepRecipe's check of the hand-on
    for slot, a, lo, hi in spans:
        if id(a) not in copied:
            view = column_view(frames, i, lo, hi)
            copied[id(a)] = (a, view)
            frames.lent_columns[id(view)] = (i, lo, hi, slot, handed)


def column_view(frames, i, lo, hi):
    """Columns ``lo:hi`` of in-link ``i``'s gradient buffer of now in ``frames`` (a
    ``BackUnroll``), one view object per buffer: the frames a run keeps alike read one
    lender (``Sink.operands``). ``frames.column_views``: (i, lo, hi) -> (buffer, view);
    ``frames.lent_columns``: id(view) -> what ``KeepRecipe.observe`` reads of it."""
    buf, held = frames.in_grads[i], frames.column_views.get((i, lo, hi))
    if held is None or held[0] is not buf:
        held = frames.column_views[(i, lo, hi)] = (buf, buf[:, lo:hi])
    return held[1]


def _fit(view, douts):
    rows, dtype, width = view.shape[0], view.dtype, 0
    if view.ndim != 2:
        return False
    for d in douts:
        if d is None or d.ndim != 2 or d.shape[0] != rows or d.dtype != dtype:
            return False
        width += d.shape[1]
    return width == view.shape[1]


__all__ = ["find_row_writers", "row_writer", "write_rows", "diverge", "split_parts",
           "lend_columns", "column_view"]
