"""Scatter-style index ops: ``scatter``, ``scatter_nd_add``, ``index_sample`` and
``index_add``, with their ``_grad`` ops (``take_along_axis`` and ``put_along_axis`` are in
along_axis.py, which shares the index helpers here).

Slots, attributes and gradient slots are Paddle 3.3.1's (its grad ops read exactly the
slots listed in each GradSpec). Index inputs are never differentiated. A negative index
counts from the end of its dim; one outside [-dim, dim) is a ShapeError naming op and slot.
Where several entries write one element, "assign"-style ops keep the last writer (Paddle's
CPU kernels loop in order); gradients follow the mathematics of that: only the last
writer of an element receives its gradient.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register, wanted
from ._util import checked_axis


def wrap_index(xp, index, dim, op, slot):
    """``index`` as int64 with negatives wrapped; out-of-range entries raise."""
    if index.size:
        low, high = int(index.min()), int(index.max())
        if low < -dim or high >= dim:
            raise ShapeError(f"op {op}: {slot} holds {low if low < -dim else high}, outside "
                             f"[-{dim}, {dim}) for a dim of size {dim}")
    index = index.astype(np.int64)
    return xp.where(index < 0, index + dim, index)


def last_writer(xp, ids, size):
    """For each of ``ids`` (flat targets, in write order): True for the last write of its
    target. Returns (mask, winner per target, -1 where none)."""
    order = xp.arange(ids.size, dtype=np.int64)
    winner = xp.full(size, -1, dtype=np.int64)
    xp.maximum.at(winner, ids, order)
    return winner[ids] == order, winner


# --------------------------------------------------------------------- scatter
def _ids(xp, ids, dim, op="scatter", slot="Ids"):
    """Paddle's scatter takes 0-d, 1-D or [N, 1] Ids."""
    if ids.ndim == 2 and ids.shape[1] == 1:
        ids = ids.reshape(-1)
    if ids.ndim > 1:
        raise ShapeError(f"op {op}: {slot} must be 0-d, 1-D or [N, 1], got {list(ids.shape)}")
    return wrap_index(xp, ids.reshape(-1), dim, op, slot)


def _rows(ids, updates, x, op="scatter"):
    want = (ids.size,) + tuple(x.shape[1:])
    if updates.size != int(np.prod(want)):
        raise ShapeError(f"op {op}: Updates {list(updates.shape)} must be {list(want)} "
                         f"(one X row per id; X {list(x.shape)})")
    return updates.reshape(want)


def _scatter(xp, attrs, x, ids, updates):
    ids = _ids(xp, ids, x.shape[0])
    rows = _rows(ids, updates.astype(x.dtype, copy=False), x)
    out = x.copy()
    if attrs["overwrite"]:
        last, _ = last_writer(xp, ids, x.shape[0])
        out[ids[last]] = rows[last]
    else:  # the indexed rows become the sum of their updates (X's row left out)
        out[ids] = 0
        xp.add.at(out, ids, rows)
    return out


def _scatter_grad(xp, attrs, ids, updates, dout):
    ids = _ids(xp, ids, dout.shape[0])
    dx = du = None
    if wanted(attrs, 0):
        dx = dout.copy()
        dx[ids] = 0
    if wanted(attrs, 1):
        du = dout[ids]
        if attrs["overwrite"]:
            last, _ = last_writer(xp, ids, dout.shape[0])
            du = du * last.reshape((-1,) + (1,) * (du.ndim - 1))
        du = du.reshape(updates.shape)
    return dx, du


def _infer_scatter(ctx):
    x, ids = ctx.input("X"), ctx.input("Ids")
    if len(ids.shape) > 2 or (len(ids.shape) == 2 and ids.shape[1] not in (1, -1)):
        ctx.fail(f"Ids must be 0-d, 1-D or [N, 1], got {list(ids.shape)}", "Ids")
    if not x.shape:
        ctx.fail("X must have at least one dim", "X")
    ctx.set_output("Out", x.shape, like=x)


