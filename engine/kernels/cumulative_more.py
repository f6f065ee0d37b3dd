"""Running reductions beyond cumsum: cumprod, logcumsumexp, cummax and cummin.

The scans that numpy's cumsum/cumprod do not cover (log-add-exp, max/min with their
indices) step along the scanned dim with one vectorised operation per position: a
loop over that dim's length, never over elements. Semantics follow Paddle 3.3.1
(checked against it): an exclusive logcumsumexp starts from the dtype's lowest finite
value, not -inf; cummax/cummin take the later index on ties (>=, <=) and stick at the
first NaN; cumprod's gradient is exact with zeros in X.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import REQUIRED, Attr, AttrType, GradSpec, one_of, register


def _axis(op, axis, ndim):
    rank = max(ndim, 1)
    if not -rank <= axis < rank:
        raise ShapeError(f"op {op}: axis {axis} is out of range for rank {ndim}")
    return axis % rank


def _front(x, axis):
    """X with ``axis`` moved to the front (a 0-D X becomes [1])."""
    return x.reshape(1) if x.ndim == 0 else x.swapaxes(0, axis)


def _back(xp, v, axis, like):
    """Undo ``_front``: a fresh contiguous array of ``like``'s shape."""
    if like.ndim == 0:
        return v.reshape(()).copy()
    return xp.ascontiguousarray(v.swapaxes(0, axis))


def _shift(xp, v, fill):
    """Exclusive scan input: [fill, v[0], ..., v[n-2]] along dim 0."""
    head = xp.full((1,) + v.shape[1:], fill, dtype=v.dtype)
    return xp.concatenate([head, v[:-1]], axis=0)


def _infer_same(op, axis_attr):
    def infer(ctx):
        x = ctx.input("X")
        rank = len(x.shape)
        if not -max(rank, 1) <= ctx.attr(axis_attr) < max(rank, 1):
            ctx.fail(f"{axis_attr} {ctx.attr(axis_attr)} is out of range for X {list(x.shape)}",
                     slot="X")
        if op == "logcumsumexp" and ctx.attr("flatten"):
            if ctx.attr("axis") not in (-1, 0):
                ctx.fail(f"with flatten, axis must be 0 or -1, got {ctx.attr('axis')}")
            n = 1
            for d in x.shape:
                n = -1 if d < 0 or n < 0 else n * d
            ctx.set_output("Out", [n], like=x)
            return
        ctx.set_output("Out", x.shape, like=x)
    return infer


# --------------------------------------------------------------------- cumprod
def _cumprod_front(xp, v, exclusive, reverse):
    if reverse:
        v = v[::-1]
    out = xp.cumprod(_shift(xp, v, 1) if exclusive else v, axis=0)
    return out[::-1] if reverse else out


def _cumprod(xp, attrs, x):
    axis = _axis("cumprod", attrs["dim"], x.ndim)
    out = _cumprod_front(xp, _front(x, axis), attrs["exclusive"], attrs["reverse"])
    return _back(xp, out, axis, x)


def _cumprod_grad(xp, attrs, x, out, dout):
    """dX_i = sum_{j >= i} dOut_j * prod_{k <= j, k != i} X_k, built per position i
    (exact with zeros in X, where dividing Out by X would fail)."""
    axis = _axis("cumprod", attrs["dim"], x.ndim)
    v, g = _front(x, axis), _front(dout, axis)
    if attrs["reverse"]:
        v, g = v[::-1], g[::-1]
    if attrs["exclusive"]:  # Out = cumprod([1, X_0, .., X_{n-2}]): X_{n-1} takes no part
        v = v[:-1]
        g = g[1:]
    n = v.shape[0]
    dx = xp.zeros(v.shape if not attrs["exclusive"] else (n + 1,) + v.shape[1:], dtype=x.dtype)
    before = xp.cumprod(_shift(xp, v, 1), axis=0) if n else v
    for i in range(n):
        dx[i] = before[i] * (g[i:] * _tail(xp, v, i)).sum(axis=0)
    if attrs["reverse"]:
        dx = dx[::-1]
    return _back(xp, dx, axis, x)


def _tail(xp, v, i):
    """[1, X_{i+1}, X_{i+1} X_{i+2}, ...]: prod_{i < k <= j} X_k for j = i .. n-1."""
    return xp.concatenate([xp.ones((1,) + v.shape[1:], dtype=v.dtype),
                           xp.cumprod(v[i + 1:], axis=0)], axis=0)


_EXCL = Attr("exclusive", AttrType.BOOLEAN, False, doc="leave X_i out of position i")
_REV = Attr("reverse", AttrType.BOOLEAN, False, doc="scan from the last position")

register(
    "cumprod", inputs=["X"], outputs=["Out"],
    attrs=[Attr("dim", AttrType.INT, REQUIRED, doc="the dim scanned"), _EXCL, _REV],
    infer_shape=_infer_same("cumprod", "dim"), kernel=_cumprod,
    grad=GradSpec(_cumprod_grad, inputs=("X",), outputs=("Out",)),
    doc="Out_i = X_0 * X_1 * ... * X_i along dim", category="math")


# ---------------------------------------------------------------- logcumsumexp
def _lcse_front(xp, v, exclusive, reverse):
    """log(cumsum(exp(v))) along dim 0, one logaddexp per position (stable)."""
    if reverse:
        v = v[::-1]
    out = xp.empty_like(v)
    if v.shape[0]:
        lowest = np.finfo(v.dtype).min
        acc = xp.full(v.shape[1:], lowest, dtype=v.dtype) if exclusive else v[0]
        out[0] = acc
        for i in range(1, v.shape[0]):
            acc = xp.logaddexp(acc, v[i - 1] if exclusive else v[i])
            out[i] = acc
    return out[::-1] if reverse else out


