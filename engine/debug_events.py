"""The event machine under a debugger ``Session``: one op at a time, every op undoable.

An *event* runs one op: a top-level op (``_top_event``), the first op of a recurrent op's
first frame (``_enter_event``), or the next op inside it (``_inner_event``: which may end
a frame and begin the next, or, after the last frame, complete the recurrent op). Each
event fills an ``_Entry`` with what it overwrote, so ``_undo`` puts back exactly the
state before it: the slots' previous values (kernels never write their inputs in
place), frames begun or ended, the random generator's state, the scope's values at
write-back.
"""
from __future__ import annotations

import weakref

from . import random as fr
from .debug_types import Position, phase_of
from .errors import ExecutionError
from .plan import check_lod_agree
from .recurrent import frame_error
from .tensor import LoDTensor

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


class EventMachine:
    """The stepping engine of ``Session`` (which holds the state it works on)."""

    def _advance(self, enter):
        self.stop_var = None
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
        entry.rng = rng_state(xp)

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
        if hasattr(unroll, "keep_frames"):
            unroll.keep_frames()
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
        self._last = self._inner_pos(ins.k, plan, ins.j, ins.t)
        return ins.fvals, outs, plan.names

    @staticmethod
    def _inner_info(plan):
        outs, _, random_ops, _ = step_info(plan)
        return outs, random_ops

    def _inner_pos(self, k, plan, j, t):
        """Position of op ``j`` of ``plan`` in frame ``t`` of top-level step ``k``."""
        at = step_info(plan)[3][j]
        return Position(at.block, at.op_index, at.op_type, at.phase, t, self._top_pos[k])

    def _finalize(self, entry):
        for _, name in self.plan.persistable_outputs:
            entry.scope_writes.append((name, scope_state(self.scope, name)))
        self.executor._write_back(self.plan, self._vals, self._lods, self.scope)
        self._finished = True

    def _undo(self, entry):
        for name, state in reversed(entry.scope_writes):
            restore_scope_state(self.scope, name, state)
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
            set_rng_state(self.plan.place.xp, entry.rng)
        self._k, self._inside, self._last = entry.k, entry.inside, entry.last
        self._finished = False


# ------------------------------------------------------------------- helpers
_STEP_INFO = weakref.WeakKeyDictionary()


def step_info(plan):
    """Per step of a plan, made once per plan (sessions are cheap to start):
    (output slots, drives frames, draws random numbers, its Position at block level)."""
    info = _STEP_INFO.get(plan)
    if info is None:
        steps = plan.steps
        info = _STEP_INFO[plan] = (
            [tuple(s.output_slots()) for s in steps],
            [hasattr(s.control, "unroll") for s in steps],
            [_is_random(s) for s in steps],
            [Position(plan.block_idx, s.index, s.type, phase_of(s.desc)) for s in steps])
    return info

def frame_values_of(unroll, t):
    """name -> value of frame ``t``: the grad block's values over the forward frame's."""
    out = {}
    forward = getattr(unroll, "forward_frames", None)
    if forward is not None:  # a BackUnroll: forward values of the frame, then gradients
        plan = forward.plan
        fvals = forward.frames[t].vals
        out.update((n, fvals[i]) for i, n in enumerate(plan.names) if i and fvals[i] is not None)
        gvals = unroll.grad_frames.get(t) if unroll.grad_frames is not None else None
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


def rng_state(xp):
    gen = fr.generator(xp)
    bit = getattr(gen, "bit_generator", None)
    return (gen, bit.state) if bit is not None and hasattr(bit, "state") else None


def set_rng_state(xp, saved):
    if saved is not None:
        gen, state = saved
        gen.bit_generator.state = state


def scope_state(scope, name):
    var = scope.find_var(name)
    if var is None:
        return None
    tensor = var.get_value()
    if not isinstance(tensor, LoDTensor):
        return ("value", var, tensor)
    return ("tensor", var, (tensor.value, tensor._lod, tensor.place))


def restore_scope_state(scope, name, state):
    if state is None:
        scope.erase([name])
        return
    kind, var, saved = state
    if kind == "value":
        var.set_value(saved)
        return
    tensor = var.get_tensor()
    tensor.value, tensor._lod, tensor.place = saved
