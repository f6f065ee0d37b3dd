"""More element-wise unary ops of paddle / paddle.nn.functional: the trigonometric and
hyperbolic functions and their inverses, trunc, logit, brelu (F.hardtanh), stanh, rrelu
and maxout.

Each grad op reads what Paddle 3.3.1's reads (all read ``X``; trunc only ``Out@GRAD``,
rrelu ``X`` and ``Noise``, maxout ``X`` and ``Out``), and computes the gradient with
Paddle's formula (tan's is dOut / cos(X)^2, not dOut * (1 + Out^2)), so results agree to
the last bits. Outside an inverse function's domain (asin of 2) the output is NaN, as in
Paddle.
"""
import numpy as np

from .. import random as fr
from ..errors import ShapeError
from ..ir.registry import REQUIRED, Attr, AttrType, GradSpec, Slot, in_range, register
from .activation import unary


def f32(value):
    """A FLOAT attribute as Paddle's kernels see it: rounded to float32 (0.67 is
    0.6700000166893005 there, also in float64 kernels)."""
    return float(np.float32(value))


def _math(type, kernel, grad_kernel, doc, reads="X", attrs=()):
    unary(type, kernel, grad_kernel, reads, doc, category="math", attrs=attrs)


# ------------------------------------------------------------ trigonometric
_math("tan", lambda xp, a, x: xp.tan(x),
      lambda xp, a, x, dout: dout / xp.square(xp.cos(x)), "Out = tan(X)")
_math("asin", lambda xp, a, x: xp.arcsin(x),
      lambda xp, a, x, dout: dout / xp.sqrt(1 - x * x), "Out = arcsin(X) (-1 <= X <= 1)")
_math("acos", lambda xp, a, x: xp.arccos(x),
      lambda xp, a, x, dout: -dout / xp.sqrt(1 - x * x), "Out = arccos(X) (-1 <= X <= 1)")
_math("atan", lambda xp, a, x: xp.arctan(x),
      lambda xp, a, x, dout: dout / (1 + x * x), "Out = arctan(X)")
_math("sinh", lambda xp, a, x: xp.sinh(x),
      lambda xp, a, x, dout: dout * xp.cosh(x), "Out = sinh(X)")
_math("cosh", lambda xp, a, x: xp.cosh(x),
      lambda xp, a, x, dout: dout * xp.sinh(x), "Out = cosh(X)")
_math("asinh", lambda xp, a, x: xp.arcsinh(x),
      lambda xp, a, x, dout: dout / xp.sqrt(x * x + 1), "Out = arcsinh(X)")
_math("acosh", lambda xp, a, x: xp.arccosh(x),
      lambda xp, a, x, dout: dout / xp.sqrt(x * x - 1), "Out = arccosh(X) (X >= 1)")
_math("atanh", lambda xp, a, x: xp.arctanh(x),
      lambda xp, a, x, dout: dout / (1 - x * x), "Out = arctanh(X) (-1 < X < 1)")
_math("trunc", lambda xp, a, x: xp.trunc(x),
      lambda xp, a, dout: xp.zeros_like(dout),
      "Out = X rounded toward zero (zero gradient)", reads="")


# ------------------------------------------------------------------- logit
def _logit(xp, attrs, x):
    """log(p / (1 - p)) with p = X clipped to [eps, 1 - eps]; eps = 0: no clip, and NaN
    outside [0, 1] (Paddle's LogitFunctor)."""
    eps = f32(attrs["eps"])
    p = xp.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
    out = xp.log(p / (1 - p))
    if not eps:
        out = xp.where((x < 0) | (x > 1), x.dtype.type("nan"), out)
    return out


def _logit_grad(xp, attrs, x, dout):
    """dOut / (X (1 - X)); where the forward clipped (X outside [eps, 1 - eps]) 0, and
    with eps = 0, NaN outside [0, 1] (Paddle's LogitGradFunctor)."""
    eps = f32(attrs["eps"])
    g = dout / (x * (1 - x))
    if eps:
        return xp.where((x < eps) | (x > 1 - eps), xp.zeros_like(g), g)
    return xp.where((x < 0) | (x > 1), x.dtype.type("nan"), g)


_math("logit", _logit, _logit_grad, "Out = log(X / (1 - X)), X clipped to [eps, 1 - eps]",
      attrs=[Attr("eps", AttrType.FLOAT, 1e-6, doc="clip X to [eps, 1 - eps] (0: no clip)")])


# ---------------------------------------------------- brelu (F.hardtanh), stanh
def _brelu_grad(xp, attrs, x, dout):
    # Paddle passes dOut strictly inside (t_min, t_max): 0 at the bounds themselves.
    inside = (x > f32(attrs["t_min"])) & (x < f32(attrs["t_max"]))
    return xp.where(inside, dout, xp.zeros_like(dout))


unary("brelu", lambda xp, a, x: xp.clip(x, x.dtype.type(f32(a["t_min"])),
                                      x.dtype.type(f32(a["t_max"]))),
      _brelu_grad, "X", "Out = min(max(X, t_min), t_max) (F.hardtanh)",
      attrs=[Attr("t_min", AttrType.FLOAT, 0.0, doc="lower bound"),
             Attr("t_max", AttrType.FLOAT, 24.0, doc="upper bound")])


def _stanh_grad(xp, attrs, x, dout):
    a, b = f32(attrs["scale_a"]), f32(attrs["scale_b"])
    t = xp.tanh(x * x.dtype.type(a))
    return dout * x.dtype.type(a * b) * (1 - t * t)


