"""More activations: the ReLU family, smooth and shrinking activations, gelu, log_softmax
and prelu, with Paddle's op names, attributes and gradient slots.

Each grad kernel reads what Paddle 3.3.1's grad op reads (``reads`` in the table:
``X``, ``Out`` or both) and matches Paddle's value at the kinks (leaky_relu's slope
at 0 is 1, selu's at 0 is scale * alpha). The exp-based functions are written in
forms that never overflow and keep both tails exact (softplus as
max(z, 0) + log1p(exp(-|z|)), the logistic from exp(-|z|)), so large inputs saturate
cleanly in float32 too.

relu6 and swish have no attributes: Paddle 3.3.1 fixes relu6's threshold at 6 and
swish's beta at 1 (old files' ``threshold``/``beta`` are runtime-only extras it
ignores). hard_swish keeps its threshold/scale/offset attributes and honours them
(Paddle 3.3.1's kernel ignores them and uses 6/6/3, which are the defaults). Gradients
are the derivatives of the forward functions; tests/op_matrix/cases_activation_more.py
lists the few places where Paddle's differ (silu at X << 0, mish over a small threshold).
"""
import math

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, one_of, register, wanted
from .activation import clipped_shift, infer_softmax, unary
from .special import SQRT_2_OVER_PI, TWO_OVER_SQRT_PI, erf

F = AttrType.FLOAT


def _sigmoid(xp, z):
    """The logistic function, accurate to the last bit in both tails and without exp
    overflow: exp(-|z|) / (1 + exp(-|z|)) for z < 0 (the tanh form loses all relative
    precision there: at z = -30 it is off by 2e-4 in float64 and is 0 in float32)."""
    e = xp.exp(-xp.abs(z))
    return xp.where(z >= 0, 1, e) / (1 + e)


def _softplus(xp, z):
    """log(1 + exp(z)) without overflow."""
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))


# ---------------------------------------------------------------- ReLU family
unary("relu6", lambda xp, a, x: xp.clip(x, 0, 6),
      lambda xp, a, out, dout: dout * ((out > 0) & (out < 6)),
      "Out", "Out = min(max(X, 0), 6)")
unary("leaky_relu", lambda xp, a, x: xp.where(x > 0, x, x * a["alpha"]),
      lambda xp, a, x, dout: xp.where(x >= 0, dout, dout * a["alpha"]),
      "X", "Out = X if X > 0 else alpha * X",
      attrs=[Attr("alpha", F, 0.02, doc="slope for X < 0")])
unary("thresholded_relu", lambda xp, a, x: xp.where(x > a["threshold"], x, a["value"]).astype(
          x.dtype, copy=False),
      lambda xp, a, x, dout: dout * (x > a["threshold"]),
      "X", "Out = X if X > threshold else value",
      attrs=[Attr("threshold", F, 1.0), Attr("value", F, 0.0, doc="output below the threshold")])
unary("elu", lambda xp, a, x: xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0)) * a["alpha"]),
      # for X <= 0, Out + alpha = alpha * exp(X): Paddle's form, reading both
      lambda xp, a, x, out, dout: xp.where(x > 0, dout, dout * (out + a["alpha"])),
      "X,Out", "Out = X if X > 0 else alpha * (exp(X) - 1)",
      attrs=[Attr("alpha", F, 1.0)])


def _selu(xp, a, x):
    neg = xp.expm1(xp.minimum(x, 0)) * a["alpha"]
    return xp.where(x > 0, x, neg) * a["scale"]


unary("selu", _selu,
      lambda xp, a, out, dout: xp.where(out > 0, dout * a["scale"],
                                        dout * (out + a["scale"] * a["alpha"])),
      "Out", "Out = scale * (X if X > 0 else alpha * (exp(X) - 1))",
      attrs=[Attr("scale", F, 1.0507009873554805), Attr("alpha", F, 1.6732632423543772)])


