"""Frame-driven ops: the one interface both drivers of a run use (``Run`` and the debugger).

A control-flow op whose sub-block runs once per time step (``recurrent``, and
``recurrent_grad`` walking the same frames in reverse) prepares into a ``FrameDrivenOp``.
One execution of it is a ``FrameRun``::

    frames = op.unroll(vals, lods)
    for t in frames.frame_order:
        fvals = frames.begin_frame(t)      # frame t's slot list, bound
        ...the block's ops run on fvals...  # run_frame_ops, or the debugger op by op
        frames.end_frame(t, fvals)
    frames.finish()                         # outputs written into vals / lods

``Run`` drives it whole (``drive_frames``); the debugger makes the same calls one op at
a time and uses the undo half of the interface (``undo_begin``, ``snapshot``,
``restore``) to step back. What ran can be read back through ``FrameHistory``, which a
recurrent op's ``step_scopes`` output implements too.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from ..errors import ExecutionError


class FrameHistory(ABC):
    """Frames that ran, readable by people: frame numbers, rows alive, values."""

    @abstractmethod
    def frames_run(self) -> list:
        """Frame numbers that ran, in the order they ran."""

    @abstractmethod
    def batch_size(self, t) -> int:
        """How many sequences are alive in frame ``t``."""

    @abstractmethod
    def sequences(self, t) -> list:
        """Indices (in LoD order) of the sequences alive in frame ``t``, in row order."""

    @abstractmethod
    def frame_values(self, t) -> dict:
        """name -> value of what frame ``t`` holds."""


class FrameRun(FrameHistory):
    """One execution of a frame-driven op (see the module docstring).

    Attributes a subclass sets: ``plan`` (the BlockPlan each frame runs), ``frame_order``
    (frame numbers in run order), ``block_kind`` ("step", "grad": for messages),
    ``where`` ("op #5 recurrent": for messages) and, optionally, ``step_runs``: (step,
    run) pairs a whole run calls in place of the steps' own ``run`` (a plain run may
    batch work across frames that the debugger, stepping op by op, sees per frame)."""
    plan = None
    step_runs = None
    frame_order = ()
    block_kind = "step"
    where = ""

    @abstractmethod
    def begin_frame(self, t) -> list:
        """Frame ``t``'s slot list with its inputs bound."""

    @abstractmethod
    def end_frame(self, t, fvals) -> None:
        """Collect what frame ``t`` produced."""

    @abstractmethod
    def finish(self) -> None:
        """After the last frame: write the op's outputs into the parent's slots."""

    @abstractmethod
    def undo_begin(self, t) -> None:
        """Forget frame ``t`` again (the debugger stepping back over its start)."""

    def keep_frames(self) -> None:
        """Keep every frame's values for reading (the debugger asks; a plain run need not
        pay for it)."""

    def snapshot(self):
        """What ``end_frame`` changes in place, copied (None: it changes nothing)."""
        return None

    def restore(self, snapshot, t) -> None:
        """Undo ``end_frame(t)`` given the ``snapshot`` taken before it."""

    def frames_run(self) -> list:
        return list(self.frame_order)


class FrameDrivenOp(ABC):
    """What a frame-driven op's ``prepare(ctx)`` returns."""

    @abstractmethod
    def unroll(self, vals, lods) -> FrameRun:
        """One execution of the op over the parent's slot lists, to be driven."""

    def run(self, vals, lods):
        """The whole op (what a plain run calls)."""
        drive_frames(self.unroll(vals, lods))


def drive_frames(frames: FrameRun):
    """Run every frame of ``frames`` and finish it (``run_frame_ops`` written out: a
    call and three lookups less per frame, the step runs read when the drive starts)."""
    begin, end, runs = frames.begin_frame, frames.end_frame, frames.step_runs
    steps = frames.plan.steps if runs is None else ()
    for t in frames.frame_order:
        fvals = begin(t)
        step = None
        try:
            if runs is None:
                for step in steps:
                    step.run(fvals)
            else:
                for step, run in runs:
                    run(fvals)
        except Exception as exc:
            raise frame_error(frames, t, step, exc) from exc
        end(t, fvals)
    frames.finish()


def run_frame_ops(frames: FrameRun, t, fvals):
    """Run the block's ops on frame ``t``'s slot list."""
    step, runs = None, frames.step_runs
    try:
        if runs is None:
            for step in frames.plan.steps:
                step.run(fvals)
        else:
            for step, run in runs:
                run(fvals)
    except Exception as exc:
        raise frame_error(frames, t, step, exc) from exc


def frame_error(frames: FrameRun, t, step, exc):
    """The ExecutionError for ``exc`` raised by ``step`` in frame ``t``: where, and why."""
    inner = f"{frames.block_kind} op #{step.index} {step.type}" if step is not None \
        else f"{frames.block_kind} block"
    return ExecutionError(f"frame {t} of {frames.where}, {inner}: {type(exc).__name__}: {exc}")


__all__ = ["FrameHistory", "FrameRun", "FrameDrivenOp", "drive_frames", "run_frame_ops",
           "frame_error"]
