"""The debugger session: ``exe.run`` as a stream of stops you can step, break and rewind.

``sess = exe.debug(program, feed, fetch_list, scope)`` prepares the same ``BlockPlan``
as ``exe.run`` and binds the same inputs, then runs it one *event* at a time. An event
is one op that ran: a top-level op, or, once you step into a recurrent op, one op of
its step (or grad) block in one frame; the recurrent op's own completion is the event
after its last frame. The session stands just after an event (``position``), so every
tensor the op wrote can be read (``tensor``).

Time travel: each event records what it overwrote (the previous values of the slots it
wrote, which kernels never modify in place, the random generator's state for random
ops, a recurrent grad's carried sums, the scope's values at write-back), so ``back``
restores exactly the state before it, and stepping again reproduces the same values.
The history is bounded by ``history_bytes`` (the displaced arrays it keeps alive).

``exe.run`` does not pay for any of this: the session drives the same prepared steps
and the same ``Unroll``/``BackUnroll`` frame calls (``recurrent.run_frames``) from here.
"""
from __future__ import annotations

import collections
import difflib

from .debug_events import (EventMachine, frame_values_of, restore_scope_state, rng_state,
                           scope_state, set_rng_state, step_info)
from .debug_types import Breakpoint, FrameInfo, Position, non_finite, read_only
from .errors import FluidscopeError
from .recurrent_scopes import StepScopes
from .tensor import LoDTensor

DEFAULT_HISTORY_BYTES = 256 << 20