def _stanh(xp, attrs, x):
    return x.dtype.type(f32(attrs["scale_b"])) * xp.tanh(x * x.dtype.type(f32(attrs["scale_a"])))


unary("stanh", _stanh,
      _stanh_grad, "X", "Out = scale_b * tanh(scale_a * X)",
      attrs=[Attr("scale_a", AttrType.FLOAT, 0.67, doc="scale of X inside tanh"),
             Attr("scale_b", AttrType.FLOAT, 1.7159, doc="scale of tanh's output")])


# -------------------------------------------------------------------- rrelu
def _rrelu(xp, attrs, x):
    """Out = X * Noise, Noise = 1 where X >= 0; where X < 0 a slope drawn from
    U(lower, upper) per element in training, (lower + upper) / 2 with is_test."""
    lower, upper = f32(attrs["lower"]), f32(attrs["upper"])
    if lower > upper:
        raise ShapeError(f"op rrelu: lower ({lower}) must not exceed upper ({upper})")
    one = x.dtype.type(1)
    if attrs["is_test"]:
        # Paddle takes the mean in float32 arithmetic (its attributes' type)
        mid = float((np.float32(lower) + np.float32(upper)) / np.float32(2))
        slope = xp.full(x.shape, mid, dtype=x.dtype)
    else:
        # random() (not uniform()): the method numpy's and cupy's generators both have
        u = fr.generator(xp).random(x.shape, dtype=np.float64)
        slope = (lower + (upper - lower) * u).astype(x.dtype, copy=False)
    noise = xp.where(x < 0, slope, one)
    return x * noise, noise


def _rrelu_grad(xp, attrs, x, noise, dout):
    return xp.where(x >= 0, dout, dout * noise)


register(
    "rrelu", inputs=["X"], outputs=["Out", Slot("Noise", intermediate=True,
                                                doc="the slope used per element")],
    attrs=[Attr("lower", AttrType.FLOAT, 0.125, checker=in_range(0.0, 1.0),
                doc="lowest negative slope"),
           Attr("upper", AttrType.FLOAT, 1 / 3, checker=in_range(0.0, 1.0),
                doc="highest negative slope"),
           Attr("is_test", AttrType.BOOLEAN, False,
                doc="use the mean slope (lower + upper) / 2 instead of random ones")],
    infer_shape=lambda ctx: (ctx.set_output("Out", ctx.input("X").shape, like=ctx.input("X")),
                             ctx.set_output("Noise", ctx.input("X").shape, like=ctx.input("X"))),
    kernel=_rrelu, grad=GradSpec(_rrelu_grad, inputs=("X",), outputs=("Noise",)),
    doc="randomized leaky relu: Out = X * slope for X < 0, slope ~ U(lower, upper)",
    category="activation")


# ------------------------------------------------------------------- maxout
def _maxout_view(attrs, x):
    """X [N, C, H, W] (axis 1) or [N, H, W, C] (axis -1/3) viewed with the channel dim
    split into [C / groups, groups]; returns (view, index of the groups dim)."""
    g = attrs["groups"]
    axis = attrs["axis"] % 4 if x.ndim == 4 else attrs["axis"]
    if g <= 1 or x.ndim != 4 or axis not in (1, 3) or x.shape[axis] % g:
        raise ShapeError(f"op maxout: X {list(x.shape)} must be 4-D with its axis={attrs['axis']} "
                         f"dim divisible by groups={g} (> 1)")
    shape = x.shape[:axis] + (x.shape[axis] // g, g) + x.shape[axis + 1:]
    return x.reshape(shape), axis + 1


def _maxout(xp, attrs, x):
    v, gaxis = _maxout_view(attrs, x)
    return v.max(axis=gaxis)


def _maxout_grad(xp, attrs, x, out, dout):
    # dOut goes to the first element of its group equal to Out, as in Paddle's loop.
    v, gaxis = _maxout_view(attrs, x)
    first = xp.argmax(v == xp.expand_dims(out, gaxis), axis=gaxis)
    hit = xp.expand_dims(first, gaxis) == xp.arange(v.shape[gaxis]).reshape(
        (-1,) + (1,) * (v.ndim - gaxis - 1))
    return xp.where(hit, xp.expand_dims(dout, gaxis), xp.zeros_like(v[:1])).reshape(x.shape)


def _infer_maxout(ctx):
    x, g, axis = ctx.input("X"), ctx.attr("groups"), ctx.attr("axis")
    if len(x.shape) != 4:
        ctx.fail(f"X must be 4-D, got {list(x.shape)}", slot="X")
    if axis not in (1, -1, 3):
        ctx.fail(f"axis must be 1, -1 or 3, got {axis}")
    if g <= 1:
        ctx.fail(f"groups must be > 1, got {g} (as in Paddle)")
    shape = list(x.shape)
    c = shape[axis]
    if c >= 0 and c % g:
        ctx.fail(f"X {shape}: channel dim {c} (axis={axis}) is not divisible by groups={g}",
                 slot="X")
    shape[axis] = c // g if c >= 0 else -1
    ctx.set_output("Out", shape, like=x)


register(
    "maxout", inputs=["X"], outputs=["Out"],
    attrs=[Attr("groups", AttrType.INT, REQUIRED, doc="channels pooled into one"),
           Attr("axis", AttrType.INT, 1, doc="channel dim: 1 (NCHW) or -1/3 (NHWC)")],
    infer_shape=_infer_maxout, kernel=_maxout,
    grad=GradSpec(_maxout_grad, inputs=("X",), outputs=("Out",)),
    doc="Out = max over each group of `groups` consecutive channels", category="activation")
