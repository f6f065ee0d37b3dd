"""Local response normalization: ``lrn`` and ``lrn_grad`` (AlexNet's cross-channel LRN), as
Paddle 3.3.1's CPU kernels.

X [N, C, H, W] (channel-last with data_format "NHWC") ->
``MidOut[c] = k + alpha * sum(X[c']^2 for c' in [c - (n-1)//2, c - (n-1)//2 + n - 1])``
(channels outside [0, C) skipped; alpha is not divided by n, unlike Caffe) and
``Out = X * MidOut^(-beta)``. MidOut is kept for the gradient:

``dX[c] = dOut[c] * MidOut[c]^(-beta) - 2 * alpha * beta * X[c] * S[c]`` where ``S[c]`` sums
``dOut[c'] * Out[c'] / MidOut[c']`` over the channels c' whose window holds c.

The window sums are a loop over the n taps of strided channel slices (no per-pixel loop).
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register


def _channel_first(attrs, x):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _restore(xp, attrs, y):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_format"] == "NHWC" else y


def _window_sum(xp, v, n, before):
    """s[:, c] = sum of v[:, c - before + r] for r in [0, n) inside [0, C)."""
    c = v.shape[1]
    total = xp.zeros_like(v)
    for r in range(n):
        shift = r - before  # total[:, c] += v[:, c + shift]
        lo, hi = max(0, -shift), min(c, c - shift)
        if lo < hi:
            total[:, lo:hi] += v[:, lo + shift:hi + shift]
    return total


def _odd(n):
    if n >= 1 and n % 2 == 1:
        return None
    return "must be a positive odd number (Paddle's LRNInferMeta)"


def _check(attrs, x):
    if x.ndim != 4:
        raise ShapeError(f"op lrn: slot X: {list(x.shape)} must be 4-D (NCHW or NHWC)")


def _lrn(xp, attrs, x):
    _check(attrs, x)
    x = _channel_first(attrs, x)
    n = attrs["n"]
    dtype = x.dtype.type
    mid = dtype(attrs["k"]) + dtype(attrs["alpha"]) * _window_sum(xp, x * x, n, (n - 1) // 2)
    out = x * mid ** dtype(-attrs["beta"])
    return _restore(xp, attrs, out), _restore(xp, attrs, mid)


def _lrn_grad(xp, attrs, x, out, mid, dout):
    x, out, mid, dout = (_channel_first(attrs, v) for v in (x, out, mid, dout))
    n = attrs["n"]
    dtype = x.dtype.type
    alpha, beta = dtype(attrs["alpha"]), dtype(attrs["beta"])
    # c sits in the window of c' for c' in [c - (n - 1 - before), c + before]
    back = _window_sum(xp, dout * out / mid, n, n - 1 - (n - 1) // 2)
    dx = dout * mid ** (-beta) - dtype(2) * alpha * beta * x * back
    return _restore(xp, attrs, dx)


def _infer(ctx):
    x = ctx.input("X")
    if len(x.shape) != 4:
        ctx.fail(f"X {list(x.shape)} must be 4-D (NCHW or NHWC)", "X")
    ctx.set_output("Out", x.shape, like=x)
    ctx.set_output("MidOut", x.shape, like=x)


register(
    "lrn", inputs=["X"],
    outputs=["Out", Slot("MidOut", doc="k + alpha * window sum of X^2, kept for backward")],
    attrs=[Attr("n", AttrType.INT, 5, _odd, doc="channels in each window (odd)"),
           Attr("k", AttrType.FLOAT, 2.0, doc="bias added to the window sum"),
           Attr("alpha", AttrType.FLOAT, 1e-4, doc="scale of the window sum (not divided by n)"),
           Attr("beta", AttrType.FLOAT, 0.75, doc="exponent"),
           Attr("data_format", AttrType.STRING, "AnyLayout", one_of("AnyLayout", "NCHW", "NHWC"),
                doc="NCHW (AnyLayout) or NHWC")],
    infer_shape=_infer, kernel=_lrn,
    grad=GradSpec(_lrn_grad, inputs=("X",), outputs=("Out", "MidOut"), out_grads=("Out",),
                  in_grads=("X",)),
    doc="Out = X / (k + alpha * sum of X^2 over n neighbouring channels)^beta",
    category="norm")
