"""The big arrays of a recurrent op, reused from one run to the next (issue #16).

A recurrent op reorders whole tensors once per run: the in-links and the out-link
gradients into batch order, the out-links and the in-link gradients back into sequence
order, and a buffer of all rows collects the in-link gradients frame by frame. Each is
as big as the op's input (a 64 -> 128 LSTM over 1,353 rows: 0.7 to 2.8 MB), above the
allocator's threshold for mapping fresh pages, so a fresh array per run page-faults in
again (1,500 page faults per forward + backward, none in the hand-written numpy loop).

``Spares`` keeps each such array after a run and hands it back to the next run under
the ownership rule of ``runtime.recycle``: only when the interpreter's reference count
shows that nothing but the spare holds it (no run's slot list, no fetched value the
user kept, no debugger history, no view of it), and only on the CPU. Otherwise the
array is fresh, as before; so nothing anyone can read is ever overwritten.
"""
from __future__ import annotations

import numpy as np

from ..runtime import recycle


class Spares:
    """Arrays kept by key (what the array is for: ("inputs", 0), ...) between runs."""
    __slots__ = ("xp", "on", "held")

    def __init__(self, xp):
        self.xp = xp
        self.on = recycle.ENABLED and xp is np
        self.held = {}  # key -> [array]: a one-slot box, the form ``recycle.take`` empties

    def empty(self, key, shape, dtype):
        """An uninitialised array of ``shape`` and ``dtype``: the spare kept under ``key``
        when nobody else can reach it, else a fresh one. It becomes the spare for the
        next run at once (the next run takes it only if this one let it go)."""
        if not self.on:
            return self.xp.empty(shape, dtype=dtype)
        box = self.held.get(key)
        buf = recycle.take(box, 0) if box is not None else None
        if buf is None or buf.shape != shape or buf.dtype != dtype:
            buf = np.empty(shape, dtype=dtype)
        self.held[key] = [buf]
        return buf

    def to_batch(self, key, seq, x):
        """``seq.to_batch(x)`` (rows in batch order), into the spare under ``key``."""
        if not self.on:
            return seq.to_batch(self.xp, x)
        out = self.empty(key, (len(seq.rows),) + x.shape[1:], x.dtype)
        # mode="clip" (the rows are all valid): with an ``out`` numpy's default "raise"
        # gathers into a temporary first and copies it over.
        return np.take(x, seq.rows, axis=0, out=out, mode="clip")

    def to_sequence(self, key, seq, y):
        """``seq.to_sequence(y)`` (rows back in sequence order), into the spare under ``key``."""
        if not self.on:
            return seq.to_sequence(self.xp, y)
        out = self.empty(key, y.shape, y.dtype)
        out[seq.rows] = y
        return out


__all__ = ["Spares"]
