"""The debugger's undo log: what each event overwrote, in a bounded history.

An event (one op that ran under the debugger) fills an ``UndoRecord`` with everything it
changed, before changing it: the previous values of the slots it wrote (kernels never
write their inputs in place, so keeping the old object is enough), the random
generator's state for a random op, a frame begun or ended (with the frame run's
snapshot), and the scope's values at write-back. ``History`` keeps the records while
the arrays they hold alive stay under a byte budget.
"""
from __future__ import annotations

import collections

from .. import random as fluid_random
from ..runtime.tensor import LoDTensor

MAX_HISTORY_EVENTS = 200_000


class UndoRecord:
    """One event's undo record. ``next_step``, ``cursor`` and ``last`` are the stepper's
    state before the event; the rest is what the event changed."""
    __slots__ = ("next_step", "cursor", "last", "writes", "began", "ended", "finished_step",
                 "rng", "scope_writes", "nbytes")

    def __init__(self, next_step, cursor, last):
        self.next_step, self.cursor, self.last = next_step, cursor, last
        self.writes = []        # (slot list, slot, previous value)
        self.scope_writes = []  # (name, scope_state before write-back)
        self.began = None       # (frame run, t): a frame begun
        self.ended = None       # (frame run, snapshot, t): a frame ended
        self.finished_step = None  # index of a frame-driven step completed
        self.rng = None         # random generator state before a random op
        self.nbytes = 0

    def save_slots(self, container, slots):
        """Remember the values ``slots`` of ``container`` hold before they are overwritten."""
        for s in slots:
            old = container[s]
            self.writes.append((container, s, old))
            if old is not None:
                self.nbytes += getattr(old, "nbytes", 0)

    def restore_slots(self):
        for container, s, old in reversed(self.writes):
            container[s] = old


class History:
    """Undo records, newest last, trimmed from the oldest to keep under ``limit_bytes``
    (and ``MAX_HISTORY_EVENTS``); ``trimmed`` counts the records dropped."""

    def __init__(self, limit_bytes):
        self.limit_bytes = int(limit_bytes)
        self.records = collections.deque()
        self.total_bytes = 0
        self.trimmed = 0

    def __len__(self):
        return len(self.records)

    def clear(self):
        self.records.clear()
        self.total_bytes, self.trimmed = 0, 0

    def push(self, record: UndoRecord):
        self.records.append(record)
        self.total_bytes += record.nbytes
        while len(self.records) > 1 and (self.total_bytes > self.limit_bytes
                                         or len(self.records) > MAX_HISTORY_EVENTS):
            old = self.records.popleft()
            self.total_bytes -= old.nbytes
            self.trimmed += 1

    def pop(self) -> UndoRecord:
        record = self.records.pop()
        self.total_bytes -= record.nbytes
        return record


# ------------------------------------------------------- state outside the run
def rng_state(xp):
    """The shared random generator of ``xp`` and its state (None when it has none)."""
    gen = fluid_random.generator(xp)
    bit = getattr(gen, "bit_generator", None)  # cupy's generators may lack one
    return (gen, bit.state) if bit is not None and hasattr(bit, "state") else None


def set_rng_state(saved):
    """Put back a state ``rng_state`` returned."""
    if saved is not None:
        gen, state = saved
        gen.bit_generator.state = state


def scope_state(scope, name):
    """What ``scope`` holds for ``name`` now, for ``restore_scope_state``."""
    var = scope.find_var(name)
    if var is None:
        return None
    tensor = var.get_value()
    if not isinstance(tensor, LoDTensor):
        return ("value", var, tensor)
    return ("tensor", var, (tensor.value, tensor.lod_offsets, tensor.place))


def restore_scope_state(scope, name, state):
    """Make ``scope``'s ``name`` hold what ``scope_state`` saw."""
    if state is None:
        scope.erase([name])
        return
    kind, var, saved = state
    if kind == "value":
        var.set_value(saved)
        return
    value, lod, place = saved
    var.get_tensor().assign(value, lod, place)


__all__ = ["UndoRecord", "History", "MAX_HISTORY_EVENTS", "rng_state", "set_rng_state",
           "scope_state", "restore_scope_state"]
