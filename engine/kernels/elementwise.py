"""Element-wise binary ops with Paddle's ``axis`` broadcasting, ``scale`` and ``clip``.

Gradients follow Paddle 3.3.1's kernels (checked against it): max/min split a tie
evenly (dX = dY = dOut / 2 where X == Y), pow's dY is dOut * log(X) * X^Y (NaN for X < 0,
as in Paddle), mod's gradient op is Paddle's ``remainder_grad`` (dX = dOut,
dY = -dOut * floor(X / Y)), floordiv has none; clip passes dOut where min <= X <= max.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import (OUTPUTS_WANTED, REQUIRED, Attr, AttrType, GradOp, GradSpec, Slot,
                           register, same_as)
from ._util import align_y, broadcast_shape, unbroadcast, written

_add_reduce = np.add.reduce


def _infer_binary(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    ctx.set_output("Out", broadcast_shape(ctx, x, y, ctx.attr("axis")), like=x)


_AXIS = Attr("axis", AttrType.INT, -1, doc="where Y's dims start inside X (-1: trailing)")


def _binary_grad_kernel(grads):
    """The ``elementwise_*_grad`` kernel around ``grads(xp, x, y, dout, want) -> (dx, dy)``
    over broadcast operands: each gradient is summed back to its input's shape. ``want``
    (dX wanted, dY wanted) comes from the executor's OUTPUTS_WANTED: a gradient nobody
    reads is not computed (None), as Paddle's kernels skip a null dx (the loss's
    ``h * weights`` of a recurrent benchmark wants dX only: half the work)."""
    def grad_kernel(xp, attrs, x, y, dout):
        want = attrs.get(OUTPUTS_WANTED) or _BOTH
        if x.shape == y.shape == dout.shape:  # nothing broadcast (a recurrent step's gates):
            return grads(xp, x, y, dout, want)  # the checks below cost as much as the math
        yb = align_y(y, x.ndim, attrs["axis"])
        dx, dy = grads(xp, x, yb, dout, want)
        dx = unbroadcast(dx, x.shape) if want[0] else None
        if want[1]:
            dy = unbroadcast(dy, yb.shape)
            dy = dy if dy.shape == y.shape else dy.reshape(y.shape)
        else:
            dy = None
        return dx, dy
    # what it computes when nothing is broadcast, for a caller that checked the shapes
    # itself (a plain recurrent_grad frame: recurrent/direct_grads.py)
    grad_kernel.same_shapes = grads
    return grad_kernel


_BOTH = (True, True)


def _add_grad_kernel(xp, attrs, x, y, dout):
    """elementwise_add_grad: an fc layer's bias (X [N, M], Y [M] on X's last axis) sums
    dOut over rows directly (what unbroadcast does, without its checks); anything else
    goes the general way."""
    if (dout.ndim == 2 and y.ndim == 1 and x.shape == dout.shape
            and dout.shape[1] == y.shape[0] and attrs["axis"] in (-1, 1)
            and dout.__class__ is np.ndarray):
        flags = attrs.get(OUTPUTS_WANTED)
        dx = dout if flags is None or flags[0] else None
        dy = _add_reduce(dout, axis=0) if flags is None or flags[1] else None
        return dx, dy
    return _general_add_grad(xp, attrs, x, y, dout)


def _broadcasts_into(small, big):
    """True when a shape ``small`` broadcasts to ``big`` without growing it."""
    if len(small) > len(big):
        return False
    if small == big[len(big) - len(small):]:  # a bias: X's trailing dims
        return True
    return all(s == 1 or s == b for s, b in zip(small[::-1], big[::-1]))


def _add_into(xp, attrs, bufs, x, y):
    """elementwise_add writing into ``bufs[0]`` when it fits: Y (a bias) broadcast into
    X's shape, one dtype, rank >= 1 (``ir.registry``: kernel_into)."""
    out = bufs[0]
    # The buffer is X's own array (a dead input: runtime.recycle) and Y lines up with X's
    # trailing dims (an fc layer's bias, axis 1 of a 2-D X; axis -1; one rank), where
    # align_y leaves Y as it is: numpy's broadcasting is Paddle's rule, so the sum goes
    # straight into X and numpy refuses what does not fit (a Y that would grow X:
    # ValueError; casting="no": another dtype) before writing anything. (Only X's array:
    # numpy broadcasts the operands up to a larger buffer's shape.) In a training step the
    # checks below cost more than the add: each attribute read after a large product
    # evicted the interpreter's data misses the cache. The same ufunc call, the same bits;
    # rank 0 stays with the checks below, which give numpy's scalar as before.
    if out is x:
        axis, rank = attrs["axis"], x.ndim
        if rank and (axis == -1 or axis + y.ndim == rank or y.ndim == rank):
            done = written(xp.add, x, y, out=out, casting="no")
            if done is not None:
                return done
    # same shapes (a recurrent step's gate sums, ~30x128 per frame): align_y and the
    # broadcast checks below would cost about as much as the add itself; same ufunc call
    if (x.shape == y.shape and x.ndim and out is not None and out.shape == x.shape
            and out.dtype == x.dtype == y.dtype):
        return xp.add(x, y, out=out)
    # an fc layer's bias (X [N, M], Y [M] on X's last axis): the general checks below
    # cost more than the add itself on an MLP step's small arrays; same ufunc calls
    if (x.ndim == 2 and y.ndim == 1 and x.shape[1] == y.shape[0]
            and attrs["axis"] in (-1, 1)):
        if out is not None and out.shape == x.shape and out.dtype == x.dtype == y.dtype:
            return xp.add(x, y, out=out)
        return x + y
    yb = align_y(y, x.ndim, attrs["axis"])
    if (out is not None and x.ndim and out.shape == x.shape and out.dtype == x.dtype
            and yb.dtype == x.dtype and _broadcasts_into(yb.shape, x.shape)):
        return xp.add(x, yb, out=out)
    return x + yb


