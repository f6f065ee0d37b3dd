"""The stepper under a debugger ``Session``: a ``Run`` driven one op at a time, every op undoable.

An *event* runs one op: a top-level step of the run (``Run.step``), the first op of a
frame-driven step's first frame (entering it), or the next op inside it, which may end
a frame and begin the next, or, after the last frame, complete the step. Each event
fills an ``UndoRecord`` (``history``) before it changes anything, so ``undo`` puts back
exactly the state before it.

Inside a frame-driven step the stepper holds a ``FrameCursor``: the step's ``FrameRun``,
the frame, and the next op of the frame's block. Frame runs are driven only through the
``runtime.frames`` interface, the same calls ``drive_frames`` makes.
"""
from __future__ import annotations

import weakref

from ..ir.roles import phase_of
from ..runtime.frames import FrameDrivenOp, FrameHistory, FrameRun, frame_error
from ..runtime.run import Run
from .history import (History, UndoRecord, restore_scope_state, rng_state, scope_state,
                      set_rng_state)
from .types import Position

START = Position(0, None, None, "forward")


class FrameCursor:
    """Where the stepper stands inside a frame-driven step (immutable: history keeps old
    ones): top-level step ``step_index``, its ``frames`` (and ``table``, the StepTable of
    their block's plan), frame ``order[pos]`` (= ``t``) with slot list ``fvals``, and
    ``next_op``, the index of the block op to run next."""
    __slots__ = ("step_index", "frames", "table", "order", "pos", "t", "fvals", "next_op")

    def __init__(self, step_index, frames: FrameRun, order, pos, fvals, next_op, table=None):
        self.step_index, self.frames, self.order = step_index, frames, order
        self.pos, self.fvals, self.next_op = pos, fvals, next_op
        self.t = order[pos]
        self.table = table if table is not None else step_table(frames.plan)

    def moved(self, next_op):
        return FrameCursor(self.step_index, self.frames, self.order, self.pos, self.fvals,
                           next_op, self.table)


class StepTable:
    """Per step of a plan, made once per plan (sessions are cheap to start): its output
    slots, whether it is frame-driven, whether it draws random numbers, its Position."""

    def __init__(self, plan):
        steps = plan.steps
        self.outputs = [tuple(s.output_slots()) for s in steps]
        self.frame_driven = [isinstance(s.control, FrameDrivenOp) for s in steps]
        self.random = [draws_random(s) for s in steps]
        self.positions = [Position(plan.block_idx, s.index, s.type, phase_of(s.desc))
                          for s in steps]


_TABLES = weakref.WeakKeyDictionary()


def step_table(plan) -> StepTable:
    table = _TABLES.get(plan)
    if table is None:
        table = _TABLES[plan] = StepTable(plan)
    return table


def draws_random(step):
    """Ops drawing from the shared generator take a seed (attribute or ``Seed`` input)."""
    return "seed" in step.opdef.attr_by_name or any(s.name == "Seed" for s in step.opdef.inputs)