register("scatter", inputs=["X", Slot("Ids", no_grad=True, doc="row ids"), "Updates"],
         outputs=["Out"],
         attrs=[Attr("overwrite", AttrType.BOOLEAN, True,
                     doc="True: rows are replaced (last id wins); False: rows become the sum "
                         "of their updates")],
         infer_shape=_infer_scatter, kernel=_scatter,
         grad=GradSpec(_scatter_grad, inputs=("Ids", "Updates"), in_grads=("X", "Updates")),
         doc="Out = X with rows Ids replaced by (or summed from) Updates", category="index")


# -------------------------------------------------------------- scatter_nd_add
def _nd(xp, x_shape, index, op="scatter_nd_add"):
    k = index.shape[-1] if index.ndim else 0
    if index.ndim == 0 or k > len(x_shape):
        raise ShapeError(f"op {op}: Index {list(index.shape)}'s last dim must be <= X's rank "
                         f"{len(x_shape)} (X {list(x_shape)})")
    flat = index.reshape(-1, k)
    return tuple(wrap_index(xp, flat[:, j], x_shape[j], op, "Index") for j in range(k)), k


def _nd_updates(updates, index, x_shape, k):
    want = tuple(index.shape[:-1]) + tuple(x_shape[k:])
    if tuple(updates.shape) != want:
        raise ShapeError(f"op scatter_nd_add: Updates {list(updates.shape)} must be "
                         f"Index.shape[:-1] + X.shape[{k}:] = {list(want)}")
    n = int(np.prod(index.shape[:-1]))
    return updates.reshape((n,) + tuple(x_shape[k:]))


def _scatter_nd_add(xp, attrs, x, index, updates):
    parts, k = _nd(xp, x.shape, index)
    rows = _nd_updates(updates.astype(x.dtype, copy=False), index, x.shape, k)
    out = x.copy()
    if k == 0:  # an empty last dim adds every update to the whole X
        return out + rows.sum(axis=0)
    xp.add.at(out, parts, rows)
    return out


def _scatter_nd_add_grad(xp, attrs, index, updates, dout):
    parts, k = _nd(xp, dout.shape, index)
    dx = dout.copy() if wanted(attrs, 0) else None
    du = None
    if wanted(attrs, 1):
        lead = tuple(index.shape[:-1])
        du = (xp.broadcast_to(dout, lead + tuple(dout.shape)) if k == 0 else
              dout[parts].reshape(lead + tuple(dout.shape[k:])))
        du = xp.ascontiguousarray(du)
    return dx, du


def _infer_scatter_nd_add(ctx):
    x, index, upd = ctx.input("X"), ctx.input("Index"), ctx.input("Updates")
    if not index.shape:
        ctx.fail("Index must have at least one dim", "Index")
    k = index.shape[-1]
    if k > len(x.shape):
        ctx.fail(f"Index's last dim {k} exceeds X's rank {len(x.shape)}", "Index")
    if k >= 0:
        want = list(index.shape[:-1]) + list(x.shape[k:])
        got = list(upd.shape)
        if len(got) != len(want) or any(a != b and a >= 0 and b >= 0 for a, b in zip(got, want)):
            ctx.fail(f"Updates {got} must be Index.shape[:-1] + X.shape[{k}:] = {want}",
                     "Updates")
    ctx.set_output("Out", x.shape, like=x)


register("scatter_nd_add",
         inputs=["X", Slot("Index", no_grad=True, doc="int [..., k] indices"), "Updates"],
         outputs=["Out"], infer_shape=_infer_scatter_nd_add, kernel=_scatter_nd_add,
         grad=GradSpec(_scatter_nd_add_grad, inputs=("Index", "Updates"),
                       in_grads=("X", "Updates")),
         doc="Out = X; Out[Index[i, :]] += Updates[i] (repeats accumulate)", category="index")


# ---------------------------------------------------------------- index_sample
def _index_sample_pos(xp, x, index):
    if x.ndim != 2 or index.ndim != 2 or index.shape[0] != x.shape[0]:
        raise ShapeError(f"op index_sample: X {list(x.shape)} and Index {list(index.shape)} "
                         "must both be 2-D with the same rows")
    rows = xp.arange(x.shape[0])[:, None]
    if index.size and int(index.min()) < 0:  # Paddle 3.3.1 refuses them here (no wrap)
        raise ShapeError(f"op index_sample: Index holds {int(index.min())}; it must be in "
                         f"[0, {x.shape[1]})")
    return rows, wrap_index(xp, index, x.shape[1], "index_sample", "Index")


