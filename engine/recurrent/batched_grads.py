"""Parameter gradients of a recurrent group taken over all frames at once.

A step net that multiplies by a parameter (``h_prev @ W`` in ``matmul_v2`` or ``mul``)
has, in its grad block, one ``dW = X^T @ dOut`` per frame: a small GEMM for every time
step, summed over the frames. A bias added by ``elementwise_add`` likewise gets a column
sum per frame. A plain run of ``recurrent_grad`` instead keeps each frame's operands
(``X`` and ``dOut``, arrays the frames computed anyway) and after the last frame makes
one GEMM (one column sum) over the rows of every frame, as Paddle's
RecurrentGradientMachine and cuDNN do: one large GEMM runs at BLAS speed where fifty
small ones pay fifty calls and fifty partial sums.

The grad block's ops stay as they are. The debugger and the NaN guard drive the frames
op by op through ``unroll`` and run every op whole, so each frame still shows its own
``W@GRAD`` (that frame's contribution); only ``RecurrentBackward.run`` (what
``Executor.run`` calls) skips the per-frame product. Both drivers keep the operands at
the end of each frame and take the group's gradient the same way, so a debugger run
ends with the plain run's bits. A frame whose operands do not have the plain 2-D
shapes runs the op whole; its gradient is then added to the batched one.

The frame's own dX = dOut @ W^T of such a product is taken against a contiguous copy
of W^T made once per run (``Batched.dx_of``), in every driver: the step's ``run`` is
rebound to ``Batched.whole`` for the debugger and the NaN guard, so they give the plain
run's bits.
"""
from __future__ import annotations

from itertools import starmap
from operator import sub

import numpy as np

from ..ir.registry import OUTPUTS_WANTED

# grad op type -> how its parameter (input Y) gradient is taken over all frames; the
# gradient of the other operand (X) is still computed per frame.
# The largest parameter whose transpose a run copies once for its frames' dX (``dx_of``).
COPIED_WT_MAX = 512 * 512

BATCHABLE = {"matmul_v2_grad": "matmul", "mul_grad": "matmul", "elementwise_add_grad": "bias"}


def _plain_matmul(step):
    attrs = step.attrs
    if step.type == "matmul_v2_grad":
        return not attrs.get("trans_x") and not attrs.get("trans_y")
    return attrs.get("x_num_col_dims") == 1 and attrs.get("y_num_col_dims") == 1


def covered_rows(spans):
    """How many rows the ``(start, stop)`` spans cover (summed in C: once per run, over
    every frame)."""
    return -sum(starmap(sub, spans))


def _same_lenders(a, b):
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class Sink:
    """What one execution keeps of a ``Batched`` step: each fitting frame's operands,
    copied into buffers of all frames' rows in batch order (frame ``t`` at its rows, so
    the frame's own arrays are freed at once and the allocator hands the same hot
    memory to the next frame), and the sum of the gradients of frames that ran the op
    whole.

    An operand that is the very array another buffer of all rows already took at the
    same rows in this frame (``copied``: the in-link gradient, or another step's
    operand: in an LSTM group the gate gradient is the in-link's gradient, the bias's
    dOut and the product's dOut at once) is not copied again: the frame's rows are read
    from that buffer when the gradient is taken."""
    __slots__ = ("batched", "xp", "rows", "buffers", "frames", "partial", "weight", "borrowed")

    def __init__(self, batched, xp, rows):
        self.batched, self.xp, self.rows = batched, xp, rows
        self.buffers, self.frames, self.partial = None, [], None
        self.weight = None  # the parameter the frames multiplied by (Y)
        self.borrowed = []  # per kept frame: per operand, the buffer holding its rows or None

    def put(self, start, stop, arrays, copied):
        """Keep the operands of the frame of rows ``start:stop``. ``copied``: id(array) ->
        (array, buffer) of the arrays put into a buffer of all rows at these rows in this
        frame; this sink's own copies are added to it."""
        buffers = self.buffers
        if buffers is None:
            buffers = self.buffers = self.batched.acquire(self.xp, self.rows, arrays)
        sources = []
        for buf, a in zip(buffers, arrays):
            held = copied.get(id(a))
            if held is not None and held[0] is a:
                lender = held[1]
                if lender.shape == buf.shape and lender.dtype == buf.dtype:
                    sources.append(lender)
                    continue
            buf[start:stop] = a
            copied[id(a)] = (a, buf)
            sources.append(None)
        borrowed = self.borrowed
        if borrowed and _same_lenders(borrowed[-1], sources):
            sources = borrowed[-1]  # one object per run of frames kept alike (``operands``)
        self.frames.append((start, stop))
        borrowed.append(sources)

    def operands(self):
        """The kept operands over the frames that put them, one array each (None: none)."""
        if not self.frames:
            return None
        borrowed = self.borrowed
        if len(set(map(id, borrowed))) == 1:  # every frame kept alike (``KeepRecipe``)
            kept = [buf if lender is None else lender
                    for buf, lender in zip(self.buffers, borrowed[0])]
        else:
            kept = []
            for k, buf in enumerate(self.buffers):
                lenders = {id(f[k]): f[k] for f in borrowed}
                if len(lenders) == 1 and all(f[k] is not None for f in borrowed):
                    buf = next(iter(lenders.values()))  # every frame's rows are in that buffer
                else:
                    for (a, b), f in zip(self.frames, borrowed):
                        if f[k] is not None:
                            buf[a:b] = f[k][a:b]
                kept.append(buf)
        if covered_rows(self.frames) == self.rows:
            return kept
        spans = sorted(self.frames)
        return [self.xp.concatenate([buf[a:b] for a, b in spans]) for buf in kept]

    def state(self):
        return len(self.frames), None if self.partial is None else self.partial.copy()

    def reset(self, state):
        kept, partial = state
        del self.frames[kept:]
        del self.borrowed[kept:]
        self.partial = partial


