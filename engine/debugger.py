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

from . import random as fr
from .debug_types import Breakpoint, FrameInfo, Position, non_finite, phase_of, read_only
from .errors import ExecutionError, FluidscopeError
from .plan import check_lod_agree
from .recurrent import frame_error
from .tensor import LoDTensor

DEFAULT_HISTORY_BYTES = 256 << 20
MAX_HISTORY_EVENTS = 200_000


class _Inside:
    """Where the session is inside a recurrent op (immutable: history keeps old ones)."""
    __slots__ = ("k", "unroll", "order", "pos", "t", "fvals", "j")

    def __init__(self, k, unroll, order, pos, fvals, j):
        self.k, self.unroll, self.order, self.pos, self.fvals, self.j = k, unroll, order, pos, fvals, j
        self.t = order[pos]


class _Entry:
    """One event's undo record."""
    __slots__ = ("k", "inside", "last", "writes", "began", "ended", "finished_k", "rng",
                 "scope_writes", "nbytes")

    def __init__(self, k, inside, last):
        self.k, self.inside, self.last = k, inside, last
        self.writes, self.scope_writes = [], []
        self.began = self.ended = self.finished_k = self.rng = None
        self.nbytes = 0


class Session:
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
        steps = self.plan.steps
        self._outs = [tuple(s.output_slots()) for s in steps]
        self._frame_driven = [hasattr(s.control, "unroll") for s in steps]
        self._random = [_is_random(s) for s in steps]
        self._top_pos = [Position(0, s.index, s.type, phase_of(s.desc)) for s in steps]
        self._inner_cache = {}  # id(plan) -> (outs per step, positions-without-frame info)
        self._initial_scope = [(name, _scope_state(self.scope, name))
                               for _, name in self.plan.persistable_outputs]
        self._initial_rng = _rng_state(self.plan.place.xp)
        self.restart()

    # ------------------------------------------------------------------ state
    def restart(self):
        """Back to the start of the run: inputs bound again, the scope and the random
        generator as they were when the session was made."""
        for name, state in self._initial_scope:
            _restore_scope(self.scope, name, state)
        _set_rng_state(self.plan.place.xp, self._initial_rng)
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
                return self._inner_pos(ins.k, ins.unroll.plan, steps[ins.j], ins.t)
            if ins.pos + 1 < len(ins.order):
                return self._inner_pos(ins.k, ins.unroll.plan, steps[0], ins.order[ins.pos + 1])
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
                               lambda t=t: _frame_dict(unroll, t)) for t in ts)

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

    def _advance(self, enter):
        entry = _Entry(self._k, self._inside, self._last)
        try:
            if self._inside is not None:
                self._written = self._inner_event(entry)
            elif enter and self._frame_driven[self._k]:
                self._written = self._enter_event(entry)
            else:
                self._written = self._top_event(entry)
            if self._k == len(self.plan.steps) and self._inside is None:
                self._finalize(entry)
        except BaseException:
            self._undo(entry)
            raise
        self._push(entry)
        self._view_t = None

    def _push(self, entry):
        self._history.append(entry)
        self._history_total += entry.nbytes
        while len(self._history) > 1 and (self._history_total > self.history_bytes
                                          or len(self._history) > MAX_HISTORY_EVENTS):
            old = self._history.popleft()
            self._history_total -= old.nbytes
            self._trimmed += 1

    @staticmethod
    def _record(entry, container, slots):
        for s in slots:
            old = container[s]
            entry.writes.append((container, s, old))
            if old is not None:
                entry.nbytes += getattr(old, "nbytes", 0)

    def _save_rng(self, entry):
        xp = self.plan.place.xp
        entry.rng = _rng_state(xp)

    def _top_event(self, entry):
        k, vals, lods = self._k, self._vals, self._lods
        step, outs = self.plan.steps[k], self._outs[k]
        self._record(entry, vals, outs)
        if lods is not None:
            self._record(entry, lods, outs)
        if self._random[k]:
            self._save_rng(entry)
        try:
            if lods is None:
                step.run(vals)
            elif step.needs_lod:
                step.run(vals, lods)
            else:
                if step.lod_agree:
                    check_lod_agree(step, lods)
                step.run(vals)
                for a, b in step.lod_pairs:
                    lods[b] = lods[a]
        except ExecutionError:
            raise
        except Exception as exc:
            from .executor import _describe
            raise ExecutionError(f"{_describe(self.plan, step, vals)}: "
                                 f"{type(exc).__name__}: {exc}") from exc
        self._k = k + 1
        self._last = self._top_pos[k]
        return vals, outs, self.plan.names

    def _enter_event(self, entry):
        k = self._k
        step = self.plan.steps[k]
        unroll = step.control.unroll(self._vals, self._lods)
        order = list(unroll.frame_order)
        if not order:  # no frames (every sequence empty): nothing to step into
            return self._top_event(entry)
        fvals = unroll.begin_frame(order[0])
        entry.began = (unroll, order[0])
        self._inside = _Inside(k, unroll, order, 0, fvals, 0)
        return self._inner_op(entry)

    def _inner_event(self, entry):
        ins = self._inside
        unroll = ins.unroll
        if ins.j < len(unroll.plan.steps):
            return self._inner_op(entry)
        snap = unroll.snapshot() if hasattr(unroll, "snapshot") else None
        unroll.end_frame(ins.t, ins.fvals)
        entry.ended = (unroll, snap, ins.t)
        if ins.pos + 1 < len(ins.order):
            t = ins.order[ins.pos + 1]
            fvals = unroll.begin_frame(t)
            entry.began = (unroll, t)
            self._inside = _Inside(ins.k, unroll, ins.order, ins.pos + 1, fvals, 0)
            return self._inner_op(entry)
        k, outs = ins.k, self._outs[ins.k]  # the last frame is done: the op completes
        self._record(entry, self._vals, outs)
        if self._lods is not None:
            self._record(entry, self._lods, outs)
        unroll.finish()
        self._done_unrolls[k] = unroll
        entry.finished_k = k
        self._inside, self._k, self._last = None, k + 1, self._top_pos[k]
        return self._vals, outs, self.plan.names

    def _inner_op(self, entry):
        ins = self._inside
        plan = ins.unroll.plan
        outs_of, random_of = self._inner_info(plan)
        step, outs = plan.steps[ins.j], outs_of[ins.j]
        self._record(entry, ins.fvals, outs)
        if random_of[ins.j]:
            self._save_rng(entry)
        try:
            step.run(ins.fvals)
        except Exception as exc:
            raise frame_error(ins.unroll, ins.t, step, exc) from exc
        self._inside = _Inside(ins.k, ins.unroll, ins.order, ins.pos, ins.fvals, ins.j + 1)
        self._last = self._inner_pos(ins.k, plan, step, ins.t)
        return ins.fvals, outs, plan.names

    def _inner_info(self, plan):
        info = self._inner_cache.get(id(plan))
        if info is None:
            info = self._inner_cache[id(plan)] = (
                [tuple(s.output_slots()) for s in plan.steps], [_is_random(s) for s in plan.steps])
        return info

    def _inner_pos(self, k, plan, step, t):
        return Position(plan.block_idx, step.index, step.type, phase_of(step.desc), t,
                        self._top_pos[k])

    def _finalize(self, entry):
        for _, name in self.plan.persistable_outputs:
            entry.scope_writes.append((name, _scope_state(self.scope, name)))
        self.executor._write_back(self.plan, self._vals, self._lods, self.scope)
        self._finished = True

    def _undo(self, entry):
        for name, state in reversed(entry.scope_writes):
            _restore_scope(self.scope, name, state)
        for container, s, old in reversed(entry.writes):
            container[s] = old
        if entry.began is not None:
            unroll, t = entry.began
            unroll.undo_begin(t)
        if entry.ended is not None:
            unroll, snap, t = entry.ended
            if snap is not None:
                unroll.restore(snap, t)
        if entry.finished_k is not None:
            self._done_unrolls.pop(entry.finished_k, None)
        if entry.rng is not None:
            _set_rng_state(self.plan.place.xp, entry.rng)
        self._k, self._inside, self._last = entry.k, entry.inside, entry.last
        self._finished = False

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
        return _frame_dict(unroll, t)

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