def _index_sample(xp, attrs, x, index):
    return x[_index_sample_pos(xp, x, index)]


def _index_sample_grad(xp, attrs, x, index, dout):
    rows, cols = _index_sample_pos(xp, x, index)
    dx = xp.zeros(x.shape, dtype=dout.dtype)
    xp.add.at(dx, (xp.broadcast_to(rows, cols.shape), cols), dout)
    return dx


def _infer_index_sample(ctx):
    x, index = ctx.input("X"), ctx.input("Index")
    if len(x.shape) != 2 or len(index.shape) != 2:
        ctx.fail(f"X {list(x.shape)} and Index {list(index.shape)} must both be 2-D", "Index")
    if x.shape[0] >= 0 and index.shape[0] >= 0 and x.shape[0] != index.shape[0]:
        ctx.fail(f"Index {list(index.shape)} must have X's {x.shape[0]} rows", "Index")
    ctx.set_output("Out", index.shape, like=x)


register("index_sample", inputs=["X", Slot("Index", no_grad=True, doc="int [N, K] columns")],
         outputs=["Out"], infer_shape=_infer_index_sample, kernel=_index_sample,
         grad=GradSpec(_index_sample_grad, inputs=("X", "Index")),
         doc="Out[i, j] = X[i, Index[i, j]]", category="index")


# ------------------------------------------------------------------- index_add
def _index_add_plan(xp, attrs, x, index, add):
    axis = checked_axis(attrs["axis"], x.ndim, "index_add")
    if index.ndim != 1:
        raise ShapeError(f"op index_add: Index must be 1-D, got {list(index.shape)}")
    want = tuple(x.shape[:axis]) + (index.size,) + tuple(x.shape[axis + 1:])
    if tuple(add.shape) != want:
        raise ShapeError(f"op index_add: AddValue {list(add.shape)} must be {list(want)} "
                         f"(X {list(x.shape)} with Index's {index.size} entries on axis {axis})")
    return axis, wrap_index(xp, index, x.shape[axis], "index_add", "Index")


def _index_add(xp, attrs, x, index, add):
    axis, index = _index_add_plan(xp, attrs, x, index, add)
    out = xp.moveaxis(x.copy(), axis, 0)  # a view: add.at on whole leading slices
    xp.add.at(out, index, xp.moveaxis(add.astype(x.dtype, copy=False), axis, 0))
    return xp.ascontiguousarray(xp.moveaxis(out, 0, axis))


def _index_add_grad(xp, attrs, index, add, dout):
    axis, index = _index_add_plan(xp, attrs, dout, index, add)
    dx = dout.copy() if wanted(attrs, 0) else None
    da = xp.take(dout, index, axis=axis) if wanted(attrs, 1) else None
    return dx, da


def _infer_index_add(ctx):
    x, index, add = ctx.input("X"), ctx.input("Index"), ctx.input("AddValue")
    axis = checked_axis(ctx.attr("axis"), len(x.shape), "index_add", lambda m: ctx.fail(m, "X"))
    if len(index.shape) != 1:
        ctx.fail(f"Index must be 1-D, got {list(index.shape)}", "Index")
    if len(add.shape) != len(x.shape):
        ctx.fail(f"AddValue {list(add.shape)} must have X's rank (X {list(x.shape)})",
                 "AddValue")
    ctx.set_output("Out", x.shape, like=x)


register("index_add",
         inputs=["X", Slot("Index", no_grad=True, doc="1-D int indices"), "AddValue"],
         outputs=["Out"], attrs=[Attr("axis", AttrType.INT, 0, doc="dim Index adds along")],
         infer_shape=_infer_index_add, kernel=_index_add,
         grad=GradSpec(_index_add_grad, inputs=("Index", "AddValue"),
                       in_grads=("X", "AddValue")),
         doc="Out = X; Out[..., Index[i], ...] += AddValue[..., i, ...] along axis",
         category="index")