class Stepper:
    """Drives ``run`` one event at a time, recording each event in ``history``.

    State: ``cursor`` (a FrameCursor inside a frame-driven step, else None), ``last``
    (the Position of the op that ran last), ``finished``, ``completed_frames`` (top-level
    step index -> the FrameRun of a frame-driven step that was stepped into and has
    completed) and ``written``: what the last event wrote, as (slot list, slots written,
    slot names)."""

    def __init__(self, run: Run, history: History):
        self.run, self.history = run, history
        self.plan = run.plan
        self.table = step_table(run.plan)
        self.cursor = None
        self.last = START
        self.finished = False
        self.completed_frames = {}
        self.written = None

    def reset(self):
        """Back to before the first op (the run must have been bound again)."""
        self.cursor, self.last, self.finished = None, START, False
        self.completed_frames = {}
        self.written = None

    # ---------------------------------------------------------------- events
    def advance(self, enter):
        """Run one event; ``enter``: step into a frame-driven step instead of over it."""
        record = UndoRecord(self.run.next_step, self.cursor, self.last)
        try:
            if self.cursor is not None:
                self.written = self._frame_event(record)
            elif enter and self.table.frame_driven[self.run.next_step]:
                self.written = self._enter_event(record)
            else:
                self.written = self._top_event(record)
            if self.run.finished and self.cursor is None:
                self._write_back(record)
        except BaseException:
            self.undo(record)
            raise
        self.history.push(record)

    def _top_event(self, record):
        run, k = self.run, self.run.next_step
        outs = self.table.outputs[k]
        record.save_slots(run.vals, outs)
        if run.lods is not None:
            record.save_slots(run.lods, outs)
        if self.table.random[k]:
            record.rng = rng_state(self.plan.place.xp)
        run.step()
        self.last = self.table.positions[k]
        return run.vals, outs, self.plan.names

    def _enter_event(self, record):
        frames = self.run.unroll_next()
        frames.keep_frames()
        order = list(frames.frame_order)
        if not order:  # no frames (every sequence empty): nothing to step into
            return self._top_event(record)
        fvals = frames.begin_frame(order[0])
        record.began = (frames, order[0])
        self.cursor = FrameCursor(self.run.next_step, frames, order, 0, fvals, 0)
        return self._frame_op(record)

    def _frame_event(self, record):
        cursor = self.cursor
        frames = cursor.frames
        if cursor.next_op < len(frames.plan.steps):
            return self._frame_op(record)
        snapshot = frames.snapshot()
        frames.end_frame(cursor.t, cursor.fvals)
        record.ended = (frames, snapshot, cursor.t)
        if cursor.pos + 1 < len(cursor.order):
            t = cursor.order[cursor.pos + 1]
            fvals = frames.begin_frame(t)
            record.began = (frames, t)
            self.cursor = FrameCursor(cursor.step_index, frames, cursor.order, cursor.pos + 1,
                                      fvals, 0)
            return self._frame_op(record)
        k, run = cursor.step_index, self.run  # the last frame is done: the step completes
        outs = self.table.outputs[k]
        record.save_slots(run.vals, outs)
        if run.lods is not None:
            record.save_slots(run.lods, outs)
        run.complete_frames(frames)
        self.completed_frames[k] = frames
        record.finished_step = k
        self.cursor, self.last = None, self.table.positions[k]
        return run.vals, outs, self.plan.names

    def _frame_op(self, record):
        cursor = self.cursor
        plan, inner = cursor.frames.plan, cursor.table
        step, outs = plan.steps[cursor.next_op], inner.outputs[cursor.next_op]
        record.save_slots(cursor.fvals, outs)
        if inner.random[cursor.next_op]:
            record.rng = rng_state(self.plan.place.xp)
        try:
            step.run(cursor.fvals)
        except Exception as exc:
            raise frame_error(cursor.frames, cursor.t, step, exc) from exc
        self.cursor = cursor.moved(cursor.next_op + 1)
        at = inner.positions[cursor.next_op]  # frame_position, with the table at hand
        self.last = Position(at.block, at.op_index, at.op_type, at.phase, cursor.t,
                             self.table.positions[cursor.step_index])
        return cursor.fvals, outs, plan.names

    def _write_back(self, record):
        for _, name in self.plan.persistable_outputs:
            record.scope_writes.append((name, scope_state(self.run.scope, name)))
        self.run.write_back()
        self.finished = True

    # ------------------------------------------------------------------ undo
    def undo(self, record):
        """Put back the state before the event ``record`` describes."""
        for name, state in reversed(record.scope_writes):
            restore_scope_state(self.run.scope, name, state)
        record.restore_slots()
        if record.began is not None:
            frames, t = record.began
            frames.undo_begin(t)
        if record.ended is not None:
            frames, snapshot, t = record.ended
            if snapshot is not None:
                frames.restore(snapshot, t)
        if record.finished_step is not None:
            self.completed_frames.pop(record.finished_step, None)
        set_rng_state(record.rng)
        self.run.seek(record.next_step)
        self.cursor, self.last = record.cursor, record.last
        self.finished = False

    # --------------------------------------------------------------- reading
    def frame_position(self, step_index, plan, op_index, t):
        """Position of op ``op_index`` of ``plan`` in frame ``t`` of top-level step
        ``step_index``."""
        at = step_table(plan).positions[op_index]
        return Position(at.block, at.op_index, at.op_type, at.phase, t,
                        self.table.positions[step_index])

    @property
    def upcoming(self):
        """The Position the next entering event would stop at (None when finished)."""
        cursor = self.cursor
        if cursor is not None:
            plan = cursor.frames.plan
            if cursor.next_op < len(plan.steps):
                return self.frame_position(cursor.step_index, plan, cursor.next_op, cursor.t)
            if cursor.pos + 1 < len(cursor.order):
                return self.frame_position(cursor.step_index, plan, 0, cursor.order[cursor.pos + 1])
            return self.table.positions[cursor.step_index]
        if not self.run.finished:
            return self.table.positions[self.run.next_step]
        return None

    def frame_source(self):
        """(FrameHistory, frame numbers that ran, in run order) of the frame-driven step
        the stepper is in or has just run; None when there is none."""
        cursor = self.cursor
        if cursor is not None:
            return cursor.frames, cursor.order[:cursor.pos + 1]
        if self.last.op_index is None or self.last.frame is not None:
            return None
        k = self.run.next_step - 1
        frames = self.completed_frames.get(k)
        if frames is not None:
            return frames, frames.frames_run()
        for slot in self.table.outputs[k]:  # stepped over whole: its step scopes
            value = self.run.vals[slot]
            if isinstance(value, FrameHistory):
                return value, value.frames_run()
        return None
