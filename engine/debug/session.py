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

``exe.run`` does not pay for any of this: the session drives the same ``Run`` that
``exe.run`` drives to the end, and frame-driven ops through the same ``runtime.frames``
interface. The classes: ``Session`` (this public API: stops, breakpoints, reading),
``stepper.Stepper`` (events and undo), ``history.History`` (the bounded undo log).
"""
from __future__ import annotations

import difflib

from ..errors import FluidscopeError
from ..runtime.nan_guard import non_finite
from ..runtime.run import Run
from ..runtime.tensor import LoDTensor
from .history import History, restore_scope_state, rng_state, scope_state, set_rng_state
from .stepper import Stepper
from .types import Breakpoint, FrameInfo, Position, read_only

DEFAULT_HISTORY_BYTES = 256 << 20


class Session:
    """A paused run of block 0 of ``program``; see the module docstring and ``Executor.debug``.

    Made from a bound ``Run`` (``Executor.debug`` makes one). State: ``run``, the
    ``stepper`` driving it, its ``history``, the ``breakpoints``, the frame in view and
    why the session last stopped (``stop_reason``, ``stop_var``)."""

    def __init__(self, run: Run, program=None, fetch_list=None,
                 history_bytes=DEFAULT_HISTORY_BYTES):
        self.run, self.program, self.plan, self.scope = run, program, run.plan, run.scope
        self._fetch_list = fetch_list
        self.history = History(history_bytes)
        self.stepper = Stepper(run, self.history)
        self.breakpoints: list[Breakpoint] = []
        self._next_bp_id = 1
        self._initial_scope = [(name, scope_state(self.scope, name))
                               for _, name in self.plan.persistable_outputs]
        self._initial_rng = rng_state(self.plan.place.xp)
        self._view_t = None
        self.stop_reason, self.stop_var = "start", None
        # callables(session) told of every stop (a step, a run's end, back, restart):
        # how a view that did not drive the session follows it (the canvas's debug link)
        self.listeners: list = []
        if run.next_step:  # a run already stepped: start it again
            run.bind()

    @property
    def history_bytes(self) -> int:
        """The memory ``back()`` may keep alive (displaced arrays)."""
        return self.history.limit_bytes

    # ------------------------------------------------------------------ state
    def restart(self):
        """Back to the start of the run: inputs bound again, the scope and the random
        generator as they were when the session was made."""
        for name, state in self._initial_scope:
            restore_scope_state(self.scope, name, state)
        set_rng_state(self._initial_rng)
        self.run.bind()
        self.stepper.reset()
        self.history.clear()
        self._view_t = None
        self.stop_reason = "start"
        self.stop_var = None
        self._tell_listeners()
        return self.position

    @property
    def position(self) -> Position:
        """Where the session stands: just after the op named (see ``Position``)."""
        return self.stepper.last

    @property
    def finished(self) -> bool:
        return self.stepper.finished

    @property
    def history_depth(self) -> int:
        """How many ``back()`` calls are possible now."""
        return len(self.history)

    @property
    def upcoming(self):
        """The Position the next ``step_into()`` would stop at (None when finished)."""
        return self.stepper.upcoming

    # --------------------------------------------------------------- stepping
    def step(self) -> Position:
        """Run the next op at the current level (a recurrent op whole, unless a
        breakpoint inside it stops first) and stop after it."""
        if self.finished:
            return self._stop("finished")
        stepper = self.stepper
        k = self.run.next_step
        if stepper.cursor is None and stepper.table.frame_driven[k] and self._has_breakpoints():
            index = self.plan.steps[k].index
            return self._run(True, lambda pos: pos.frame is None and pos.op_index == index,
                             "step")
        self._advance(enter=False)
        return self._stop(self._breakpoint_reason() or "step")

    def step_into(self) -> Position:
        """Like ``step``, but into a recurrent op: stop after the first op of its first frame."""
        if self.finished:
            return self._stop("finished")
        self._advance(enter=True)
        return self._stop(self._breakpoint_reason() or "step")

    def step_out(self) -> Position:
        """Run the rest of the recurrent op the session is in and stop after it."""
        if self.stepper.cursor is None:
            raise FluidscopeError(f"step_out: not inside a recurrent op (at {self.position})")
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
        if not self.history:
            trimmed = self.history.trimmed
            why = (f"the {trimmed} earliest events were dropped to keep the history "
                   f"under {self.history_bytes} bytes; restart() to go further back"
                   if trimmed else "already at the start")
            raise FluidscopeError(f"back: {why}")
        record = self.history.pop()
        self.stop_var = None
        self.stepper.undo(record)
        self._view_t = None
        return self._stop("back")

    def events(self):
        """The run as a stream: yields the Position after every op, into every frame."""
        while not self.finished:
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
            return LoDTensor.wrap(read_only(tensor.value), tensor.lod_offsets, tensor.place)
        value = self.run.vals[slot]
        if value is None:
            return None
        if not hasattr(value, "dtype"):
            return value  # a holder such as StepScopes
        lod = self.run.lods[slot] if self.run.lods is not None else None
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
        source = self.stepper.frame_source()
        if source is None:
            return ()
        history, ts = source
        return tuple(FrameInfo(t, history.batch_size(t), history.sequences(t),
                               lambda t=t: history.frame_values(t)) for t in ts)

    @property
    def frame(self):
        """The frame whose values ``tensor`` reads (None outside recurrent ops)."""
        if self._view_t is not None:
            return self._view_t
        cursor = self.stepper.cursor
        return cursor.t if cursor is not None else None

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
        if self.finished:
            return self.run.fetch(self._fetch_list, return_numpy)
        out = []
        for name in self.run.fetch_names(self._fetch_list):
            t = self.tensor(name)
            out.append(None if t is None else (t.numpy() if return_numpy else t))
        return out

    # --------------------------------------------------------------- internals
    def _stop(self, reason):
        self.stop_reason = reason
        self._tell_listeners()
        return self.position

    def _tell_listeners(self):
        for listener in list(self.listeners):
            listener(self)

    def _advance(self, enter):
        self.stop_var = None
        self.stepper.advance(enter)
        self._view_t = None

    def _run(self, fine, target, target_reason):
        self.stop_var = None
        while not self.finished:
            self._advance(enter=fine)
            if target is not None and target(self.position):
                return self._stop(self._breakpoint_reason() or target_reason)
            reason = self._breakpoint_reason()
            if reason:
                return self._stop(reason)
        return self._stop("finished")

    def _breakpoint_reason(self):
        """Why the last event stops at a breakpoint (None: it does not)."""
        if not self.breakpoints:
            return None
        container, outs, names = self.stepper.written
        written = [names[s] for s in outs]
        pos = self.position
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

    def _frame_values(self):
        """The viewed frame's values: inside a recurrent op, or after it when a frame was
        chosen with ``view_frame`` (else its out-links, which share names with the
        step block's vars, read as the whole sequences)."""
        if self.stepper.cursor is None and self._view_t is None:
            return None
        source = self.stepper.frame_source()
        if source is None:
            return None
        history, ts = source
        t = self._view_t if self._view_t is not None else ts[-1]
        return history.frame_values(t)

    def _check_name(self, name):
        known = set(self.plan.names[1:]) | set(self.plan.var_descs)
        for plan in self.plan.sub_plans.values():
            known.update(plan.names[1:])
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f"; did you mean {close}?" if close else ""
            raise FluidscopeError(f"tensor: the program has no variable '{name}'{hint}")

    def __repr__(self):
        state = "finished" if self.finished else str(self.position)
        return f"Session({state}, {len(self.breakpoints)} breakpoints, {len(self.history)} events back)"
