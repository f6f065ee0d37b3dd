"""Memory gradients handed from frame ``t`` to frame ``t - 1`` (issue #16).

``recurrent_grad`` walks the frames in reverse. Frame ``t``'s gradient of a memory
(its ex_state) joins frame ``t - 1``'s seed of the state: ``seed_value`` adds it,
zero-padded to that frame's batch size (``next_carry``), to the out-link gradient rows
of the frame (a padded copy and a fresh sum per frame). Where the state's seed reads an out-link
gradient (a buffer in batch order the run owns: ``Spares.to_batch``), a plain run adds
the memory gradient into frame ``t - 1``'s rows of that buffer in place instead, as the
hand-written BPTT does (``d_h[prev] += dh_prev``), and the seed is those rows as they
are. The debugger, which shows every frame's seed and undoes frame ends, keeps the
padded hand-on (``BackUnroll.keep_frames``). Both give the same bits.
"""
from __future__ import annotations


def seed_value(op, index, out_grads, carry, start, stop, fvals):
    """The seed of a frame of rows ``start:stop`` (``op``: a prepared
    ``RecurrentBackward``; ``index``: (out-link index, state index), either None): the
    out-link gradient rows plus the memory gradient handed on, zeros where neither flows."""
    out_i, state_i = index
    n = stop - start
    total = None
    if out_i is not None and out_grads[out_i] is not None:
        total = out_grads[out_i][start:stop]
    if state_i is not None and carry[state_i] is not None:
        total = carry[state_i][:n] if total is None else total + carry[state_i][:n]
    if total is None:  # nothing flows in: zeros shaped like the forward value
        like = fvals[op.fwd.slot[op.out_names[out_i]] if out_i is not None
                     else op.fwd.slot[op.states[state_i]]]
        total = op.xp.zeros_like(like)
    return total


def next_carry(op, rows, gvals):
    """Memory gradients for the previous frame (``rows`` rows: its batch size, or the
    number of sequences after frame 0): this frame's ex_state gradients, zero-padded."""
    out = []
    for slot in op.ex_grad_slots:
        g = gvals[slot] if slot else None
        if g is not None and len(g) < rows:
            padded = op.xp.zeros((rows,) + g.shape[1:], dtype=g.dtype)
            padded[:len(g)] = g
            g = padded
        out.append(g)
    return out


def carry_targets(op, out_grads):
    """State index -> the out-link gradient buffer (of ``out_grads``, batch order) its
    seed reads, for the states with exactly one seed that reads one; None elsewhere
    (``op``: a prepared ``RecurrentBackward``)."""
    seeds = [index for _, index in op.seed_binds]
    states = [state for _, state in seeds if state is not None]
    targets = [None] * len(op.states)
    for out_i, state_i in seeds:
        if (state_i is not None and out_i is not None and states.count(state_i) == 1
                and out_grads[out_i] is not None):
            targets[state_i] = out_grads[out_i]
    return targets


def carry_in_place(frames, t, gvals):
    """Hand on frame ``t``'s memory gradients of ``frames`` (a ``BackUnroll``), as
    ``next_carry`` does, but add those of a state with a target (``carry_into``) into
    frame ``t - 1``'s rows of it in place, so its seed is those rows as they are
    (``seed_rows``: a view). Same bits as ``seed_value`` adding the padded carry: og + g
    where the frame has rows, og + 0 below them (a -0.0 turns +0.0 there, as before)."""
    a, b = frames.seq.spans[t - 1]
    n, carry = b - a, []
    for target, slot in zip(frames.carry_into, frames.ex_grad_slots):
        g = gvals[slot] if slot else None
        if g is None:
            carry.append(None)
            continue
        m = len(g)
        if target is not None:
            rows = target[a:a + m]
            rows += g
            if m < n:
                rows = target[a + m:b]
                rows += 0
            g = None  # in the rows now
        elif m < n:
            padded = frames.op.xp.zeros((n,) + g.shape[1:], dtype=g.dtype)
            padded[:m] = g
            g = padded
        carry.append(g)
    frames.carry = carry


__all__ = ["seed_value", "next_carry", "carry_targets", "carry_in_place"]