def _lcse_view(attrs, x):
    if attrs["flatten"]:
        if attrs["axis"] not in (-1, 0):
            raise ShapeError(f"op logcumsumexp: with flatten, axis must be 0 or -1, got "
                             f"{attrs['axis']}")
        return x.reshape(-1), 0
    return x, _axis("logcumsumexp", attrs["axis"], x.ndim)


def _logcumsumexp(xp, attrs, x):
    v, axis = _lcse_view(attrs, x)
    out = _lcse_front(xp, _front(v, axis), attrs["exclusive"], attrs["reverse"])
    return _back(xp, out, axis, v)


def _logcumsumexp_grad(xp, attrs, x, out, dout):
    """Paddle's: dX = exp(X + S(log dOut+ - Out)) - exp(X + S(log dOut- - Out)), S the
    same scan run the other way; the sign split keeps every log finite."""
    v, axis = _lcse_view(attrs, x)
    o, g = _front(out.reshape(v.shape), axis), _front(dout.reshape(v.shape), axis)
    xv = _front(v, axis)
    ninf = v.dtype.type(-np.inf)
    with np.errstate(divide="ignore"):
        pos = xp.where(g > 0, xp.log(xp.where(g > 0, g, 1)), ninf) - o
        neg = xp.where(g < 0, xp.log(xp.where(g < 0, -g, 1)), ninf) - o
    back = not attrs["reverse"]
    dx = (xp.exp(xv + _lcse_front(xp, pos, attrs["exclusive"], back))
          - xp.exp(xv + _lcse_front(xp, neg, attrs["exclusive"], back)))
    return _back(xp, dx, axis, v).reshape(x.shape)


register(
    "logcumsumexp", inputs=["X"], outputs=["Out"],
    attrs=[Attr("axis", AttrType.INT, -1, doc="the dim scanned"),
           Attr("flatten", AttrType.BOOLEAN, False, doc="scan X flattened to 1-D"),
           _EXCL, _REV],
    infer_shape=_infer_same("logcumsumexp", "axis"), kernel=_logcumsumexp,
    grad=GradSpec(_logcumsumexp_grad, inputs=("X",), outputs=("Out",)),
    doc="Out_i = log(exp(X_0) + ... + exp(X_i)) along axis", category="math")


# ----------------------------------------------------------------- cummax/min
def _cum_extreme(greater):
    def kernel(xp, attrs, x):
        op = "cummax" if greater else "cummin"
        axis = _axis(op, attrs["axis"], x.ndim)
        v = _front(x, axis)
        out, idx = xp.empty_like(v), xp.empty(v.shape, dtype=to_numpy_dtype(attrs["dtype"]))
        if v.shape[0]:
            best, at = v[0].copy(), xp.zeros(v.shape[1:], dtype=idx.dtype)
            out[0], idx[0] = best, at
            for i in range(1, v.shape[0]):
                # Paddle: take X_i if it is NaN, or if the best so far is not and
                # X_i >= best (<= for cummin): ties move the index forward
                cmp = v[i] >= best if greater else v[i] <= best
                take = xp.isnan(v[i]) | (~xp.isnan(best) & cmp) if v.dtype.kind == "f" else cmp
                best = xp.where(take, v[i], best)
                at = xp.where(take, idx.dtype.type(i), at)
                out[i], idx[i] = best, at
        return (_back(xp, out, axis, x),
                _back(xp, idx, axis, x))
    return kernel


def _cum_extreme_grad(xp, attrs, x, indices, dout):
    """dOut_j goes to X at Indices_j: a scatter-add along the scanned dim."""
    axis = _axis("cummax", attrs["axis"], x.ndim)
    g = xp.ascontiguousarray(_front(dout, axis))
    idx = xp.ascontiguousarray(_front(indices, axis)).astype(np.int64)
    rest = int(np.prod(g.shape[1:], dtype=np.int64))
    flat = xp.zeros(g.size, dtype=dout.dtype)
    where = idx.reshape(g.shape[0], rest) * rest + xp.arange(rest, dtype=np.int64)
    xp.add.at(flat, where.reshape(-1), g.reshape(-1))
    return _back(xp, flat.reshape(g.shape), axis, x)


def _infer_cum_extreme(ctx):
    x = ctx.input("x")
    rank = len(x.shape)
    if not -max(rank, 1) <= ctx.attr("axis") < max(rank, 1):
        ctx.fail(f"axis {ctx.attr('axis')} is out of range for x {list(x.shape)}", slot="x")
    ctx.set_output("out", x.shape, like=x)
    ctx.set_output("indices", x.shape, dtype=ctx.attr("dtype"), like=x)


for _op, _greater in (("cummax", True), ("cummin", False)):
    register(
        _op, inputs=["x"], outputs=["out", "indices"],
        attrs=[Attr("axis", AttrType.INT, -1, doc="the dim scanned"),
               Attr("dtype", AttrType.INT, int(pb.VarType.INT64),
                    checker=one_of(int(pb.VarType.INT32), int(pb.VarType.INT64)),
                    doc="VarType of indices: INT32 (2) or INT64 (3)")],
        infer_shape=_infer_cum_extreme, kernel=_cum_extreme(_greater),
        grad=GradSpec(_cum_extreme_grad, inputs=("x",), outputs=("indices",),
                      out_grads=("out",), in_grads=("x",)),
        share_lod=(("x", "out"),),
        doc=f"out_i = {_op[3:]}(x_0 .. x_i) along axis; indices: where it was (the later on ties)",
        category="math")