def _celu(xp, a, x):
    alpha = a["alpha"]
    return xp.maximum(x, 0) + xp.minimum(xp.expm1(x / alpha) * alpha, 0)


unary("celu", _celu,
      lambda xp, a, x, dout: xp.where(x > 0, dout, dout * xp.exp(xp.minimum(x, 0) / a["alpha"])),
      "X", "Out = max(0, X) + min(0, alpha * (exp(X / alpha) - 1))",
      attrs=[Attr("alpha", F, 1.0, checker=lambda v: "must not be 0" if v == 0 else None)])


# ------------------------------------------------------ sigmoid-shaped / smooth
def _hard_sigmoid(xp, a, x):
    return xp.clip(x * a["slope"] + a["offset"], 0, 1)


unary("hard_sigmoid", _hard_sigmoid,
      lambda xp, a, out, dout: dout * ((out > 0) & (out < 1)) * a["slope"],
      "Out", "Out = clip(slope * X + offset, 0, 1)",
      attrs=[Attr("slope", F, 0.2), Attr("offset", F, 0.5)])


def _hard_swish(xp, a, x):
    return x * xp.clip(x + a["offset"], 0, a["threshold"]) / a["scale"]


def _hard_swish_grad(xp, a, x, dout):
    shifted = x + a["offset"]
    inside = (2 * x + a["offset"]) / a["scale"]
    above = a["threshold"] / a["scale"]  # 1 at Paddle's fixed 6/6/3
    g = xp.where(shifted <= 0, 0, xp.where(shifted < a["threshold"], inside, above))
    return dout * g


unary("hard_swish", _hard_swish, _hard_swish_grad,
      "X", "Out = X * min(max(X + offset, 0), threshold) / scale",
      attrs=[Attr("threshold", F, 6.0), Attr("scale", F, 6.0), Attr("offset", F, 3.0)])


def _silu_grad(xp, a, x, out, dout):
    s = _sigmoid(xp, x)
    return dout * s * (1 + x * (1 - s))


unary("silu", lambda xp, a, x: x * _sigmoid(xp, x), _silu_grad,
      "X,Out", "Out = X * sigmoid(X)")
unary("swish", lambda xp, a, x: x * _sigmoid(xp, x),
      lambda xp, a, x, dout: _silu_grad(xp, a, x, None, dout),
      "X", "Out = X * sigmoid(X) (Paddle 3.3.1 fixes beta at 1)")
unary("logsigmoid", lambda xp, a, x: -_softplus(xp, -x),
      lambda xp, a, x, dout: dout * _sigmoid(xp, -x),
      "X", "Out = log(1 / (1 + exp(-X)))")


def _softplus_op(xp, a, x):
    beta = a["beta"]
    z = x * beta
    return xp.where(z > a["threshold"], x, _softplus(xp, z) / beta)


unary("softplus", _softplus_op,
      lambda xp, a, x, dout: xp.where(x * a["beta"] > a["threshold"], dout,
                                      dout * _sigmoid(xp, x * a["beta"])),
      "X", "Out = log(1 + exp(beta * X)) / beta, or X where beta * X > threshold",
      attrs=[Attr("beta", F, 1.0), Attr("threshold", F, 20.0)])
unary("softsign", lambda xp, a, x: x / (1 + xp.abs(x)),
      lambda xp, a, x, dout: dout / ((1 + xp.abs(x)) ** 2),
      "X", "Out = X / (1 + |X|)")


def _mish_sp(xp, a, x):
    # Paddle's softplus inside mish switches to X itself above the threshold
    return xp.where(x > a["threshold"], x, _softplus(xp, x))


def _mish_grad(xp, a, x, dout):
    t = xp.tanh(_mish_sp(xp, a, x))
    ds = xp.where(x > a["threshold"], 1, _sigmoid(xp, x))
    return dout * (t + x * (1 - t * t) * ds)