class Batched:
    """One grad-block step whose parameter gradient is taken once over all frames.

    ``param`` is the index of the parameter among the recurrent op's ``parameters``.
    Both drivers keep each frame's operands at the end of the frame (``keep``) and make
    the gradient once (``total``), so a debugger run gives the plain run's bits; only
    the plain run also skips the per-frame product (``run``)."""

    def __init__(self, step, kind, param, inlink=None):
        self.step, self.kind, self.param = step, kind, param
        # ``inlink``: index of the in-link X is (a product of x_t, such as fc(x_t) in a
        # step, whose dX is only that in-link's gradient): dX is one GEMM after the loop too.
        self.inlink = inlink
        self.x_slot, self.y_slot, self.dout_slot = step.ins
        self.dx_slot, self.dy_slot = step.outs
        self.attrs = dict(step.attrs)
        self.attrs[OUTPUTS_WANTED] = (bool(self.dx_slot), False)  # dY is taken at the end
        self.dy_attrs = dict(step.attrs)  # the op's dY alone (a frame run whole)
        self.dy_attrs[OUTPUTS_WANTED] = (False, bool(self.dy_slot))
        self.spare = None  # the buffers of the last execution, reused by the next one
        # Y^T made contiguous, and the Y it was made from (held during a run only)
        self.wt, self.wt_of = None, None

    def forget_weight(self):
        """Drop the Y that ``wt`` was made from (at a run's start and end): between runs
        the parameter array may be rewritten in place (runtime.recycle hands the array of
        the step before last to sgd), and holding it would keep recycle from doing so."""
        self.wt_of = None

    def dx_of(self, xp, x, y, g):
        """dX = dOut @ Y^T of 2-D operands. For a Y of up to ``COPIED_WT_MAX`` elements,
        against a contiguous copy of Y^T made once per run: a plain NN product, faster
        for a frame's few rows than BLAS reading the transposed Y in place (20.7 -> 13.7
        us for 32 x 128 @ 128 x 128, 51.6 -> 43.6 us for 32 x 512 @ 512 x 128, 403 -> 342
        us for 64 x 512 @ 512 x 512, one OpenBLAS thread); a larger Y as the op's kernel
        takes it (64 x 2048 @ 2048 x 512: 1153 vs 1146 us, while the copy of Y^T costs
        2.3-3.3 ms a run). Every driver takes a frame's dX here (the plain run and the op
        run whole: ``whole``), so they give the same bits."""
        if y.size > COPIED_WT_MAX:
            return self.step.kernel(xp, self.attrs, x, y, g)[0]
        if y is not self.wt_of:
            wt = self.wt
            if wt is not None and wt.shape == y.shape[::-1] and wt.dtype == y.dtype:
                xp.copyto(wt, y.T)
            else:
                wt = self.wt = xp.ascontiguousarray(y.T)
            self.wt_of = y
        return g @ self.wt

    def whole(self, xp, run):
        """``run(gvals)`` of the op whole (what the debugger, the NaN guard and an
        unbatched run call every frame; ``run`` is the step's own): a plain product's dX
        taken by ``dx_of``, as a plain run takes it, and its dY by the op's kernel."""
        if self.kind != "matmul":
            return run
        kernel, dy_attrs = self.step.kernel, self.dy_attrs
        xs, ys, gs, dxs, dys = self.x_slot, self.y_slot, self.dout_slot, self.dx_slot, \
            self.dy_slot

        def whole(gvals):
            x, y, g = gvals[xs], gvals[ys], gvals[gs]
            if x is None or y is None or g is None or not (x.ndim == y.ndim == g.ndim == 2):
                run(gvals)
                return
            if dxs:
                gvals[dxs] = self.dx_of(xp, x, y, g)
            if dys:
                gvals[dys] = kernel(xp, dy_attrs, x, y, g)[1]
        whole.unbatched = run  # the step's own run, for a later prepare over the same plan
        return whole

    def acquire(self, xp, rows, arrays):
        """Buffers of ``rows`` rows shaped like ``arrays``' rows: the spare ones when they
        fit (no fresh pages each run), else new ones."""
        spare, self.spare = self.spare, None
        wanted = [((rows,) + a.shape[1:], a.dtype) for a in arrays]
        if spare is not None and [(b.shape, b.dtype) for b in spare] == wanted:
            return spare
        return [xp.empty(shape, dtype=dtype) for shape, dtype in wanted]

    def fits(self, x, y, g):
        """True when the frame's operands have the shapes one GEMM (column sum) takes."""
        if self.kind == "matmul":
            return x.ndim == 2 and y.ndim == 2 and g.ndim == 2
        # a bias: Y spans the trailing dims of dOut, repeated over its rows
        return g.ndim == y.ndim + 1 and g.shape[1:] == y.shape and x.shape == g.shape

    def run(self, xp):
        """``run(gvals)`` for a plain run: the op without its parameter gradient where the
        frame fits (``keep`` takes the operands at the frame's end), else the op whole."""
        attrs, kernel, whole = self.attrs, self.step.kernel, self.step.run
        xs, ys, gs, dxs = self.x_slot, self.y_slot, self.dout_slot, self.dx_slot

        fits, dx_of = self.fits, self.dx_of
        # each kind its own closure, ``fits`` written out: it runs for every frame
        if self.kind == "matmul" and dxs and self.inlink is None:
            def run(gvals):
                x, y, g = gvals[xs], gvals[ys], gvals[gs]
                if x.ndim == 2 and y.ndim == 2 and g.ndim == 2:
                    gvals[dxs] = dx_of(xp, x, y, g)
                else:
                    whole(gvals)
        elif self.kind == "matmul":  # dX after the last frame (an in-link's) or not wanted
            def run(gvals):
                x, y, g = gvals[xs], gvals[ys], gvals[gs]
                if not (x.ndim == 2 and y.ndim == 2 and g.ndim == 2):
                    whole(gvals)
        elif dxs:
            def run(gvals):
                x, y, g = gvals[xs], gvals[ys], gvals[gs]
                if not fits(x, y, g):
                    whole(gvals)
                elif g.__class__ is np.ndarray and g.ndim == 2:
                    # dX of a bias add whose X is dOut's shape: dOut itself, what the
                    # kernel returns for it (kernels.elementwise), without its dispatch
                    gvals[dxs] = g
                else:
                    gvals[dxs] = kernel(xp, attrs, x, y, g)[0]
        else:
            def run(gvals):
                if not fits(gvals[xs], gvals[ys], gvals[gs]):
                    whole(gvals)
        return run

    def inlink_rows(self, sink, kept=None):
        """For a product of an in-link: (the frames' row spans, dX over those rows in the
        same order), one GEMM dOut @ W^T; None for any other step or when no frame fit.
        ``kept``: ``sink.operands()`` when the caller has it already."""
        if self.inlink is None:
            return None
        kept = sink.operands() if kept is None else kept
        if kept is None:
            return None
        return sorted(sink.frames), kept[1] @ sink.weight.T

    def keep(self, gvals, sink, start, stop, copied):
        """At the end of the frame of rows ``start:stop``: its operands, or the gradient
        the op computed whole. ``copied``: see ``Sink.put``."""
        x, g = gvals[self.x_slot], gvals[self.dout_slot]
        if x is None or g is None:
            return
        y = gvals[self.y_slot]
        # ``fits``, written out: this runs for every batched step of every frame
        if self.kind == "matmul":
            if x.ndim == 2 and y.ndim == 2 and g.ndim == 2:
                sink.put(start, stop, (x, g), copied)
                sink.weight = y
                return
        elif self.fits(x, y, g):
            sink.put(start, stop, (g,), copied)
            sink.weight = y
            return
        d = gvals[self.dy_slot]
        if d is not None:
            sink.partial = d.copy() if sink.partial is None else sink.partial + d

    def total(self, sink, release=False, kept=None):
        """The parameter gradient over every frame ``sink`` holds (None: no frame did).
        ``release`` (a plain run, which finishes once): the sink's buffers become the
        spare ones; the debugger may finish a run again after undoing its end.
        ``kept``: ``sink.operands()`` when the caller has it already."""
        kept, total = sink.operands() if kept is None else kept, None
        if kept is not None and self.kind == "matmul":
            xs, gs = kept
            # (dOut^T @ X)^T: OpenBLAS runs this form ~1.6x faster than X^T @ dOut here
            # (measured 23 vs 36 ms for 1710 rows of 512 and 2048); a transposed view.
            total = (gs.T @ xs).T
        elif kept is not None:
            total = kept[0].sum(axis=0)
        if release and sink.buffers is not None:
            self.spare, sink.buffers = sink.buffers, None
        if sink.partial is not None:
            total = sink.partial if total is None else total + sink.partial
        return total


