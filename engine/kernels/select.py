"""Selection ops, several with data-dependent output sizes: ``masked_select``,
``where_index``, ``repeat_interleave``, ``unique``, ``unique_consecutive``,
``kthvalue``, ``mode``, ``nanmedian``, ``searchsorted`` and ``bincount``.

Slots, attributes and gradient slots are Paddle 3.3.1's. Outputs whose size depends on
the data (masked_select's Y, where_index's Out, unique's Out/Indices/Counts, ...) are
inferred with -1 dims and sized at run time. Index outputs are int64 unless a dtype /
out_int32 attribute says otherwise. Ties: kthvalue takes the stable-sort position (first
of equal values), mode the smallest most-frequent value and its last occurrence (as
Paddle 3.3.1), nanmedian the stable-sort middle(s).
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register
from ..ir.proto import framework_pb2 as pb
from ._util import broadcast_dims, checked_axis, unbroadcast

I64, I32 = pb.VarType.INT64, pb.VarType.INT32


def _index_dtype(dtype, op, fail=None):
    if dtype not in (I32, I64):
        message = f"dtype={dtype} must be 2 (int32) or 3 (int64)"
        if fail:
            fail(message)
        raise ShapeError(f"op {op}: {message}")
    return np.int32 if dtype == I32 else np.int64


# --------------------------------------------------------------- masked_select
def _masked(xp, x, mask):
    try:
        shape = np.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        raise ShapeError(f"op masked_select: X {list(x.shape)} and Mask {list(mask.shape)} "
                         "do not broadcast") from None
    return shape, xp.broadcast_to(mask.astype(bool), shape)


def _masked_select(xp, attrs, x, mask):
    shape, mask = _masked(xp, x, mask)
    return xp.broadcast_to(x, shape)[mask]


def _masked_select_grad(xp, attrs, x, mask, dy):
    shape, mask = _masked(xp, x, mask)
    full = xp.zeros(shape, dtype=dy.dtype)
    full[mask] = dy
    return unbroadcast(full, x.shape)  # X broadcast to Mask: sum back


def _infer_masked_select(ctx):
    x, mask = ctx.input("X"), ctx.input("Mask")
    if broadcast_dims(x.shape, mask.shape) is None:
        ctx.fail(f"X {list(x.shape)} and Mask {list(mask.shape)} do not broadcast", "Mask")
    ctx.set_output("Y", [-1], like=x, lod_level=0)


register("masked_select", inputs=["X", Slot("Mask", no_grad=True, doc="bool mask")],
         outputs=["Y"], infer_shape=_infer_masked_select, kernel=_masked_select,
         grad=GradSpec(_masked_select_grad, inputs=("X", "Mask"), out_grads=("Y",)),
         doc="Y = the elements of X where Mask is true (1-D; they broadcast)",
         category="index")


# ---------------------------------------------------------------- where_index
def _where_index(xp, attrs, cond):
    return xp.stack(xp.nonzero(cond), axis=1).astype(np.int64).reshape(-1, cond.ndim)


register("where_index", inputs=[Slot("Condition", no_grad=True)], outputs=["Out"],
         infer_shape=lambda ctx: ctx.set_output(
             "Out", [-1, len(ctx.input("Condition").shape)], dtype=I64, lod_level=0),
         kernel=_where_index, share_lod=(),
         doc="Out = the int64 coordinates of Condition's nonzero elements, [N, rank] "
             "(paddle.nonzero)", category="index")


# ---------------------------------------------------------- repeat_interleave
def _repeats(xp, attrs, x, repeats_tensor):
    dim = checked_axis(attrs["dim"], x.ndim, "repeat_interleave")
    if repeats_tensor is None:
        if attrs["Repeats"] < 0:
            raise ShapeError(f"op repeat_interleave: Repeats={attrs['Repeats']} is negative")
        return dim, attrs["Repeats"]
    reps = repeats_tensor.reshape(-1).astype(np.int64)
    if reps.size not in (1, x.shape[dim]) or (reps.size and int(reps.min()) < 0):
        raise ShapeError(f"op repeat_interleave: RepeatsTensor {list(repeats_tensor.shape)} "
                         f"must hold one count >= 0, or one per element of dim {dim} "
                         f"({x.shape[dim]})")
    return dim, reps


def _repeat_interleave(xp, attrs, x, repeats_tensor):
    dim, reps = _repeats(xp, attrs, x, repeats_tensor)
    return xp.repeat(x, reps, axis=dim)


def _repeat_interleave_grad(xp, attrs, x, repeats_tensor, dout):
    dim, reps = _repeats(xp, attrs, x, repeats_tensor)
    n = x.shape[dim]
    src = xp.repeat(xp.arange(n), reps)  # which X element each Out element came from
    g = xp.zeros((n,) + tuple(xp.moveaxis(dout, dim, 0).shape[1:]), dtype=dout.dtype)
    xp.add.at(g, src, xp.moveaxis(dout, dim, 0))
    return xp.ascontiguousarray(xp.moveaxis(g, 0, dim))


def _infer_repeat_interleave(ctx):
    x = ctx.input("X")
    shape = list(x.shape)
    dim = checked_axis(ctx.attr("dim"), len(shape), "repeat_interleave", lambda m: ctx.fail(m, "X"))
    if ctx.input("RepeatsTensor") is not None:
        shape[dim] = ctx.attr("output_size") if ctx.attr("output_size") > 0 else -1
    elif shape[dim] >= 0:
        shape[dim] *= ctx.attr("Repeats")
    ctx.set_output("Out", shape, like=x)


register("repeat_interleave",
         inputs=["X", Slot("RepeatsTensor", dispensable=True, no_grad=True,
                           doc="int counts, one per element of dim (wins)")],
         outputs=["Out"],
         attrs=[Attr("Repeats", AttrType.INT, 0, doc="count for every element"),
                Attr("dim", AttrType.INT, 0, doc="dim to repeat along"),
                Attr("output_size", AttrType.LONG, -1, doc="Out's size on dim, if known")],
         infer_shape=_infer_repeat_interleave, kernel=_repeat_interleave,
         grad=GradSpec(_repeat_interleave_grad, inputs=("X", "RepeatsTensor")),
         doc="Out = each element of X along dim repeated Repeats (or RepeatsTensor[i]) times",
         category="index")


# ---------------------------------------------------------------------- unique
def _unique_rows(xp, x, axis):
    """(rows [n, k] to deduplicate, the axis they came from or None for flattened)."""
    if not axis:
        return x.reshape(-1, 1), None
    if len(axis) != 1:
        raise ShapeError(f"op unique: axis {list(axis)} must name at most one dim")
    a = checked_axis(axis[0], x.ndim, "unique")
    return xp.moveaxis(x, a, 0).reshape(x.shape[a], -1), a


def _from_rows(xp, x, rows, a):
    if a is None:
        return rows.reshape(-1)
    moved = xp.moveaxis(x, a, 0)
    return xp.moveaxis(rows.reshape((rows.shape[0],) + tuple(moved.shape[1:])), 0, a)


def _row_groups(xp, rows):
    """Stable lexicographic sort of ``rows``: (order, start-of-new-value flags)."""
    order = xp.lexsort(rows.T[::-1]) if rows.shape[1] > 1 else xp.argsort(rows[:, 0],
                                                                          kind="stable")
    srt = rows[order]
    new = xp.ones(len(order), dtype=bool)
    if len(order) > 1:
        new[1:] = xp.any(srt[1:] != srt[:-1], axis=1)
    return order, new


def _unique(xp, attrs, x):
    dtype = _index_dtype(attrs["dtype"], "unique")
    rows, a = _unique_rows(xp, x, list(attrs["axis"]))
    order, new = _row_groups(xp, rows)
    group = xp.cumsum(new) - 1  # the sorted group of each sorted row
    inverse = xp.empty(len(order), dtype=np.int64)
    inverse[order] = group
    first = order[new]  # stable sort: a group's first row is its first occurrence
    counts = xp.diff(xp.concatenate([xp.nonzero(new)[0], xp.asarray([len(order)])]))
    if not attrs["is_sorted"]:
        # Paddle's unsorted path: values in order of first appearance, Index the inverse.
        rank = xp.empty(len(first), dtype=np.int64)
        rank[xp.argsort(first)] = xp.arange(len(first))
        first, inverse = xp.sort(first), rank[inverse]
        counts = counts[xp.argsort(rank)] if len(first) else counts
    out = _from_rows(xp, x, rows[first], a)
    return (out, first.astype(dtype), inverse.astype(dtype), counts.astype(dtype))


def _infer_unique(ctx):
    x = ctx.input("X")
    dtype = I32 if _index_dtype(ctx.attr("dtype"), "unique", ctx.fail) == np.int32 else I64
    axis = list(ctx.attr("axis"))
    if len(axis) > 1:
        ctx.fail(f"axis {axis} must name at most one dim", "X")
    if axis:
        a = checked_axis(axis[0], len(x.shape), "unique", lambda m: ctx.fail(m, "X"))
        shape = list(x.shape)
        shape[a], n = -1, x.shape[a]
    else:
        shape = [-1]
        n = -1 if any(d < 0 for d in x.shape) else int(np.prod(x.shape))
    ctx.set_output("Out", shape, like=x, lod_level=0)
    ctx.set_output("Indices", [-1], dtype=dtype, lod_level=0)
    ctx.set_output("Index", [n], dtype=dtype, lod_level=0)
    ctx.set_output("Counts", [-1], dtype=dtype, lod_level=0)


register("unique", inputs=[Slot("X", no_grad=True)],
         outputs=["Out", Slot("Indices", dispensable=True), "Index",
                  Slot("Counts", dispensable=True)],
         attrs=[Attr("return_index", AttrType.BOOLEAN, False, doc="fill Indices"),
                Attr("return_inverse", AttrType.BOOLEAN, False, doc="fill Index"),
                Attr("return_counts", AttrType.BOOLEAN, False, doc="fill Counts"),
                Attr("axis", AttrType.INTS, [], doc="[] flattens X; [d] finds unique slices"),
                Attr("dtype", AttrType.INT, 3, doc="index dtype: 2 int32, 3 int64"),
                Attr("is_sorted", AttrType.BOOLEAN, False,
                     doc="sorted values (paddle.unique); False: first-appearance order")],
         infer_shape=_infer_unique, kernel=_unique, share_lod=(),
         doc="Out = X's distinct values (or slices); Indices = first occurrences, Index = "
             "inverse, Counts = multiplicities", category="index")


def _unique_consecutive(xp, attrs, x):
    dtype = _index_dtype(attrs["dtype"], "unique_consecutive")
    axis = list(attrs["axis"])
    rows, a = _unique_rows(xp, x, axis)
    new = xp.ones(rows.shape[0], dtype=bool)
    if rows.shape[0] > 1:
        new[1:] = xp.any(rows[1:] != rows[:-1], axis=1)
    starts = xp.nonzero(new)[0]
    counts = xp.diff(xp.concatenate([starts, xp.asarray([rows.shape[0]])]))
    out = _from_rows(xp, x, rows[starts], a)
    return out, (xp.cumsum(new) - 1).astype(dtype), counts.astype(dtype)


def _infer_unique_consecutive(ctx):
    x = ctx.input("X")
    dtype = I32 if _index_dtype(ctx.attr("dtype"), "unique_consecutive",
                                ctx.fail) == np.int32 else I64
    axis = list(ctx.attr("axis"))
    if axis:
        a = checked_axis(axis[0], len(x.shape), "unique_consecutive", lambda m: ctx.fail(m, "X"))
        shape, n = list(x.shape), x.shape[a]
        shape[a] = -1
    else:
        shape, n = [-1], (-1 if any(d < 0 for d in x.shape) else int(np.prod(x.shape)))
    ctx.set_output("Out", shape, like=x, lod_level=0)
    ctx.set_output("Index", [n], dtype=dtype, lod_level=0)
    ctx.set_output("Counts", [-1], dtype=dtype, lod_level=0)


register("unique_consecutive", inputs=[Slot("X", no_grad=True)],
         outputs=["Out", Slot("Index", dispensable=True), Slot("Counts", dispensable=True)],
         attrs=[Attr("return_inverse", AttrType.BOOLEAN, False, doc="fill Index"),
                Attr("return_counts", AttrType.BOOLEAN, False, doc="fill Counts"),
                Attr("axis", AttrType.INTS, [], doc="[] flattens X; [d] compares slices"),
                Attr("dtype", AttrType.INT, 5, doc="index dtype: 2 int32, 3 int64 (Paddle's "
                                                   "default 5 is refused, as by Paddle)")],
         infer_shape=_infer_unique_consecutive, kernel=_unique_consecutive, share_lod=(),
         doc="Out = X with runs of equal values (or slices) collapsed; Index, Counts",
         category="index")