def _binary(name, forward, grads, doc, maker=None, reads_out=False, into=None,
            grad_shape_only=(), grad_kernel=None):
    """Register ``elementwise_<name>`` and its ``_grad`` from ``grads`` (``grads(xp, x, y,
    dout, want)``: ``_binary_grad_kernel``); ``maker`` instead for a gradient op of another
    name; neither: no gradient. ``reads_out``: the grad op also reads the forward's Out
    (Paddle's elementwise_div_grad does), and ``grads`` gets it: ``grads(xp, x, y, out,
    dout, want)``. ``into``: the forward's
    ``kernel_into`` (X's array may be handed to it as Out's buffer); ``grad_shape_only``:
    the inputs whose values the gradient never reads."""
    def kernel(xp, attrs, x, y):
        return forward(xp, x, align_y(y, x.ndim, attrs["axis"]))

    if grads is not None and reads_out:
        def with_out(xp, attrs, x, y, out, dout):
            return _binary_grad_kernel(
                lambda xp, x, yb, g, want: grads(xp, x, yb, out, g, want))(xp, attrs, x, y, dout)
        grad = GradSpec(with_out, inputs=("X", "Y"), outputs=("Out",), in_grads=("X", "Y"))
    else:
        grad = maker if grads is None else GradSpec(
            grad_kernel or _binary_grad_kernel(grads), inputs=("X", "Y"), in_grads=("X", "Y"),
            shape_only=grad_shape_only)
    return register(f"elementwise_{name}", inputs=["X", "Y"], outputs=["Out"], attrs=[_AXIS],
                    infer_shape=_infer_binary, kernel=kernel, grad=grad,
                    lod_agree=("X", "Y"), doc=doc, category="math", kernel_into=into,
                    inplace=(("X", "Out"),) if into is not None else ())


def _split_ties(xp, take, tie, g):
    """``g`` where ``take``, ``g / 2`` where ``tie``, 0 elsewhere (Paddle's max/min rule).
    Built with where, not a float mask, so float32 stays float32."""
    return xp.where(take, g, xp.where(tie, g * g.dtype.type(0.5), xp.zeros_like(g)))


# Each ``grads(xp, x, y, g, want)`` below computes only the gradients ``want`` asks for
# (None for the other): ``_binary_grad_kernel``.
def _max_grads(xp, x, y, g, want):
    tie = x == y
    return (_split_ties(xp, x > y, tie, g) if want[0] else None,
            _split_ties(xp, x < y, tie, g) if want[1] else None)


