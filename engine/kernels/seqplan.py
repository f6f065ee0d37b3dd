"""Segment plans: the index arrays one level of LoD offsets implies, built once and cached.

Sequence kernels (``sequence``, ``sequence_conv``) are vectorised over sequences: the
index arrays a LoD implies are built once per offsets tuple on the host (``seq_plan``,
cached) and copied once per device. Segment reductions are ``ufunc.reduceat`` over the
starts of the non-empty sequences (empty ones hold no rows, so one start to the next is
exactly one sequence); cupy has ``reduceat`` for ``add`` only, so its segment max
gathers a padded block instead.
"""
from __future__ import annotations

from functools import cached_property, lru_cache

import numpy as np

from ..errors import ShapeError


class SeqPlan:
    """Index arrays of one level of offsets (host numpy; ``dev`` gives device copies)."""

    def __init__(self, offsets):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.lengths = np.diff(self.offsets)
        self.n, self.total = len(self.lengths), int(self.offsets[-1])
        self.starts, self.ends = self.offsets[:-1], self.offsets[1:]
        self.ne_idx = np.flatnonzero(self.lengths)           # the non-empty sequences
        self.ne_starts = self.starts[self.ne_idx]
        self.ne_last = self.ends[self.ne_idx] - 1
        self.seg_id = np.repeat(np.arange(self.n), self.lengths)  # sequence of each row
        # rank of each row's sequence among the non-empty ones (rows of a reduceat)
        self.row_ne = np.repeat(np.arange(len(self.ne_idx)), self.lengths[self.ne_idx])
        self.inv_len = 1.0 / np.maximum(self.lengths, 1)     # empty: no rows, any value
        self.inv_sqrt = 1.0 / np.sqrt(np.maximum(self.lengths, 1))
        self.reversed_rows = (self.starts + self.ends - 1)[self.seg_id] - np.arange(self.total)
        self._device = {}

    @cached_property
    def padded(self):
        """[non-empty sequences, longest]: their rows, ``total`` past a sequence's end."""
        longest = int(self.lengths.max()) if self.n else 0
        pos = self.ne_starts[:, None] + np.arange(longest)[None, :]
        return np.where(pos <= self.ne_last[:, None], pos, self.total)

    def dev(self, xp, name):
        """Array ``name`` as an ``xp`` array (copied to the device once)."""
        host = getattr(self, name)
        if xp is np:
            return host
        key = (id(xp), name)
        if key not in self._device:
            self._device[key] = xp.asarray(host)
        return self._device[key]


@lru_cache(maxsize=512)
def cached_plan(offsets: tuple) -> SeqPlan:
    """The SeqPlan of ``offsets`` (a tuple of ints), cached."""
    return SeqPlan(offsets)


def seq_plan(lod, slot, rows) -> SeqPlan:
    """The cached plan of input ``slot``'s last LoD level; it must cover ``rows`` rows."""
    return plan_of(lod.offsets(slot), rows, lod.op_type, lod.slot_names[slot])


def plan_of(offsets, rows, op_type, slot_name) -> SeqPlan:
    offsets = tuple(int(o) for o in offsets)  # plain ints: numpy's repr would leak into messages
    if offsets[-1] != rows:
        raise ShapeError(
            f"op {op_type}: input {slot_name} has {rows} rows but its LoD {list(offsets)} "
            f"covers {offsets[-1]}")
    return cached_plan(offsets)


def seg_sum(xp, x, plan):
    """Per non-empty sequence sums of ``x`` [T, F] -> [non-empty, F]."""
    return xp.add.reduceat(x, plan.dev(xp, "ne_starts"), axis=0)


def seg_max(xp, x, plan, with_rows=False):
    """Per non-empty sequence maxima of ``x`` [T, F], and (``with_rows``) the absolute
    row of the first maximum of each column, as Paddle's MaxIndex."""
    if xp is not np:  # cupy: a padded gather, -inf past each sequence's end
        filler = xp.full((1, x.shape[1]), -xp.inf, dtype=x.dtype)
        block = xp.concatenate([x, filler])[plan.dev(xp, "padded")]  # [S, longest, F]
        values = block.max(axis=1)
        if not with_rows:
            return values, None
        first = block.argmax(axis=1)  # argmax keeps the first of equal values
        return values, plan.dev(xp, "ne_starts")[:, None] + first
    starts = plan.ne_starts
    values = np.maximum.reduceat(x, starts, axis=0)
    if not with_rows:
        return values, None
    # the first row equal to its sequence's maximum: min over rows of (row or T)
    rows = np.arange(x.shape[0])[:, None]
    candidates = np.where(x == values[plan.row_ne], rows, x.shape[0])
    return values, np.minimum.reduceat(candidates, starts, axis=0)


def per_seq(xp, plan, kind, dtype):
    """The per-sequence scale of AVERAGE (1/len) or SQRT (1/sqrt(len)): column [N, 1]."""
    return plan.dev(xp, "inv_len" if kind == "AVERAGE" else "inv_sqrt").astype(dtype)[:, None]
