"""Matrix products: ``mul`` (Fluid's flatten-then-matmul) and ``matmul_v2``.

Both kernels are a reshape (a view for contiguous inputs) and one ``@``; the grad
kernels use ``@`` on transposed views, so BLAS reads the operands in place, in the
operand order OpenBLAS runs fastest (``_a_bt``).
"""
from math import prod

from ..ir.registry import OUTPUTS_WANTED, Attr, AttrType, GradSpec, at_least, register, wanted
from ._util import broadcast_dims, numel, unbroadcast, written


# Measured with OpenBLAS at one thread (float32): ``g @ W.T`` with few rows in g (a
# recurrent step: 32 x 512 against a 128 x 512 W) runs 1.25-1.35x slower than the same
# product taken as ``(W @ g.T).T``; with many rows (>= 256) the plain form wins by ~1.2x.
# (``X.T @ g`` stays as it is: the ``(g.T @ X).T`` form is a little faster alone but hands
# out a transposed view, and summing those over the frames of a recurrent group is slow.)
SMALL_M = 64


def _a_bt(xp, a, b):
    """a @ b.T for 2-D a [m, n], b [k, n] (dX = dOut @ W^T), contiguous."""
    if a.shape[0] <= SMALL_M:
        return xp.ascontiguousarray((b @ a.T).T)
    return a @ b.T


# ------------------------------------------------------------------------ mul
def _flat2d(shape, num_col_dims):
    """(rows, cols) of ``shape`` flattened at ``num_col_dims`` (static shapes)."""
    return prod(shape[:num_col_dims]), prod(shape[num_col_dims:])


def _mul(xp, attrs, x, y):
    """Out = flatten(X) @ flatten(Y), reshaped to X.shape[:xn] + Y.shape[yn:]."""
    xn, yn = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
    x2 = x if x.ndim == 2 and xn == 1 else x.reshape(_flat2d(x.shape, xn))
    y2 = y if y.ndim == 2 and yn == 1 else y.reshape(_flat2d(y.shape, yn))
    out = x2 @ y2
    if x.ndim == 2 and y.ndim == 2 and xn == 1 and yn == 1:
        return out
    return out.reshape(x.shape[:xn] + y.shape[yn:])


def _mul_grad(xp, attrs, x, y, dout):
    """dX = dOut @ Y^T, dY = X^T @ dOut on the flattened 2-D views."""
    xn, yn = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
    x2 = x.reshape(_flat2d(x.shape, xn))
    y2 = y.reshape(_flat2d(y.shape, yn))
    d2 = dout.reshape(x2.shape[0], y2.shape[1])
    # dX of a data input is not wanted in training: skipping it saves a third of the work.
    dx = _a_bt(xp, d2, y2).reshape(x.shape) if wanted(attrs, 0) else None
    dy = (x2.T @ d2).reshape(y.shape) if wanted(attrs, 1) else None
    return dx, dy


# The two kernels below run for every fc layer of every training step. A buffer they get
# is only ever their own output of the previous run (a spare: ``runtime.recycle``), and
# that output owns its memory only when the run took the plain case (2-D X and Y, nothing
# flattened; otherwise _mul and _mul_grad hand out reshaped views, which recycle never
# hands back); the attributes do not change between runs. So with a buffer the products
# are taken at once and numpy checks the rest as it multiplies: shapes that do not fit the
# buffer raise ValueError, and ``casting="no"`` raises TypeError unless X, Y (dOut) and
# the buffer share one dtype; either sends the call the checked way, before anything is
# written that anyone can see (a spare is held by nobody). A buffer must be 2-D: numpy
# would broadcast the 2-D operands up to a buffer of more dims. In a training step the
# checks written out below cost more than the small products themselves: each attribute
# read after a large product has evicted the interpreter's data is a cache miss.
def _mul_into(xp, attrs, bufs, x, y):
    """``_mul`` writing Out into ``bufs[0]`` when it fits (``ir.registry``: kernel_into):
    the fc layer's product (2-D X and Y of one dtype, nothing flattened)."""
    out = bufs[0]
    if out is not None and out.ndim == 2:  # (numpy would broadcast 2-D operands up to 3-D)
        done = written(xp.matmul, x, y, out, casting="no")
        if done is not None:
            return done
    return _mul(xp, attrs, x, y)


