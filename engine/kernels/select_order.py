"""Order-statistics ops: ``kthvalue``, ``mode``, ``median``, ``nanmedian``,
``searchsorted`` and ``bincount``, with the gradients Paddle 3.3.1 has (kthvalue_grad,
mode_grad, median_grad, nanmedian_grad, which put Out@GRAD back at the chosen elements).

Slots and attributes are Paddle 3.3.1's. Ties: kthvalue takes the stable-sort position
(the first of equal values; Paddle's nth_element may pick another of them), mode the
smallest of the most frequent values and its last occurrence (as Paddle), nanmedian the
stable-sort middle(s), NaNs ignored, and index -1 with a NaN result for an all-NaN row.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register
from ..ir.proto import framework_pb2 as pb
from ._util import checked_axis as _axis

I64, I32 = pb.VarType.INT64, pb.VarType.INT32


def _reduced_shape(shape, axis, keepdim):
    return [(1 if keepdim else None) if i == axis else n for i, n in enumerate(shape)]


def _keep(shape, axis, keepdim):
    return [n for n in _reduced_shape(shape, axis, keepdim) if n is not None]


def _put_back(xp, x_shape, axis, keepdim, indices, dout):
    """dX: zeros with ``dout`` at ``indices`` along ``axis`` (Out had that axis dropped
    unless keepdim)."""
    dx = xp.zeros(x_shape, dtype=dout.dtype)
    if len(x_shape) == 0:
        return dout.reshape(()).copy()
    if not keepdim:
        indices, dout = xp.expand_dims(indices, axis), xp.expand_dims(dout, axis)
    grids = list(xp.ix_(*[xp.arange(n) for n in indices.shape]))
    grids[axis] = indices.astype(np.int64)
    dx[tuple(grids)] = dout
    return dx


# -------------------------------------------------------------------- kthvalue
def _kthvalue(xp, attrs, x):
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=np.int64)
    axis, k = _axis(attrs["axis"], x.ndim, "kthvalue"), attrs["k"]
    if not 1 <= k <= x.shape[axis]:
        raise ShapeError(f"op kthvalue: k={k} must be in [1, {x.shape[axis]}] (X "
                         f"{list(x.shape)}, axis {axis})")
    order = xp.argsort(x, axis=axis, kind="stable")
    idx = xp.take(order, xp.asarray([k - 1]), axis=axis)
    out = xp.take_along_axis(x, idx, axis=axis)
    if not attrs["keepdim"]:
        out, idx = xp.squeeze(out, axis), xp.squeeze(idx, axis)
    return out, idx.astype(np.int64)


def _pick_grad(op):
    def grad(xp, attrs, x, indices, dout):
        axis = _axis(attrs["axis"], x.ndim, op) if x.ndim else 0
        return _put_back(xp, x.shape, axis, attrs["keepdim"], indices, dout)
    return grad


def _infer_pick(op):
    def infer(ctx):
        x = ctx.input("X")
        shape = list(x.shape)
        if shape:
            axis = _axis(ctx.attr("axis"), len(shape), op, lambda m: ctx.fail(m, "X"))
            if op == "kthvalue" and shape[axis] >= 0 and not 1 <= ctx.attr("k") <= shape[axis]:
                ctx.fail(f"k={ctx.attr('k')} must be in [1, {shape[axis]}]", "X")
            shape = _keep(shape, axis, ctx.attr("keepdim"))
        ctx.set_output("Out", shape, like=x, lod_level=0)
        ctx.set_output("Indices", shape, dtype=I64, lod_level=0)
    return infer


_PICK_ATTRS = [Attr("axis", AttrType.INT, -1, doc="dim to search along"),
               Attr("keepdim", AttrType.BOOLEAN, False, doc="keep that dim with size 1")]
register("kthvalue", inputs=["X"], outputs=["Out", "Indices"],
         attrs=[Attr("k", AttrType.INT, 1, doc="1-based rank of the value")] + _PICK_ATTRS,
         infer_shape=_infer_pick("kthvalue"), kernel=_kthvalue, share_lod=(),
         grad=GradSpec(_pick_grad("kthvalue"), inputs=("X",), outputs=("Indices",)),
         doc="Out = the k-th smallest value along axis; Indices = where it is (int64)",
         category="index")


# ------------------------------------------------------------------------ mode
def _mode(xp, attrs, x):
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=np.int64)
    axis = _axis(attrs["axis"], x.ndim, "mode")
    moved = xp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    srt = xp.sort(rows, axis=1)
    # Count of each sorted value in its row: an [R, n, n] comparison, fine for the
    # modest lengths mode is used on, and free of per-element Python loops.
    counts = (srt[:, :, None] == srt[:, None, :]).sum(axis=2)
    value = srt[xp.arange(rows.shape[0]), xp.argmax(counts, axis=1)]  # smallest on ties
    last = (n - 1) - xp.argmax(xp.flip(rows == value[:, None], axis=1), axis=1)
    out = value.reshape(moved.shape[:-1])
    idx = last.astype(np.int64).reshape(moved.shape[:-1])
    if attrs["keepdim"]:
        out, idx = xp.expand_dims(out, axis), xp.expand_dims(idx, axis)
    return out, idx


register("mode", inputs=["X"], outputs=["Out", "Indices"], attrs=list(_PICK_ATTRS),
         infer_shape=_infer_pick("mode"), kernel=_mode, share_lod=(),
         grad=GradSpec(_pick_grad("mode"), inputs=("X",), outputs=("Indices",)),
         doc="Out = the most frequent value along axis (smallest on ties); Indices = its "
             "last position (int64)", category="index")


# ------------------------------------------------------------------- nanmedian
def _median_layout(x_shape, axis_attr, op="nanmedian"):
    """(reduced axes, kept axes): the reduced ones go last and are flattened."""
    rank = len(x_shape)
    axes = sorted({_axis(a, rank, op) for a in axis_attr}) if axis_attr else list(range(rank))
    return axes, [d for d in range(rank) if d not in axes]


def _median_out_shape(x_shape, axes, keepdim):
    return [1 if d in axes else n for d, n in enumerate(x_shape)] if keepdim else \
        [n for d, n in enumerate(x_shape) if d not in axes]


def _median(xp, attrs, x, axis, skip_nan):
    """(Out, index) of median / nanmedian over ``axis``. skip_nan: NaNs are ignored (an
    all-NaN row gives NaN and index -1); otherwise a row holding a NaN gives NaN and the
    first NaN's index (Paddle 3.3.1's median gives that index first)."""
    axes, kept = _median_layout(x.shape, axis)
    rows = xp.transpose(x, kept + axes).reshape(-1, int(np.prod([x.shape[d] for d in axes])))
    order = xp.argsort(rows, axis=1, kind="stable")  # NaNs sort last
    nans = xp.isnan(rows)
    valid = (~nans).sum(axis=1) if skip_nan else xp.full(rows.shape[0], rows.shape[1])
    lo, hi = xp.maximum(valid - 1, 0) // 2, xp.maximum(valid, 1) // 2
    if attrs["mode"] == "min":
        hi = lo
    r = xp.arange(rows.shape[0])
    i_lo, i_hi = order[r, lo], order[r, hi]
    out = (rows[r, i_lo] + rows[r, i_hi]) / 2 if attrs["mode"] == "avg" else rows[r, i_lo]
    bad = valid == 0 if skip_nan else nans.any(axis=1)
    at = xp.full(rows.shape[0], -1) if skip_nan else xp.argmax(nans, axis=1)
    out = xp.where(bad, xp.asarray(np.nan, dtype=x.dtype), out).astype(x.dtype)
    i_lo, i_hi = xp.where(bad, at, i_lo), xp.where(bad, at, i_hi)
    shape = _median_out_shape(x.shape, axes, attrs["keepdim"])
    idx = xp.stack([i_lo, i_hi], axis=1).reshape(shape + [2]) if attrs["mode"] == "avg" \
        else i_lo.reshape(shape)
    return out.reshape(shape), idx.astype(np.int64)


def _median_grad(xp, attrs, x, axis, median_index, dout):
    """dX: Out@GRAD put at the median element(s), halved between two middles."""
    axes, kept = _median_layout(x.shape, axis)
    perm = kept + axes
    m = int(np.prod([x.shape[d] for d in axes]))
    idx = median_index.reshape(-1, 2 if attrs["mode"] == "avg" else 1)
    g = dout.reshape(-1, 1) / idx.shape[1]
    rows = xp.zeros((idx.shape[0], m + 1), dtype=dout.dtype)  # column m absorbs -1 (all-NaN)
    r = xp.broadcast_to(xp.arange(idx.shape[0])[:, None], idx.shape)
    xp.add.at(rows, (r, xp.where(idx < 0, m, idx)), xp.broadcast_to(g, idx.shape))
    moved = rows[:, :m].reshape([x.shape[d] for d in perm])
    return xp.ascontiguousarray(xp.transpose(moved, tuple(int(d) for d in np.argsort(perm))))


def _nanmedian(xp, attrs, x):
    return _median(xp, attrs, x, attrs["axis"], True)


def _nanmedian_grad(xp, attrs, x, median_index, out, dout):
    return _median_grad(xp, attrs, x, attrs["axis"], median_index, dout)


def _infer_nanmedian(ctx):
    x = ctx.input("X")
    try:
        axes, _ = _median_layout(x.shape, ctx.attr("axis"))
    except ShapeError as exc:
        ctx.fail(str(exc), "X")
    shape = _median_out_shape(list(x.shape), axes, ctx.attr("keepdim"))
    ctx.set_output("Out", shape, like=x, lod_level=0)
    ctx.set_output("MedianIndex", shape + ([2] if ctx.attr("mode") == "avg" else []),
                   dtype=I64, lod_level=0)


register("nanmedian", inputs=["X"], outputs=["Out", "MedianIndex"],
         attrs=[Attr("axis", AttrType.INTS, [], doc="dims to reduce ([]: all)"),
                Attr("keepdim", AttrType.BOOLEAN, True, doc="keep reduced dims with size 1"),
                Attr("mode", AttrType.STRING, "avg", one_of("avg", "min"),
                     doc="avg: mean of the two middles; min: the lower one")],
         infer_shape=_infer_nanmedian, kernel=_nanmedian, share_lod=(),
         grad=GradSpec(_nanmedian_grad, inputs=("X",), outputs=("MedianIndex", "Out")),
         doc="Out = the median over axis ignoring NaNs; MedianIndex = the middle "
             "element(s) in the flattened reduced dims", category="index")


def _median_axis(attrs, axis_tensor, axis_list):
    """AxisTensor (1-D ints) wins, then AxisTensorList (1-element tensors), then axis."""
    if axis_tensor is not None:
        return [int(a) for a in np.asarray(_host(axis_tensor)).reshape(-1)]
    if axis_list:
        return [int(np.asarray(_host(t)).reshape(-1)[0]) for t in axis_list]
    return list(attrs["axis"])


def _host(a):
    return a.get() if hasattr(a, "get") else a


def _median_op(xp, attrs, x, axis_tensor, axis_list):
    return _median(xp, attrs, x, _median_axis(attrs, axis_tensor, axis_list), False)


def _median_op_grad(xp, attrs, x, axis_tensor, axis_list, medians, out, dout):
    axis = _median_axis(attrs, axis_tensor, axis_list)
    return _median_grad(xp, attrs, x, axis, medians, dout)


def _infer_median(ctx):
    x = ctx.input("x")
    if ctx.input("AxisTensor") is not None or ctx.inputs("AxisTensorList"):
        if not ctx.attr("keepdim"):  # which dims go is known only at run time
            ctx.fail("with AxisTensor/AxisTensorList and keepdim=False the output rank is "
                     "unknown before run time; give axis as the attribute", "AxisTensor")
        shape = [-1] * len(x.shape)
    else:
        try:
            axes, _ = _median_layout(x.shape, ctx.attr("axis"), "median")
        except ShapeError as exc:
            ctx.fail(str(exc), "x")
        shape = _median_out_shape(list(x.shape), axes, ctx.attr("keepdim"))
    ctx.set_output("out", shape, like=x, lod_level=0)
    ctx.set_output("medians", shape + ([2] if ctx.attr("mode") == "avg" else []),
                   dtype=I64, lod_level=0)


_AXIS_IN = "1-D int axes (wins over axis)"
register("median",
         inputs=["x", Slot("AxisTensor", dispensable=True, no_grad=True, doc=_AXIS_IN),
                 Slot("AxisTensorList", duplicable=True, dispensable=True, no_grad=True,
                      doc="1-element int axes (win over axis)")],
         outputs=["out", "medians"],
         attrs=[Attr("axis", AttrType.LONGS, [], doc="dims to reduce ([]: all)"),
                Attr("keepdim", AttrType.BOOLEAN, True, doc="keep reduced dims with size 1"),
                Attr("mode", AttrType.STRING, "avg", one_of("avg", "min"),
                     doc="avg: mean of the two middles; min: the lower one")],
         infer_shape=_infer_median, kernel=_median_op, share_lod=(),
         grad=GradSpec(_median_op_grad, inputs=("x", "AxisTensor", "AxisTensorList"),
                       outputs=("medians", "out"), out_grads=("out",), in_grads=("x",)),
         doc="out = the median over axis (NaN where a NaN is); medians = the middle "
             "element(s) in the flattened reduced dims", category="index")


# ---------------------------------------------------------------- searchsorted
def _searchsorted(xp, attrs, seq, values):
    dtype = np.int32 if attrs["out_int32"] else np.int64
    if seq.ndim <= 1:
        return xp.searchsorted(seq.reshape(-1), values,
                               side="right" if attrs["right"] else "left").astype(dtype)
    if tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
        raise ShapeError(f"op searchsorted: SortedSequence {list(seq.shape)} and Values "
                         f"{list(values.shape)} must agree on all dims but the last")
    # Count, per value, the sequence entries before it: [..., m, n] comparisons.
    s, v = seq[..., None, :], values[..., :, None]
    return ((s <= v) if attrs["right"] else (s < v)).sum(axis=-1).astype(dtype)


def _infer_searchsorted(ctx):
    seq, values = ctx.input("SortedSequence"), ctx.input("Values")
    if len(seq.shape) > 1 and (len(seq.shape) != len(values.shape) or any(
            a != b and a >= 0 and b >= 0 for a, b in zip(seq.shape[:-1], values.shape[:-1]))):
        ctx.fail(f"SortedSequence {list(seq.shape)} and Values {list(values.shape)} must "
                 "agree on all dims but the last", "Values")
    ctx.set_output("Out", values.shape, dtype=I32 if ctx.attr("out_int32") else I64,
                   lod_level=0)


register("searchsorted", inputs=["SortedSequence", "Values"], outputs=["Out"],
         attrs=[Attr("out_int32", AttrType.BOOLEAN, False, doc="int32 Out (else int64)"),
                Attr("right", AttrType.BOOLEAN, False, doc="after equal entries")],
         infer_shape=_infer_searchsorted, kernel=_searchsorted, share_lod=(),
         doc="Out = where each of Values would go in SortedSequence's last dim",
         category="index")


# -------------------------------------------------------------------- bincount
def _bincount(xp, attrs, x, weights):
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise ShapeError(f"op bincount: X must be a 1-D int tensor, got {x.dtype} "
                         f"{list(x.shape)}")
    if x.size and int(x.min()) < 0:
        raise ShapeError(f"op bincount: X holds {int(x.min())}; it must be non-negative")
    if weights is not None and tuple(weights.shape) != tuple(x.shape):
        raise ShapeError(f"op bincount: Weights {list(weights.shape)} must match X "
                         f"{list(x.shape)}")
    out = xp.bincount(x, weights=weights, minlength=max(attrs["minlength"], 0))
    # Paddle 3.3.1: int64 counts; float32/float64 weights keep their dtype, others float64.
    if weights is None:
        return out.astype(np.int64)
    return out.astype(weights.dtype if weights.dtype == np.float32 else np.float64)


def _infer_bincount(ctx):
    x, w = ctx.input("X"), ctx.input("Weights")
    if len(x.shape) != 1:
        ctx.fail(f"X must be 1-D, got {list(x.shape)}", "X")
    if ctx.attr("minlength") < 0:
        ctx.fail(f"minlength={ctx.attr('minlength')} must be >= 0", "X")
    dtype = I64 if w is None else (w.dtype if w.dtype == pb.VarType.FP32 else pb.VarType.FP64)
    ctx.set_output("Out", [-1], dtype=dtype, lod_level=0)


register("bincount", inputs=[Slot("X", no_grad=True, doc="1-D non-negative ints"),
                             Slot("Weights", dispensable=True, no_grad=True)],
         outputs=["Out"], attrs=[Attr("minlength", AttrType.INT, 0, doc="least Out length")],
         infer_shape=_infer_bincount, kernel=_bincount, share_lod=(),
         doc="Out[i] = how often i occurs in X (or the sum of its Weights)", category="index")
