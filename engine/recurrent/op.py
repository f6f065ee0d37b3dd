"""The ``recurrent`` op: RecurrentGradientMachine frame unrolling (reference/000).

A recurrent group is one op whose ``sub_block`` is the step net of one time step.
Running it:

* **sequence to batch** (``seqbatch``): sequences sorted by length, frame ``t`` holds
  the sequences still alive (a prefix of the sorted order), so no padding is computed;
* **in-links** (``inputs``) are reordered once into batch order; frame ``t`` reads its
  contiguous slice (a view);
* **memories**: ``ex_states[i]`` of frame ``t`` is ``states[i]`` of frame ``t - 1``
  restricted to the alive prefix; at frame 0 it is ``initial_states[i]`` (the boot
  layer, one row per sequence, sorted) or zeros when that entry is ``@EMPTY@``. A
  state may name its own ex_state (a self link): that is a static input, the same
  per-sequence row at every step;
* **one step scope per frame**: each frame runs the step block's plan on a fresh slot
  list; the frames are kept in the ``step_scopes`` output (readable as scopes, and
  read by the backward);
* **out-links** (``outputs``) are gathered from every frame and put back in sequence
  order with the in-links' LoD. ``reverse`` walks each sequence from its end.

A plain run (``run``) runs the step ops that read no memory and round row by row once
over all rows and binds each frame's rows of their outputs (``hoist.py``); the debugger
(``unroll``) runs every op in every frame, with the same bits: a product of an in-link
(``x_t @ W``) is made over all rows in both, and its step in frame ``t`` binds the
frame's rows of it.

In every driver a gate ``split`` binds its column views itself (``column_splits.py``)
and sibling activations of one split (an LSTM's three gate sigmoids) run as one kernel
call, each step binding its piece (``siblings.py``); a plain run drives its frames in
one loop (``Unroll.run_all``).

``recurrent_grad`` (``grad.py``) runs the grad block over the frames in reverse.
"""
from __future__ import annotations

from ..errors import ExecutionError, SchemaError
from ..ir.names import EMPTY_VAR, grad_name
from ..ir.registry import COMMON_ATTR_NAMES, GradOp, Slot, register
from ..runtime.frames import FrameDrivenOp, FrameRun, frame_error
from .common import INLINK, MEMORY, OUTER, RECURRENT_ATTRS, RecurrentCommon, slot_arguments
from .hoist import HoistedRows, find_hoisted, frame_bound_run, products_of
from .column_splits import bind_column_splits
from .siblings import merge_siblings
from .spares import Spares
from .step_scopes import StepScopes


class RecurrentForward(RecurrentCommon, FrameDrivenOp):
    """The prepared forward: ``run(vals, lods)`` unrolls every frame."""

    def __init__(self, ctx):
        super().__init__(ctx, ctx.step.attrs["sub_block"])
        step = ctx.step
        self.in_slots, self.init_slots, self.param_slots = step.ins
        self.out_slots, self.scopes_slot = step.outs
        self.out_names = slot_arguments(step.desc, "outputs", outputs=True)
        fwd, parent = self.fwd, self.parent
        self.bind = []  # (step-block slot, kind, index or parent slot)
        for slot, name in fwd.inputs:
            if name in self.in_names:
                self.bind.append((slot, INLINK, self.in_names.index(name)))
            elif name in self.ex_states:
                self.bind.append((slot, MEMORY, self.ex_states.index(name)))
            elif name in self.param_names:
                self.bind.append((slot, OUTER, parent.slot_of(name)))
            else:
                raise SchemaError(
                    f"{self.where}: its step block reads '{name}', which is neither an input, "
                    "a memory nor listed in its parameters")
        self.state_slots = [fwd.slot[s] for s in self.states]
        missing = [o for o in self.out_names if o not in fwd.slot]
        if missing:
            raise SchemaError(f"{self.where}: outputs {missing} are not computed by its step block")
        self.out_step_slots = [fwd.slot[o] for o in self.out_names]
        # the bindings by kind, read every frame: (step slot, in-link index),
        # (step slot, state slot, memory index), (step slot, parent slot)
        self.inlink_binds = [(s, i) for s, kind, i in self.bind if kind == INLINK]
        self.memory_binds = [(s, self.state_slots[i], i) for s, kind, i in self.bind
                             if kind == MEMORY]
        self.outer_binds = [(s, i) for s, kind, i in self.bind if kind == OUTER]
        self.hoisted = find_hoisted(self)  # steps a plain run runs once over all rows
        # the hoisted products, which every driver binds the rows of: their steps find
        # the frame in one slot after the block's own (``hoist``)
        products = products_of(fwd, self.hoisted)
        self.frame_slot = len(fwd.names) if products else None
        for pos in products:
            step = fwd.steps[pos]
            if not getattr(step.run, "binds_frame_rows", False):
                step.run = frame_bound_run(step, self.frame_slot)
        bind_column_splits(fwd)  # a gate split binds its column views (``column_splits``)
        # sibling activations of a gate split run as one call in every driver, their
        # result kept per frame in one slot per group after those (``siblings``)
        first_cache = len(fwd.names) + (self.frame_slot is not None)
        self.sibling_groups = merge_siblings(fwd, first_cache, self.xp)
        self.frame_len = first_cache + len(self.sibling_groups)  # a frame's slot list
        self.spares = Spares(self.xp)  # the reordered in-links and out-links, run to run

    def unroll(self, vals, lods):
        """One execution of this op, to be driven frame by frame (``runtime.frames``)."""
        return Unroll(self, vals, lods)

    def run(self, vals, lods):
        """The whole op; the steps ``hoist`` finds run once over all rows (the
        debugger's ``unroll`` runs every step in every frame)."""
        frames = Unroll(self, vals, lods)
        if self.hoisted:
            frames.hoist()
        frames.run_all()


