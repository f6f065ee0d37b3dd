"""Sequence-to-batch: the layout that lets recurrences run without padding (reference/000).

Sequences are sorted by length, longest first (stable, so equal lengths keep their
order). Frame ``t`` then holds row ``t`` of every sequence still alive at ``t``, and
those are always a *prefix* of the sorted order: frame ``t`` has ``batch_sizes[t]``
rows, never more than frame ``t - 1``. A memory passed from frame ``t - 1`` to ``t`` is
therefore just its first ``batch_sizes[t]`` rows, and no time is spent on padding.

``rows`` lists, frame after frame, which row of the sequence-ordered tensor each
batch row comes from, so ``x[rows]`` is the whole input in batch order (frame ``t`` is
the contiguous slice ``frame_starts[t]:frame_starts[t + 1]``) and ``out[rows] = y``
puts a batch-ordered result back in sequence order. With ``reverse`` each sequence is
walked from its end.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np


class SeqBatch:
    """The batch layout of one LoD level (offsets), forward or reversed."""
    __slots__ = ("offsets", "reverse", "lengths", "order", "batch_sizes", "frame_starts",
                 "rows", "_device_rows", "num_seqs", "num_frames", "total", "spans")

    def __init__(self, offsets, reverse=False):
        offsets = np.asarray(offsets, dtype=np.int64)
        self.offsets, self.reverse = offsets, bool(reverse)
        self.lengths = np.diff(offsets)
        self.num_seqs = len(self.lengths)
        self.total = int(offsets[-1]) if len(offsets) else 0
        # Stable sort, longest first: frame t holds a prefix of this order.
        self.order = np.argsort(-self.lengths, kind="stable")
        sorted_lengths = self.lengths[self.order]
        self.num_frames = int(sorted_lengths[0]) if self.num_seqs else 0
        t = np.arange(self.num_frames)
        self.batch_sizes = (sorted_lengths[None, :] > t[:, None]).sum(axis=1)
        self.frame_starts = np.concatenate([[0], np.cumsum(self.batch_sizes)]).astype(np.int64)
        starts = offsets[:-1][self.order]
        rows = []
        for step, n in enumerate(self.batch_sizes):
            if self.reverse:
                rows.append(starts[:n] + sorted_lengths[:n] - 1 - step)
            else:
                rows.append(starts[:n] + step)
        self.rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        self._device_rows = {}
        starts = self.frame_starts.tolist()
        self.spans = list(zip(starts[:-1], starts[1:]))  # Python ints: read every frame

    def frame(self, t):
        """(start, stop) of frame ``t`` in batch order."""
        return self.spans[t]

    def index(self, xp):
        """``rows`` as an index array of ``xp`` (numpy here, a device copy for cupy)."""
        if xp is np:
            return self.rows
        key = id(xp)
        if key not in self._device_rows:
            self._device_rows[key] = xp.asarray(self.rows)
        return self._device_rows[key]

    def to_batch(self, xp, x):
        """Sequence-ordered rows -> batch order (frame after frame)."""
        return x[self.index(xp)]

    def to_sequence(self, xp, y):
        """Batch-ordered rows -> sequence order (the inverse of ``to_batch``)."""
        out = xp.empty_like(y)
        out[self.index(xp)] = y
        return out

    def sorted_rows(self, xp, per_sequence):
        """A per-sequence tensor ``[num_seqs, ...]`` in the sorted order of frame 0."""
        return per_sequence[self.order if xp is np else xp.asarray(self.order)]

    def unsorted_rows(self, xp, sorted_values):
        """The inverse of ``sorted_rows``."""
        out = xp.empty_like(sorted_values)
        out[self.order if xp is np else xp.asarray(self.order)] = sorted_values
        return out


@lru_cache(maxsize=256)
def _cached(offsets: tuple, reverse: bool) -> SeqBatch:
    return SeqBatch(offsets, reverse)


def seq_batch(offsets, reverse=False) -> SeqBatch:
    """The (cached) SeqBatch of ``offsets``: the same LoD in every iteration of a training
    loop costs one sort."""
    return _cached(tuple(int(o) for o in offsets), bool(reverse))