def _min_grads(xp, x, y, g, want):
    tie = x == y
    return (_split_ties(xp, x < y, tie, g) if want[0] else None,
            _split_ties(xp, x > y, tie, g) if want[1] else None)


def _pow_grads(xp, x, y, g, want):
    return (g * y * x ** (y - 1) if want[0] else None,
            g * xp.log(x) * x ** y if want[1] else None)


def _add_grads(xp, x, y, g, want):
    return g if want[0] else None, g if want[1] else None


def _sub_grads(xp, x, y, g, want):
    return g if want[0] else None, -g if want[1] else None


def _mul_grads(xp, x, y, g, want):
    return g * y if want[0] else None, g * x if want[1] else None


def _div_grads(xp, x, y, out, g, want):
    return g / y if want[0] else None, -g * out / y if want[1] else None


_general_add_grad = _binary_grad_kernel(_add_grads)
_binary("add", lambda xp, x, y: x + y, _add_grads,
        "Out = X + Y (broadcast by axis)", into=_add_into, grad_shape_only=("X", "Y"),
        grad_kernel=_add_grad_kernel)
_binary("sub", lambda xp, x, y: x - y, _sub_grads, "Out = X - Y (broadcast by axis)")
_binary("mul", lambda xp, x, y: x * y, _mul_grads, "Out = X * Y element-wise")
# Paddle's div grad reads Out: dY = -dOut * Out / Y (saved training programs carry the slot).
_binary("div", lambda xp, x, y: x / y, _div_grads, "Out = X / Y element-wise", reads_out=True)
_binary("max", lambda xp, x, y: xp.maximum(x, y), _max_grads,
        "Out = max(X, Y) element-wise (a tie splits the gradient evenly)")
_binary("min", lambda xp, x, y: xp.minimum(x, y), _min_grads,
        "Out = min(X, Y) element-wise (a tie splits the gradient evenly)")
_binary("pow", lambda xp, x, y: x ** y, _pow_grads, "Out = X ^ Y element-wise")
# Python's rules: the remainder takes the divisor's sign and the quotient rounds down.
_binary("floordiv", lambda xp, x, y: xp.floor_divide(x, y), None,
        "Out = floor(X / Y) element-wise (no gradient)")


# Paddle 3.3.1 names elementwise_mod's gradient op ``remainder_grad`` (its phi kernel).
def _mod_grads(xp, x, y, g, want):
    return g if want[0] else None, -g * xp.floor(x / y) if want[1] else None


def _mod_grad_maker(op):
    return [GradOp("remainder_grad",
                   {"X": op.input("X"), "Y": op.input("Y"),
                    grad_name("Out"): [grad_name(n) for n in op.output("Out")]},
                   {grad_name(s): [grad_name(n) for n in op.input(s)] for s in ("X", "Y")})]


def _infer_remainder_grad(ctx):
    for s in ("X", "Y"):
        ctx.set_output(grad_name(s), ctx.input(s).shape, like=ctx.input(s))


_binary("mod", lambda xp, x, y: xp.remainder(x, y), None,
        "Out = X mod Y, with the sign of Y (Python's %)", maker=_mod_grad_maker)
register("remainder_grad", inputs=["X", "Y", grad_name("Out")],
         outputs=[Slot(grad_name("X"), dispensable=True), Slot(grad_name("Y"), dispensable=True)],
         attrs=[_AXIS], infer_shape=_infer_remainder_grad, kernel=_binary_grad_kernel(_mod_grads),
         doc="gradient of elementwise_mod", category="gradient", grad_of="elementwise_mod",
         share_lod=(("X", grad_name("X")),))


