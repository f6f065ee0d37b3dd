"""Power-average pooling: ``lp_pool2d`` and ``lp_pool2d_grad`` (paddle.nn.LPPool2D), with
Paddle 3.3.1's slots (lower-case ``x``/``out``, the optional kernel-size tensors) and
pool2d's window rules (pool_window.Geometry: ceil_mode, SAME/VALID, global, adaptive).

``out = (sum of x^p over the window's input elements)^(1/p)`` with p = ``norm_type``
(no absolute value, as Paddle: a negative sum under an odd root gives NaN); p = inf is max
pooling (with ``adaptive``, pool2d max's quirk: plain ksize/strides windows, as Paddle);
p = 0 is refused, as Paddle's kernel does. ``exclusive`` and ``pooling_type``
(the API writes "lp") do not change the result. ``KernelSizeTensor`` (int [2]) or
``KernelSizeTensorList`` (two int [1]) replace ``kernel_size`` when given.

Gradient: ``dx = x^(p-1) * sum over the windows holding x of dout * out^(1-p)``
(max pooling's for p = inf). Paddle computes the powers in float32 even for float64 input
(its results differ from the exact ones by ~1e-7 relative); this computes them in the
input's dtype.
"""
import math

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register
from .pool_window import (FORMATS, Geometry, avg_backward, avg_forward, max_backward,
                          max_forward, to_channel_first, to_channel_last)


def _kernel_size(attrs, size_tensor, size_list):
    if size_tensor is not None:
        return [int(v) for v in size_tensor.reshape(-1).tolist()]
    if size_list:
        return [int(t.reshape(-1)[0]) for t in size_list]
    return list(attrs["kernel_size"])


def _setup(attrs, x, size_tensor, size_list):
    def fail(message):
        raise ShapeError(f"op lp_pool2d: x {list(x.shape)}: {message}")
    if x.ndim != 4:
        fail("must be 4-D (NCHW or NHWC)")
    p = attrs["norm_type"]
    if p == 0:
        fail("norm_type cannot be 0")
    last = attrs["data_format"] == "NHWC"
    x = to_channel_first(x, 2, last)
    geo_attrs = dict(attrs, ksize=_kernel_size(attrs, size_tensor, size_list))
    geo = Geometry(geo_attrs, x.shape[2:], fail, attrs["padding_algorithm"])
    if math.isinf(p) and geo.adaptive:
        geo.as_windows(fail)  # Paddle's max path reads plain windows, as pool2d max does
    return x, last, p, geo


def _window_sum(xp, v, geo):
    """Sum of ``v`` over each window's input elements (avg times its exclusive count)."""
    return avg_forward(xp, v, geo, True) * geo.divisor(xp, v.shape[2:], True, v.dtype)


def _lp_pool2d(xp, attrs, x, size_tensor, size_list):
    x, last, p, geo = _setup(attrs, x, size_tensor, size_list)
    if math.isinf(p):
        out = max_forward(xp, x, geo)
    else:
        dtype = x.dtype.type
        out = _window_sum(xp, x ** dtype(p), geo) ** dtype(1 / p)
    return xp.ascontiguousarray(to_channel_last(out.astype(x.dtype), 2, last))


def _lp_pool2d_grad(xp, attrs, x, size_tensor, size_list, out, dout):
    x, last, p, geo = _setup(attrs, x, size_tensor, size_list)
    out, dout = to_channel_first(out, 2, last), to_channel_first(dout, 2, last)
    if math.isinf(p):
        dx = max_backward(xp, x, geo, out, dout)
    else:
        dtype = x.dtype.type
        share = dout * out ** dtype(1 - p) * geo.divisor(xp, x.shape[2:], True, x.dtype)
        # avg_backward spreads share / count over each window: the count cancels
        dx = x ** dtype(p - 1) * avg_backward(xp, x.shape, geo, True, share)
    return xp.ascontiguousarray(to_channel_last(dx.astype(x.dtype), 2, last))


def _infer(ctx):
    x = ctx.input("x")
    xs = list(x.shape)

    def fail(message):
        ctx.fail(f"x {xs}: {message}", slot="x")
    if len(xs) != 4:
        fail("must be 4-D (NCHW or NHWC)")
    if ctx.attr("norm_type") == 0:
        fail("norm_type cannot be 0")
    last = ctx.attr("data_format") == "NHWC"
    spatial = xs[1:3] if last else xs[2:]
    if ctx.input("KernelSizeTensor") is not None or ctx.inputs("KernelSizeTensorList"):
        out = [-1, -1]  # the window comes at run time
    else:
        out = Geometry(dict(ctx.attrs, ksize=list(ctx.attr("kernel_size"))), spatial, fail,
                       ctx.attr("padding_algorithm")).out
    shape = [xs[0]] + out + [xs[3]] if last else xs[:2] + out
    ctx.set_output("out", shape, like=x)


register(
    "lp_pool2d",
    inputs=["x",
            Slot("KernelSizeTensor", dispensable=True, no_grad=True, doc="int [2]: kernel_size"),
            Slot("KernelSizeTensorList", duplicable=True, dispensable=True, no_grad=True,
                 doc="two int [1] tensors: kernel_size")],
    outputs=["out"],
    attrs=[
        Attr("kernel_size", AttrType.LONGS, [], doc="[kh, kw] (adaptive: the output size)"),
        Attr("strides", AttrType.INTS, [1, 1], doc="[stride_h, stride_w]"),
        Attr("paddings", AttrType.INTS, [0, 0],
             doc="[ph, pw] or [top, bottom, left, right]; padding adds nothing to the sum"),
        Attr("ceil_mode", AttrType.BOOLEAN, False, doc="round the output size up"),
        Attr("exclusive", AttrType.BOOLEAN, True, doc="no effect on lp pooling"),
        Attr("data_format", AttrType.STRING, "NCHW", one_of(*FORMATS[2], "AnyLayout")),
        Attr("pooling_type", AttrType.STRING, "", doc="the API writes 'lp'; not read"),
        Attr("global_pooling", AttrType.BOOLEAN, False, doc="one window over the whole plane"),
        Attr("adaptive", AttrType.BOOLEAN, False, doc="kernel_size is the output size"),
        Attr("padding_algorithm", AttrType.STRING, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID")),
        Attr("norm_type", AttrType.FLOAT, 0.0, doc="p (inf: max pooling; 0 is refused)"),
    ],
    infer_shape=_infer, kernel=_lp_pool2d,
    grad=GradSpec(_lp_pool2d_grad, inputs=("x", "KernelSizeTensor", "KernelSizeTensorList"),
                  outputs=("out",), out_grads=("out",), in_grads=("x",)),
    doc="out = (sum of x^p over each window)^(1/p) (power-average pooling)", category="pool")