class Unroll(FrameRun):
    """One execution of a recurrent op, frame by frame (see ``runtime.frames``):
    ``begin_frame(t)`` -> the frame's slot list, the block's ops run on it,
    ``end_frame(t, fvals)``, and after the last frame ``finish()``."""
    block_kind = "step"

    def __init__(self, op: RecurrentForward, vals, lods):
        self.op, self.vals, self.lods, xp = op, vals, lods, op.xp
        self.plan, self.where = op.fwd, op.where
        self.seq, self.lod = op.layout(lods, op.in_slots)
        self.num_frames = self.seq.num_frames
        self.frame_order = range(self.num_frames)
        self.batch_inputs = [op.spares.to_batch(("inputs", i), self.seq, vals[s])
                             for i, s in enumerate(op.in_slots)]
        self.boots = [self._boot(i) for i in range(len(op.ex_states))]
        self.frames = StepScopes(op.fwd, self.seq, op.ex_states, op.states)
        # every frame's slot list starts as a copy of this one: the parameters bound
        # (and the frame slot of hoisted products, set per frame, and the sibling groups'
        # results, made in the frame)
        self.template = [None] * op.frame_len
        for slot, index in op.outer_binds:
            self.template[slot] = vals[index]
        # (step slot, array of all rows in batch order), bound per frame like an in-link
        self.row_binds = [(slot, self.batch_inputs[i]) for slot, i in op.inlink_binds]
        self.frames.inlink_rows = self.row_binds
        self.hoisted_rows = None  # the hoisted steps over all rows, made at first need
        if op.hoisted:
            wvals = list(self.template)
            for slot, rows in self.row_binds:
                wvals[slot] = rows
            self.hoisted_rows = HoistedRows(op.fwd, op.hoisted, wvals, self.seq.total)

    def hoist(self):
        """Run the op's hoisted steps once over all rows and bind their rows in every
        frame instead of running them there (``hoist``; a plain run only)."""
        op = self.op
        outs = self.hoisted_rows.outputs()
        if outs is None:
            return
        # (not into ``frames.inlink_rows``: the backward reads a frame's rows from where
        # the debugger's run finds them too, so both take the same gradients' bits)
        self.row_binds = self.row_binds + outs
        self.step_runs = [(step, step.run) for pos, step in enumerate(op.fwd.steps)
                          if pos not in op.hoisted]

    def _boot(self, i):
        op, xp, seq = self.op, self.op.xp, self.seq
        slot = op.init_slots[i] if op.init_slots else 0
        if not slot:
            dtype, dims = op.memory_meta(i)
            return xp.zeros((seq.num_seqs,) + dims, dtype=dtype)
        boot = self.vals[slot]
        if boot.shape[0] != seq.num_seqs:
            raise ExecutionError(
                f"{op.where}: boot '{op.init_names[i]}' of memory '{op.ex_states[i]}' has "
                f"{boot.shape[0]} rows; it needs one per sequence ({seq.num_seqs})")
        return seq.sorted_rows(xp, boot)

    def _bound(self, start, stop, prev):
        """A fresh slot list for the frame of rows ``start:stop`` with its in-links,
        memories and outer reads bound; ``prev``: the slot list of the frame before it
        (None: the first frame, whose memories are the boots)."""
        fvals = self.template.copy()
        for slot, rows in self.row_binds:
            fvals[slot] = rows[start:stop]
        op = self.op
        if op.frame_slot is not None:
            fvals[op.frame_slot] = (self.hoisted_rows, start, stop)
        n = stop - start
        if prev is not None:
            for slot, state, _ in op.memory_binds:
                fvals[slot] = prev[state][:n]
        else:
            for slot, _, index in op.memory_binds:
                fvals[slot] = self.boots[index][:n]
        return fvals

    def begin_frame(self, t):
        """Frame ``t``'s slot list, bound and kept in ``frames`` (its step scope)."""
        start, stop = self.seq.spans[t]
        fvals = self._bound(start, stop, self.frames.frames[t - 1].vals if t else None)
        self.frames.append(t, fvals, stop - start)
        return fvals

    def run_all(self):
        """Every frame and ``finish``: what ``drive_frames`` does through ``begin_frame``,
        ``run_frame_ops`` and ``end_frame``, in one loop with fewer calls per frame (a
        plain run; the same slot lists, kept the same way)."""
        runs = self.step_runs
        if runs is None:
            runs = [(step, step.run) for step in self.plan.steps]
        bound, keep, prev = self._bound, self.frames.append, None
        for t, (start, stop) in enumerate(self.seq.spans):
            fvals = bound(start, stop, prev)
            keep(t, fvals, stop - start)
            step = None
            try:
                for step, run in runs:
                    run(fvals)
            except Exception as exc:
                raise frame_error(self, t, step, exc) from exc
            prev = fvals
        self.finish()

    def end_frame(self, t, fvals):
        """Nothing to gather per frame: ``finish`` reads the out-links from ``frames``."""

    def undo_begin(self, t):
        """Forget frame ``t`` again (the debugger stepping back over its start)."""
        self.frames.pop(t)

    def finish(self):
        op, xp = self.op, self.op.xp
        for i, (slot, step_slot, name) in enumerate(
                zip(op.out_slots, op.out_step_slots, op.out_names)):
            if not slot:
                continue
            parts = [f.vals[step_slot] for f in self.frames.frames]
            if any(p is None for p in parts):
                raise ExecutionError(f"{op.where}: output '{name}' was not computed in every frame")
            batch = _concatenate(op.spares, ("batch", i), xp, parts)
            self.vals[slot] = op.spares.to_sequence(("outputs", i), self.seq, batch)
            self.lods[slot] = self.lod
        if op.scopes_slot:
            self.vals[op.scopes_slot] = self.frames

    # FrameHistory: the frames kept in the step scopes
    def frames_run(self):
        return self.frames.frames_run()

    def batch_size(self, t):
        return self.frames.batch_size(t)

    def sequences(self, t):
        return self.frames.sequences(t)

    def frame_values(self, t):
        return self.frames.frame_values(t)


