"""Sequence ops over LoD: ``sequence_pool``, ``sequence_softmax``, ``sequence_reverse``,
``sequence_expand``, ``sequence_concat`` (``sequence_conv.py`` has ``sequence_conv`` and
``context_projection``).

Kernels are vectorised over sequences through the cached index arrays of ``seqplan``.
"""
from __future__ import annotations

from functools import lru_cache
from math import prod

import numpy as np

from ..errors import ShapeError
from ..ir.proto import framework_pb2 as pb
from .seqplan import per_seq, plan_of, seg_max, seg_sum, seq_plan
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register, same_as, standard_grad_maker, wanted


# ------------------------------------------------------------- sequence_pool
POOL_TYPES = ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST")


def _rows(a, n):
    """``a`` as [n, features]: reshape(n, -1) cannot infer the width of zero rows (a
    batch whose sequences are all empty)."""
    return a.reshape(n, prod(a.shape[1:]))


def _pool(xp, attrs, lod, x):
    plan, kind = seq_plan(lod, 0, x.shape[0]), attrs["pooltype"]
    flat = _rows(x, x.shape[0])
    out = xp.full((plan.n, flat.shape[1]), attrs["pad_value"], dtype=x.dtype)
    index = None
    if kind == "MAX":
        index = xp.full(out.shape, -1, dtype=xp.int32)  # -1: an empty sequence
    if len(plan.ne_idx):
        ne = plan.dev(xp, "ne_idx")
        if kind in ("SUM", "AVERAGE", "SQRT"):
            sums = seg_sum(xp, flat, plan)
            if kind != "SUM":
                sums *= per_seq(xp, plan, kind, x.dtype)[ne]
            out[ne] = sums
        elif kind == "MAX":
            values, rows = seg_max(xp, flat, plan, with_rows=wanted(attrs, 1))
            out[ne] = values
            if rows is not None:
                index[ne] = rows.astype(xp.int32)
        else:
            out[ne] = flat[plan.dev(xp, "ne_last" if kind == "LAST" else "ne_starts")]
    lod.outputs[0] = [list(level) for level in lod.inputs[0][:-1]]  # one row per sequence
    shape = (plan.n,) + x.shape[1:]
    return out.reshape(shape), (index.reshape(shape) if index is not None else None)


def _pool_grad(xp, attrs, lod, x, max_index, dout):
    plan, kind = seq_plan(lod, 0, x.shape[0]), attrs["pooltype"]
    dflat = _rows(dout, plan.n)
    if kind in ("SUM", "AVERAGE", "SQRT"):
        if kind != "SUM":
            dflat = dflat * per_seq(xp, plan, kind, dout.dtype)
        return dflat[plan.dev(xp, "seg_id")].reshape(x.shape)
    dx = xp.zeros((x.shape[0], dflat.shape[1]), dtype=dout.dtype)
    if kind == "MAX":
        if max_index is None:
            raise ShapeError("op sequence_pool_grad: pooltype MAX needs input MaxIndex")
        rows = _rows(max_index, plan.n).astype(xp.int64)
        cols = xp.broadcast_to(xp.arange(dflat.shape[1]), rows.shape)
        hit = rows >= 0  # each (row, column) is picked by at most one sequence
        dx[rows[hit], cols[hit]] = dflat[hit]
    elif len(plan.ne_idx):
        dx[plan.dev(xp, "ne_last" if kind == "LAST" else "ne_starts")] = \
            dflat[plan.dev(xp, "ne_idx")]
    return dx.reshape(x.shape)


def _infer_pool(ctx):
    x = ctx.input("X")
    shape = [-1] + list(x.shape[1:])
    ctx.set_output("Out", shape, like=x, lod_level=max(x.lod_level - 1, 0))
    ctx.set_output("MaxIndex", shape, dtype=pb.VarType.INT32, lod_level=0)


