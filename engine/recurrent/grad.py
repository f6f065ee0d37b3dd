"""``recurrent_grad``: backward through time of a ``recurrent`` op (see ``recurrent``).

The grad block (made by the generic backward from the step block) runs frame by frame
in reverse: out-link gradients sliced per frame, memory gradients handed to the previous
frame (padded to its batch size) and finally to the boot layers, in-link gradients
gathered back, parameter gradients summed over frames (``batched_grads``: once over all
frames where the block allows it).

A plain run does without two copies per frame that the debugger, which keeps every
frame's values, makes: a memory gradient is added into the previous frame's rows of the
out-link gradient in place (``carry``), and the split_grad making an in-link's gradient
writes into that in-link's buffer of all rows (``row_writers``). It runs ops that return
their input (``pass_through``), element-wise products, differences, concatenations and
sums (``direct_grads``) without the kernels' dispatch. Every driver keeps a frame's batched
operands as the first frame kept them (``frame_keep``), gate gradients read as columns of
the in-link gradient buffer (``row_writers.lend_columns``). All give the debugger's bits.
"""
from __future__ import annotations

from ..errors import ExecutionError, SchemaError
from ..ir.names import grad_name, unseeded
from ..ir.registry import Slot, register
from ..runtime.frames import FrameDrivenOp, FrameRun, drive_frames
from .batched_grads import Sink, covered_rows, find_batched, find_products
from .carry import carry_in_place, carry_targets, next_carry, seed_value
from .frame_keep import KeepRecipe
from .direct_grads import direct_run, find_direct
from .pass_through import find_pass_throughs, pass_through_run
from .common import RECURRENT_ATTRS, RecurrentCommon, slot_arguments
from .row_writers import (diverge, find_row_writers, lend_columns, row_writer, split_parts,
                          write_rows)
from .spares import Spares
from .step_scopes import StepScopes


