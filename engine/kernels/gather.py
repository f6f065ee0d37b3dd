"""Index ops: ``gather``, ``gather_nd``, ``index_select``, ``where``, ``arg_max``,
``arg_min``, ``argsort`` and ``one_hot_v2``.

Slots, attributes and gradient ops are Paddle 3.3.1's. Index inputs are never
differentiated; gradients scatter Out@GRAD back with ``add.at`` so repeated indices
accumulate. A negative index counts from the end of its dim (Paddle 3.3.1's CPU kernels
read the same element); an index past the dim is a ShapeError naming op and slot.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.registry import REQUIRED, Attr, AttrType, GradSpec, Slot, register, wanted
from ..ir.proto import framework_pb2 as pb
from ._util import checked_axis
from .xshape import lod_blind, lod_if_rows_kept


def _host(tensor):
    return tensor.get() if hasattr(tensor, "get") else tensor


def _checked_index(xp, index, dim, op, slot="Index"):
    """``index`` with negatives wrapped; out-of-range entries raise a clear error."""
    if index.size:
        low, high = int(index.min()), int(index.max())
        if low < -dim or high >= dim:
            raise ShapeError(f"op {op}: {slot} holds {low if low < -dim else high}, outside "
                             f"[-{dim}, {dim}) for a dim of size {dim}")
    return xp.where(index < 0, index + dim, index)


# --------------------------------------------------------------------- gather
def _gather_index(index, op):
    """Paddle takes a 0-d or 1-D Index, or 2-D with one column (read as 1-D)."""
    if index.ndim == 2 and index.shape[1] == 1:
        return index.reshape(-1)
    if index.ndim > 1:
        raise ShapeError(f"op {op}: Index must be 0-d, 1-D or [N, 1], got {list(index.shape)}")
    return index


def _gather_axis(attrs, axis_tensor, rank):
    axis = attrs["axis"] if axis_tensor is None else int(_host(axis_tensor).reshape(-1)[0])
    return checked_axis(axis, rank, "gather")


def _gather(xp, attrs, x, index, axis_tensor):
    axis = _gather_axis(attrs, axis_tensor, x.ndim)
    index = _checked_index(xp, _gather_index(index, "gather"), x.shape[axis], "gather")
    return xp.take(x, index, axis=axis)


def _gather_grad(xp, attrs, x, index, axis_tensor, dout):
    if not wanted(attrs, 0):
        return None
    axis = _gather_axis(attrs, axis_tensor, x.ndim)
    index = _checked_index(xp, _gather_index(index, "gather"), x.shape[axis], "gather")
    if index.ndim == 0:  # a 0-d Index dropped the axis from Out; put it back
        dout = xp.expand_dims(dout, axis)
    # Scatter into a buffer with the gathered axis first (whole slices per index entry,
    # contiguous for add.at on either xp), then move that axis back.
    rest = tuple(x.shape[:axis]) + tuple(x.shape[axis + 1:])
    buf = xp.zeros((x.shape[axis],) + rest, dtype=dout.dtype)
    xp.add.at(buf, index.reshape(-1),
              xp.moveaxis(dout, axis, 0).reshape((index.size,) + rest))
    return xp.ascontiguousarray(xp.moveaxis(buf, 0, axis))


def _infer_gather(ctx):
    x, index = ctx.input("X"), ctx.input("Index")
    shape, ishape = list(x.shape), list(index.shape)
    if len(ishape) == 2 and ishape[1] == 1:
        ishape = ishape[:1]
    elif len(ishape) > 1:
        ctx.fail(f"Index must be 0-d, 1-D or [N, 1], got {list(index.shape)}", "Index")
    if ctx.input("Axis") is not None:
        ctx.set_output("Out", [-1] * (len(shape) - 1 + len(ishape)), like=x)
        return
    axis = checked_axis(ctx.attr("axis"), len(shape), "gather", lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", shape[:axis] + ishape + shape[axis + 1:], like=x)


_INT_INDEX = "int32 or int64 indices"
register("gather",
         inputs=["X", Slot("Index", no_grad=True, doc=_INT_INDEX),
                 Slot("Axis", dispensable=True, no_grad=True, doc="1-element int axis (wins)")],
         outputs=["Out"], attrs=[Attr("axis", AttrType.INT, 0, doc="dim Index picks along")],
         infer_shape=_infer_gather, kernel=lod_if_rows_kept(_gather), lod=True,
         grad=GradSpec(lod_blind(_gather_grad), inputs=("X", "Index", "Axis")),
         doc="Out = X's slices at Index along axis", category="index")


# ------------------------------------------------------------------ gather_nd
def _nd_parts(xp, x, index):
    k = index.shape[-1]
    if k > x.ndim:
        raise ShapeError(f"op gather_nd: Index's last dim {k} exceeds X's rank {x.ndim} "
                         f"(X {list(x.shape)}, Index {list(index.shape)})")
    if k == 0:
        return ()
    flat = index.reshape(-1, k)
    return tuple(_checked_index(xp, flat[:, j], x.shape[j], "gather_nd") for j in range(k))


def _gather_nd(xp, attrs, x, index):
    parts = _nd_parts(xp, x, index)
    lead = tuple(index.shape[:-1])
    if not parts:  # an empty last dim picks the whole X for every index row
        return xp.broadcast_to(x, lead + tuple(x.shape)).copy()
    return x[parts].reshape(lead + tuple(x.shape[len(parts):]))


def _gather_nd_grad(xp, attrs, x, index, dout):
    if not wanted(attrs, 0):
        return None
    parts = _nd_parts(xp, x, index)
    if not parts:
        return dout.reshape((-1,) + tuple(x.shape)).sum(axis=0)
    dx = xp.zeros(x.shape, dtype=dout.dtype)
    xp.add.at(dx, parts, dout.reshape((-1,) + tuple(x.shape[len(parts):])))
    return dx


def _infer_gather_nd(ctx):
    x, index = ctx.input("X"), ctx.input("Index")
    shape, ishape = list(x.shape), list(index.shape)
    if not ishape:
        ctx.fail("Index must have at least one dim", "Index")
    k = ishape[-1]
    if k > len(shape):
        ctx.fail(f"Index's last dim {k} exceeds X's rank {len(shape)} (X {shape})", "Index")
    ctx.set_output("Out", ishape[:-1] + (shape[k:] if k >= 0 else [-1]), like=x)


register("gather_nd", inputs=["X", Slot("Index", no_grad=True, doc=_INT_INDEX)],
         outputs=["Out"], infer_shape=_infer_gather_nd, kernel=lod_if_rows_kept(_gather_nd),
         lod=True, grad=GradSpec(lod_blind(_gather_nd_grad), inputs=("X", "Index")),
         doc="Out[i...] = X[Index[i..., :]] (Index's last dim indexes X's leading dims)",
         category="index")


# --------------------------------------------------------------- index_select
def _index_select(xp, attrs, x, index):
    dim = checked_axis(attrs["dim"], x.ndim, "index_select")
    if index.ndim > 1:
        raise ShapeError(f"op index_select: Index must be 1-D, got {list(index.shape)}")
    return xp.take(x, _checked_index(xp, index, x.shape[dim], "index_select"), axis=dim)


def _index_select_grad(xp, attrs, x, index, dout):
    if not wanted(attrs, 0):
        return None
    dim = checked_axis(attrs["dim"], x.ndim, "index_select")
    return _gather_grad(xp, {"axis": dim}, x, index.reshape(-1), None, dout)


def _infer_index_select(ctx):
    x, index = ctx.input("X"), ctx.input("Index")
    shape = list(x.shape)
    if len(index.shape) > 1:
        ctx.fail(f"Index must be 1-D, got {list(index.shape)}", "Index")
    dim = checked_axis(ctx.attr("dim"), len(shape), "index_select", lambda m: ctx.fail(m, "X"))
    n = index.shape[0] if index.shape else 1
    ctx.set_output("Out", shape[:dim] + [n] + shape[dim + 1:], like=x)


register("index_select", inputs=["X", Slot("Index", no_grad=True, doc="1-D " + _INT_INDEX)],
         outputs=["Out"], attrs=[Attr("dim", AttrType.INT, 0, doc="dim Index picks along")],
         infer_shape=_infer_index_select, kernel=lod_if_rows_kept(_index_select), lod=True,
         grad=GradSpec(lod_blind(_index_select_grad), inputs=("X", "Index")),
         doc="Out = X's slices at Index along dim", category="index")


# ---------------------------------------------------------------------- where
def _where_check(cond, x, y):
    if not (cond.shape == x.shape == y.shape):
        raise ShapeError(f"op where: Condition {list(cond.shape)}, X {list(x.shape)} and Y "
                         f"{list(y.shape)} must have the same shape")


def _where(xp, attrs, cond, x, y):
    _where_check(cond, x, y)
    return xp.where(cond.astype(bool), x, y)


def _where_grad(xp, attrs, cond, x, y, dout):
    mask = cond.astype(bool)
    zero = xp.zeros((), dtype=dout.dtype)
    dx = xp.where(mask, dout, zero) if wanted(attrs, 0) else None
    dy = xp.where(mask, zero, dout) if wanted(attrs, 1) else None
    return dx, dy


def _infer_where(ctx):
    cond, x, y = ctx.input("Condition"), ctx.input("X"), ctx.input("Y")
    shapes = [list(m.shape) for m in (cond, x, y)]
    if len({len(s) for s in shapes}) > 1 or any(
            len({d for d in dims if d >= 0}) > 1 for dims in zip(*shapes)):
        ctx.fail(f"Condition {shapes[0]}, X {shapes[1]} and Y {shapes[2]} must have the "
                 "same shape", "X")
    out = [next((d for d in dims if d >= 0), -1) for dims in zip(*shapes)]
    ctx.set_output("Out", out, like=x)


register("where",
         inputs=[Slot("Condition", no_grad=True, doc="bool mask"), "X", "Y"],
         outputs=["Out"], infer_shape=_infer_where, kernel=_where, share_lod=(("X", "Out"),),
         grad=GradSpec(_where_grad, inputs=("Condition", "X", "Y"), in_grads=("X", "Y")),
         doc="Out = X where Condition else Y", category="index")


# --------------------------------------------------------- arg_max / arg_min
_INDEX_DTYPES = {-1: np.int64, 2: np.int32, 3: np.int64}


def _arg_dtype(attrs, op, fail=None):
    dtype = attrs["dtype"]
    if dtype not in _INDEX_DTYPES:
        message = f"dtype={dtype} must be 2 (int32) or 3 (int64)"
        if fail:
            fail(message)
        raise ShapeError(f"op {op}: {message}")
    return _INDEX_DTYPES[dtype]


def _arg_reduce(find, op):
    """Kernel of arg_max / arg_min: ``find`` is "argmax" or "argmin" (numpy's and cupy's
    take the first index on ties, as Paddle)."""
    def kernel(xp, attrs, x):
        dtype = _arg_dtype(attrs, op)
        if attrs["flatten"] or x.ndim == 0:
            # The whole X: a 0-d result, or [1] * rank with keepdims.
            out = getattr(xp, find)(x.reshape(-1), axis=0)
            return out.astype(dtype).reshape([1] * x.ndim if attrs["keepdims"] else [])
        axis = checked_axis(int(attrs["axis"]), x.ndim, op)
        return getattr(xp, find)(x, axis=axis, keepdims=attrs["keepdims"]).astype(dtype)
    return kernel


def _infer_arg(op):
    def infer(ctx):
        x = ctx.input("X")
        shape = list(x.shape)
        dtype = pb.VarType.INT32 if _arg_dtype(ctx.attrs, op, ctx.fail) == np.int32 else \
            pb.VarType.INT64
        if ctx.attr("flatten") or not shape:
            out = [1] * len(shape) if ctx.attr("keepdims") else []
        else:
            axis = checked_axis(int(ctx.attr("axis")), len(shape), op, lambda m: ctx.fail(m, "X"))
            out = shape[:axis] + ([1] if ctx.attr("keepdims") else []) + shape[axis + 1:]
        ctx.set_output("Out", out, dtype=dtype, lod_level=0)
    return infer


_ARG_ATTRS = [Attr("axis", AttrType.LONG, REQUIRED, doc="dim to search along"),
              Attr("keepdims", AttrType.BOOLEAN, False, doc="keep that dim with size 1"),
              Attr("flatten", AttrType.BOOLEAN, False, doc="search the whole X (axis ignored)"),
              Attr("dtype", AttrType.INT, 3, doc="index dtype: 2 int32, 3 int64")]
for _op, _find, _what in (("arg_max", "argmax", "largest"), ("arg_min", "argmin", "smallest")):
    register(_op, inputs=["X"], outputs=["Out"], attrs=_ARG_ATTRS, infer_shape=_infer_arg(_op),
             kernel=_arg_reduce(_find, _op), share_lod=(),
             doc=f"Out = index of the {_what} value along axis (first on ties)",
             category="index")


# -------------------------------------------------------------------- argsort
def _argsort_indices(xp, x, axis, descending):
    """Stable: equal values keep their order, ascending or descending (what Paddle 3.3.1
    gives); descending sorts the reversed X and maps the positions back, so equal
    values still come in index order, for any dtype."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = xp.flip(x, axis=axis)
    order = xp.flip(xp.argsort(rev, axis=axis, kind="stable"), axis=axis)
    return (n - 1) - order


