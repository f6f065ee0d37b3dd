"""Norms and log-sum-exp: p_norm (paddle.linalg.norm / F.normalize), norm (the
l2-normalize op: Out = X / Norm), frobenius_norm, squared_l2_norm (gradient clipping by
global norm) and logsumexp.

Gradients use Paddle 3.3.1's formulas (checked against it): p_norm's is
dOut * sign(X) * |X|^(p-1) / (Out^(p-1) + epsilon), zero for porder 0, and for +-inf
dOut * sign(X) to every element whose |X| equals the norm (ties each get all of it);
frobenius_norm's is p_norm's with p = 2 and epsilon 1e-12 (as in Paddle); logsumexp's
dOut * exp(X - Out). logsumexp of all -inf is -inf here (Paddle 3.3.1 gives NaN).
"""
import math

import numpy as np

from ..errors import ShapeError
from ..ir.registry import REQUIRED, Attr, AttrType, GradSpec, Slot, register


def _axes(op, dims, rank, reduce_all):
    """Reduced dims, normalised and sorted: all of them for reduce_all, empty ``dims`` or
    a 0-D input (Paddle's rule for logsumexp and frobenius_norm)."""
    if reduce_all or not dims or rank == 0:
        return tuple(range(rank))
    out = set()
    for d in dims:
        if not -rank <= d < rank:
            raise ShapeError(f"op {op}: axis {d} is out of range for rank {rank}")
        out.add(d % rank)
    return tuple(sorted(out))


def _reduced_shape(shape, axes, keep):
    return [1 if i in axes else n for i, n in enumerate(shape)] if keep else [
        n for i, n in enumerate(shape) if i not in axes]


