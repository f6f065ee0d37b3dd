"""2-D convolution: ``conv2d`` and ``depthwise_conv2d`` with their ``_grad`` ops
(Paddle's slots and attributes; both from one definition, ``register_conv``).

Input [N, C, H, W] (NCHW; NHWC with ``data_format``), Filter [M, C/groups, kh, kw]
(always OIHW, as in Paddle) -> Output [N, M, Ho, Wo] with
``Ho = (H + pad_top + pad_bottom - (dilation_h * (kh - 1) + 1)) // stride_h + 1``.

``paddings`` is [ph, pw] or [top, bottom, left, right]; ``padding_algorithm`` SAME
pads so that ``Ho = ceil(H / stride_h)`` (the extra row at the bottom/right) and uses
dilation 1, VALID pads nothing, EXPLICIT uses ``paddings`` -- Paddle's
UpdatePaddingAndDilation.

The kernel is im2col: the padded input is gathered channel-first into columns
[C, kh, kw, N, Ho, Wo] by kh*kw strided slices (no Python loop over pixels), so with
the batch folded into the pixel axis each group is one GEMM with its filter block and
one copy puts the output back in the data layout. The gradient forms dFilter and the
column gradient as one GEMM each per group, and scatters the column gradient back the
same way (col2im). ``im2col`` (sample-first columns) serves conv2d_transpose.

``depthwise_conv2d`` is Paddle's name for the groups == channels case (MobileNet's
depthwise layers); Paddle's CPU kernel is the general grouped convolution, so it is here.
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, at_least, one_of, register, wanted

_LAYOUTS = ("NCHW", "NHWC", "AnyLayout")


def _pairs(values, what, fail):
    if len(values) != 2:
        fail(f"{what} {list(values)} must hold 2 values (height, width)")
    return list(values)


def resolve_padding(attrs, spatial, kernel, fail):
    """([top, bottom, left, right], [dil_h, dil_w]) for input dims ``spatial`` (may hold
    -1 when unknown: SAME then gives -1 paddings) and filter dims ``kernel``."""
    strides = _pairs(attrs["strides"], "strides", fail)
    dilations = _pairs(attrs["dilations"], "dilations", fail)
    pads = list(attrs["paddings"])
    if len(pads) == 2:
        pads = [pads[0], pads[0], pads[1], pads[1]]
    elif len(pads) != 4:
        fail(f"paddings {list(attrs['paddings'])} must hold 2 ([h, w]) or 4 "
             "([top, bottom, left, right]) values")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations):
        fail(f"strides {strides} and dilations {dilations} must be >= 1")
    algorithm = attrs["padding_algorithm"]
    if algorithm == "VALID":
        return [0, 0, 0, 0], dilations
    if algorithm == "SAME":
        pads = []
        for size, k, s in zip(spatial, kernel, strides):
            if size < 0 or k < 0:
                pads += [-1, -1]
                continue
            out = (size + s - 1) // s
            total = max((out - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return pads, [1, 1]
    if any(p < 0 for p in pads):
        fail(f"paddings {pads} must be >= 0")
    return pads, dilations


def _out_dim(size, pad_a, pad_b, k, dilation, stride, fail):
    """One output dim, -1 when unknown; fails when the window does not fit even once."""
    if min(size, pad_a, pad_b, k) < 0:
        return -1
    span = dilation * (k - 1) + 1
    if size + pad_a + pad_b < span:
        fail(f"the padded input dim {size} + {pad_a} + {pad_b} is smaller than the "
             f"(dilated) filter span {span}")
    return (size + pad_a + pad_b - span) // stride + 1


def _geometry(attrs, x_shape, w_shape, fail):
    """(pads, dilations, strides, [Ho, Wo]) of an NCHW input and OIHW filter."""
    pads, dilations = resolve_padding(attrs, x_shape[2:], w_shape[2:], fail)
    strides = list(attrs["strides"])
    out = [_out_dim(x_shape[2 + i], pads[2 * i], pads[2 * i + 1], w_shape[2 + i],
                    dilations[i], strides[i], fail) for i in range(2)]
    return pads, dilations, strides, out


def _nchw(attrs, x):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _checked_geometry(attrs, x, w, op="conv2d"):
    """_geometry at run time, after the channel checks shape inference also makes."""
    def fail(message):
        raise ShapeError(f"op {op}: Input {list(x.shape)} (as NCHW), Filter "
                         f"{list(w.shape)}: {message}")

    groups = attrs["groups"]
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        fail(f"Input's {x.shape[1]} channels must equal Filter's {w.shape[1]} per group x "
             f"groups={groups}, and Filter's {w.shape[0]} outputs must split into the groups")
    return _geometry(attrs, x.shape, w.shape, fail)


def window(pads, dilations, strides, out, i, j):
    """The strided slice of the padded input that filter tap (i, j) reads."""
    (dh, dw), (sh, sw), (ho, wo) = dilations, strides, out
    return (slice(None), slice(None),
            slice(i * dh, i * dh + sh * (ho - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


def im2col(xp, x, kh, kw, pads, dilations, strides, out):
    top, bottom, left, right = pads
    xpad = xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right))) if any(pads) else x
    n, c = x.shape[:2]
    cols = xp.empty((n, c, kh, kw, out[0], out[1]), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xpad[window(pads, dilations, strides, out, i, j)]
    return cols


def _padded_channel_first(xp, x, pads):
    """x [N, C, H, W] as [C, N, H + top + bottom, W + left + right] (zero padded); a view
    when there is no padding, else one copy (which the padding costs anyway)."""
    top, bottom, left, right = pads
    xt = x.transpose(1, 0, 2, 3)
    if not any(pads):
        return xt
    n, c, h, width = x.shape
    xpad = xp.zeros((c, n, h + top + bottom, width + left + right), dtype=x.dtype)
    xpad[:, :, top:top + h, left:left + width] = xt
    return xpad


def _columns(xp, x, kh, kw, pads, dilations, strides, out):
    """Channel-first columns [C, kh, kw, N, Ho, Wo] of x [N, C, H, W]: with the batch
    folded into the pixel axis, a group's convolution is one GEMM [M/g, K] @ [K, N*Ho*Wo]
    instead of N small ones (late ResNet stages have 4..16 pixels per sample)."""
    xpad = _padded_channel_first(xp, x, pads)
    n, c = x.shape[:2]
    cols = xp.empty((c, kh, kw, n, out[0], out[1]), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, i, j] = xpad[window(pads, dilations, strides, out, i, j)]
    return cols


def _conv2d(xp, attrs, x, w, op="conv2d"):
    x = _nchw(attrs, x)
    pads, dilations, strides, out = _checked_geometry(attrs, x, w, op)
    n = x.shape[0]
    m, cg, kh, kw = w.shape
    g = attrs["groups"]
    cols = _columns(xp, x, kh, kw, pads, dilations, strides, out)
    cols = cols.reshape(g, cg * kh * kw, n * out[0] * out[1])
    y = xp.matmul(w.reshape(g, m // g, cg * kh * kw), cols).reshape(m, n, out[0], out[1])
    # One output-size copy from the GEMM's channel-first order to the data layout.
    return xp.ascontiguousarray(
        y.transpose(1, 2, 3, 0) if attrs["data_format"] == "NHWC" else y.transpose(1, 0, 2, 3))


def _conv2d_grad(xp, attrs, x, w, dout, op="conv2d"):
    x, dout = _nchw(attrs, x), _nchw(attrs, dout)
    pads, dilations, strides, out = _checked_geometry(attrs, x, w, op)
    n, c, h, width = x.shape
    m, cg, kh, kw = w.shape
    g = attrs["groups"]
    k, pixels = cg * kh * kw, n * out[0] * out[1]
    # dOutput channel-first, [g, M/g, N*Ho*Wo]: the layout of the forward's GEMM.
    d = xp.ascontiguousarray(dout.transpose(1, 0, 2, 3)).reshape(g, m // g, pixels)
    dx = dw = None
    if wanted(attrs, 1):
        cols = _columns(xp, x, kh, kw, pads, dilations, strides, out).reshape(g, k, pixels)
        # The transposed view goes to BLAS as a transpose flag, not a copy.
        dw = xp.matmul(d, cols.swapaxes(-1, -2)).reshape(w.shape)
    if wanted(attrs, 0):
        dcols = xp.matmul(w.reshape(g, m // g, k).swapaxes(-1, -2), d)
        dcols = dcols.reshape(c, kh, kw, n, out[0], out[1])
        top, bottom, left, right = pads
        dpad = xp.zeros((c, n, h + top + bottom, width + left + right), dtype=dout.dtype)
        if kh == kw == 1:  # one tap: nothing overlaps, so a plain store
            dpad[window(pads, dilations, strides, out, 0, 0)] = dcols[:, 0, 0]
        else:
            for i in range(kh):
                for j in range(kw):  # taps overlap, so each adds into its strided window
                    dpad[window(pads, dilations, strides, out, i, j)] += dcols[:, i, j]
        dx = dpad[:, :, top:top + h, left:left + width]
        dx = xp.ascontiguousarray(
            dx.transpose(1, 2, 3, 0) if attrs["data_format"] == "NHWC"
            else dx.transpose(1, 0, 2, 3))
    return dx, dw


def _infer_conv2d(ctx):
    x, w = ctx.input("Input"), ctx.input("Filter")
    xs, ws = list(x.shape), list(w.shape)
    described = f"Input {xs}, Filter {ws}"

    def fail(message, slot=None):
        ctx.fail(f"{described}: {message}", slot=slot)

    if len(xs) != 4:
        fail("Input must be 4-D [N, C, H, W] (or [N, H, W, C] with NHWC)", "Input")
    if len(ws) != 4:
        fail("Filter must be 4-D [M, C/groups, kh, kw]", "Filter")
    nhwc = ctx.attr("data_format") == "NHWC"
    nchw = [xs[0], xs[3], xs[1], xs[2]] if nhwc else xs
    groups = ctx.attr("groups")
    if nchw[1] >= 0 and ws[1] >= 0 and nchw[1] != ws[1] * groups:
        fail(f"Input has {nchw[1]} channels but Filter takes {ws[1]} per group x groups="
             f"{groups} = {ws[1] * groups}", "Filter")
    if ws[0] >= 0 and ws[0] % groups:
        fail(f"Filter's {ws[0]} output channels do not split into groups={groups}", "Filter")
    _, _, _, out = _geometry(ctx.attrs, nchw, ws, fail)
    shape = [nchw[0], out[0], out[1], ws[0]] if nhwc else [nchw[0], ws[0], out[0], out[1]]
    ctx.set_output("Output", shape, like=x, lod_level=0)


def register_conv(op, doc):
    """Register ``op`` (and ``op_grad``) with conv2d's slots, attributes and kernels."""
    def kernel(xp, attrs, x, w):
        return _conv2d(xp, attrs, x, w, op)

    def grad_kernel(xp, attrs, x, w, dout):
        return _conv2d_grad(xp, attrs, x, w, dout, op)

    return register(
        op, inputs=["Input", "Filter"], outputs=["Output"], attrs=CONV_ATTRS,
        infer_shape=_infer_conv2d, kernel=kernel,
        grad=GradSpec(grad_kernel, inputs=("Input", "Filter"), out_grads=("Output",),
                      in_grads=("Input", "Filter")),
        share_lod=(), doc=doc, category="conv")


CONV_ATTRS = [
    Attr("strides", AttrType.INTS, [1, 1], doc="[stride_h, stride_w]"),
    Attr("paddings", AttrType.INTS, [0, 0], doc="[pad_h, pad_w] or [top, bottom, left, right]"),
    Attr("padding_algorithm", AttrType.STRING, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID"),
         doc="EXPLICIT: use paddings; SAME: Ho = ceil(H / stride); VALID: none"),
    Attr("dilations", AttrType.INTS, [1, 1], doc="[dilation_h, dilation_w]"),
    Attr("groups", AttrType.INT, 1, at_least(1),
         doc="channels split into groups, each with its own filters"),
    Attr("data_format", AttrType.STRING, "NCHW", one_of(*_LAYOUTS),
         doc="NCHW or NHWC (AnyLayout: NCHW)"),
]

register_conv("conv2d", "Output = 2-D convolution of Input with Filter")
register_conv("depthwise_conv2d",
              "Output = depthwise 2-D convolution (groups = input channels) of Input with Filter")