def _mul_grad_into(xp, attrs, bufs, x, y, dout):
    """``_mul_grad`` writing dX and dY into ``bufs`` when they fit. Without a buffer the
    products are returned as they come (not reshaped views), so that the next run can
    recycle them."""
    flags = attrs.get(OUTPUTS_WANTED)  # as registry.wanted
    want_dx, want_dy = flags is None or flags[0], flags is None or flags[1]
    b0, b1 = bufs
    if ((b0.ndim == 2 if want_dx and b0 is not None else not want_dx)
            and (b1.ndim == 2 if want_dy and b1 is not None else not want_dy)
            and x.ndim == 2 and y.ndim == 2 and (not want_dx or len(dout) > SMALL_M)):
        # both products into their buffers check every shape against the other; one alone
        # leaves the other operand's shape to compare
        if want_dx and want_dy or (want_dx and x.shape == b0.shape) or (
                want_dy and y.shape == b1.shape):
            dx = written(xp.matmul, dout, y.T, b0, casting="no") if want_dx else None
            dy = written(xp.matmul, x.T, dout, b1, casting="no") \
                if want_dy and (dx is not None or not want_dx) else None
            if (dx is not None or not want_dx) and (dy is not None or not want_dy):
                return dx, dy
    if not (x.ndim == 2 and y.ndim == 2 and attrs["x_num_col_dims"] == 1
            and attrs["y_num_col_dims"] == 1 and x.dtype == y.dtype == dout.dtype
            and dout.shape == (x.shape[0], y.shape[1])):
        return _mul_grad(xp, attrs, x, y, dout)
    dx = dy = None
    if want_dx:
        buf = b0
        if buf is None or dout.shape[0] <= SMALL_M or buf.shape != x.shape or buf.dtype != x.dtype:
            dx = _a_bt(xp, dout, y)
        else:
            dx = xp.matmul(dout, y.T, out=buf)
    if want_dy:
        buf = b1
        if buf is None or buf.shape != y.shape or buf.dtype != y.dtype:
            dy = x.T @ dout
        else:
            dy = xp.matmul(x.T, dout, out=buf)
    return dx, dy