def _kept(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _infer_reduction(op, dims_attr, keep_attr):
    def infer(ctx):
        x = ctx.input("X")
        try:
            axes = _axes(op, ctx.attr(dims_attr), len(x.shape), ctx.attr("reduce_all"))
        except ShapeError as exc:
            ctx.fail(f"X {list(x.shape)}: {exc}".replace(f"op {op}: ", ""), slot="X")
        ctx.set_output("Out", _reduced_shape(x.shape, axes, ctx.attr(keep_attr)), like=x)
    return infer


# ------------------------------------------------------------------- logsumexp
def _logsumexp(xp, attrs, x):
    axes = _axes("logsumexp", attrs["axis"], x.ndim, attrs["reduce_all"])
    if any(x.shape[a] == 0 for a in axes):  # an empty sum: log(0) = -inf (as Paddle)
        shape = _reduced_shape(x.shape, axes, attrs["keepdim"])
        return xp.full(shape, -np.inf, dtype=x.dtype)
    m = x.max(axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # all -inf (or an inf): no shift
    s = xp.exp(x - m).sum(axis=axes, keepdims=True)
    out = xp.log(s) + m
    if not attrs["keepdim"]:
        out = out.reshape(_reduced_shape(x.shape, axes, False))
    return xp.asarray(out)


def _logsumexp_grad(xp, attrs, x, out, dout):
    axes = _axes("logsumexp", attrs["axis"], x.ndim, attrs["reduce_all"])
    k = _kept(x.shape, axes)
    return dout.reshape(k) * xp.exp(x - out.reshape(k))


register(
    "logsumexp", inputs=["X"], outputs=["Out"],
    attrs=[Attr("axis", AttrType.INTS, [], doc="dims reduced (empty: all)"),
           Attr("keepdim", AttrType.BOOLEAN, False, doc="keep reduced dims with size 1"),
           Attr("reduce_all", AttrType.BOOLEAN, False, doc="reduce every dim")],
    infer_shape=_infer_reduction("logsumexp", "axis", "keepdim"), kernel=_logsumexp,
    grad=GradSpec(_logsumexp_grad, inputs=("X",), outputs=("Out",)), share_lod=(),
    doc="Out = log(sum(exp(X))) over axis, computed without overflow", category="math")


# ---------------------------------------------------------------------- p_norm
def _p_axis(attrs, x):
    """(axes reduced, keep shape) of p_norm; asvector reduces every dim."""
    if attrs["asvector"] or x.ndim == 0:
        return tuple(range(x.ndim))
    axis = attrs["axis"]
    if not -x.ndim <= axis < x.ndim:
        raise ShapeError(f"op p_norm: axis {axis} is out of range for X {list(x.shape)}")
    return (axis % x.ndim,)


def _p_norm(xp, attrs, x):
    axes, p = _p_axis(attrs, x), attrs["porder"]
    a = xp.abs(x)
    if p == 0:
        out = (x != 0).sum(axis=axes, keepdims=True).astype(x.dtype)
    elif p == math.inf:
        out = a.max(axis=axes, keepdims=True)
    elif p == -math.inf:
        out = a.min(axis=axes, keepdims=True)
    else:
        # Paddle's 1 / porder is a float32 division (1/3 -> 0.3333333432674408)
        inv = float(np.float32(1.0) / np.float32(p))
        out = (a ** x.dtype.type(p)).sum(axis=axes, keepdims=True) ** x.dtype.type(inv)
    return xp.asarray(out.reshape(_p_out_shape(attrs, x.shape)))


def _p_out_shape(attrs, shape):
    if attrs["asvector"]:
        return [1] * len(shape) if attrs["keepdim"] else []
    axis = attrs["axis"] % len(shape) if shape else 0
    return _reduced_shape(shape, (axis,), attrs["keepdim"])


def _p_norm_grad(xp, attrs, x, out, dout):
    axes, p = _p_axis(attrs, x), attrs["porder"]
    k = _kept(x.shape, axes)
    norm, g = out.reshape(k), dout.reshape(k)
    if p == 0:
        return xp.zeros_like(x)
    if p in (math.inf, -math.inf):
        return xp.where(xp.abs(x) == norm, xp.sign(x) * g, xp.zeros_like(x))
    q = x.dtype.type(p - 1.0)
    eps = x.dtype.type(np.float32(attrs["epsilon"]))
    return xp.abs(x) ** q / (norm ** q + eps) * g * xp.sign(x)


def _infer_p_norm(ctx):
    x = ctx.input("X")
    rank, axis = len(x.shape), ctx.attr("axis")
    if not ctx.attr("asvector") and rank and not -rank <= axis < rank:
        ctx.fail(f"axis {axis} is out of range for X {list(x.shape)}", slot="X")
    ctx.set_output("Out", _p_out_shape(ctx.attrs, list(x.shape)), like=x)


register(
    "p_norm", inputs=["X"], outputs=["Out"],
    attrs=[Attr("porder", AttrType.FLOAT, 2.0, doc="p (0: count of nonzeros; inf, -inf)"),
           Attr("axis", AttrType.INT, -1, doc="the dim reduced"),
           Attr("epsilon", AttrType.FLOAT, 1e-12, doc="keeps the gradient finite at norm 0"),
           Attr("keepdim", AttrType.BOOLEAN, False, doc="keep the reduced dim with size 1"),
           Attr("asvector", AttrType.BOOLEAN, False, doc="the norm of all of X as one vector")],
    infer_shape=_infer_p_norm, kernel=_p_norm,
    grad=GradSpec(_p_norm_grad, inputs=("X",), outputs=("Out",)), share_lod=(),
    doc="Out = (sum |X|^p)^(1/p) along axis (p-norm)", category="math")


# ------------------------------------------------------------------------ norm
def _norm_axis(attrs, x):
    axis = attrs["axis"]
    if not -x.ndim <= axis < x.ndim:
        raise ShapeError(f"op norm: axis {axis} is out of range for X {list(x.shape)}")
    return axis % x.ndim


def _norm(xp, attrs, x):
    axis = _norm_axis(attrs, x)
    eps = x.dtype.type(np.float32(attrs["epsilon"]))
    norm = xp.sqrt((x * x).sum(axis=axis, keepdims=True) + eps)
    return x / norm, norm


def _norm_grad(xp, attrs, x, norm, dout):
    """dX = (dOut - X * sum(X * dOut) / Norm^2) / Norm (Paddle's NormGradKernel)."""
    axis = _norm_axis(attrs, x)
    return (dout - x * (x * dout).sum(axis=axis, keepdims=True) / (norm * norm)) / norm


def _infer_norm(ctx):
    x = ctx.input("X")
    rank, axis = len(x.shape), ctx.attr("axis")
    if not -rank <= axis < rank:
        ctx.fail(f"axis {axis} is out of range for X {list(x.shape)}", slot="X")
    ctx.set_output("Out", x.shape, like=x)
    shape = list(x.shape)
    shape[axis % rank] = 1
    ctx.set_output("Norm", shape, like=x)


register(
    "norm", inputs=["X"], outputs=["Out", Slot("Norm", intermediate=True,
                                               doc="sqrt(sum(X^2, axis) + epsilon)")],
    attrs=[Attr("axis", AttrType.INT, REQUIRED, doc="the dim normalised"),
           Attr("epsilon", AttrType.FLOAT, 1e-10, doc="added to sum(X^2) under the root"),
           Attr("is_test", AttrType.BOOLEAN, False, doc="inference (Norm is still computed)")],
    infer_shape=_infer_norm, kernel=_norm,
    grad=GradSpec(_norm_grad, inputs=("X",), outputs=("Norm",)),
    doc="Out = X / sqrt(sum(X^2, axis) + epsilon) (l2-normalize); Norm the divisor",
    category="norm")


# -------------------------------------------------------------- frobenius_norm
def _frobenius(xp, attrs, x):
    axes = _axes("frobenius_norm", attrs["dim"], x.ndim, attrs["reduce_all"])
    # in_dtype/out_dtype are declared but unread: Paddle 3.3.1's kernel keeps X's dtype
    return xp.asarray(xp.sqrt((x * x).sum(axis=axes, keepdims=attrs["keep_dim"])))


_FRO_EPS = float(np.float32(1e-12))


def _frobenius_grad(xp, attrs, x, out, dout):
    """p_norm's p = 2 formula, as Paddle 3.3.1's kernel: |X| / (Out + 1e-12) * dOut *
    sign(X), in that order (the epsilon shows at 1e-12 relative, and makes a zero norm's
    gradient 0)."""
    axes = _axes("frobenius_norm", attrs["dim"], x.ndim, attrs["reduce_all"])
    k = _kept(x.shape, axes)
    g = xp.abs(x) / (out.reshape(k) + x.dtype.type(_FRO_EPS)) * dout.reshape(k) * xp.sign(x)
    return g.astype(x.dtype, copy=False)


register(
    "frobenius_norm", inputs=["X"], outputs=["Out"],
    attrs=[Attr("dim", AttrType.INTS, [0], doc="dims reduced (empty: all)"),
           Attr("keep_dim", AttrType.BOOLEAN, False, doc="keep reduced dims with size 1"),
           Attr("reduce_all", AttrType.BOOLEAN, False, doc="reduce every dim"),
           Attr("in_dtype", AttrType.INT, -1, doc="unread (Paddle's kernel keeps X's dtype)"),
           Attr("out_dtype", AttrType.INT, -1, doc="unread (Paddle's kernel keeps X's dtype)")],
    infer_shape=_infer_reduction("frobenius_norm", "dim", "keep_dim"), kernel=_frobenius,
    grad=GradSpec(_frobenius_grad, inputs=("X",), outputs=("Out",)), share_lod=(),
    doc="Out = sqrt(sum(X^2)) over dim (Frobenius norm)", category="math")


# ------------------------------------------------------------- squared_l2_norm
def _squared_l2_norm_grad(xp, attrs, x, dout):
    return x * (dout.reshape(()) * 2)


register(
    "squared_l2_norm", inputs=["X"], outputs=["Out"],
    infer_shape=lambda ctx: ctx.set_output("Out", [1], like=ctx.input("X")),
    kernel=lambda xp, attrs, x: (x * x).sum().reshape(1),
    grad=GradSpec(_squared_l2_norm_grad, inputs=("X",)), share_lod=(),
    doc="Out = sum(X^2), shape [1] (ClipGradByGlobalNorm)", category="math")
