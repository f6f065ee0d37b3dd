"""More linear algebra: the v1 ``matmul`` op (transpose_X/transpose_Y/alpha, found in
programs saved by Paddle 1.x-2.x), dot, bmm, mv, kron, trace, tril_triu, addmm, diag_v2
and eye.

FLOAT attributes (alpha, Alpha, Beta, padding_value) are used rounded to float32, as
Paddle's kernels see them. matmul v1 follows Paddle 3.3.1, which runs it on the
matmul_v2 kernel: a 1-D X is [1, K] and a 1-D Y [K, 1], never transposed, and those unit
dims are dropped from Out ([K] @ [K] gives a 0-D Out); batch dims must broadcast and, when
both operands have them, hold the same number of matrices; head_number is accepted and,
as by Paddle's CPU kernel, ignored.
"""
import math

import numpy as np

from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import REQUIRED, Attr, AttrType, GradSpec, register, wanted
from ._util import broadcast_dims, unbroadcast


def f32(value):
    """A FLOAT attribute as Paddle's kernels see it (rounded to float32)."""
    return float(np.float32(value))


def _swap(a):
    return a.swapaxes(-1, -2)


# ---------------------------------------------------------------- matmul (v1)
def _mm_plan(xs, ys, tx, ty):
    """(x matrix dims, y matrix dims, out dims, error) for matmul v1. Matrix dims are
    after 1-D promotion and transposition: [..., m, k], [..., k, n]. A 1-D operand is
    never transposed (Paddle 3.3.1 runs v1 on the matmul_v2 kernel, which ignores it)."""
    xm = [1, xs[0]] if len(xs) == 1 else list(xs)
    ym = [ys[0], 1] if len(ys) == 1 else list(ys)
    if tx and len(xs) > 1:
        xm[-2], xm[-1] = xm[-1], xm[-2]
    if ty and len(ys) > 1:
        ym[-2], ym[-1] = ym[-1], ym[-2]
    if xm[-1] >= 0 and ym[-2] >= 0 and xm[-1] != ym[-2]:
        return None, None, None, f"inner dims {xm[-1]} (X) and {ym[-2]} (Y) differ"
    xb, yb = xm[:-2], ym[:-2]
    batch = broadcast_dims(xb, yb)
    known = all(d >= 0 for d in xb + yb)
    if batch is None or (xb and yb and known and math.prod(xb) != math.prod(yb)):
        return None, None, None, (f"batch dims {xb} and {yb} must broadcast and hold as many "
                                  "matrices (or one operand have none)")
    out = batch + ([xm[-2]] if len(xs) > 1 else []) + ([ym[-1]] if len(ys) > 1 else [])
    return xm, ym, out, None


def _mm_operands(xp, attrs, x, y):
    tx, ty = attrs["transpose_X"] and x.ndim > 1, attrs["transpose_Y"] and y.ndim > 1
    xm, ym, out, err = _mm_plan(list(x.shape), list(y.shape), tx, ty)
    if err:
        raise ShapeError(f"op matmul: X {list(x.shape)} (transpose_X={attrs['transpose_X']}), "
                         f"Y {list(y.shape)} (transpose_Y={attrs['transpose_Y']}): {err}")
    a = x.reshape([1, -1]) if x.ndim == 1 else (_swap(x) if tx else x)
    b = y.reshape([-1, 1]) if y.ndim == 1 else (_swap(y) if ty else y)
    # flatten batch dims: equal counts pair up matrix by matrix (Paddle's batch_size)
    a3 = a.reshape((-1,) + a.shape[-2:]) if a.ndim > 2 else a
    b3 = b.reshape((-1,) + b.shape[-2:]) if b.ndim > 2 else b
    return a3, b3, out, tx, ty


def _matmul(xp, attrs, x, y):
    a, b, out, _, _ = _mm_operands(xp, attrs, x, y)
    return xp.asarray((a @ b) * x.dtype.type(f32(attrs["alpha"]))).reshape(out)


def _matmul_grad(xp, attrs, x, y, dout):
    a, b, _, tx, ty = _mm_operands(xp, attrs, x, y)
    alpha = x.dtype.type(f32(attrs["alpha"]))
    g = dout.reshape(((-1,) if max(a.ndim, b.ndim) > 2 else ()) + (a.shape[-2], b.shape[-1]))
    dx = dy = None
    if wanted(attrs, 0):
        da = unbroadcast(g @ _swap(b), a.shape) * alpha
        dx = (_swap(da) if tx else da).reshape(x.shape)
    if wanted(attrs, 1):
        db = unbroadcast(_swap(a) @ g, b.shape) * alpha
        dy = (_swap(db) if ty else db).reshape(y.shape)
    return dx, dy