def _infer_mul(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
    xs, ys = list(x.shape), list(y.shape)
    if not 1 <= xn < len(xs):
        ctx.fail(f"x_num_col_dims={xn} needs X of rank > {xn}, X is {xs}", slot="X")
    if not 1 <= yn < len(ys):
        ctx.fail(f"y_num_col_dims={yn} needs Y of rank > {yn}, Y is {ys}", slot="Y")
    x2 = [numel(xs[:xn]), numel(xs[xn:])]
    y2 = [numel(ys[:yn]), numel(ys[yn:])]
    if x2[1] >= 0 and y2[0] >= 0 and x2[1] != y2[0]:
        y_flat = f" (flattened to {y2})" if y2 != ys else ""
        ctx.fail(f"X {xs} (flattened to {x2}) and Y {ys}{y_flat}: inner dims {x2[1]} and "
                 f"{y2[0]} differ")
    ctx.set_output("Out", xs[:xn] + ys[yn:], like=x)


register(
    "mul", inputs=["X", "Y"], outputs=["Out"],
    attrs=[Attr("x_num_col_dims", AttrType.INT, 1, at_least(1),
                doc="X is flattened to 2-D: dims before this index become rows"),
           Attr("y_num_col_dims", AttrType.INT, 1, at_least(1),
                doc="Y is flattened to 2-D: dims before this index become rows")],
    infer_shape=_infer_mul, kernel=_mul, kernel_into=_mul_into,
    grad=GradSpec(_mul_grad, inputs=("X", "Y"), in_grads=("X", "Y"),
                  kernel_into=_mul_grad_into),
    doc="Out = flatten(X) @ flatten(Y) (the fully connected layer's product)",
    category="linalg")


# ------------------------------------------------------------------ matmul_v2
def _swap(a):
    return a.swapaxes(-1, -2)


def _as_matrices(x, y):
    """Promote 1-D operands like numpy.matmul: X [k] -> [1, k], Y [k] -> [k, 1]."""
    return (x if x.ndim > 1 else x.reshape(1, -1)), (y if y.ndim > 1 else y.reshape(-1, 1))


def _matmul(xp, attrs, x, y):
    """numpy.matmul of op(X) and op(Y); op transposes the last two dims when asked
    (ignored for a 1-D operand, as in Paddle)."""
    a = _swap(x) if attrs["trans_x"] and x.ndim > 1 else x
    b = _swap(y) if attrs["trans_y"] and y.ndim > 1 else y
    out = a @ b
    # 1-D @ 1-D gives a numpy scalar; the op's output is a 0-d tensor.
    return out if out.ndim else xp.asarray(out)


def _matmul_grad(xp, attrs, x, y, dout):
    """Gradients of numpy.matmul with transposes, 1-D promotion and batch broadcasting."""
    x2, y2 = _as_matrices(x, y)
    tx, ty = attrs["trans_x"] and x.ndim > 1, attrs["trans_y"] and y.ndim > 1
    # dOut with the dims a 1-D operand dropped put back: [..., m, n].
    g = dout
    if x.ndim == 1:
        g = g.reshape(g.shape[:-1] + (1,) + g.shape[-1:]) if y.ndim > 1 else g.reshape(1, 1)
    if y.ndim == 1 and x.ndim > 1:
        g = g.reshape(g.shape + (1,))
    if not tx and not ty and g.ndim == 2 and x2.ndim == 2 and y2.ndim == 2:
        dx = _a_bt(xp, g, y2) if wanted(attrs, 0) else None
        dy = x2.T @ g if wanted(attrs, 1) else None
        return (None if dx is None else dx.reshape(x.shape),
                None if dy is None else dy.reshape(y.shape))
    if not tx and not ty:
        dx, dy = g @ _swap(y2), _swap(x2) @ g
    elif tx and not ty:
        dx, dy = y2 @ _swap(g), x2 @ g
    elif not tx and ty:
        dx, dy = g @ y2, _swap(g) @ x2
    else:
        dx, dy = _swap(y2) @ _swap(g), _swap(g) @ _swap(x2)
    return unbroadcast(dx, x2.shape).reshape(x.shape), unbroadcast(dy, y2.shape).reshape(y.shape)


def _broadcast_batch(ctx, xb, yb, describe):
    out = broadcast_dims(xb, yb)
    if out is None:
        ctx.fail(f"{describe}: batch dims {xb} and {yb} do not broadcast")
    return out


def _infer_matmul(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    xs, ys = list(x.shape), list(y.shape)
    tx, ty = ctx.attr("trans_x"), ctx.attr("trans_y")
    describe = f"X {xs} (trans_x={tx}) and Y {ys} (trans_y={ty})"
    if not xs or not ys:
        ctx.fail(f"{describe}: 0-D operands are not supported")
    xm = [1] + xs if len(xs) == 1 else (xs[:-2] + [xs[-1], xs[-2]] if tx else xs)
    ym = ys + [1] if len(ys) == 1 else (ys[:-2] + [ys[-1], ys[-2]] if ty else ys)
    if xm[-1] >= 0 and ym[-2] >= 0 and xm[-1] != ym[-2]:
        ctx.fail(f"{describe}: inner dims {xm[-1]} and {ym[-2]} differ")
    out = _broadcast_batch(ctx, xm[:-2], ym[:-2], describe)
    out += ([xm[-2]] if len(xs) > 1 else []) + ([ym[-1]] if len(ys) > 1 else [])
    ctx.set_output("Out", out, like=x)


register(
    "matmul_v2", inputs=["X", "Y"], outputs=["Out"],
    attrs=[Attr("trans_x", AttrType.BOOLEAN, False, doc="transpose the last two dims of X"),
           Attr("trans_y", AttrType.BOOLEAN, False, doc="transpose the last two dims of Y")],
    infer_shape=_infer_matmul, kernel=_matmul,
    grad=GradSpec(_matmul_grad, inputs=("X", "Y"), in_grads=("X", "Y")),
    doc="Out = op(X) @ op(Y) with numpy.matmul's batching and 1-D rules",
    category="linalg")
