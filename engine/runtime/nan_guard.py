"""The NaN/Inf guard of a plain run (Paddle's ``FLAGS_check_nan_inf``).

``Executor.run(..., check_nan_inf=True)``, or the environment variable
``FLAGS_check_nan_inf=1`` (read when an Executor is made), drives the run through ``run_guarded`` instead of
``Run.run_to_end``: one public step at a time, and inside a frame-driven step (a
recurrent op) one op of its block at a time, checking every float output right after the
op wrote it. The first NaN or Inf raises ``NonFiniteError`` naming the op, the block, the
frame, the variable and the counts. Nothing after that op runs (the optimizer included)
and nothing is written back to the scope (kernels are pure: they write no input in
place), so the parameters stay as they were. A control-flow op that is not frame-driven
is checked on its outputs only.

Why a second driver and not a flag in the hot loop: ``run_to_end`` is what every plain
run pays per op, so a run without the guard pays nothing for it; the guarded run pays
one ``isfinite`` pass per output, as Paddle's check does.

``non_finite`` is the one check both the guard and the debugger's ``nan_inf``
breakpoint use.
"""
from __future__ import annotations

import os
import weakref

from ..errors import ExecutionError
from .frames import FrameRun, frame_error

ENV_FLAG = "FLAGS_check_nan_inf"
_OFF = ("", "0", "false", "off", "no")


def flag_from_env(environ=None) -> bool:
    """True when ``FLAGS_check_nan_inf`` is set to anything but 0 / false / off / no."""
    value = (os.environ if environ is None else environ).get(ENV_FLAG, "")
    return value.strip().lower() not in _OFF


def count_non_finite(xp, value):
    """(NaN count, Inf count) of a float or complex array holding any; None when it holds
    none or is not a float array (ints cannot hold them; holders have no dtype)."""
    if not hasattr(value, "dtype") or value.dtype.kind not in "fc" or value.size == 0:
        return None
    if bool(xp.isfinite(value).all()):  # faster than a finite-sum test (numpy 2, float32)
        return None
    return int(xp.isnan(value).sum()), int(xp.isinf(value).sum())


def non_finite(xp, name, value):
    """"'x', which holds 3 NaN and 1 Inf among 12 values" for a float array holding any,
    else None."""
    counts = count_non_finite(xp, value)
    if counts is None:
        return None
    return f"'{name}', which holds {counts[0]} NaN and {counts[1]} Inf among {value.size} values"


class NonFiniteError(ExecutionError):
    """An op wrote a NaN or an Inf while the run was guarded.

    Attributes: ``op_type``, ``op_index`` and ``block`` of the op that wrote it, ``var``,
    ``nans``, ``infs``, ``size`` (values in ``var``), and inside a recurrent op ``frame``
    (the time step) and ``parent`` ("op #5 recurrent"); both None outside one."""

    def __init__(self, message, *, op_type, op_index, block, var, nans, infs, size,
                 frame=None, parent=None):
        super().__init__(message)
        self.op_type, self.op_index, self.block, self.var = op_type, op_index, block, var
        self.nans, self.infs, self.size = nans, infs, size
        self.frame, self.parent = frame, parent


_STOPPED = ("the run stopped there: no later op ran (the optimizer included) and nothing "
            "was written back to the scope")


_OUTPUTS = weakref.WeakKeyDictionary()  # plan -> output slots of each step, made once


def _outputs_of(plan) -> list:
    """The output slots of each step of ``plan``, in step order (cached per plan)."""
    outputs = _OUTPUTS.get(plan)
    if outputs is None:
        outputs = _OUTPUTS[plan] = [tuple(s.output_slots()) for s in plan.steps]
    return outputs


def _first_non_finite(xp, slots, vals):
    """(slot, (NaN count, Inf count)) of the first of ``slots`` in ``vals`` holding a NaN
    or an Inf; None when every one is finite."""
    for slot in slots:
        counts = count_non_finite(xp, vals[slot])
        if counts is not None:
            return slot, counts
    return None


def _error(xp, found, step, vals, names, where, block, frame=None, parent=None):
    """The NonFiniteError for what ``_first_non_finite`` found; ``where`` describes the op
    (built only now: describing every op of a run that stays finite would cost more than
    the check)."""
    slot, (nans, infs) = found
    name, value = names[slot], vals[slot]
    return NonFiniteError(
        f"NaN/Inf check ({ENV_FLAG}): {where} in block {block} wrote "
        f"{non_finite(xp, name, value)}; {_STOPPED}",
        op_type=step.type, op_index=step.index, block=block, var=name, nans=nans, infs=infs,
        size=int(value.size), frame=frame, parent=parent)


def _drive_frames_guarded(frames: FrameRun, xp):
    """``drive_frames`` without ``finish``, checking each op of each frame."""
    plan = frames.plan
    outputs = _outputs_of(plan)
    for t in frames.frame_order:
        fvals = frames.begin_frame(t)
        for step, slots in zip(plan.steps, outputs):
            try:
                step.run(fvals)
            except Exception as exc:
                raise frame_error(frames, t, step, exc) from exc
            found = _first_non_finite(xp, slots, fvals)
            if found is not None:
                where = (f"frame {t} of {frames.where}, {frames.block_kind} op #{step.index} "
                         f"{step.type}")
                raise _error(xp, found, step, fvals, plan.names, where, plan.block_idx, t,
                             frames.where)
        frames.end_frame(t, fvals)


def run_guarded(run):
    """Drive ``run`` (a ``Run``) to the end like ``run_to_end``, raising NonFiniteError at
    the first op that writes a NaN or an Inf."""
    plan = run.plan
    xp, outputs = plan.place.xp, _outputs_of(plan)
    while not run.finished:
        k = run.next_step
        step = plan.steps[k]
        frames = run.unroll_next()
        if frames is None:
            run.step()
        else:
            try:
                _drive_frames_guarded(frames, xp)
                run.complete_frames(frames)
            except NonFiniteError:
                raise
            except Exception as exc:
                raise run.error_at(step, exc) from exc
        found = _first_non_finite(xp, outputs[k], run.vals)
        if found is not None:
            raise _error(xp, found, step, run.vals, plan.names, run.describe(step),
                         plan.block_idx)


__all__ = ["ENV_FLAG", "flag_from_env", "count_non_finite", "non_finite", "NonFiniteError",
           "run_guarded"]