unary("mish", lambda xp, a, x: x * xp.tanh(_mish_sp(xp, a, x)), _mish_grad,
      "X", "Out = X * tanh(softplus(X))",
      attrs=[Attr("threshold", F, 20.0, doc="softplus(X) is taken as X above it")])


# ------------------------------------------------------------------------ gelu
# The erf form runs in float64 whatever X's dtype: 1 + erf(X / sqrt(2)) cancels for
# X << 0, which in float32 costs the gradient its leading digits (Paddle's float32
# kernel is 4% off at X = -5.3; ours stays within 3e-7).
def _gelu(xp, a, x):
    if a["approximate"]:
        return x * 0.5 * (1 + xp.tanh((x + x * x * x * 0.044715) * SQRT_2_OVER_PI))
    x64 = xp.asarray(x, dtype=xp.float64)
    out = x64 * 0.5 * (1 + erf(xp, x64 * (1 / math.sqrt(2.0))))
    return out.astype(x.dtype, copy=False)


def _gelu_grad(xp, a, x, dout):
    if a["approximate"]:
        t = xp.tanh((x + x * x * x * 0.044715) * SQRT_2_OVER_PI)
        dinner = (1 + x * x * (3 * 0.044715)) * SQRT_2_OVER_PI
        return dout * (0.5 * (1 + t) + x * 0.5 * (1 - t * t) * dinner)
    x64 = xp.asarray(x, dtype=xp.float64)
    cdf = 0.5 * (1 + erf(xp, x64 * (1 / math.sqrt(2.0))))
    pdf = xp.exp(x64 * x64 * -0.5) * (TWO_OVER_SQRT_PI / (2 * math.sqrt(2.0)))
    return (dout * (cdf + x64 * pdf)).astype(dout.dtype, copy=False)


unary("gelu", _gelu, _gelu_grad, "X",
      "Out = X * Phi(X) (exact, with erf) or its tanh approximation",
      attrs=[Attr("approximate", AttrType.BOOLEAN, False, doc="use the tanh form")])


# ------------------------------------------------------------------- shrinking
unary("tanh_shrink", lambda xp, a, x: x - xp.tanh(x),
      lambda xp, a, x, dout: dout * xp.tanh(x) ** 2,
      "X", "Out = X - tanh(X)")


def _outside(x, t):
    return (x < -t) | (x > t)


unary("hard_shrink", lambda xp, a, x: xp.where(_outside(x, a["threshold"]), x, 0).astype(
          x.dtype, copy=False),
      lambda xp, a, x, dout: dout * _outside(x, a["threshold"]),
      "X", "Out = X if |X| > threshold else 0",
      attrs=[Attr("threshold", F, 0.5)])


def _softshrink(xp, a, x):
    lam = a["lambda"]
    return xp.where(x > lam, x - lam, xp.where(x < -lam, x + lam, 0)).astype(x.dtype, copy=False)


unary("softshrink", _softshrink,
      lambda xp, a, x, dout: dout * _outside(x, a["lambda"]),
      "X", "Out = X - lambda if X > lambda, X + lambda if X < -lambda, else 0",
      attrs=[Attr("lambda", F, 0.5, checker=lambda v: "must be >= 0" if v < 0 else None)])


# ----------------------------------------------------------------- log_softmax
def _log_softmax(xp, attrs, x):
    """X - max - log(sum(exp(X - max))) along ``axis``, X - max clipped at -64 as
    Paddle does (see activation.clipped_shift)."""
    if x.ndim == 0:
        return xp.zeros_like(x)
    axis = attrs["axis"]
    shifted = clipped_shift(xp, x, axis)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _log_softmax_grad(xp, attrs, out, dout):
    """dX = dOut - exp(Out) * sum(dOut, axis)."""
    if out.ndim == 0:
        return xp.zeros_like(dout)
    return dout - xp.exp(out) * dout.sum(axis=attrs["axis"], keepdims=True)


