"""3-D convolutions: ``conv3d`` and ``conv3d_transpose`` with their ``_grad`` ops (Paddle
3.3.1's slots and attributes; Paddle has no depthwise_conv3d).

conv3d: Input [N, C, D, H, W] (NCDHW; NDHWC with ``data_format``), Filter
[M, C/groups, kd, kh, kw] -> Output [N, M, Do, Ho, Wo], each dim as conv2d's
``(size + pad_a + pad_b - (dilation * (k - 1) + 1)) // stride + 1``. ``paddings`` is
[pd, ph, pw] or [front, back, top, bottom, left, right]; ``padding_algorithm`` SAME/VALID
as conv2d (Paddle's UpdatePaddingAndDilation: SAME uses dilation 1).

conv3d_transpose: Input [N, C_in, D, H, W], Filter [C_in, C_out/groups, kd, kh, kw] ->
Output dims ``(size - 1) * stride - pad_a - pad_b + dilation * (k - 1) + 1``, plus
``output_padding`` or exactly ``output_size`` (in [that, that + stride)), as Paddle's
ConvTransposeInferMeta. Its ``data_format`` defaults to "NCHW" in Paddle's OpProto (the
Python API writes "NCHW"/"NHWC" for it); there only "NHWC" means channel-last, as in
Paddle, whose conv3d_transpose reads "NDHWC" as channel-first (conv3d: both do).

The kernels are conv.py's im2col in three spatial dims: kd*kh*kw strided slices gather
[N, C, kd, kh, kw, Do, Ho, Wo] columns (a Python loop over filter taps only), one batched
matmul per group; gradients scatter back with strided adds (col2im).
"""
import itertools

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, at_least, one_of, register, wanted

ND = 3
_LAYOUTS = ("NCDHW", "NDHWC", "NCHW", "NHWC", "AnyLayout")
_LAST = ("NDHWC", "NHWC")


def _is_last(attrs):
    # conv3d reads NDHWC and NHWC as channel-last; Paddle's conv3d_transpose (whose Python
    # API writes "NHWC") only NHWC: its ConvTransposeInferMeta and kernel read "NDHWC"
    # as channel-first, and so does this
    if attrs.get("output_size") is not None:  # the transpose's attributes
        return attrs["data_format"] == "NHWC"
    return attrs["data_format"] in _LAST


def _triple(values, what, fail):
    if len(values) != ND:
        fail(f"{what} {list(values)} must hold 3 values (depth, height, width)")
    return list(values)