class RecurrentBackward(RecurrentCommon, FrameDrivenOp):
    """The prepared ``recurrent_grad``: the grad block run over the frames in reverse."""

    def __init__(self, ctx):
        grad_block = ctx.program_desc.blocks[ctx.step.attrs["sub_block"]]
        if grad_block.forward_block_idx < 0:
            raise SchemaError(f"op #{ctx.step.index} recurrent_grad: its sub_block "
                              f"{grad_block.idx} names no forward block")
        super().__init__(ctx, grad_block.forward_block_idx)
        self.grad = ctx.sub_plan(grad_block.idx)
        ins = dict(zip((s.name for s in ctx.step.opdef.inputs), ctx.step.ins))
        outs = dict(zip((s.name for s in ctx.step.opdef.outputs), ctx.step.outs))
        self.in_slots, self.scopes_slot = ins["inputs"], ins["step_scopes"]
        self.out_names = slot_arguments(ctx.step.desc, "outputs")
        self.out_grad_slots = ins[grad_name("outputs")]
        self.in_grad_slots = outs[grad_name("inputs")]
        self.init_grad_slots = outs[grad_name("initial_states")]
        self.param_grad_slots = outs[grad_name("parameters")]
        self._bind_grad_block()
        self.batched = find_batched(self)  # grad-block position -> Batched
        # every plain product by a parameter: each driver takes a frame's dX one way
        self.products = {**find_products(self), **self.batched}
        for pos, b in self.products.items():
            step = self.grad.steps[pos]
            step.run = b.whole(self.xp, getattr(step.run, "unbatched", step.run))
        self.batched_params = {b.param for b in self.batched.values()}
        self.batched_runs = {pos: b.run(self.xp) for pos, b in self.batched.items()}
        self.row_writers = find_row_writers(self)  # split_grad position -> in-link index
        # in-link index -> (split_grad output slot, part slots): columns its sinks may read
        self.split_parts = split_parts(self)
        # steps a plain run runs without their kernels' dispatch: those handing a gradient
        # on unchanged, element-wise products, differences, concatenations, sums
        self.pass_throughs = find_pass_throughs(self.grad, skip=set(self.products))
        self.direct = find_direct(self.grad, skip=set(self.products) | set(self.row_writers))
        steps = self.grad.steps  # position -> (the step's own run, the plain run's)
        self.pass_runs = {pos: (steps[pos].run, pass_through_run(steps[pos], kind))
                          for pos, kind in self.pass_throughs.items()}
        self.pass_runs.update((pos, (steps[pos].run, direct_run(steps[pos], kind)))
                              for pos, kind in self.direct.items())
        self.spares = Spares(self.xp)  # the reordered gradients, run to run

    def _bind_grad_block(self):
        fwd, grad, parent = self.fwd, self.grad, self.parent
        out_grads = {grad_name(o): i for i, o in enumerate(self.out_names)}
        state_grads = {grad_name(s): i for i, s in enumerate(self.states)}
        self.bind = []  # (grad slot, kind, index); kind: seed / fwd / outer
        for slot, name in grad.inputs:
            seed = unseeded(name)
            if seed in out_grads or seed in state_grads:
                self.bind.append((slot, "seed", (out_grads.get(seed), state_grads.get(seed))))
            elif name in fwd.slot:
                self.bind.append((slot, "fwd", fwd.slot[name]))
            elif name in self.param_names or name in parent.slot:
                self.bind.append((slot, "outer", parent.slot_of(name)))
            else:
                raise SchemaError(f"{self.where}: its grad block reads '{name}', which the "
                                  "forward step block does not hold")
        # A self-linked state (a static input) gets its incoming gradient summed with
        # what the frame adds by the generic backward (the seed joins the fan-in sum).
        # the bindings by kind, read every frame: (grad slot, forward slot / parent slot /
        # (out-link index, state index))
        self.fwd_binds = [(s, i) for s, kind, i in self.bind if kind == "fwd"]
        self.outer_binds = [(s, i) for s, kind, i in self.bind if kind == "outer"]
        self.seed_binds = [(s, i) for s, kind, i in self.bind if kind == "seed"]
        self.ex_grad_slots = [grad.slot.get(grad_name(e)) for e in self.ex_states]
        self.in_grad_step = [grad.slot.get(grad_name(n)) for n in self.in_names]
        self.param_grad_step = [grad.slot.get(grad_name(n)) for n in self.param_names]

    def unroll(self, vals, lods):
        """One execution of the grad block over the frames (see ``BackUnroll``)."""
        return BackUnroll(self, vals, lods)

    def run(self, vals, lods):
        """The whole op, parameter gradients taken once over all frames where the grad
        block allows it (``batched_grads``; the debugger's ``unroll`` runs every op whole)."""
        frames = BackUnroll(self, vals, lods)
        if self.batched or self.row_writers or self.pass_runs:
            # the other steps' run read now: a profiler may have wrapped them
            runs = dict(self.batched_runs) if self.batched else {}
            # a pass-through whose step's run someone wrapped (a profiler, a test) runs
            # as wrapped
            runs.update((pos, run) for pos, (own, run) in self.pass_runs.items()
                        if self.grad.steps[pos].run is own)
            if self.row_writers:
                write_rows(frames)
                runs.update((pos, row_writer(frames, i, self.grad.steps[pos], self.xp))
                            for pos, i in self.row_writers.items())
            frames.step_runs = [(step, runs[pos] if pos in runs else step.run)
                                for pos, step in enumerate(self.grad.steps)]
        drive_frames(frames)

    def write_outputs(self, vals, lods, seq, in_grads, param_sums, carry):
        xp = self.xp
        for i, slot in enumerate(self.in_grad_slots):
            if not slot:
                continue
            if in_grads[i] is None:
                vals[slot] = xp.zeros_like(vals[self.in_slots[i]])
            else:
                vals[slot] = self.spares.to_sequence(("in_grads", i), seq, in_grads[i])
            if lods is not None:
                lods[slot] = lods[self.in_slots[i]]
        for i, slot in enumerate(self.init_grad_slots):
            if not slot:
                continue
            g = carry[i]
            if g is None:
                dtype, dims = self.memory_meta(i)
                g = xp.zeros((seq.num_seqs,) + dims, dtype=dtype)
            vals[slot] = seq.unsorted_rows(xp, g)
        for i, slot in enumerate(self.param_grad_slots):
            if not slot:
                continue
            g = param_sums[i]
            vals[slot] = g if g is not None else xp.zeros_like(vals[self.parent.slot[self.param_names[i]]])