def find_batched(op):
    """The grad-block steps of ``op`` (a prepared ``RecurrentBackward``) whose parameter
    gradient can be taken once: the parameter is one of the group's ``parameters``, its
    gradient goes only to the group's parameter sums (no other op of the block reads or
    writes it), and the op is a plain product or a bias add. Returns {step position: Batched}."""
    grad, param_of = op.grad, {}
    for i, slot in enumerate(op.param_grad_step):
        if slot:
            param_of[slot] = i
    params = {grad.slot[n] for n in op.param_names if n in grad.slot}
    inlink_of = {slot: i for i, slot in enumerate(op.in_grad_step) if slot}
    reads, writes = {}, {}
    for step in grad.steps:
        for s in step.input_slots():
            reads[s] = reads.get(s, 0) + 1
        for s in step.output_slots():
            writes[s] = writes.get(s, 0) + 1
    found = {}
    for pos, step in enumerate(grad.steps):
        kind = BATCHABLE.get(step.type)
        if kind is None or len(step.ins) != 3 or len(step.outs) != 2:
            continue
        if any(isinstance(s, tuple) for s in step.ins + step.outs):
            continue
        y_slot, dy_slot = step.ins[1], step.outs[1]
        if not dy_slot or dy_slot not in param_of or y_slot not in params:
            continue
        if reads.get(dy_slot) or writes.get(dy_slot) != 1:
            continue
        if any(writes.get(s, 0) > 1 for s in step.ins):  # kept operands must stay put
            continue
        if kind == "matmul" and not _plain_matmul(step):
            continue
        if kind == "bias" and step.attrs.get("axis", -1) not in (-1, 1):
            continue
        dx_slot, inlink = step.outs[0], None
        if kind == "matmul" and dx_slot in inlink_of and not reads.get(dx_slot) \
                and writes.get(dx_slot) == 1:
            inlink = inlink_of[dx_slot]
        found[pos] = Batched(step, kind, param_of[dy_slot], inlink)
    return found


def find_products(op):
    """The other plain products by a group parameter in ``op``'s grad block (their dW is
    not batched: not asked for, or read by another op): {step position: Batched} whose
    ``whole`` takes each frame's dX by ``dx_of`` too, so a frame's dX has the same bits
    whether or not its parameter's gradient is batched (a program asking for fewer
    parameter gradients gives the others' bits unchanged)."""
    grad = op.grad
    params = {grad.slot[n] for n in op.param_names if n in grad.slot}
    found = {}
    for pos, step in enumerate(grad.steps):
        if (pos in op.batched or BATCHABLE.get(step.type) != "matmul" or len(step.ins) != 3
                or len(step.outs) != 2 or any(isinstance(s, tuple) for s in step.ins + step.outs)):
            continue
        if step.ins[1] in params and step.outs[0] and _plain_matmul(step):
            found[pos] = Batched(step, "matmul", None)
    return found


__all__ = ["Batched", "Sink", "find_batched", "find_products", "BATCHABLE"]
