"""What ``recurrent_grad`` keeps at the end of each frame, decided once per run (issue #16).

At a frame's end every ``Batched`` step's operands go to its ``Sink`` (``Sink.put``):
each operand is either copied into the sink's buffer of all rows or, when it is the very
array another buffer of all rows took at the same rows in this frame (an in-link's rows,
the in-link gradient, a column of it: the part a ``split_grad`` concatenated into it
(``row_writers.lend_columns``), another sink's copy), read from that buffer. Deciding
that anew each frame (a map of the frame's arrays by ``id``, a lookup per operand) cost
more than the copies themselves: ~10 us a frame of a small group, against ~6 us for all
the numpy work of the hand-written BPTT frame.

A frame's arrays stand in the same relations in every frame (the same grad ops hand the
same arrays on), so ``KeepRecipe.observe`` reads what the general path decided in the
first frame it kept — for each operand, its own copy or the slot of the array it was the
same as — and ``KeepRecipe.keep`` does just that for the frames after it: it checks that
each borrowed operand is still that array (``is``), that a borrowed column still has its
width and dtype, that each step's operands still fit (``Batched.fits``), copies the own
operands and notes the frame's rows. What ``Sink.put`` records per frame (the rows, the
lenders, the weight: checked to be the observed one) is the same for every frame the
recipe keeps, so the recipe hands it to the sinks at once (``flush``: before a frame is
kept the general way, before a debugger's ``snapshot`` and at ``finish``) rather than per
frame and per sink. A frame
where a check fails is kept the general way (``BackUnroll.end_frame``). The recipe only
chooses where rows are read from, never what they hold, so the gradients' bits are those
of the general path (tests/engine/test_recurrent_keep_recipe.py).
"""
from __future__ import annotations

from .row_writers import column_view

# where a borrowed operand's rows are: an in-link's forward rows (a fixed array), an
# in-link gradient buffer, columns of one, another sink's buffer (fixed during a run)
FIXED, IN_GRAD, COLUMNS = range(3)


