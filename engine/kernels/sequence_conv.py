"""``context_projection`` (ours: the mixed layer's context projection, reference/000) and
Paddle's ``sequence_conv`` = context projection @ Filter, sharing one implementation.

Row t of the projection concatenates rows ``t + contextStart + j`` for j in
[0, contextLength) of t's own sequence. A position p (counted inside the sequence of
length n) outside [0, n) reads a padding row: zeros, or with ``paddingTrainable`` row
``up_pad + p`` of PaddingData before the start (p < 0) and row ``up_pad + p - n``
after the end, where up_pad = max(0, -contextStart) and down_pad = max(0,
contextStart + contextLength - 1); PaddingData is [up_pad + down_pad, D]. This matches
Paddle's sequence_conv run with an identity Filter (checked against Paddle 3.3.1).

The kernels loop over the context length (a few steps), each step vectorised over
all rows with index arrays built once per (offsets, contextStart, contextLength).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, REQUIRED, Slot, at_least, register, wanted
from .seqplan import seq_plan


class ContextPlan:
    """Per context step j: (rows inside, their source rows, rows padded, padding rows)."""

    def __init__(self, offsets, start, length):
        self.up = max(0, -start)
        self.down = max(0, start + length - 1)
        offsets = np.asarray(offsets, dtype=np.int64)
        lengths = np.diff(offsets)
        seq = np.repeat(np.arange(len(lengths)), lengths)
        rows = np.arange(int(offsets[-1]), dtype=np.int64)
        local, n = rows - offsets[:-1][seq], lengths[seq]
        self.steps = []
        for j in range(length):
            p = local + start + j
            inside = (p >= 0) & (p < n)
            outside = ~inside
            pad = np.where(p < 0, self.up + p, self.up + p - n)[outside]
            self.steps.append((rows[inside], rows[inside] + start + j, rows[outside], pad))
        self._device = {}

    def step(self, xp, j):
        if xp is np:
            return self.steps[j]
        key = (id(xp), j)
        if key not in self._device:
            self._device[key] = tuple(xp.asarray(a) for a in self.steps[j])
        return self._device[key]


@lru_cache(maxsize=256)
def _context_plan(offsets, start, length):
    return ContextPlan(offsets, start, length)


def _plan(attrs, lod, x):
    if attrs["contextStride"] != 1:
        raise ShapeError(f"op {lod.op_type}: contextStride={attrs['contextStride']}; only 1 "
                         "is supported")
    plan = seq_plan(lod, 0, x.shape[0])
    return _context_plan(tuple(int(o) for o in plan.offsets), attrs["contextStart"],
                         attrs["contextLength"])


def _padding(attrs, lod, plan, x, padding):
    """PaddingData when it is read (paddingTrainable), checked; else None (zeros)."""
    if not attrs["paddingTrainable"]:
        return None
    want = (plan.up + plan.down, x.shape[1])
    if padding is None:
        if want[0] == 0:
            return None
        raise ShapeError(f"op {lod.op_type}: paddingTrainable needs input PaddingData "
                         f"{list(want)}")
    if tuple(padding.shape) != want:
        raise ShapeError(
            f"op {lod.op_type}: slot PaddingData is {list(padding.shape)} but contextStart="
            f"{attrs['contextStart']}, contextLength={attrs['contextLength']} and X "
            f"{list(x.shape)} need {list(want)} (up_pad + down_pad rows)")
    return padding


def project(xp, attrs, lod, x, padding):
    """The context projection [T, contextLength * D] of ``x`` [T, D]."""
    plan = _plan(attrs, lod, x)
    padding = _padding(attrs, lod, plan, x, padding)
    length = attrs["contextLength"]
    out = xp.zeros((x.shape[0], length, x.shape[1]), dtype=x.dtype)
    for j in range(length):
        rows, src, pad_rows, pad = plan.step(xp, j)
        out[rows, j] = x[src]
        if padding is not None:
            out[pad_rows, j] = padding[pad]
    return out.reshape(x.shape[0], length * x.shape[1])


def project_grad(xp, attrs, lod, x, padding, dctx, want_x=True, want_pad=True):
    """(dX, dPaddingData) from the gradient of the projection; None where not wanted.
    dPaddingData is zeros when the padding is not trainable."""
    plan = _plan(attrs, lod, x)
    trainable = _padding(attrs, lod, plan, x, padding) is not None
    d = dctx.reshape(x.shape[0], attrs["contextLength"], x.shape[1])
    dx = xp.zeros(x.shape, dtype=dctx.dtype) if want_x else None
    dpad = xp.zeros(padding.shape, dtype=dctx.dtype) if (
        want_pad and padding is not None) else None
    for j in range(attrs["contextLength"]):
        rows, src, pad_rows, pad = plan.step(xp, j)
        if dx is not None:
            dx[src] += d[rows, j]  # within one step every source row appears once
        if dpad is not None and trainable:
            xp.add.at(dpad, pad, d[pad_rows, j])  # padding rows repeat: accumulate
    return dx, dpad


# ------------------------------------------------------------------- ops
def _stride_one(value):
    return None if value == 1 else "is not supported: only contextStride=1 (as in Paddle)"


def _context_attrs(start_default):
    return [Attr("contextLength", AttrType.INT, REQUIRED, at_least(1),
                 doc="rows in each context window"),
            Attr("paddingTrainable", AttrType.BOOLEAN, False,
                 doc="pad with rows of PaddingData (trained) instead of zeros"),
            Attr("contextStart", AttrType.INT, start_default,
                 doc="offset of the window's first row from the current row (-1: one before)"),
            Attr("contextStride", AttrType.INT, 1, _stride_one, doc="only 1 is supported")]


def _check_padding(ctx, x):
    pad = ctx.input("PaddingData")
    if pad is None or not ctx.attr("paddingTrainable"):
        return
    start, length = ctx.attr("contextStart"), ctx.attr("contextLength")
    want = [max(0, -start) + max(0, start + length - 1), x.shape[1]]
    if len(pad.shape) != 2 or any(a != b and -1 not in (a, b) for a, b in zip(pad.shape, want)):
        ctx.fail(f"PaddingData {list(pad.shape)} must be {want} for contextStart={start}, "
                 f"contextLength={length} and X {list(x.shape)}", slot="PaddingData")


def _check_x(ctx):
    x = ctx.input("X")
    if len(x.shape) != 2:
        ctx.fail(f"X {list(x.shape)} must be [T, D] (rows of sequences)", slot="X")
    _check_padding(ctx, x)
    return x


def _infer_projection(ctx):
    x = _check_x(ctx)
    width = x.shape[1] * ctx.attr("contextLength") if x.shape[1] >= 0 else -1
    ctx.set_output("Out", [x.shape[0], width], like=x)


def _projection(xp, attrs, lod, x, padding):
    return project(xp, attrs, lod, x, padding)


def _projection_grad(xp, attrs, lod, x, padding, dout):
    return project_grad(xp, attrs, lod, x, padding, dout, wanted(attrs, 0), wanted(attrs, 1))


register(
    "context_projection",
    inputs=[Slot("X", doc="sequences [T, D] with LoD"),
            Slot("PaddingData", dispensable=True,
                 doc="[up_pad + down_pad, D]; read only when paddingTrainable")],
    outputs=[Slot("Out", doc="[T, contextLength * D]: each row's context window")],
    attrs=_context_attrs(REQUIRED),
    infer_shape=_infer_projection, kernel=_projection, lod=True, paddle=False,
    grad=GradSpec(_projection_grad, inputs=("X", "PaddingData"),
                  in_grads=("X", "PaddingData")),
    doc="Out[t] = rows t+contextStart .. t+contextStart+contextLength-1 of t's sequence, "
        "padded at its ends", category="sequence")


def _sequence_conv(xp, attrs, lod, x, padding, filt):
    return project(xp, attrs, lod, x, padding) @ filt


def _sequence_conv_grad(xp, attrs, lod, x, filt, padding, dout):
    dfilt = None
    if wanted(attrs, 1):
        dfilt = project(xp, attrs, lod, x, padding).T @ dout
    dx, dpad = None, None
    if wanted(attrs, 0) or wanted(attrs, 2):
        dx, dpad = project_grad(xp, attrs, lod, x, padding, dout @ filt.T,
                                wanted(attrs, 0), wanted(attrs, 2))
    return dx, dfilt, dpad


def _infer_sequence_conv(ctx):
    x, filt = _check_x(ctx), ctx.input("Filter")
    length = ctx.attr("contextLength")
    rows = x.shape[1] * length if x.shape[1] >= 0 else -1
    if len(filt.shape) != 2 or -1 not in (rows, filt.shape[0]) and filt.shape[0] != rows:
        ctx.fail(f"Filter {list(filt.shape)} must be [contextLength * D, M] = [{rows}, M] for "
                 f"X {list(x.shape)} and contextLength={length}", slot="Filter")
    ctx.set_output("Out", [x.shape[0], filt.shape[1]], like=x)


register(
    "sequence_conv",
    inputs=[Slot("X", doc="sequences [T, D] with LoD"),
            Slot("PaddingData", dispensable=True,
                 doc="[up_pad + down_pad, D]; read only when paddingTrainable"),
            Slot("Filter", doc="[contextLength * D, M]")],
    outputs=[Slot("Out", doc="[T, M]")],
    attrs=_context_attrs(0),
    infer_shape=_infer_sequence_conv, kernel=_sequence_conv, lod=True,
    grad=GradSpec(_sequence_conv_grad, inputs=("X", "Filter", "PaddingData"),
                  in_grads=("X", "Filter", "PaddingData")),
    doc="Out = context_projection(X) @ Filter: a 1-D convolution inside each sequence",
    category="sequence")