def _argsort(xp, attrs, x):
    if x.ndim == 0:
        return x.copy(), xp.zeros((), dtype=np.int64)
    axis = checked_axis(attrs["axis"], x.ndim, "argsort")
    indices = _argsort_indices(xp, x, axis, attrs["descending"]).astype(np.int64)
    return xp.take_along_axis(x, indices, axis=axis), indices


def _argsort_grad(xp, attrs, x, indices, dout):
    if x.ndim == 0:
        return dout.copy()
    axis = checked_axis(attrs["axis"], x.ndim, "argsort")
    # Out = X[Indices] along axis, so dX = dOut read through the inverse permutation.
    inverse = xp.argsort(indices, axis=axis)
    return xp.take_along_axis(dout, inverse, axis=axis)


def _infer_argsort(ctx):
    x = ctx.input("X")
    if x.shape:
        checked_axis(ctx.attr("axis"), len(x.shape), "argsort", lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", x.shape, like=x)
    ctx.set_output("Indices", x.shape, dtype=pb.VarType.INT64, lod_level=0, like=x)


register("argsort", inputs=["X"], outputs=["Out", "Indices"],
         attrs=[Attr("axis", AttrType.INT, -1, doc="dim to sort along"),
                Attr("descending", AttrType.BOOLEAN, False, doc="largest first"),
                Attr("stable", AttrType.BOOLEAN, False,
                     doc="keep equal values in order (ours always does)")],
         infer_shape=_infer_argsort, kernel=_argsort,
         grad=GradSpec(_argsort_grad, inputs=("X",), outputs=("Indices",)),
         doc="Out = X sorted along axis; Indices = where each came from (int64)",
         category="index")


# ----------------------------------------------------------------- one_hot_v2
def _one_hot(xp, attrs, x, depth_tensor):
    depth = attrs["depth"] if depth_tensor is None else int(_host(depth_tensor).reshape(-1)[0])
    if depth < 1:
        raise ShapeError(f"op one_hot_v2: depth={depth} must be positive (attribute depth "
                         "or depth_tensor)")
    if x.size:
        low, high = int(x.min()), int(x.max())
        # Paddle 3.3.1's kernel rejects out-of-range ids even with allow_out_of_range.
        if low < 0 or high >= depth:
            raise ShapeError(f"op one_hot_v2: X holds {low if low < 0 else high}, outside "
                             f"[0, {depth})")
    hot = x[..., None] == xp.arange(depth, dtype=x.dtype)
    return hot.astype(to_numpy_dtype(attrs["dtype"]))


def _infer_one_hot(ctx):
    x = ctx.input("X")
    depth = -1 if ctx.input("depth_tensor") is not None else ctx.attr("depth")
    if depth == 0 or depth < -1:
        ctx.fail(f"depth={depth} must be positive", "X")
    ctx.set_output("Out", list(x.shape) + [depth], dtype=ctx.attr("dtype"), like=x)


register("one_hot_v2",
         inputs=[Slot("X", no_grad=True, doc="int ids"),
                 Slot("depth_tensor", dispensable=True, no_grad=True, doc="1-element int depth")],
         outputs=["Out"],
         attrs=[Attr("depth", AttrType.INT, -1, doc="number of classes"),
                Attr("dtype", AttrType.INT, 5, doc="VarType of Out (5 = float32)"),
                Attr("allow_out_of_range", AttrType.BOOLEAN, False,
                     doc="kept for Paddle; its 3.3.1 kernel (and ours) rejects such ids")],
         infer_shape=_infer_one_hot, kernel=_one_hot,
         doc="Out = one-hot rows of depth for the ids in X (a new last dim)", category="index")