class Session(EventMachine):
    """A paused run of block 0 of ``program``; see the module docstring and ``Executor.debug``."""

    def __init__(self, executor, program, feed=None, fetch_list=None, scope=None,
                 history_bytes=DEFAULT_HISTORY_BYTES):
        from .scope import global_scope
        self.executor, self.program = executor, program
        self.plan = executor.prepare(program)
        self.scope = scope if scope is not None else global_scope()
        self._feed, self._fetch_list = dict(feed or {}), fetch_list
        self.history_bytes = int(history_bytes)
        self.breakpoints: list[Breakpoint] = []
        self._next_bp_id = 1
        self._outs, self._frame_driven, self._random, self._top_pos = step_info(self.plan)
        self._initial_scope = [(name, scope_state(self.scope, name))
                               for _, name in self.plan.persistable_outputs]
        self._initial_rng = rng_state(self.plan.place.xp)
        self.restart()

    # ------------------------------------------------------------------ state
    def restart(self):
        """Back to the start of the run: inputs bound again, the scope and the random
        generator as they were when the session was made."""
        for name, state in self._initial_scope:
            restore_scope_state(self.scope, name, state)
        set_rng_state(self.plan.place.xp, self._initial_rng)
        self._vals, self._lods = self.executor._bind_inputs(self.plan, self._feed, self.scope)
        self._k, self._inside, self._finished = 0, None, False
        self._last = Position(0, None, None, "forward")
        self._history, self._history_total, self._trimmed = collections.deque(), 0, 0
        self._done_unrolls = {}
        self._view_t = None
        self.stop_reason = "start"
        self.stop_var = None
        return self.position

    @property
    def position(self) -> Position:
        """Where the session stands: just after the op named (see ``Position``)."""
        return self._last

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def history_depth(self) -> int:
        """How many ``back()`` calls are possible now."""
        return len(self._history)

    @property
    def upcoming(self):
        """The Position the next ``step_into()`` would stop at (None when finished)."""
        ins = self._inside
        if ins is not None:
            steps = ins.unroll.plan.steps
            if ins.j < len(steps):
                return self._inner_pos(ins.k, ins.unroll.plan, ins.j, ins.t)
            if ins.pos + 1 < len(ins.order):
                return self._inner_pos(ins.k, ins.unroll.plan, 0, ins.order[ins.pos + 1])
            return self._top_pos[ins.k]
        if self._k < len(self.plan.steps):
            return self._top_pos[self._k]
        return None

    # --------------------------------------------------------------- stepping
    def step(self) -> Position:
        """Run the next op at the current level (a recurrent op whole, unless a
        breakpoint inside it stops first) and stop after it."""
        if self._finished:
            return self._stop("finished")
        k = self._k
        if self._inside is None and self._frame_driven[k] and self._has_breakpoints():
            index = self.plan.steps[k].index
            return self._run(True, lambda pos: pos.frame is None and pos.op_index == index,
                             "step")
        self._advance(enter=False)
        return self._stop(self._breakpoint_reason() or "step")

    def step_into(self) -> Position:
        """Like ``step``, but into a recurrent op: stop after the first op of its first frame."""
        if self._finished:
            return self._stop("finished")
        self._advance(enter=True)
        return self._stop(self._breakpoint_reason() or "step")

    def step_out(self) -> Position:
        """Run the rest of the recurrent op the session is in and stop after it."""
        if self._inside is None:
            raise FluidscopeError(f"step_out: not inside a recurrent op (at {self._last})")
        return self._run(True, lambda pos: pos.frame is None, "stepped out")

    def continue_(self) -> Position:
        """Run to the next breakpoint or to the end."""
        return self._run(self._has_breakpoints(), None, None)

    def run_to(self, op_index=None, op_type=None, frame=None, block=None) -> Position:
        """Run until an op matching every criterion given has run (or a breakpoint, or
        the end). ``op_index`` counts in ``block`` (block 0 unless given)."""
        if op_index is None and op_type is None and frame is None:
            raise FluidscopeError("run_to needs op_index, op_type or frame")
        target = Breakpoint(0, op_type=op_type, op_index=op_index, block=block, frame=frame)
        fine = self._has_breakpoints() or op_type is not None or frame is not None \
            or target.block not in (None, 0)
        return self._run(fine, lambda pos: target.matches_place(pos, ()),
                         f"reached {target.describe().partition(': ')[2]}")

    def back(self) -> Position:
        """Undo the last event exactly; the position moves back one op."""
        if not self._history:
            why = (f"the {self._trimmed} earliest events were dropped to keep the history "
                   f"under {self.history_bytes} bytes; restart() to go further back"
                   if self._trimmed else "already at the start")
            raise FluidscopeError(f"back: {why}")
        entry = self._history.pop()
        self._history_total -= entry.nbytes
        self.stop_var = None
        self._undo(entry)
        self._view_t = None
        return self._stop("back")

    def events(self):
        """The run as a stream: yields the Position after every op, into every frame."""
        while not self._finished:
            yield self.step_into()

    __iter__ = events

    # ------------------------------------------------------------ breakpoints
    def break_on(self, op_type=None, op_index=None, var=None, frame=None, condition=None,
                 nan_inf=False, block=None) -> Breakpoint:
        """Add a breakpoint (see ``Breakpoint``); ``continue_`` and friends stop after a
        matching op. ``nan_inf=True`` stops at the first op writing a NaN or an Inf."""
        bp = Breakpoint(self._next_bp_id, op_type=op_type, op_index=op_index, block=block,
                        var=var, frame=frame, condition=condition, nan_inf=nan_inf)
        self._next_bp_id += 1
        self.breakpoints.append(bp)
        return bp

    def remove_breakpoint(self, bp):
        """Remove a breakpoint (the object or its id)."""
        bp_id = getattr(bp, "id", bp)
        kept = [b for b in self.breakpoints if b.id != bp_id]
        if len(kept) == len(self.breakpoints):
            raise FluidscopeError(f"no breakpoint {bp_id}; there are "
                                  f"{[b.id for b in self.breakpoints]}")
        self.breakpoints = kept

    def clear_breakpoints(self):
        self.breakpoints = []

    def _has_breakpoints(self):
        return any(bp.enabled for bp in self.breakpoints)

    # ---------------------------------------------------------------- reading
    def tensor(self, name):
        """The value of ``name`` at the current position, read-only, as a LoDTensor (None
        if nothing has set it yet). Inside a recurrent op the frame being viewed (the
        current one unless ``view_frame`` chose another) is looked at first."""
        frame_vals = self._frame_values()
        if frame_vals is not None and name in frame_vals:
            value = frame_vals[name]
            return None if value is None else LoDTensor.wrap(read_only(value), place=self.plan.place)
        slot = self.plan.slot.get(name)
        if slot is None:
            self._check_name(name)
            var = self.scope.find_var(name)
            if var is None or not var.is_initialized():
                return None
            tensor = var.get_tensor()
            return LoDTensor.wrap(read_only(tensor.value), tensor._lod, tensor.place)
        value = self._vals[slot]
        if value is None:
            return None
        if not hasattr(value, "dtype"):
            return value  # a holder such as StepScopes
        lod = self._lods[slot] if self._lods is not None else None
        return LoDTensor.wrap(read_only(value), lod, self.plan.place)

    def variables(self) -> list:
        """Names readable at the position: the block's, then the viewed frame's."""
        names = set(self.plan.names[1:])
        frame_vals = self._frame_values()
        if frame_vals:
            names.update(frame_vals)
        return sorted(names)

    @property
    def frames(self) -> tuple:
        """The frames of the recurrent op the session is in (or has just run), in the
        order they ran (reversed for a recurrent_grad), read-only."""
        source = self._frame_source()
        if source is None:
            return ()
        unroll, ts = source
        return tuple(FrameInfo(t, int(unroll.seq.batch_sizes[t]),
                               [int(i) for i in unroll.seq.order[:unroll.seq.batch_sizes[t]]],
                               lambda t=t: frame_values_of(unroll, t)) for t in ts)

    @property
    def frame(self):
        """The frame whose values ``tensor`` reads (None outside recurrent ops)."""
        if self._view_t is not None:
            return self._view_t
        return self._inside.t if self._inside is not None else None

    def view_frame(self, t):
        """Read frame ``t`` (one that has run) with ``tensor``; None: the current frame."""
        if t is not None:
            available = [f.t for f in self.frames]
            if t not in available:
                raise FluidscopeError(f"view_frame: frame {t} has not run here; frames "
                                      f"available: {sorted(available)}")
        self._view_t = t
        return t

    def fetch(self, return_numpy=True):
        """What ``exe.run`` returns; before the end, the values so far (None: not yet)."""
        if self._finished:
            return self.executor._fetch(self.plan, self._vals, self._lods, self._fetch_list,
                                        return_numpy)
        names = ([getattr(i, "name", i) for i in self._fetch_list] if self._fetch_list is not None
                 else [self.plan.names[self.plan.fetch_cols[c]] for c in sorted(self.plan.fetch_cols)])
        out = []
        for name in names:
            t = self.tensor(name)
            out.append(None if t is None else (t.numpy() if return_numpy else t))
        return out

    # --------------------------------------------------------------- internals
    def _stop(self, reason):
        self.stop_reason = reason
        return self._last

    def _run(self, fine, target, target_reason):
        self.stop_var = None
        while not self._finished:
            self._advance(enter=fine)
            if target is not None and target(self._last):
                return self._stop(self._breakpoint_reason() or target_reason)
            reason = self._breakpoint_reason()
            if reason:
                return self._stop(reason)
        return self._stop("finished")

    def _breakpoint_reason(self):
        """Why the last event stops at a breakpoint (None: it does not)."""
        if not self.breakpoints:
            return None
        container, outs, names = self._written
        written = [names[s] for s in outs]
        pos = self._last
        for bp in self.breakpoints:
            if not bp.enabled or not bp.matches_place(pos, written):
                continue
            if bp.condition is not None and not bp.condition(self):
                continue
            detail = ""
            if bp.nan_inf:
                xp = self.plan.place.xp
                found = next(((n, msg) for n, s in zip(written, outs)
                              for msg in [non_finite(xp, n, container[s])] if msg), None)
                if found is None:
                    continue
                self.stop_var = found[0]
                detail = f": #{pos.op_index} {pos.op_type} wrote {found[1]}"
            bp.hits += 1
            return bp.describe() + detail
        return None

    def _frame_source(self):
        """(unroll, frame numbers that ran, in run order) of the recurrent op in view."""
        if self._inside is not None:
            ins = self._inside
            return ins.unroll, ins.order[:ins.pos + 1]
        pos = self._last
        if pos.op_index is None or pos.frame is not None:
            return None
        k = self._k - 1
        unroll = self._done_unrolls.get(k)
        if unroll is not None:
            return unroll, list(unroll.frame_order)
        for slot in self._outs[k]:  # a recurrent op stepped over whole: its step scopes
            value = self._vals[slot]
            if isinstance(value, StepScopes):
                return _FramesOf(value), [f.t for f in value.frames]
        return None

    def _frame_values(self):
        """The viewed frame's values: inside a recurrent op, or after it when a frame was
        chosen with ``view_frame`` (else its out-links, which share names with the
        step block's vars, read as the whole sequences)."""
        if self._inside is None and self._view_t is None:
            return None
        source = self._frame_source()
        if source is None:
            return None
        unroll, ts = source
        t = self._view_t if self._view_t is not None else ts[-1]
        return frame_values_of(unroll, t)

    def _check_name(self, name):
        known = set(self.plan.names[1:]) | set(self.plan.var_descs)
        for plan in self.plan.sub_plans.values():
            known.update(plan.names[1:])
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f"; did you mean {close}?" if close else ""
            raise FluidscopeError(f"tensor: the program has no variable '{name}'{hint}")

    def __repr__(self):
        state = "finished" if self._finished else str(self._last)
        return f"Session({state}, {len(self.breakpoints)} breakpoints, {len(self._history)} events back)"


class _FramesOf:
    """A finished forward run's StepScopes, read like the ``Unroll`` that made them."""

    def __init__(self, scopes):
        self.frames, self.plan, self.seq = scopes, scopes.plan, scopes.seq