register(
    "sequence_pool",
    inputs=[Slot("X", doc="sequences [T, ...] with LoD (pooled over the last level)")],
    outputs=[Slot("Out", doc="one row per sequence [N, ...]"),
             Slot("MaxIndex", intermediate=True, no_grad=True,
                  doc="int32 row of each maximum (MAX only)")],
    attrs=[Attr("is_test", AttrType.BOOLEAN, False),
           Attr("pooltype", AttrType.STRING, "AVERAGE", one_of(*POOL_TYPES),
                doc="AVERAGE, SUM, SQRT (sum / sqrt(len)), MAX, LAST or FIRST"),
           Attr("pad_value", AttrType.FLOAT, 0.0, doc="value written for an empty sequence")],
    infer_shape=_infer_pool, kernel=_pool, lod=True, share_lod=(),
    grad=GradSpec(_pool_grad, inputs=("X",), outputs=("MaxIndex",)),
    doc="Out[i] = pool(X rows of sequence i)", category="sequence")


# ---------------------------------------------------------- sequence_softmax
def _softmax(xp, attrs, lod, x):
    plan = seq_plan(lod, 0, x.shape[0])
    v = x.reshape(-1, 1)
    if not len(plan.ne_idx):
        return xp.empty_like(x)
    row_ne = plan.dev(xp, "row_ne")
    peak, _ = seg_max(xp, v, plan)
    e = xp.exp(v - peak[row_ne])  # shifted by the sequence's max: exp never overflows
    e /= seg_sum(xp, e, plan)[row_ne]
    return e.reshape(x.shape)


def _softmax_grad(xp, attrs, lod, x, out, dout):
    plan = seq_plan(lod, 0, out.shape[0])
    if not len(plan.ne_idx):
        return xp.zeros_like(dout)
    y, dy = out.reshape(-1, 1), dout.reshape(-1, 1)
    inner = seg_sum(xp, dy * y, plan)[plan.dev(xp, "row_ne")]
    return (y * (dy - inner)).reshape(out.shape)


def _infer_softmax(ctx):
    x = ctx.input("X")
    if not (len(x.shape) == 1 or (len(x.shape) == 2 and x.shape[1] in (1, -1))):
        ctx.fail(f"X {list(x.shape)} must be [T, 1] or [T]: one score per row", slot="X")
    ctx.set_output("Out", x.shape, like=x)


register(
    "sequence_softmax",
    inputs=[Slot("X", doc="scores [T, 1] or [T] with LoD")],
    outputs=[Slot("Out", doc="softmax of the scores within each sequence")],
    infer_shape=_infer_softmax, kernel=_softmax, lod=True,
    grad=GradSpec(_softmax_grad, inputs=("X",), outputs=("Out",)),
    doc="Out = softmax over the rows of each sequence", category="sequence")


# ----------------------------------------------------------- sequence_reverse
def _reverse(xp, attrs, lod, x, dy=None):
    """Y = X reversed per sequence; as the grad kernel, dX = dY reversed (the
    permutation is its own inverse)."""
    rows = seq_plan(lod, 0, x.shape[0]).dev(xp, "reversed_rows")
    return x[rows] if dy is None else dy[rows]


# Paddle's sequence_reverse has no grad op of its own: its maker emits sequence_reverse
# over Y@GRAD, which needs Y@GRAD to carry the LoD. Ours reads X's LoD instead.
_REVERSE_GRAD = GradSpec(_reverse, inputs=("X",), out_grads=("Y",))
register(
    "sequence_reverse",
    inputs=[Slot("X", doc="sequences [T, ...] with LoD")],
    outputs=[Slot("Y", doc="each sequence's rows in reverse order; X's LoD")],
    infer_shape=same_as("X", "Y"), kernel=_reverse, lod=True, share_lod=(("X", "Y"),),
    grad=standard_grad_maker(_REVERSE_GRAD, "sequence_reverse_grad"),
    doc="Y = every sequence of X reversed (Paddle 2.x op)", category="sequence")
register(
    "sequence_reverse_grad",
    inputs=[Slot("X", dispensable=True), Slot("Y@GRAD", dispensable=True)],
    outputs=[Slot("X@GRAD", dispensable=True)],
    infer_shape=same_as("X", "X@GRAD"), kernel=_reverse, lod=True,
    share_lod=(("X", "X@GRAD"),), paddle=False, grad_of="sequence_reverse",
    doc="gradient of sequence_reverse", category="gradient")