def _infer_matmul(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    if not x.shape or not y.shape:
        ctx.fail(f"X {list(x.shape)} and Y {list(y.shape)}: 0-D operands are not supported")
    _, _, out, err = _mm_plan(list(x.shape), list(y.shape),
                              ctx.attr("transpose_X") and len(x.shape) > 1,
                              ctx.attr("transpose_Y") and len(y.shape) > 1)
    if err:
        ctx.fail(f"X {list(x.shape)} (transpose_X={ctx.attr('transpose_X')}), Y "
                 f"{list(y.shape)} (transpose_Y={ctx.attr('transpose_Y')}): {err}", slot="Y")
    ctx.set_output("Out", out, like=x)


register(
    "matmul", inputs=["X", "Y"], outputs=["Out"],
    attrs=[Attr("transpose_X", AttrType.BOOLEAN, False, doc="transpose X's last two dims"),
           Attr("transpose_Y", AttrType.BOOLEAN, False, doc="transpose Y's last two dims"),
           Attr("alpha", AttrType.FLOAT, 1.0, doc="scale of Out"),
           Attr("head_number", AttrType.INT, 1, doc="multi-head split (ignored on CPU, as "
                "by Paddle's CPU kernel)")],
    infer_shape=_infer_matmul, kernel=_matmul,
    grad=GradSpec(_matmul_grad, inputs=("X", "Y"), in_grads=("X", "Y")),
    doc="Out = alpha * op(X) @ op(Y) (the v1 matmul of older Paddle programs)",
    category="linalg")


# ------------------------------------------------------------------ dot, mv, bmm
def _check(cond, op, message):
    if not cond:
        raise ShapeError(f"op {op}: {message}")


def _dot(xp, attrs, x, y):
    _check(x.shape == y.shape and x.ndim in (1, 2), "dot",
           f"X {list(x.shape)} and Y {list(y.shape)} must be 1-D or 2-D of one shape")
    return xp.asarray((x * y).sum(axis=-1))


def _dot_grad(xp, attrs, x, y, dout):
    g = dout[..., None]
    return (g * y if wanted(attrs, 0) else None), (g * x if wanted(attrs, 1) else None)


def _infer_dot(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    if len(x.shape) not in (1, 2) or len(x.shape) != len(y.shape) or any(
            p >= 0 and q >= 0 and p != q for p, q in zip(x.shape, y.shape)):
        ctx.fail(f"X {list(x.shape)} and Y {list(y.shape)} must be 1-D or 2-D of one shape",
                 slot="Y")
    ctx.set_output("Out", list(x.shape[:-1]), like=x)


register("dot", inputs=["X", "Y"], outputs=["Out"], infer_shape=_infer_dot, kernel=_dot,
         grad=GradSpec(_dot_grad, inputs=("X", "Y"), in_grads=("X", "Y")), share_lod=(),
         doc="Out = sum(X * Y, last dim) (row by row for 2-D)", category="linalg")


def _mv(xp, attrs, x, vec):
    _check(x.ndim == 2 and vec.ndim == 1 and x.shape[1] == vec.shape[0], "mv",
           f"X {list(x.shape)} must be [M, N] and Vec {list(vec.shape)} [N]")
    return x @ vec


def _mv_grad(xp, attrs, x, vec, dout):
    return (xp.outer(dout, vec) if wanted(attrs, 0) else None,
            x.T @ dout if wanted(attrs, 1) else None)


def _infer_mv(ctx):
    x, v = ctx.input("X"), ctx.input("Vec")
    if len(x.shape) != 2 or len(v.shape) != 1 or (
            x.shape[1] >= 0 and v.shape[0] >= 0 and x.shape[1] != v.shape[0]):
        ctx.fail(f"X {list(x.shape)} must be [M, N] and Vec {list(v.shape)} [N]", slot="Vec")
    ctx.set_output("Out", [x.shape[0]], like=x)


register("mv", inputs=["X", "Vec"], outputs=["Out"], infer_shape=_infer_mv, kernel=_mv,
         grad=GradSpec(_mv_grad, inputs=("X", "Vec"), in_grads=("X", "Vec")), share_lod=(),
         doc="Out = X @ Vec (matrix [M, N] times vector [N])", category="linalg")


def _bmm(xp, attrs, x, y):
    _check(x.ndim == 3 and y.ndim == 3 and x.shape[0] == y.shape[0] and x.shape[2] == y.shape[1],
           "bmm", f"X {list(x.shape)} must be [B, M, K] and Y {list(y.shape)} [B, K, N]")
    return x @ y


def _bmm_grad(xp, attrs, x, y, dout):
    return (dout @ _swap(y) if wanted(attrs, 0) else None,
            _swap(x) @ dout if wanted(attrs, 1) else None)


def _infer_bmm(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    bad = len(x.shape) != 3 or len(y.shape) != 3 or any(
        p >= 0 and q >= 0 and p != q
        for p, q in ((x.shape[0], y.shape[0]), (x.shape[2], y.shape[1])))
    if bad:
        ctx.fail(f"X {list(x.shape)} must be [B, M, K] and Y {list(y.shape)} [B, K, N]", slot="Y")
    ctx.set_output("Out", [x.shape[0], x.shape[1], y.shape[2]], like=x)


register("bmm", inputs=["X", "Y"], outputs=["Out"], infer_shape=_infer_bmm, kernel=_bmm,
         grad=GradSpec(_bmm_grad, inputs=("X", "Y"), in_grads=("X", "Y")), share_lod=(),
         doc="Out[b] = X[b] @ Y[b] (batched matrix product)", category="linalg")


# ------------------------------------------------------------------------ kron
def _kron_views(x, y):
    """X and Y padded to one rank r with leading 1s, and the shape [x0, y0, x1, y1, ...]
    that Out reshapes to (Out[i * ny + j] = X[i] * Y[j] per dim)."""
    r = max(x.ndim, y.ndim)
    xs = (1,) * (r - x.ndim) + x.shape
    ys = (1,) * (r - y.ndim) + y.shape
    inter = tuple(d for pair in zip(xs, ys) for d in pair)
    xb = x.reshape(tuple(d for n in xs for d in (n, 1)))
    yb = y.reshape(tuple(d for n in ys for d in (1, n)))
    return xb, yb, inter, tuple(a * b for a, b in zip(xs, ys))


def _kron(xp, attrs, x, y):
    xb, yb, _, out = _kron_views(x, y)
    return (xb * yb).reshape(out)


def _kron_grad(xp, attrs, x, y, dout):
    xb, yb, inter, _ = _kron_views(x, y)
    g = dout.reshape(inter)
    n = len(inter)
    dx = (g * yb).sum(axis=tuple(range(1, n, 2))).reshape(x.shape) if wanted(attrs, 0) else None
    dy = (g * xb).sum(axis=tuple(range(0, n, 2))).reshape(y.shape) if wanted(attrs, 1) else None
    return dx, dy


def _infer_kron(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    r = max(len(x.shape), len(y.shape))
    xs = [1] * (r - len(x.shape)) + list(x.shape)
    ys = [1] * (r - len(y.shape)) + list(y.shape)
    ctx.set_output("Out", [a * b if a >= 0 and b >= 0 else -1 for a, b in zip(xs, ys)], like=x)


register("kron", inputs=["X", "Y"], outputs=["Out"], infer_shape=_infer_kron, kernel=_kron,
         grad=GradSpec(_kron_grad, inputs=("X", "Y"), in_grads=("X", "Y")), share_lod=(),
         doc="Out = Kronecker product of X and Y (ranks padded with leading 1s)",
         category="linalg")


# ----------------------------------------------------------------------- trace
def _trace_axes(attrs, ndim):
    a1, a2 = attrs["axis1"], attrs["axis2"]
    if ndim < 2 or not (-ndim <= a1 < ndim and -ndim <= a2 < ndim) or a1 % ndim == a2 % ndim:
        raise ShapeError(f"op trace: Input of rank {ndim} needs two different axes in range, "
                         f"got axis1={a1}, axis2={a2}")
    return a1 % ndim, a2 % ndim


def _trace(xp, attrs, x):
    a1, a2 = _trace_axes(attrs, x.ndim)
    return xp.asarray(xp.trace(x, offset=attrs["offset"], axis1=a1, axis2=a2))


def _trace_grad(xp, attrs, x, dout):
    """dOut on the chosen diagonal of every matrix (an eye mask moved to axis1, axis2)."""
    a1, a2 = _trace_axes(attrs, x.ndim)
    mask = xp.eye(x.shape[a1], x.shape[a2], k=attrs["offset"], dtype=x.dtype)
    g = dout.reshape(dout.shape + (1, 1)) * mask
    return xp.ascontiguousarray(xp.moveaxis(g, (-2, -1), (a1, a2)))


def _infer_trace(ctx):
    x = ctx.input("Input")
    try:
        a1, a2 = _trace_axes(ctx.attrs, len(x.shape))
    except ShapeError as exc:
        ctx.fail(str(exc).replace("op trace: ", ""), slot="Input")
    ctx.set_output("Out", [d for i, d in enumerate(x.shape) if i not in (a1, a2)], like=x)


register("trace", inputs=["Input"], outputs=["Out"],
         attrs=[Attr("offset", AttrType.INT, 0, doc="diagonal: 0 main, > 0 above, < 0 below"),
                Attr("axis1", AttrType.INT, 0, doc="first dim of the matrices"),
                Attr("axis2", AttrType.INT, 1, doc="second dim of the matrices")],
         infer_shape=_infer_trace, kernel=_trace,
         grad=GradSpec(_trace_grad, inputs=("Input",), in_grads=("Input",)), share_lod=(),
         doc="Out = sum of the offset diagonal over axis1, axis2", category="linalg")


# ------------------------------------------------------------------- tril_triu
def _tril_triu(xp, attrs, x):
    _check(x.ndim >= 2, "tril_triu", f"X {list(x.shape)} must have rank >= 2")
    k = attrs["diagonal"]
    return xp.tril(x, k) if attrs["lower"] else xp.triu(x, k)


def _infer_tril_triu(ctx):
    x = ctx.input("X")
    if len(x.shape) < 2:
        ctx.fail(f"X {list(x.shape)} must have rank >= 2", slot="X")
    ctx.set_output("Out", x.shape, like=x)


register("tril_triu", inputs=["X"], outputs=["Out"],
         attrs=[Attr("diagonal", AttrType.INT, 0, doc="diagonal kept last (0: main)"),
                Attr("lower", AttrType.BOOLEAN, False, doc="keep the lower (True) or upper part")],
         infer_shape=_infer_tril_triu, kernel=_tril_triu,
         grad=GradSpec(_tril_triu, inputs=()), share_lod=(),
         doc="Out = the lower (tril) or upper (triu) triangle of the last two dims of X",
         category="linalg")


# ----------------------------------------------------------------------- addmm
def _addmm(xp, attrs, inp, x, y):
    _check(x.ndim == 2 and y.ndim == 2 and x.shape[1] == y.shape[0], "addmm",
           f"X {list(x.shape)} must be [M, K] and Y {list(y.shape)} [K, N]")
    out_shape = (x.shape[0], y.shape[1])
    _check(broadcast_dims(list(inp.shape), list(out_shape)) == list(out_shape) and inp.ndim <= 2,
           "addmm", f"Input {list(inp.shape)} does not broadcast to {list(out_shape)}")
    alpha, beta = x.dtype.type(f32(attrs["Alpha"])), x.dtype.type(f32(attrs["Beta"]))
    return alpha * (x @ y) + beta * inp


def _addmm_grad(xp, attrs, inp, x, y, dout):
    alpha, beta = x.dtype.type(f32(attrs["Alpha"])), x.dtype.type(f32(attrs["Beta"]))
    return (unbroadcast(dout * beta, inp.shape) if wanted(attrs, 0) else None,
            (dout @ y.T) * alpha if wanted(attrs, 1) else None,
            (x.T @ dout) * alpha if wanted(attrs, 2) else None)


def _infer_addmm(ctx):
    inp, x, y = ctx.input("Input"), ctx.input("X"), ctx.input("Y")
    if len(x.shape) != 2 or len(y.shape) != 2 or (
            x.shape[1] >= 0 and y.shape[0] >= 0 and x.shape[1] != y.shape[0]):
        ctx.fail(f"X {list(x.shape)} must be [M, K] and Y {list(y.shape)} [K, N]", slot="Y")
    out = [x.shape[0], y.shape[1]]
    if len(inp.shape) > 2 or broadcast_dims(list(inp.shape), out) is None:
        ctx.fail(f"Input {list(inp.shape)} does not broadcast to {out}", slot="Input")
    ctx.set_output("Out", out, like=x)


register("addmm", inputs=["Input", "X", "Y"], outputs=["Out"],
         attrs=[Attr("Beta", AttrType.FLOAT, 1.0, doc="scale of Input"),
                Attr("Alpha", AttrType.FLOAT, 1.0, doc="scale of X @ Y")],
         infer_shape=_infer_addmm, kernel=_addmm,
         grad=GradSpec(_addmm_grad, inputs=("Input", "X", "Y"), in_grads=("Input", "X", "Y")),
         share_lod=(), doc="Out = Alpha * X @ Y + Beta * Input (Input broadcast)",
         category="linalg")


# --------------------------------------------------------------------- diag_v2
def _diag_v2(xp, attrs, x):
    k = attrs["offset"]
    _check(x.ndim <= 2, "diag_v2", f"X {list(x.shape)} must be 0-D, 1-D or 2-D")
    if x.ndim == 2:
        return xp.ascontiguousarray(xp.diagonal(x, offset=k))
    v = x.reshape(-1)
    n = v.shape[0] + abs(k)
    out = xp.full((n, n), f32(attrs["padding_value"]), dtype=x.dtype)
    rows = xp.arange(v.shape[0]) + max(-k, 0)
    out[rows, rows + k] = v
    return out


def _diag_v2_grad(xp, attrs, x, dout):
    k = attrs["offset"]
    if x.ndim == 2:
        mask = xp.eye(x.shape[0], x.shape[1], k=k, dtype=bool)
        dx = xp.zeros(x.shape, dtype=dout.dtype)
        dx[mask] = dout
        return dx
    return xp.ascontiguousarray(xp.diagonal(dout, offset=k)).reshape(x.shape)


def _infer_diag_v2(ctx):
    x, k = ctx.input("X"), ctx.attr("offset")
    s = list(x.shape)
    if len(s) > 2:
        ctx.fail(f"X {s} must be 0-D, 1-D or 2-D", slot="X")
    if len(s) == 2:
        if s[0] < 0 or s[1] < 0:
            n = -1
        else:
            n = max(0, min(s[0] - max(-k, 0), s[1] - max(k, 0)))
        ctx.set_output("Out", [n], like=x)
        return
    n = (s[0] if s else 1)
    ctx.set_output("Out", [n + abs(k), n + abs(k)] if n >= 0 else [-1, -1], like=x)


register("diag_v2", inputs=["X"], outputs=["Out"],
         attrs=[Attr("offset", AttrType.INT, 0, doc="diagonal: 0 main, > 0 above, < 0 below"),
                Attr("padding_value", AttrType.FLOAT, 0.0, doc="fills the rest (1-D X)")],
         infer_shape=_infer_diag_v2, kernel=_diag_v2,
         grad=GradSpec(_diag_v2_grad, inputs=("X",)), share_lod=(),
         doc="1-D X: a square matrix with X on the offset diagonal; 2-D X: that diagonal",
         category="linalg")


# ------------------------------------------------------------------------- eye
def _eye_shape(attrs):
    rows, cols = attrs["num_rows"], attrs["num_columns"]
    return rows, (rows if cols == -1 else cols)


def _eye(xp, attrs):
    rows, cols = _eye_shape(attrs)
    _check(rows >= 0 and cols >= 0, "eye", f"num_rows {rows} and num_columns {cols} must be >= 0")
    return xp.eye(rows, cols, dtype=to_numpy_dtype(attrs["dtype"]))


register("eye", inputs=[], outputs=["Out"],
         attrs=[Attr("num_rows", AttrType.LONG, REQUIRED, doc="rows"),
                Attr("num_columns", AttrType.LONG, -1, doc="columns (-1: num_rows)"),
                Attr("dtype", AttrType.INT, int(pb.VarType.FP32), doc="VarType of Out")],
         infer_shape=lambda ctx: ctx.set_output("Out", list(_eye_shape(ctx.attrs)),
                                                dtype=ctx.attr("dtype"), lod_level=0),
         kernel=_eye, doc="Out = the identity matrix [num_rows, num_columns]",
         category="linalg")