def _concatenate(spares, key, xp, parts):
    """The frames' parts one after the other, into the spare under ``key`` where they
    share a dtype and row shape (else a fresh ``concatenate``)."""
    first = parts[0]
    if not spares.on or any(p.dtype != first.dtype or p.shape[1:] != first.shape[1:]
                            for p in parts):
        return xp.concatenate(parts, axis=0)
    rows = sum(len(p) for p in parts)
    out = spares.empty(key, (rows,) + first.shape[1:], first.dtype)
    return xp.concatenate(parts, axis=0, out=out)


# ------------------------------------------------------------------ registry
def _recurrent_grad_maker(op, ctx):
    outs = op.output("outputs")
    seeds = [grad_name(n) for n in outs + list(op.attrs["states"])]
    grad_block = ctx.backward_block(op.attrs["sub_block"], seeds)

    def grads(names):
        return [EMPTY_VAR if n == EMPTY_VAR else grad_name(n) for n in names]

    ins = {"inputs": op.input("inputs"), "initial_states": op.input("initial_states"),
           "parameters": op.input("parameters"), "outputs": outs,
           "step_scopes": op.output("step_scopes"), grad_name("outputs"): grads(outs)}
    outputs = {grad_name(s): grads(op.input(s))
               for s in ("inputs", "initial_states", "parameters")}
    attrs = {k: v for k, v in op.attrs.items() if k not in COMMON_ATTR_NAMES}
    attrs["sub_block"] = grad_block
    return [GradOp("recurrent_grad", ins, outputs, attrs)]


def _infer_recurrent(ctx):
    """Out-links carry the in-links' LoD level; their shapes are declared by the group."""
    first = ctx.input("inputs")
    if first is not None and first.lod_level < 1:
        ctx.fail(f"input has LoD level 0 (shape {list(first.shape)}); a recurrent group runs "
                 "over sequences: declare it with lod_level=1", slot="inputs")


register(
    "recurrent",
    inputs=[Slot("inputs", duplicable=True, doc="sequences, split per time step"),
            Slot("initial_states", duplicable=True, dispensable=True,
                 doc="boot values of the memories, one row per sequence (@EMPTY@: zeros)"),
            Slot("parameters", duplicable=True, dispensable=True,
                 doc="outer vars the step net reads whole")],
    outputs=[Slot("outputs", duplicable=True, doc="out-links gathered into sequences"),
             Slot("step_scopes", no_grad=True, doc="one step scope per frame")],
    attrs=RECURRENT_ATTRS, infer_shape=_infer_recurrent, prepare=RecurrentForward,
    grad=_recurrent_grad_maker, share_lod=(), paddle=False,
    doc="a recurrent group: the step block unrolled over time, frame by frame "
        "(Fluid's recurrent op; Paddle 3.x no longer registers it)",
    category="recurrent")