# ---------------------------------------------------------------------- scale
def _scale(xp, attrs, x, scale_tensor, bias_tensor):
    if (scale_tensor is None and bias_tensor is None and attrs["scale"] == 1.0
            and attrs["bias"] == 0.0 and x.dtype.kind == "f"):
        # The identity (the gradient of ``sum``: one per input, per frame of a recurrent
        # step): X itself, as nothing writes into an array a live variable still holds
        # (kernels write only into buffers runtime.recycle proves nobody else reaches).
        return x
    s = attrs["scale"] if scale_tensor is None else scale_tensor.reshape(())
    b = attrs["bias"] if bias_tensor is None else bias_tensor.reshape(())
    if attrs["bias_after_scale"]:
        return x * s + b if b else x * s
    return (x + b) * s


def _scale_grad_maker(op):
    """Paddle's gradient of scale is another ``scale`` op: dX = s * dOut, with the
    forward's ScaleTensor when it has one (it overrides the ``scale`` attribute), no bias."""
    ins = {"X": [grad_name(n) for n in op.output("Out")]}
    if op.input("ScaleTensor"):
        ins["ScaleTensor"] = op.input("ScaleTensor")
    return [GradOp("scale", ins, {"Out": [grad_name(n) for n in op.input("X")]},
                   {"scale": op.attrs.get("scale", 1.0), "bias": 0.0, "bias_after_scale": True})]


register(
    "scale",
    inputs=["X", Slot("ScaleTensor", dispensable=True, no_grad=True),
            Slot("BiasTensor", dispensable=True, no_grad=True)],
    outputs=["Out"],
    attrs=[Attr("scale", AttrType.FLOAT, 1.0), Attr("bias", AttrType.FLOAT, 0.0),
           Attr("bias_after_scale", AttrType.BOOLEAN, True)],
    infer_shape=same_as(), kernel=_scale, grad=_scale_grad_maker,
    doc="Out = scale * X + bias (or scale * (X + bias))", category="math")


# ----------------------------------------------------------------------- clip
def _clip_bounds(attrs, x, lo_tensor, hi_tensor):
    """(min, max) in X's dtype: the Min/Max tensors override the attributes."""
    lo = attrs["min"] if lo_tensor is None else lo_tensor.reshape(()).item()
    hi = attrs["max"] if hi_tensor is None else hi_tensor.reshape(()).item()
    if lo > hi:
        raise ShapeError(f"op clip: max should be greater than or equal to min, got "
                         f"min={lo}, max={hi}")
    return x.dtype.type(lo), x.dtype.type(hi)


def _clip(xp, attrs, x, lo_tensor, hi_tensor):
    lo, hi = _clip_bounds(attrs, x, lo_tensor, hi_tensor)
    return xp.minimum(xp.maximum(x, lo), hi)


def _clip_grad(xp, attrs, x, lo_tensor, hi_tensor, dout):
    lo, hi = _clip_bounds(attrs, x, lo_tensor, hi_tensor)
    return xp.where((x >= lo) & (x <= hi), dout, xp.zeros_like(dout))


register(
    "clip",
    inputs=["X", Slot("Min", dispensable=True, no_grad=True, doc="1-element tensor; overrides min"),
            Slot("Max", dispensable=True, no_grad=True, doc="1-element tensor; overrides max")],
    outputs=["Out"],
    attrs=[Attr("min", AttrType.FLOAT, REQUIRED), Attr("max", AttrType.FLOAT, REQUIRED)],
    infer_shape=same_as(), kernel=_clip,
    grad=GradSpec(_clip_grad, inputs=("X", "Min", "Max")),
    doc="Out = min(max(X, min), max); the gradient passes where min <= X <= max",
    category="math")


def _clip_by_norm(xp, attrs, x):
    # Paddle scales the whole tensor by max_norm / ||X||_2 when that norm exceeds max_norm.
    # max_norm / max(norm, max_norm) is exactly 1 when the norm is within bounds.
    norm = xp.sqrt((x * x).sum())
    return x * (x.dtype.type(attrs["max_norm"]) / xp.maximum(norm, x.dtype.type(attrs["max_norm"])))


register("clip_by_norm", inputs=["X"], outputs=["Out"],
         attrs=[Attr("max_norm", AttrType.FLOAT, REQUIRED)],
         infer_shape=same_as(), kernel=_clip_by_norm,
         doc="Out = X * max_norm / ||X||_2 when ||X||_2 > max_norm, else X (no gradient)",
         category="math")