# ------------------------------------------------------------ sequence_expand
def gather_pieces(src_starts, lengths):
    """Row index that lays pieces ``src_starts[k]:+lengths[k]`` end to end (host)."""
    out_starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    shift = np.repeat(src_starts - out_starts[:-1], lengths)
    return shift + np.arange(out_starts[-1], dtype=np.int64), out_starts


@lru_cache(maxsize=256)
def _expand_plan(x_offsets, y_offsets):
    """(gather index, output offsets or None) of sequence_expand. ``x_offsets`` None:
    X has no LoD and each row is a sequence of length one."""
    repeats = np.diff(np.asarray(y_offsets, dtype=np.int64))
    if x_offsets is None:
        return np.repeat(np.arange(len(repeats)), repeats), None
    x_off = np.asarray(x_offsets, dtype=np.int64)
    picked = np.repeat(np.arange(len(repeats)), repeats)  # x sequence of each output sequence
    index, out_offsets = gather_pieces(x_off[:-1][picked], np.diff(x_off)[picked])
    return index, [int(o) for o in out_offsets]


def _expand_index(xp, attrs, lod, x):
    y_lod = lod.inputs[1]
    ref, _ = attrs["ref_level"], lod.offsets(1)  # Y without LoD: the clear error
    level = len(y_lod) - 1 if ref == -1 else ref
    if not 0 <= level < len(y_lod):
        raise ShapeError(f"op {lod.op_type}: ref_level={ref} is not a level of Y's "
                         f"{len(y_lod)}-level LoD")
    x_lod = lod.inputs[0] or []
    if len(x_lod) > 1:
        raise ShapeError(f"op {lod.op_type}: X has a {len(x_lod)}-level LoD; 1 at most")
    x_off = tuple(plan_of(x_lod[0], x.shape[0], lod.op_type, "X").offsets) if x_lod else None
    count = len(x_off) - 1 if x_off else x.shape[0]
    if count != len(y_lod[level]) - 1:
        what = "sequences" if x_off else "rows (X has no LoD)"
        raise ShapeError(
            f"op {lod.op_type}: X has {count} {what} but level {level} of Y's LoD has "
            f"{len(y_lod[level]) - 1} sequences; each needs a repeat count")
    index, out_offsets = _expand_plan(x_off, tuple(int(o) for o in y_lod[level]))
    return (index if xp is np else xp.asarray(index)), out_offsets


def _expand(xp, attrs, lod, x, y):
    index, out_offsets = _expand_index(xp, attrs, lod, x)
    lod.outputs[0] = None if out_offsets is None else [out_offsets]  # None: X's (none)
    return x[index]


def _expand_grad(xp, attrs, lod, x, y, dout):
    index, _ = _expand_index(xp, attrs, lod, x)
    dx = xp.zeros(x.shape, dtype=dout.dtype)
    xp.add.at(dx, index, dout)  # a row repeated k times gets k gradients
    return dx