def resolve_padding(attrs, spatial, kernel, fail):
    """([front, back, top, bottom, left, right], dilations) for input dims ``spatial``
    (-1 when unknown: SAME then gives -1 paddings) and filter dims ``kernel``."""
    strides = _triple(attrs["strides"], "strides", fail)
    dilations = _triple(attrs["dilations"], "dilations", fail)
    pads = list(attrs["paddings"])
    if len(pads) == ND:
        pads = [p for p in pads for _ in range(2)]
    elif len(pads) != 2 * ND:
        fail(f"paddings {pads} must hold 3 ([d, h, w]) or 6 ([front, back, top, bottom, "
             "left, right]) values")
    if min(strides) < 1 or min(dilations) < 1:
        fail(f"strides {strides} and dilations {dilations} must be >= 1")
    algorithm = attrs["padding_algorithm"]
    if algorithm == "VALID":
        return [0] * (2 * ND), dilations
    if algorithm == "SAME":
        pads = []
        for size, k, s in zip(spatial, kernel, strides):
            if size < 0 or k < 0:
                pads += [-1, -1]
                continue
            total = max((-(-size // s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return pads, [1] * ND
    if min(pads) < 0:
        fail(f"paddings {pads} must be >= 0")
    return pads, dilations


def window(dilations, strides, out, tap):
    """The strided slice of the padded volume that filter tap ``tap`` reads."""
    return (slice(None), slice(None)) + tuple(
        slice(t * d, t * d + s * (o - 1) + 1, s)
        for t, d, s, o in zip(tap, dilations, strides, out))


def _taps(ksize):
    return itertools.product(*[range(k) for k in ksize])


def im2col(xp, x, ksize, pads, dilations, strides, out):
    """Columns [N, C, *ksize, *out] of ``x`` [N, C, *spatial] padded by ``pads``."""
    xpad = xp.pad(x, ((0, 0), (0, 0)) + tuple(zip(pads[::2], pads[1::2]))) if any(pads) else x
    cols = xp.empty(tuple(x.shape[:2]) + tuple(ksize) + tuple(out), dtype=x.dtype)
    for tap in _taps(ksize):
        cols[(slice(None), slice(None)) + tap] = xpad[window(dilations, strides, out, tap)]
    return cols


def col2im(xp, cols, frame, ksize, dilations, strides, out):
    """Strided adds of columns [N, C, *ksize, *out] into a zero volume of dims ``frame``."""
    vol = xp.zeros(tuple(cols.shape[:2]) + tuple(frame), dtype=cols.dtype)
    for tap in _taps(ksize):  # taps overlap: each adds into its own window
        vol[window(dilations, strides, out, tap)] += cols[(slice(None), slice(None)) + tap]
    return vol


def _channel_first(attrs, x):
    return x.transpose(0, 4, 1, 2, 3) if _is_last(attrs) else x


def _restore(xp, attrs, y):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 4, 1)) if _is_last(attrs) else y


def _crop(pads, out):
    return (slice(None), slice(None)) + tuple(slice(pads[2 * i], pads[2 * i] + out[i])
                                              for i in range(ND))


# ------------------------------------------------------------------ conv3d
def _conv_geometry(attrs, xs, ws, fail):
    pads, dilations = resolve_padding(attrs, xs[2:], ws[2:], fail)
    out = []
    for i in range(ND):
        size, k, a, b = xs[2 + i], ws[2 + i], pads[2 * i], pads[2 * i + 1]
        if min(size, k, a, b) < 0:
            out.append(-1)
            continue
        span = dilations[i] * (k - 1) + 1
        if size + a + b < span:
            fail(f"the padded input dim {size} + {a} + {b} is smaller than the (dilated) "
                 f"filter span {span}")
        out.append((size + a + b - span) // attrs["strides"][i] + 1)
    return pads, dilations, list(attrs["strides"]), out


def _conv_checked(op, attrs, x, w):
    def fail(message):
        raise ShapeError(f"op {op}: Input {list(x.shape)} (as NCDHW), Filter {list(w.shape)}: "
                         f"{message}")
    g = attrs["groups"]
    if x.ndim != 5 or w.ndim != 5:
        fail("Input and Filter must be 5-D")
    if x.shape[1] != w.shape[1] * g or w.shape[0] % g:
        fail(f"Input's {x.shape[1]} channels must equal Filter's {w.shape[1]} per group x "
             f"groups={g}, and Filter's {w.shape[0]} outputs must split into the groups")
    return _conv_geometry(attrs, x.shape, w.shape, fail)


def _conv3d(xp, attrs, x, w):
    x = _channel_first(attrs, x)
    pads, dilations, strides, out = _conv_checked("conv3d", attrs, x, w)
    n, m, g = x.shape[0], w.shape[0], attrs["groups"]
    k = w[0].size
    cols = im2col(xp, x, w.shape[2:], pads, dilations, strides, out).reshape(n, g, k, -1)
    y = xp.matmul(w.reshape(1, g, m // g, k), cols).reshape((n, m) + tuple(out))
    return _restore(xp, attrs, y)


def _conv3d_grad(xp, attrs, x, w, dout):
    x, dout = _channel_first(attrs, x), _channel_first(attrs, dout)
    pads, dilations, strides, out = _conv_checked("conv3d", attrs, x, w)
    n, m, g = x.shape[0], w.shape[0], attrs["groups"]
    k = w[0].size
    d = dout.reshape(n, g, m // g, -1)
    dx = dw = None
    if wanted(attrs, 1):
        cols = im2col(xp, x, w.shape[2:], pads, dilations, strides, out).reshape(n, g, k, -1)
        # batch folded into the voxel axis: one matmul per group sums over samples
        d_flat = d.transpose(1, 2, 0, 3).reshape(g, m // g, -1)
        c_flat = cols.transpose(1, 0, 3, 2).reshape(g, -1, k)
        dw = xp.matmul(d_flat, c_flat).reshape(w.shape)
    if wanted(attrs, 0):
        dcols = xp.matmul(w.reshape(1, g, m // g, k).swapaxes(-1, -2), d)
        dcols = dcols.reshape(tuple(x.shape[:2]) + tuple(w.shape[2:]) + tuple(out))
        frame = [x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] for i in range(ND)]
        vol = col2im(xp, dcols, frame, w.shape[2:], dilations, strides, out)
        dx = _restore(xp, attrs, xp.ascontiguousarray(vol[_crop(pads, x.shape[2:])]))
    return dx, dw


def _as_ncdhw(ctx, what):
    x, w = ctx.input("Input"), ctx.input("Filter")
    xs, ws = list(x.shape), list(w.shape)

    def fail(message, slot=None):
        ctx.fail(f"Input {xs}, Filter {ws}: {message}", slot=slot)
    if len(xs) != 5:
        fail("Input must be 5-D [N, C, D, H, W] (or [N, D, H, W, C] with NDHWC)", "Input")
    if len(ws) != 5:
        fail(f"Filter must be 5-D {what}", "Filter")
    last = _is_last(ctx.attrs)
    return x, (xs[:1] + xs[4:] + xs[1:4] if last else xs), ws, last, fail


def _infer_conv3d(ctx):
    x, xs, ws, last, fail = _as_ncdhw(ctx, "[M, C/groups, kd, kh, kw]")
    g = ctx.attr("groups")
    if xs[1] >= 0 and ws[1] >= 0 and xs[1] != ws[1] * g:
        fail(f"Input has {xs[1]} channels but Filter takes {ws[1]} per group x groups={g}",
             "Filter")
    if ws[0] >= 0 and ws[0] % g:
        fail(f"Filter's {ws[0]} output channels do not split into groups={g}", "Filter")
    out = _conv_geometry(ctx.attrs, xs, ws, fail)[3]
    shape = [xs[0]] + out + [ws[0]] if last else [xs[0], ws[0]] + out
    ctx.set_output("Output", shape, like=x, lod_level=0)


# ------------------------------------------------------------ conv3d_transpose
def _transpose_geometry(attrs, xs, ws, fail):
    pads, dilations = resolve_padding(attrs, xs[2:], ws[2:], fail)
    strides = list(attrs["strides"])
    size_attr, extra = list(attrs["output_size"]), list(attrs["output_padding"])
    for name, values in (("output_size", size_attr), ("output_padding", extra)):
        if values and len(values) != ND:
            fail(f"{name} {values} must be empty or hold 3 values (depth, height, width)")
    out = []
    for i in range(ND):
        size, k = xs[2 + i], ws[2 + i]
        natural = -1
        if min(size, k, pads[2 * i]) >= 0:
            natural = ((size - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1]
                       + dilations[i] * (k - 1) + 1)
            if natural <= 0:
                fail(f"the output dim {natural} is not positive (input dim {size}, paddings "
                     f"{pads[2 * i]} + {pads[2 * i + 1]}, filter {k})")
        if size_attr:
            if natural >= 0 and not natural <= size_attr[i] < natural + strides[i]:
                fail(f"output_size {size_attr} dim {i} must lie in [{natural}, "
                     f"{natural + strides[i]}) (the inferred size + stride)")
            out.append(size_attr[i])
        elif extra:
            if not 0 <= extra[i] < max(strides[i], dilations[i]):
                fail(f"output_padding {extra} dim {i} must be >= 0 and < max(stride, "
                     f"dilation) = {max(strides[i], dilations[i])}")
            out.append(natural + extra[i] if natural >= 0 else -1)
        else:
            out.append(natural)
    return pads, dilations, strides, out


def _transpose_checked(attrs, x, w):
    def fail(message):
        raise ShapeError(f"op conv3d_transpose: Input {list(x.shape)} (as NCDHW), Filter "
                         f"{list(w.shape)}: {message}")
    if x.ndim != 5 or w.ndim != 5:
        fail("Input and Filter must be 5-D")
    if x.shape[1] != w.shape[0] or x.shape[1] % attrs["groups"]:
        fail(f"Input's {x.shape[1]} channels must equal Filter's first dim {w.shape[0]} "
             f"and split into groups={attrs['groups']}")
    pads, dilations, strides, out = _transpose_geometry(attrs, x.shape, w.shape, fail)
    # the uncropped frame: every tap's reach, and the requested output
    full = [max((x.shape[2 + i] - 1) * strides[i] + dilations[i] * (w.shape[2 + i] - 1) + 1,
                pads[2 * i] + out[i]) for i in range(ND)]
    return pads, dilations, strides, out, full


def _conv3d_transpose(xp, attrs, x, w):
    x = _channel_first(attrs, x)
    pads, dilations, strides, out, full = _transpose_checked(attrs, x, w)
    n, c_in, g = x.shape[0], x.shape[1], attrs["groups"]
    cig, k = c_in // g, w[0].size
    wg = w.reshape(g, cig, k).swapaxes(-1, -2)[None]
    cols = xp.matmul(wg, x.reshape(n, g, cig, -1))
    cols = cols.reshape((n, g * w.shape[1]) + tuple(w.shape[2:]) + tuple(x.shape[2:]))
    vol = col2im(xp, cols, full, w.shape[2:], dilations, strides, x.shape[2:])
    return _restore(xp, attrs, xp.ascontiguousarray(vol[_crop(pads, out)]))


def _conv3d_transpose_grad(xp, attrs, x, w, dout):
    x, dout = _channel_first(attrs, x), _channel_first(attrs, dout)
    pads, dilations, strides, out, full = _transpose_checked(attrs, x, w)
    n, c_in, g = x.shape[0], x.shape[1], attrs["groups"]
    cig, k = c_in // g, w[0].size
    # dOutput placed back in the uncropped frame, then conv3d's im2col over Input's grid
    frame = []
    for i in range(ND):
        frame += [pads[2 * i], full[i] - pads[2 * i] - out[i]]
    cols = im2col(xp, dout, w.shape[2:], frame, dilations, strides, x.shape[2:])
    cols = cols.reshape(n, g, k, -1)
    dx = dw = None
    if wanted(attrs, 0):
        dx = xp.matmul(w.reshape(1, g, cig, k), cols).reshape(x.shape)
        dx = _restore(xp, attrs, dx)
    if wanted(attrs, 1):
        x_flat = x.reshape(n, g, cig, -1).transpose(1, 2, 0, 3).reshape(g, cig, -1)
        c_flat = cols.transpose(1, 0, 3, 2).reshape(g, -1, k)
        dw = xp.matmul(x_flat, c_flat).reshape(w.shape)
    return dx, dw


def _infer_conv3d_transpose(ctx):
    x, xs, ws, last, fail = _as_ncdhw(ctx, "[C_in, C_out/groups, kd, kh, kw]")
    g = ctx.attr("groups")
    if xs[1] >= 0 and ws[0] >= 0 and xs[1] != ws[0]:
        fail(f"Input has {xs[1]} channels but Filter's first dim is {ws[0]}", "Filter")
    if xs[1] >= 0 and xs[1] % g:
        fail(f"Input's {xs[1]} channels do not split into groups={g}", "Input")
    out = _transpose_geometry(ctx.attrs, xs, ws, fail)[3]
    c_out = ws[1] * g if ws[1] >= 0 else -1
    shape = [xs[0]] + out + [c_out] if last else [xs[0], c_out] + out
    ctx.set_output("Output", shape, like=x, lod_level=0)


# ------------------------------------------------------------------ registration
def _attrs(data_format, transpose):
    attrs = [
        Attr("strides", AttrType.INTS, [1, 1, 1], doc="[stride_d, stride_h, stride_w]"),
        Attr("paddings", AttrType.INTS, [0, 0, 0],
             doc="[pd, ph, pw] or [front, back, top, bottom, left, right]"),
        Attr("padding_algorithm", AttrType.STRING, "EXPLICIT",
             one_of("EXPLICIT", "SAME", "VALID"),
             doc="EXPLICIT: use paddings; SAME: from the input dims, dilation 1; VALID: none"),
        Attr("groups", AttrType.INT, 1, at_least(1), doc="channels split into groups"),
        Attr("dilations", AttrType.INTS, [1, 1, 1], doc="[dilation_d, dilation_h, dilation_w]"),
        Attr("data_format", AttrType.STRING, data_format, one_of(*_LAYOUTS),
             doc="NCDHW or NDHWC (NCHW/AnyLayout: channel-first, NHWC: channel-last)"),
    ]
    if transpose:
        attrs[:0] = [
            Attr("output_padding", AttrType.INTS, [],
                 doc="extra planes/rows/cols at the far side "
                     "([] or 3 values < max(stride, dilation))"),
            Attr("output_size", AttrType.INTS, [],
                 doc="exact output [Do, Ho, Wo] ([]: inferred); in [inferred, inferred + stride)"),
        ]
    return attrs


_GRAD = dict(inputs=("Input", "Filter"), out_grads=("Output",), in_grads=("Input", "Filter"))
register("conv3d", inputs=["Input", "Filter"], outputs=["Output"],
         attrs=_attrs("NCDHW", False), infer_shape=_infer_conv3d, kernel=_conv3d,
         grad=GradSpec(_conv3d_grad, **_GRAD), share_lod=(),
         doc="Output = 3-D convolution of Input with Filter", category="conv")
register("conv3d_transpose", inputs=["Input", "Filter"], outputs=["Output"],
         attrs=_attrs("NCHW", True), infer_shape=_infer_conv3d_transpose,
         kernel=_conv3d_transpose, grad=GradSpec(_conv3d_transpose_grad, **_GRAD), share_lod=(),
         doc="Output = transposed 3-D convolution (deconvolution) of Input", category="conv")