class KeepRecipe:
    """The keeping of one run's frames, as observed in its first kept frame."""
    __slots__ = ("same", "matmuls", "others", "columns", "copy_into", "copies", "steps",
                 "spans")

    def __init__(self, same, matmuls, others, columns, copy_into, steps):
        # (operand slot, read from forward values, reference slot): the operand must be
        # the reference array of the frame (else the frame is kept the general way)
        self.same = same
        # (x slot, y slot, dOut slot) of the products, (batched, x, y, dOut slots) of the
        # others: their operands must fit (``Batched.fits``) in every frame kept
        self.matmuls, self.others = matmuls, others
        # (slot, width, dtype) of the operands read from columns of an in-link gradient
        self.columns = columns
        # (buffer, slot): the operands each frame copies into a sink's buffer of all rows
        self.copy_into = copy_into
        self.copies = len(copy_into)  # operands copied per frame
        # per Batched step: (sink, y slot, the parameter Y the observed frame multiplied
        # by, the observed frame's lenders, lenders to look up again when handed on
        # ((operand index, kind, in-link, lo, hi), ...))
        self.steps = steps
        # the rows of the frames kept since the last ``flush`` (not the frames' values:
        # holding them would keep a frame's temporaries from the allocator a frame longer)
        self.spans = []

    @classmethod
    def observe(cls, frames, gvals, fvals, start, stop):
        """The recipe of what ``frames`` (a ``BackUnroll``) just kept of the frame of rows
        ``start:stop`` (None when a step did not keep operands, or an operand was read
        from a buffer the recipe cannot name)."""
        same, matmuls, others, columns, copies, steps = [], [], [], [], [], []
        copies_so_far = {}  # id(buffer) -> grad slot copied into it
        rows_of = {id(rows): fslot for fslot, rows in frames.inlink_rows}
        in_grad_of = {id(buf): (i, s) for i, s in frames.in_grad_pairs
                      if (buf := frames.in_grads[i]) is not None}
        for pos, sink in frames.sinks.items():
            batched = frames.op.batched[pos]
            if not sink.frames or sink.frames[-1] != (start, stop):
                return None  # the frame ran the op whole, or had no operands
            operand_slots = (batched.x_slot, batched.dout_slot) \
                if batched.kind == "matmul" else (batched.dout_slot,)
            own, looked_up = [], []
            for k, (slot, lender) in enumerate(zip(operand_slots, sink.borrowed[-1])):
                a = gvals[slot]
                if lender is None:
                    own.append((slot, k))
                elif id(lender) in rows_of and fvals[rows_of[id(lender)]] is a:
                    same.append((slot, True, rows_of[id(lender)]))
                elif id(lender) in in_grad_of and gvals[in_grad_of[id(lender)][1]] is a:
                    i, ref = in_grad_of[id(lender)]
                    same.append((slot, False, ref))
                    looked_up.append((k, IN_GRAD, i, None, None))
                elif id(lender) in frames.lent_columns:
                    i, lo, hi, part, handed = frames.lent_columns[id(lender)]
                    if gvals[part] is not a:
                        return None
                    same.append((slot, False, part))
                    if handed not in same:
                        same.append(handed)  # the split's output is the in-link's gradient
                    columns.append((slot, hi - lo, a.dtype))
                    looked_up.append((k, COLUMNS, i, lo, hi))
                elif id(lender) in copies_so_far and gvals[copies_so_far[id(lender)]] is a:
                    same.append((slot, False, copies_so_far[id(lender)]))
                else:
                    return None
            for slot, k in own:
                copies_so_far[id(sink.buffers[k])] = slot
                copies.append((sink.buffers[k], slot))
            xs, ys, gs = batched.x_slot, batched.y_slot, batched.dout_slot
            if batched.kind == "matmul":
                matmuls.append((xs, ys, gs))
            else:
                others.append((batched, xs, ys, gs))
            steps.append((sink, ys, gvals[ys], sink.borrowed[-1], tuple(looked_up)))
        return cls(tuple(dict.fromkeys(same)), tuple(matmuls), tuple(others), tuple(columns),
                   tuple(copies), tuple(steps))

    def keep(self, gvals, fvals, start, stop):
        """Keep the frame of rows ``start:stop`` as the observed frame was kept; False
        (nothing kept) when its arrays do not stand in the observed relations."""
        for slot, forward, ref in self.same:
            a = gvals[slot]
            if a is None or a is not (fvals[ref] if forward else gvals[ref]):
                return False
        for slot, width, dtype in self.columns:
            a = gvals[slot]
            if a.ndim != 2 or a.shape[1] != width or a.dtype != dtype:
                return False
        for xs, ys, gs in self.matmuls:  # ``fits`` written out: it runs every frame
            x, g = gvals[xs], gvals[gs]
            if x is None or g is None or not (x.ndim == 2 and g.ndim == 2
                                              and gvals[ys].ndim == 2):
                return False
        for batched, xs, ys, gs in self.others:
            x, g = gvals[xs], gvals[gs]
            if x is None or g is None or not batched.fits(x, gvals[ys], g):
                return False
        for _, ys, weight, _, _ in self.steps:
            if gvals[ys] is not weight:  # the parameter ``flush`` records
                return False
        for buf, slot in self.copy_into:
            buf[start:stop] = gvals[slot]
        self.spans.append((start, stop))
        return True

    def flush(self, frames):
        """Record the frames kept since the last flush in their sinks, as ``Sink.put``
        records a frame: its rows, where each operand's rows are (the lenders of now: an
        in-link gradient buffer ``row_writers.diverge`` moved holds the earlier frames'
        rows too) and the parameter, the observed one (``keep`` checks it)."""
        spans = self.spans
        if not spans:
            return
        for sink, _, weight, pattern, looked_up in self.steps:
            if looked_up:
                pattern = _looked_up(frames, pattern, looked_up)
            sink.frames.extend(spans)
            sink.borrowed.extend([pattern] * len(spans))
            sink.weight = weight
        self.spans = []

    def drop(self):
        """Forget the frames kept since the last flush (the debugger undid them)."""
        self.spans = []


def _looked_up(frames, pattern, looked_up):
    """``pattern`` with its in-link gradient lenders read again from ``frames``; the very
    object when none moved (``Sink.operands`` reads one lender for frames kept alike)."""
    now = list(pattern)
    for k, kind, i, lo, hi in looked_up:
        now[k] = frames.in_grads[i] if kind == IN_GRAD else column_view(frames, i, lo, hi)
    if all(a is b for a, b in zip(now, pattern)):
        return pattern
    return now


__all__ = ["KeepRecipe"]