register(
    "log_softmax", inputs=["X"], outputs=["Out"],
    attrs=[Attr("axis", AttrType.INT, -1, doc="the dim normalised (negative counts from the end)")],
    infer_shape=infer_softmax, kernel=_log_softmax,
    grad=GradSpec(_log_softmax_grad, inputs=(), outputs=("Out",)),
    doc="Out = log(softmax(X)) along axis, computed stably", category="activation")


# ----------------------------------------------------------------------- prelu
def _alpha_shape(mode, data_format, x_shape):
    """The shape Alpha broadcasts as against X, per mode (Paddle's three layouts)."""
    rank = len(x_shape)
    if mode == "all":
        return (1,) * rank
    if mode == "channel":
        channel = 1 if data_format.startswith("NC") else rank - 1
        return tuple(d if i == channel else 1 for i, d in enumerate(x_shape))
    return (1,) + tuple(x_shape[1:])


def _infer_prelu(ctx):
    x, alpha = ctx.input("X"), ctx.input("Alpha")
    mode, fmt = ctx.attr("mode"), ctx.attr("data_format")
    rank = len(x.shape)
    if mode != "all" and rank < 2:
        ctx.fail(f"mode '{mode}' needs X of rank >= 2, got {list(x.shape)}", slot="X")
    want = _alpha_shape(mode, fmt, x.shape)
    if mode == "all":
        need = 1
    elif any(d < 0 for d in want):
        need = None  # an unknown dim: checked at run time
    else:
        need = math.prod(want)
    have = math.prod(alpha.shape) if all(d >= 0 for d in alpha.shape) else None
    if need is not None and have is not None and have != need:
        ctx.fail(f"mode '{mode}' ({fmt}) takes an Alpha of {need} elements for X "
                 f"{list(x.shape)}, got Alpha {list(alpha.shape)}", slot="Alpha")
    ctx.set_output("Out", x.shape, like=x)


def _prelu_alpha(alpha, attrs, x):
    shape = _alpha_shape(attrs["mode"], attrs["data_format"], x.shape)
    if alpha.size != math.prod(shape):
        raise ShapeError(f"op prelu: slot Alpha: mode '{attrs['mode']}' takes "
                         f"{math.prod(shape)} elements for X {list(x.shape)}, got Alpha "
                         f"{list(alpha.shape)}")
    return alpha.reshape(shape)


def _prelu(xp, attrs, x, alpha):
    a = _prelu_alpha(alpha, attrs, x)
    return xp.where(x > 0, x, a * x)


def _prelu_grad(xp, attrs, x, alpha, dout):
    a = _prelu_alpha(alpha, attrs, x)
    dx = xp.where(x > 0, dout, a * dout) if wanted(attrs, 0) else None
    dalpha = None
    if wanted(attrs, 1):
        contrib = xp.where(x > 0, 0, x * dout)
        axes = tuple(i for i, (n, m) in enumerate(zip(a.shape, contrib.shape)) if n == 1 and m != 1)
        dalpha = contrib.sum(axis=axes, keepdims=True).reshape(alpha.shape).astype(
            alpha.dtype, copy=False)
    return dx, dalpha


register(
    "prelu", inputs=["X", "Alpha"], outputs=["Out"],
    attrs=[Attr("data_format", AttrType.STRING, "NCHW",
                checker=one_of("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"),
                doc="where the channel dim is (mode 'channel')"),
           Attr("mode", AttrType.STRING, "all", checker=one_of("all", "channel", "element"),
                doc="all: one slope; channel: one per channel; element: one per element")],
    infer_shape=_infer_prelu, kernel=_prelu,
    grad=GradSpec(_prelu_grad, inputs=("X", "Alpha"), in_grads=("X", "Alpha")),
    doc="Out = X if X > 0 else Alpha * X, with a learned Alpha", category="activation")