class BackUnroll(FrameRun):
    """One execution of ``recurrent_grad``, frame by frame in reverse, with the same
    calls as ``Unroll``. Between frames it carries the memory gradients (``carry``), the
    in-link gradients (batch-ordered buffers filled frame by frame) and the parameter
    gradient sums; ``snapshot``/``restore`` let the debugger undo a frame exactly."""
    block_kind = "grad"

    def __init__(self, op: RecurrentBackward, vals, lods):
        self.op, self.vals, self.lods, xp = op, vals, lods, op.xp
        self.plan, self.where = op.grad, op.where
        frames = vals[op.scopes_slot]
        if not isinstance(frames, StepScopes):
            raise ExecutionError(f"{op.where}: step_scopes holds no frames; run the "
                                 "forward recurrent op first")
        self.forward_frames, self.seq = frames, frames.seq
        self.num_frames = self.seq.num_frames
        self.frame_order = range(self.num_frames - 1, -1, -1)
        self.out_grads = [None if vals[s] is None
                          else op.spares.to_batch(("out_grads", i), self.seq, vals[s])
                          for i, s in enumerate(op.out_grad_slots)]
        self.carry = [None] * len(op.states)
        # state index -> the out-link gradient buffer (batch order, this run's own copy)
        # its seed reads: a plain run adds a frame's memory gradient into the previous
        # frame's rows of it in place (``carry_in_place``), as the hand-written BPTT does
        self.carry_into = carry_targets(op, self.out_grads)
        self.in_place = any(t is not None for t in self.carry_into)
        # seed slot -> the out-link gradient rows it reads as they are (``carry_in_place``)
        self.seed_rows = {slot: self.carry_into[state] for slot, (_, state) in op.seed_binds
                          if state is not None and self.carry_into[state] is not None}
        self.in_grads = [None] * len(op.in_names)
        # in-link index -> its rows of the frame that a split_grad writes into (a plain
        # run: ``row_writers.write_rows``), and the in-links written so
        self.row_views, self.row_links = None, []
        # frames whose rows each in-link buffer holds (the buffers start uninitialised:
        # ``finish`` zeroes the rows of frames without a gradient, not every row first)
        self.in_written = [set() for _ in op.in_names]
        # the in-link gradient columns lent to the sinks (``row_writers.column_view``)
        self.column_views, self.lent_columns = {}, {}
        self.param_sums = [None] * len(op.param_names)
        # t -> the grad block's slot list of frame t, kept only for the debugger: holding
        # every frame's temporaries would cost a plain run its allocator's hot memory.
        self.grad_frames = None
        self.sinks = {pos: Sink(b, op.xp, self.seq.total)  # what each Batched step kept
                      for pos, b in op.batched.items()}
        for b in op.products.values():
            b.forget_weight()
        # what each frame reads, looked up once per run rather than once per frame
        self.keeps = [(op.batched[pos].keep, sink) for pos, sink in self.sinks.items()]
        # how the frames after the first kept one keep their operands (``frame_keep``)
        self.recipe, self.observe = None, bool(self.keeps)
        self.fwd_binds, self.seed_binds = op.fwd_binds, op.seed_binds
        self.ex_grad_slots = op.ex_grad_slots
        # rows of the memory gradients handed on after frame t: frame t - 1's batch size
        sizes = [b - a for a, b in self.seq.spans]
        self.carry_rows = [self.seq.num_seqs] + sizes[:-1]
        self.in_grad_pairs = [(i, s) for i, s in enumerate(op.in_grad_step) if s]
        self.inlink_rows = frames.inlink_rows
        # (parameter index, grad slot) of the parameter gradients summed frame by frame
        self.summed_param_grads = [(i, s) for i, s in enumerate(op.param_grad_step)
                                   if s and i not in op.batched_params]
        # every frame's grad slot list starts as a copy of this one: the outer reads bound
        self.template = [None] * len(op.grad.names)
        for slot, index in op.outer_binds:
            self.template[slot] = vals[index]

    def keep_frames(self):
        """Keep each frame's grad-block values (the debugger reads them). The memory
        gradients are then handed on as they were (``next_carry``), never added into the
        out-link gradients in place: a frame's seed the debugger shows stays as it was
        and ``snapshot`` covers what ``end_frame`` changes."""
        self.grad_frames = {}
        self.carry_into, self.in_place = [None] * len(self.carry_into), False
        self.seed_rows = {}

    def begin_frame(self, t):
        start, stop = self.seq.spans[t]
        fvals = self.forward_frames.frames[t].vals
        gvals = self.template.copy()
        for slot, index in self.fwd_binds:
            gvals[slot] = fvals[index]
        op, out_grads, carry = self.op, self.out_grads, self.carry
        for slot, index in self.seed_binds:
            og = self.seed_rows.get(slot)
            # a seed whose memory gradient is already in its rows: ``seed_value``'s view
            gvals[slot] = og[start:stop] if og is not None else \
                seed_value(op, index, out_grads, carry, start, stop, fvals)
        if self.grad_frames is not None:
            self.grad_frames[t] = gvals
        for i in self.row_links:
            self.row_views[i] = self.in_grads[i][start:stop]
        return gvals

    def end_frame(self, t, gvals):
        start, stop = self.seq.spans[t]
        if self.ex_grad_slots:
            if t and self.in_place:
                carry_in_place(self, t, gvals)
            else:
                self.carry = next_carry(self.op, self.carry_rows[t], gvals)
        placed = [] if self.keeps else None  # (in-link, its gradient, its buffer of all rows)
        for i, s in self.in_grad_pairs:
            g = gvals[s]
            if g is not None:
                buf = self.in_grads[i]
                if buf is None:
                    buf = self.in_grads[i] = self.op.spares.empty(
                        ("in_rows", i), (self.seq.total,) + g.shape[1:], g.dtype)
                views = self.row_views
                if views is None or g is not views[i]:  # else written in place already
                    if views is not None and views[i] is not None:
                        buf = diverge(self, i)
                    buf[start:stop] = g
                if placed is not None:
                    placed.append((i, g, buf))
                self.in_written[i].add(t)
        if placed is not None:
            fvals = self.forward_frames.frames[t].vals
            recipe = self.recipe
            if recipe is None or not recipe.keep(gvals, fvals, start, stop):
                if recipe is not None:
                    recipe.flush(self)  # the frames it kept first, in order
                self._keep_operands(gvals, fvals, start, stop, placed)
                if self.observe:  # the first frame kept shows how every frame is kept
                    self.observe = False
                    self.recipe = KeepRecipe.observe(self, gvals, fvals, start, stop)
        for i, s in self.summed_param_grads:
            g = gvals[s]
            if g is not None:
                acc = self.param_sums[i]
                self.param_sums[i] = g.copy() if acc is None else _add_into(acc, g)

    def _keep_operands(self, gvals, fvals, start, stop, placed):
        """Each Batched step's operands of the frame, decided operand by operand
        (``Sink.put``): what ``KeepRecipe`` does without deciding."""
        # id(array) -> (array, buffer of all rows it is at start:stop of): the frame's
        # in-links (rows of the forward's batch-ordered in-links), its in-link gradients,
        # then what the sinks copy (only the sinks read it)
        copied = {id(fvals[slot]): (fvals[slot], rows) for slot, rows in self.inlink_rows}
        for _, g, buf in placed:
            copied[id(g)] = (g, buf)
        split = self.op.split_parts
        for i, g, buf in placed:
            if i in split:
                lend_columns(self, i, g, buf, gvals, copied)
        for keep, sink in self.keeps:
            keep(gvals, sink, start, stop, copied)

    def snapshot(self):
        """What ``end_frame`` changes, copied where it changes in place."""
        if self.recipe is not None:
            self.recipe.flush(self)  # the sinks' state below is then complete
        return (list(self.carry), list(self.in_grads),
                [None if p is None else p.copy() for p in self.param_sums],
                {pos: sink.state() for pos, sink in self.sinks.items()},
                [set(w) for w in self.in_written])

    def restore(self, snap, t):
        """Undo ``end_frame(t)`` (its rows of the in-link buffers count as unwritten again)."""
        carry, in_grads, param_sums, sinks, written = snap
        if self.recipe is not None:
            self.recipe.drop()  # frames kept after the snapshot (flushed before it)
        for pos, state in sinks.items():
            self.sinks[pos].reset(state)
        self.carry, self.in_grads, self.param_sums = list(carry), list(in_grads), list(param_sums)
        self.in_written = [set(w) for w in written]

    def undo_begin(self, t):
        """Forget frame ``t`` again (the debugger stepping back over its start)."""
        if self.grad_frames is not None:
            self.grad_frames.pop(t, None)

    # FrameHistory: the forward frames, with this run's gradients where they were kept
    def batch_size(self, t):
        return self.forward_frames.batch_size(t)

    def sequences(self, t):
        return self.forward_frames.sequences(t)

    def frame_values(self, t):
        """The forward frame's values, then the grad block's (where ``keep_frames`` kept them)."""
        out = self.forward_frames.frame_values(t)
        gvals = self.grad_frames.get(t) if self.grad_frames is not None else None
        if gvals is not None:
            out.update((n, gvals[i]) for i, n in enumerate(self.plan.names)
                       if i and gvals[i] is not None)
        return out

    def finish(self):
        # Into copies: the debugger may undo the completion and finish again.
        if self.recipe is not None:
            self.recipe.flush(self)
        sums, in_grads = list(self.param_sums), list(self.in_grads)
        kept = {pos: sink.operands() for pos, sink in self.sinks.items()}
        inlink_rows = {pos: self.op.batched[pos].inlink_rows(sink, kept[pos])
                       for pos, sink in self.sinks.items() if kept[pos] is not None}
        # Every sink's gradient before the in-link buffers change below: a sink may read
        # its rows from an in-link buffer (``Sink.put``).
        for pos, sink in self.sinks.items():
            batched = self.op.batched[pos]
            total = batched.total(sink, release=self.step_runs is not None, kept=kept[pos])
            if total is not None:
                acc = sums[batched.param]
                sums[batched.param] = total if acc is None else acc + total
        covered = [set() for _ in in_grads]  # spans an in-link's batched dX wrote
        for pos, rows in inlink_rows.items():
            if rows is not None:
                i = self.op.batched[pos].inlink
                in_grads[i] = self._place_rows(in_grads[i], *rows)
                covered[i].update(rows[0])
        for buf, written, spans in zip(in_grads, self.in_written, covered):
            if buf is not None and len(written) + len(spans) < self.num_frames:
                for t in range(self.num_frames):
                    span = self.seq.frame(t)
                    if t not in written and span not in spans:  # no gradient reached it
                        buf[span[0]:span[1]] = 0
        self.op.write_outputs(self.vals, self.lods, self.seq, in_grads, sums, self.carry)
        for b in self.op.products.values():
            b.forget_weight()

    def _place_rows(self, buf, spans, dx):
        """The in-link gradient buffer with ``dx`` (rows of ``spans``, in order) in place:
        ``dx`` itself when it covers every row."""
        if covered_rows(spans) == self.seq.total:
            return dx
        if buf is None:
            buf = self.op.xp.empty((self.seq.total,) + dx.shape[1:], dtype=dx.dtype)
        at = 0
        for a, b in spans:
            buf[a:b] = dx[at:at + b - a]
            at += b - a
        return buf


def _add_into(acc, g):
    acc += g
    return acc


register(
    "recurrent_grad",
    inputs=[Slot(n, duplicable=n != "step_scopes", dispensable=True) for n in (
        "inputs", "initial_states", "parameters", "outputs", "step_scopes",
        grad_name("outputs"))],
    outputs=[Slot(grad_name(n), duplicable=True, dispensable=True)
             for n in ("inputs", "initial_states", "parameters")],
    attrs=RECURRENT_ATTRS, prepare=RecurrentBackward, share_lod=(), paddle=False, grad_of="recurrent",
    doc="gradient of recurrent: the grad block run over the frames in reverse",
    category="gradient")
