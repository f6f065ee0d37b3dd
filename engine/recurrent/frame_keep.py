"""What ``recurrent_grad`` keeps at the end of each frame, decided once per run (issue #16).

At a frame's end every ``Batched`` step's operands go to its ``Sink`` (``Sink.put``):
each operand is either copied into the sink's buffer of all rows or, when it is the very
array another buffer of all rows took at the same rows in this frame (an in-link's rows,
the in-link gradient, another sink's copy), read from that buffer. Deciding that anew
each frame (a map of the frame's arrays by ``id``, a lookup per operand) cost more than
the copies themselves: ~10 us a frame of a small group, against ~6 us for all the numpy
work of the hand-written BPTT frame.

A frame's arrays stand in the same relations in every frame (the same grad ops hand the
same arrays on), so ``KeepRecipe.observe`` reads what the general path decided in the
first frame it kept — for each operand, its own copy or the slot of the array it was the
same as — and ``KeepRecipe.keep`` does just that for the frames after it: it checks that
each borrowed operand is still that array (``is``), that each step's operands still fit
(``Batched.fits``), and then copies and records as ``Sink.put`` would. A frame where a
check fails is kept the general way (``BackUnroll.end_frame``). The recipe only chooses
where rows are read from, never what they hold, so the gradients' bits are those of the
general path (tests/engine/test_recurrent_keep_recipe.py).
"""
from __future__ import annotations

# where a borrowed operand's rows are: an in-link's forward rows, an in-link gradient
# buffer, another sink's buffer (the kinds of a recipe's lent operands)
ROWS, IN_GRAD, SINK = range(3)


class KeepRecipe:
    """The keeping of one run's frames, as observed in its first kept frame."""
    __slots__ = ("same", "steps", "copies")

    def __init__(self, same, steps):
        # (operand slot, read from forward values, reference slot): the operand must be
        # the reference array of the frame (else the frame is kept the general way)
        self.same = same
        # per Batched step: (batched, sink, x slot, y slot, dOut slot, own copies
        # ((slot, buffer index), ...), borrowed pattern (the observed frame's own object,
        # recorded for every frame kept alike: ``Sink.operands`` reads the rows of all
        # frames from one lender then), ((operand index, in-link), ...) of the pattern
        # entries that are in-link gradient buffers, read when kept)
        self.steps = steps
        self.copies = sum(len(step[5]) for step in steps)  # operands copied per frame

    @classmethod
    def observe(cls, frames, gvals, fvals, start, stop):
        """The recipe of what ``frames`` (a ``BackUnroll``) just kept of the frame of rows
        ``start:stop`` (None when a step did not keep operands, or an operand was read
        from a buffer the recipe cannot name)."""
        same, steps, copies_so_far = [], [], {}  # id(buffer) -> grad slot copied into it
        rows_of = {id(rows): fslot for fslot, rows in frames.inlink_rows}
        in_grad_of = {id(buf): (i, s) for i, s in frames.in_grad_pairs
                      if (buf := frames.in_grads[i]) is not None}
        for pos, sink in frames.sinks.items():
            batched = frames.op.batched[pos]
            if not sink.frames or sink.frames[-1] != (start, stop):
                return None  # the frame ran the op whole, or had no operands
            operand_slots = (batched.x_slot, batched.dout_slot) \
                if batched.kind == "matmul" else (batched.dout_slot,)
            own, ingrad_at = [], []
            for k, (slot, lender) in enumerate(zip(operand_slots, sink.borrowed[-1])):
                if lender is None:
                    own.append((slot, k))
                    continue
                a = gvals[slot]
                if id(lender) in rows_of and fvals[rows_of[id(lender)]] is a:
                    same.append((slot, True, rows_of[id(lender)]))
                elif id(lender) in in_grad_of and gvals[in_grad_of[id(lender)][1]] is a:
                    i, ref = in_grad_of[id(lender)]
                    same.append((slot, False, ref))
                    ingrad_at.append((k, i))
                elif id(lender) in copies_so_far and gvals[copies_so_far[id(lender)]] is a:
                    same.append((slot, False, copies_so_far[id(lender)]))
                else:
                    return None
            for slot, k in own:
                copies_so_far[id(sink.buffers[k])] = slot
            steps.append((batched, sink, batched.x_slot, batched.y_slot, batched.dout_slot,
                          tuple(own), sink.borrowed[-1], tuple(ingrad_at)))
        return cls(tuple(same), tuple(steps))

    def keep(self, gvals, fvals, start, stop, in_grads):
        """Keep the frame of rows ``start:stop`` as the observed frame was kept; False
        (nothing kept) when its arrays do not stand in the observed relations."""
        for slot, forward, ref in self.same:
            a = gvals[slot]
            if a is None or a is not (fvals[ref] if forward else gvals[ref]):
                return False
        for batched, _, xs, ys, gs, _, _, _ in self.steps:
            x, g = gvals[xs], gvals[gs]
            if x is None or g is None:
                return False
            if batched.kind == "matmul":  # ``fits`` written out: it runs every frame
                if not (x.ndim == 2 and g.ndim == 2 and gvals[ys].ndim == 2):
                    return False
            elif not batched.fits(x, gvals[ys], g):
                return False
        span = (start, stop)
        for _, sink, _, ys, _, own, pattern, ingrad_at in self.steps:
            buffers = sink.buffers
            for slot, k in own:
                buffers[k][start:stop] = gvals[slot]
            for k, i in ingrad_at:  # the in-link's buffer of now (``diverge`` may move it)
                if pattern[k] is not in_grads[i]:
                    pattern = list(pattern)
                    for k2, i2 in ingrad_at:
                        pattern[k2] = in_grads[i2]
                    break
            sink.frames.append(span)
            sink.borrowed.append(pattern)
            sink.weight = gvals[ys]
        return True


__all__ = ["KeepRecipe"]