# ------------------------------------------------------------------- helpers
def _frame_dict(unroll, t):
    """name -> value of frame ``t``: the grad block's values over the forward frame's."""
    out = {}
    forward = getattr(unroll, "forward_frames", None)
    if forward is not None:  # a BackUnroll: forward values of the frame, then gradients
        plan = forward.plan
        fvals = forward.frames[t].vals
        out.update((n, fvals[i]) for i, n in enumerate(plan.names) if i and fvals[i] is not None)
        gvals = unroll.grad_frames.get(t)
        if gvals is not None:
            out.update((n, gvals[i]) for i, n in enumerate(unroll.plan.names)
                       if i and gvals[i] is not None)
        return out
    frames = unroll.frames.frames
    frame = next((f for f in frames if f.t == t), None)
    if frame is not None:
        out.update((n, frame.vals[i]) for i, n in enumerate(unroll.plan.names)
                   if i and frame.vals[i] is not None)
    return out


def _is_random(step):
    """Ops drawing from the shared generator take a seed (attribute or ``Seed`` input)."""
    return "seed" in step.opdef.attr_by_name or any(s.name == "Seed" for s in step.opdef.inputs)


def _rng_state(xp):
    gen = fr.generator(xp)
    bit = getattr(gen, "bit_generator", None)
    return (gen, bit.state) if bit is not None and hasattr(bit, "state") else None


def _set_rng_state(xp, saved):
    if saved is not None:
        gen, state = saved
        gen.bit_generator.state = state


def _scope_state(scope, name):
    var = scope.find_var(name)
    if var is None:
        return None
    tensor = var.get_value()
    if not isinstance(tensor, LoDTensor):
        return ("value", var, tensor)
    return ("tensor", var, (tensor.value, tensor._lod, tensor.place))


def _restore_scope(scope, name, state):
    if state is None:
        scope.erase([name])
        return
    kind, var, saved = state
    if kind == "value":
        var.set_value(saved)
        return
    tensor = var.get_tensor()
    tensor.value, tensor._lod, tensor.place = saved