def _infer_expand(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", [-1] + list(x.shape[1:]), like=x)


register(
    "sequence_expand",
    inputs=[Slot("X", doc="rows, or sequences (LoD level <= 1), to repeat"),
            Slot("Y", no_grad=True, doc="its LoD at ref_level gives the repeat counts")],
    outputs=[Slot("Out", doc="X's i-th sequence (or row) repeated len_i(Y) times")],
    attrs=[Attr("ref_level", AttrType.INT, -1, doc="level of Y's LoD; -1: the last")],
    infer_shape=_infer_expand, kernel=_expand, lod=True,
    grad=GradSpec(_expand_grad, inputs=("X", "Y")),
    doc="Out = X's sequences repeated as Y's sequence lengths say", category="sequence")


# ------------------------------------------------------------ sequence_concat
@lru_cache(maxsize=256)
def _concat_plan(offsets_list):
    """(gather index into the stacked inputs, output offsets) of sequence_concat."""
    offs = [np.asarray(o, dtype=np.int64) for o in offsets_list]
    base = np.concatenate([[0], np.cumsum([o[-1] for o in offs])])[:-1]
    # pieces in output order: sequence i of input 0, of input 1, ..., then sequence i + 1
    starts = np.stack([o[:-1] + b for o, b in zip(offs, base)], axis=1).reshape(-1)
    lengths = np.stack([np.diff(o) for o in offs], axis=1).reshape(-1)
    index, piece_starts = gather_pieces(starts, lengths)
    return index, [int(o) for o in piece_starts[::len(offs)]]


def _concat_index(xp, lod, xs):
    offsets = []
    for k, (x, x_lod) in enumerate(zip(xs, lod.inputs[0])):
        if len(x_lod or ()) != 1:
            raise ShapeError(
                f"op {lod.op_type}: input X[{k}] has a {len(x_lod or ())}-level LoD; every input "
                "needs a 1-level LoD (feed a LoDTensor)")
        offsets.append(tuple(plan_of(x_lod[0], x.shape[0], lod.op_type, f"X[{k}]").offsets))
    counts = [len(o) - 1 for o in offsets]
    if len(set(counts)) > 1:
        listed = ", ".join(f"X[{k}] {c}" for k, c in enumerate(counts))
        raise ShapeError(f"op {lod.op_type}: inputs have different numbers of sequences "
                         f"({listed}); sequence i of every input is concatenated")
    index, out_offsets = _concat_plan(tuple(offsets))
    return (index if xp is np else xp.asarray(index)), out_offsets


def _concat(xp, attrs, lod, xs):
    index, out_offsets = _concat_index(xp, lod, xs)
    lod.outputs[0] = [out_offsets]
    return xp.concatenate(xs)[index]


def _concat_grad(xp, attrs, lod, xs, dout):
    index, _ = _concat_index(xp, lod, xs)
    stacked = xp.empty(dout.shape, dtype=dout.dtype)
    stacked[index] = dout  # a permutation: every row once
    bounds = np.cumsum([x.shape[0] for x in xs])[:-1]
    return list(xp.split(stacked, [int(b) for b in bounds]))


def _infer_concat(ctx):
    xs = ctx.inputs("X")
    rest = list(xs[0].shape[1:])
    for k, x in enumerate(xs):
        if len(x.shape) != len(rest) + 1 or any(
                a != b and -1 not in (a, b) for a, b in zip(x.shape[1:], rest)):
            ctx.fail(f"X[{k}] {list(x.shape)} does not match X[0] {list(xs[0].shape)} "
                     "after the row dimension", slot="X")
    rows = [x.shape[0] for x in xs]
    ctx.set_output("Out", [sum(rows) if min(rows) >= 0 else -1] + rest, like=xs[0],
                   lod_level=1)


register(
    "sequence_concat",
    inputs=[Slot("X", duplicable=True, doc="sequences with 1-level LoD, as many in each")],
    outputs=[Slot("Out", doc="sequence i = sequence i of X[0], X[1], ... end to end")],
    infer_shape=_infer_concat, kernel=_concat, lod=True, share_lod=(),
    grad=standard_grad_maker(GradSpec(_concat_grad), "sequence_concat_grad"),
    doc="Out's i-th sequence joins the i-th sequences of every input (Paddle 2.x op)",
    category="sequence")


def _infer_concat_grad(ctx):
    for k, x in enumerate(ctx.inputs("X")):
        ctx.set_output("X@GRAD", x.shape, like=x, index=k)


# Registered here rather than by GradSpec: its X input is duplicable like the forward's.
register(
    "sequence_concat_grad",
    inputs=[Slot("X", duplicable=True), Slot("Out@GRAD")],
    outputs=[Slot("X@GRAD", duplicable=True, dispensable=True)],
    infer_shape=_infer_concat_grad, kernel=_concat_grad, lod=True,
    share_lod=(("X", "X@GRAD"),),  # position by position: X@GRAD[k] has X[k]'s sequences
    grad_of="sequence_concat", doc="gradient of sequence_concat", category="gradient")
