"""More element-wise binary ops: atan2, elementwise_fmax / elementwise_fmin (NaN-ignoring
max / min), elementwise_heaviside and lerp.

Unlike the older elementwise_* ops these carry no ``axis`` attribute in Paddle 3.3.1: their
operands broadcast by numpy's rule. atan2 takes operands of one shape (Paddle 3.3.1 checks
equal ranks and lets X2's first dim exceed X1's, then reads a prefix of X2; we refuse that).
Gradients follow Paddle's kernels: fmax gives a tie (and a NaN Y) to X, fmin likewise;
heaviside's dX is 0 and dY is dOut where X == 0; lerp's gradient op writes only X@GRAD and
Y@GRAD (Paddle 3.3.1's lerp_grad has no Weight@GRAD).
"""
from ..errors import ShapeError
from ..ir.registry import GradSpec, Slot, register, wanted
from ._util import broadcast_dims, unbroadcast


def _infer_broadcast(*slots):
    def infer(ctx):
        metas = [ctx.input(s) for s in slots]
        out = list(metas[0].shape)
        for slot, meta in zip(slots[1:], metas[1:]):
            out = broadcast_dims(out, list(meta.shape))
            if out is None:
                ctx.fail("operands do not broadcast: " + ", ".join(
                    f"{s} {list(m.shape)}" for s, m in zip(slots, metas)), slot=slot)
        ctx.set_output("Out", out, like=metas[0])
    return infer


def _grads_of(grads, slots):
    """A grad kernel ``(xp, attrs, *inputs, dout)`` from ``grads(xp, *inputs, dout)`` over
    the broadcast operands; each gradient is summed back to its input's shape."""
    def kernel(xp, attrs, *args):
        *ins, dout = args
        outs = grads(xp, *ins, dout)
        return tuple(unbroadcast(g, ins[i].shape) if wanted(attrs, i) else None
                     for i, g in enumerate(outs))
    kernel.__doc__ = grads.__doc__
    return kernel


def _register(type, forward, grads, doc, slots=("X", "Y")):
    register(type, inputs=list(slots), outputs=["Out"], infer_shape=_infer_broadcast(*slots),
             kernel=lambda xp, attrs, *ins: forward(xp, *ins),
             grad=GradSpec(_grads_of(grads, slots), inputs=slots, in_grads=slots),
             doc=doc, category="math")


# ------------------------------------------------------------------- fmax / fmin
def _fmax_grads(xp, x, y, g):
    """dX = dOut where X >= Y or Y is NaN, dY = dOut elsewhere (Paddle's FMaxGradDx/Dy)."""
    to_x = (x >= y) | xp.isnan(y)
    zero = xp.zeros_like(g)
    return xp.where(to_x, g, zero), xp.where(to_x, zero, g)


def _fmin_grads(xp, x, y, g):
    to_x = (x <= y) | xp.isnan(y)
    zero = xp.zeros_like(g)
    return xp.where(to_x, g, zero), xp.where(to_x, zero, g)


_register("elementwise_fmax", lambda xp, x, y: xp.fmax(x, y), _fmax_grads,
          "Out = max(X, Y), ignoring a NaN operand (paddle.fmax)")
_register("elementwise_fmin", lambda xp, x, y: xp.fmin(x, y), _fmin_grads,
          "Out = min(X, Y), ignoring a NaN operand (paddle.fmin)")


# -------------------------------------------------------------------- heaviside
def _heaviside(xp, x, y):
    # numpy.heaviside has the same rule; written out with where, which cupy has too
    step = xp.where(x > 0, x.dtype.type(1), x.dtype.type(0))
    return xp.where(x == 0, y, step)


def _heaviside_grads(xp, x, y, g):
    """dX = 0, dY = dOut where X == 0 (Paddle's HeavisideGradDx/Dy)."""
    zero = xp.zeros_like(g)
    return zero, xp.where(x == 0, g, zero)


_register("elementwise_heaviside", _heaviside, _heaviside_grads,
          "Out = 0 where X < 0, Y where X == 0, 1 where X > 0 (paddle.heaviside)")


# ------------------------------------------------------------------------ atan2
def _atan2(xp, attrs, x1, x2):
    if x1.shape != x2.shape:
        raise ShapeError(f"op atan2: X1 {list(x1.shape)} and X2 {list(x2.shape)} must have "
                         "the same shape")
    return xp.arctan2(x1, x2)


def _atan2_grad(xp, attrs, x1, x2, dout):
    """dX1 = dOut * X2 / (X1^2 + X2^2), dX2 = -dOut * X1 / (X1^2 + X2^2)."""
    r = x1 * x1 + x2 * x2
    return (dout * x2 / r if wanted(attrs, 0) else None,
            -dout * x1 / r if wanted(attrs, 1) else None)


def _infer_atan2(ctx):
    a, b = ctx.input("X1"), ctx.input("X2")
    if len(a.shape) != len(b.shape) or any(
            p >= 0 and q >= 0 and p != q for p, q in zip(a.shape, b.shape)):
        ctx.fail(f"X1 {list(a.shape)} and X2 {list(b.shape)} must have the same shape",
                 slot="X2")
    ctx.set_output("Out", [p if p >= 0 else q for p, q in zip(a.shape, b.shape)], like=a)


register("atan2", inputs=["X1", "X2"], outputs=["Out"], infer_shape=_infer_atan2,
         kernel=_atan2, grad=GradSpec(_atan2_grad, inputs=("X1", "X2"), in_grads=("X1", "X2")),
         share_lod=(("X1", "Out"),),
         doc="Out = atan2(X1, X2): the angle of the point (X2, X1), in (-pi, pi]",
         category="math")


# ------------------------------------------------------------------------- lerp
def _lerp(xp, attrs, x, y, w):
    return x + w * (y - x)


def _lerp_grad(xp, attrs, x, y, w, out, dout):
    """dX = dOut * (1 - Weight), dY = dOut * Weight, each summed to its operand's shape."""
    dx = unbroadcast(dout * (1 - w), x.shape) if wanted(attrs, 0) else None
    dy = unbroadcast(dout * w, y.shape) if wanted(attrs, 1) else None
    return dx, dy


register("lerp", inputs=["X", "Y", Slot("Weight", no_grad=True,
                                        doc="interpolation weight (no gradient in Paddle 3.3.1)")],
         outputs=["Out"], infer_shape=_infer_broadcast("X", "Y", "Weight"), kernel=_lerp,
         grad=GradSpec(_lerp_grad, inputs=("X", "Y", "Weight"), outputs=("Out",),
                       in_grads=("X", "Y")),
         doc="Out = X + Weight * (Y - X), broadcast (paddle.lerp)", category="math")
