"""``take_along_axis`` and ``put_along_axis`` (every Reduce mode, Include_self) with
their ``_grad`` ops.

Slots, attributes and gradient slots are Paddle 3.3.1's. On the dims other than Axis,
Index position i reads Input's position i, so Index may be smaller than Input there (never
bigger); a negative index counts from the end of Axis. put_along_axis's "assign" keeps the
last writer of an element (Paddle's CPU kernel loops in order), and only that writer gets
its gradient; the other reductions follow their mathematics (amin/amax share the gradient
evenly between the inputs equal to the result).
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register, wanted
from ._util import unbroadcast
from ._util import checked_axis as norm_axis
from .scatter import last_writer, wrap_index


def _host(a):
    return a.get() if hasattr(a, "get") else a


def _along(xp, x_shape, index, axis, op):
    """Fancy-index tuple of the elements ``index`` picks along ``axis`` (Paddle's
    take/put_along_axis: on the other dims, index position i reads X's position i, so
    Index may be smaller than X there, never bigger)."""
    if index.ndim != len(x_shape):
        raise ShapeError(f"op {op}: Index {list(index.shape)} must have Input's rank "
                         f"{len(x_shape)} (Input {list(x_shape)})")
    for d, (n, m) in enumerate(zip(index.shape, x_shape)):
        if d != axis and n > m:
            raise ShapeError(f"op {op}: Index {list(index.shape)} is bigger than Input "
                             f"{list(x_shape)} on dim {d}")
    grids = xp.ix_(*[xp.arange(n) for n in index.shape]) if index.ndim else ()
    return tuple(wrap_index(xp, index, x_shape[d], op, "Index") if d == axis else grids[d]
                 for d in range(index.ndim))


def _flat(xp, pos, shape):
    """Flat element ids of a fancy-index tuple, broadcast to its common shape."""
    return xp.ravel_multi_index(tuple(xp.broadcast_arrays(*pos)), tuple(shape)).reshape(-1)


def _ufunc_at(xp, ufunc, target, ids, values):
    """``ufunc.at`` on a flat target; numpy's when xp lacks it (cupy has no multiply.at):
    the few multiply reductions run on the host."""
    op = getattr(getattr(xp, ufunc), "at", None)
    if op is None:
        host = np.asarray(_host(target))
        getattr(np, ufunc).at(host, _host(ids), _host(values))
        return xp.asarray(host)
    op(target, ids, values)
    return target




# ------------------------------------------------------------- take_along_axis
def _take_along_axis(xp, attrs, x, index):
    axis = norm_axis(attrs["Axis"], x.ndim, "take_along_axis")
    return x[_along(xp, x.shape, index, axis, "take_along_axis")]


def _take_along_axis_grad(xp, attrs, x, index, dout):
    axis = norm_axis(attrs["Axis"], x.ndim, "take_along_axis")
    dx = xp.zeros(x.size, dtype=dout.dtype)
    ids = _flat(xp, _along(xp, x.shape, index, axis, "take_along_axis"), x.shape)
    xp.add.at(dx, ids, dout.reshape(-1))
    return dx.reshape(x.shape)


def _infer_take(ctx):
    x, index = ctx.input("Input"), ctx.input("Index")
    if len(x.shape) != len(index.shape) or not x.shape:
        ctx.fail(f"Index {list(index.shape)} must have Input's rank (Input {list(x.shape)}, "
                 "rank >= 1)", "Index")
    norm_axis(ctx.attr("Axis"), len(x.shape), "take_along_axis", lambda m: ctx.fail(m, "Input"))
    ctx.set_output("Result", index.shape, like=x)


register("take_along_axis", inputs=["Input", Slot("Index", no_grad=True, doc="int indices")],
         outputs=["Result"], attrs=[Attr("Axis", AttrType.INT, doc="dim Index picks along")],
         infer_shape=_infer_take, kernel=_take_along_axis,
         grad=GradSpec(_take_along_axis_grad, inputs=("Input", "Index"), out_grads=("Result",),
                       in_grads=("Input",)),
         doc="Result[..i..] = Input[..Index[..i..]..] along Axis", category="index")


# -------------------------------------------------------------- put_along_axis
_REDUCES = ("assign", "add", "mul", "multiply", "mean", "amin", "amax")


def _value_view(xp, value, index, op="put_along_axis"):
    """The Value read at each Index position: a Value at least Index's size on every dim
    is read at the same positions (Paddle's kernel walks Index over Value's strides);
    otherwise Value broadcasts to Index. Returns (values, sliced): sliced tells which."""
    if value.ndim == index.ndim and all(v >= n for v, n in zip(value.shape, index.shape)):
        return value[tuple(slice(0, n) for n in index.shape)], True
    try:
        return xp.broadcast_to(value, index.shape), False
    except ValueError:
        raise ShapeError(f"op {op}: Value {list(value.shape)} neither broadcasts to nor "
                         f"covers Index {list(index.shape)}") from None


def _put_plan(xp, attrs, x, index, value):
    axis = norm_axis(attrs["Axis"], x.ndim, "put_along_axis")
    ids = _flat(xp, _along(xp, x.shape, index, axis, "put_along_axis"), x.shape)
    return ids, _value_view(xp, value, index)[0].reshape(-1)


def _put_along_axis(xp, attrs, x, index, value):
    reduce, keep = attrs["Reduce"], attrs["Include_self"]
    ids, vals = _put_plan(xp, attrs, x, index, value.astype(x.dtype, copy=False))
    out = x.reshape(-1).copy()
    if reduce == "assign":
        last, _ = last_writer(xp, ids, x.size)
        out[ids[last]] = vals[last]
        return out.reshape(x.shape)
    hit = xp.zeros(x.size, dtype=bool)
    hit[ids] = True
    if not keep:  # the written elements start from the reduction's identity
        ident = {"add": 0, "mean": 0, "mul": 1, "multiply": 1}.get(reduce)
        if ident is None:  # amin/amax: start from one of the values written there
            out[ids] = vals
        else:
            out[ids] = ident
    ufunc = {"add": "add", "mean": "add", "mul": "multiply", "multiply": "multiply",
             "amin": "minimum", "amax": "maximum"}[reduce]
    out = _ufunc_at(xp, ufunc, out, ids, vals)
    if reduce == "mean":
        count = xp.zeros(x.size, dtype=np.int64)
        xp.add.at(count, ids, 1)
        count = count + (1 if keep else 0)
        div = xp.where(hit, count, 1).astype(out.dtype)
        # Paddle divides in the element type: integer means floor toward zero.
        out = out / div if out.dtype.kind == "f" else (out // div)
    return out.reshape(x.shape)


def _put_along_axis_grad(xp, attrs, x, index, value, result, dout):
    reduce, keep = attrs["Reduce"], attrs["Include_self"]
    ids, vals = _put_plan(xp, attrs, x, index, value)
    g = dout.reshape(-1)
    dx = g.copy() if wanted(attrs, 0) else None
    dv = None
    hit = xp.zeros(x.size, dtype=bool)
    hit[ids] = True
    flat_x, flat_out = x.reshape(-1), result.reshape(-1)
    if reduce == "assign" or (not keep and reduce in ("add", "mean")):
        if dx is not None:
            dx[hit] = 0
    if reduce == "assign":
        last, _ = last_writer(xp, ids, x.size)
        dv = xp.where(last, g[ids], 0)
    elif reduce in ("add", "mean"):
        scale = xp.ones(x.size, dtype=g.dtype)
        if reduce == "mean":
            count = xp.zeros(x.size, dtype=g.dtype)
            xp.add.at(count, ids, 1)
            scale = 1 / xp.where(hit, count + (1 if keep else 0), 1)
            if dx is not None and keep:
                dx = dx * scale
        dv = (g * scale)[ids]
    elif reduce in ("mul", "multiply"):
        # Out = X^keep * prod(values): d/dX = prod(values), d/dv_j = Out / v_j.
        prod = _ufunc_at(xp, "multiply", xp.ones(x.size, dtype=g.dtype), ids, vals)
        if dx is not None:
            dx = xp.where(hit, g * prod if keep else 0, g)
        dv = g[ids] * (prod[ids] * (flat_x[ids] if keep else 1)) / vals
    else:
        # amin/amax: the gradient is shared evenly by every input equal to the result.
        x_ties = hit & (flat_x == flat_out) & keep
        v_ties = vals == flat_out[ids]
        count = x_ties.astype(g.dtype)
        xp.add.at(count, ids, v_ties.astype(g.dtype))
        share = g / xp.where(count > 0, count, 1)
        if dx is not None:
            dx = xp.where(hit, xp.where(x_ties, share, 0), g)
        dv = xp.where(v_ties, share[ids], 0)
    dx = dx.reshape(x.shape) if dx is not None else None
    if wanted(attrs, 1):
        dv = dv.reshape(index.shape)
        if _value_view(xp, value, index)[1]:  # Value's unread elements get 0
            full = xp.zeros(value.shape, dtype=dv.dtype)
            full[tuple(slice(0, n) for n in index.shape)] = dv
            dv = full
        else:  # Value broadcast to Index: sum back over the broadcast dims
            dv = unbroadcast(dv, value.shape)
    else:
        dv = None
    return dx, dv


def _infer_put(ctx):
    x, index = ctx.input("Input"), ctx.input("Index")
    if len(x.shape) != len(index.shape) or not x.shape:
        ctx.fail(f"Index {list(index.shape)} must have Input's rank (Input {list(x.shape)}, "
                 "rank >= 1)", "Index")
    norm_axis(ctx.attr("Axis"), len(x.shape), "put_along_axis", lambda m: ctx.fail(m, "Input"))
    ctx.set_output("Result", x.shape, like=x)


register("put_along_axis",
         inputs=["Input", Slot("Index", no_grad=True, doc="int indices"),
                 Slot("Value", doc="values, broadcast to Index")],
         outputs=["Result"],
         attrs=[Attr("Axis", AttrType.INT, doc="dim Index writes along"),
                Attr("Reduce", AttrType.STRING, "assign", one_of(*_REDUCES),
                     doc="how a written element combines: assign, add, mul, mean, amin, amax"),
                Attr("Include_self", AttrType.BOOLEAN, True,
                     doc="Input's own element takes part in the reduction")],
         infer_shape=_infer_put, kernel=_put_along_axis,
         grad=GradSpec(_put_along_axis_grad, inputs=("Input", "Index", "Value"),
                       outputs=("Result",), out_grads=("Result",), in_grads=("Input", "Value")),
         doc="Result = Input with Value written (or reduced) at Index along Axis",
         category="index")
