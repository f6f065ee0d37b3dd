"""Transposed 2-D convolution: ``conv2d_transpose`` and ``depthwise_conv2d_transpose``
with their ``_grad`` ops (Paddle's slots and attributes; one definition for both).

Input [N, C_in, H, W] (NHWC with ``data_format``), Filter [C_in, C_out/groups, kh, kw]
-> Output [N, C_out, Ho, Wo] with (Paddle's ConvTransposeInferMeta)
``Ho = (H - 1) * stride - pad_top - pad_bottom + dilation * (kh - 1) + 1``, plus
``output_padding`` (each < max(stride, dilation)), or exactly ``output_size`` (which must
lie in [Ho, Ho + stride)). ``paddings``/``padding_algorithm`` resolve as in conv2d (SAME
computes the paddings from the *input* dims and uses dilation 1).

The kernel is the adjoint of conv2d's im2col: one batched matmul per group gives the
columns [N, C_out, kh, kw, H, W], and kh*kw strided adds (col2im) scatter them into the
full output, which is then cropped by the paddings (or extended with zeros to
``output_size``). The gradient of Input is conv2d's im2col of dOutput followed by a
matmul, and dFilter one batched matmul over the batch.

``Bias`` is Paddle's dispensable oneDNN-only input (Paddle's CPU kernel has none; its
fuse passes add it for inference): when given, [C_out] is added per channel; it takes no
gradient, as in Paddle.
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, at_least, one_of, register, wanted
from .conv import im2col, resolve_padding, window

_LAYOUTS = ("NCHW", "NHWC", "AnyLayout")


def _geometry(attrs, x_shape, w_shape, fail):
    """(pads, dilations, strides, [Ho, Wo]) for NCHW Input dims and the Filter dims;
    output dims are -1 where an input dim is unknown."""
    pads, dilations = resolve_padding(attrs, x_shape[2:], w_shape[2:], fail)
    strides = list(attrs["strides"])
    output_size, output_padding = list(attrs["output_size"]), list(attrs["output_padding"])
    for name, values in (("output_size", output_size), ("output_padding", output_padding)):
        if values and len(values) != 2:
            fail(f"{name} {values} must be empty or hold 2 values (height, width)")
    out = []
    for i in range(2):
        size, k = x_shape[2 + i], w_shape[2 + i]
        if size < 0 or k < 0 or pads[2 * i] < 0:
            natural = -1
        else:
            natural = ((size - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1]
                       + dilations[i] * (k - 1) + 1)
            if natural <= 0:
                fail(f"the output dim {natural} is not positive (input dim {size}, paddings "
                     f"{pads[2 * i]} + {pads[2 * i + 1]}, filter {k})")
        if output_size:
            if natural >= 0 and not natural <= output_size[i] < natural + strides[i]:
                fail(f"output_size {output_size} dim {i} must lie in [{natural}, "
                     f"{natural + strides[i]}) (the inferred size + stride)")
            out.append(output_size[i])
        elif output_padding:
            if not 0 <= output_padding[i] < max(strides[i], dilations[i]):
                fail(f"output_padding {output_padding} dim {i} must be >= 0 and < "
                     f"max(stride, dilation) = {max(strides[i], dilations[i])}")
            out.append(natural + output_padding[i] if natural >= 0 else -1)
        else:
            out.append(natural)
    return pads, dilations, strides, out


def _checked(op, attrs, x, w):
    def fail(message):
        raise ShapeError(f"op {op}: Input {list(x.shape)} (as NCHW), Filter "
                         f"{list(w.shape)}: {message}")

    groups = attrs["groups"]
    if x.ndim != 4 or w.ndim != 4:
        fail("Input and Filter must be 4-D")
    if x.shape[1] != w.shape[0] or x.shape[1] % groups:
        fail(f"Input's {x.shape[1]} channels must equal Filter's first dim {w.shape[0]} "
             f"and split into groups={groups}")
    return _geometry(attrs, x.shape, w.shape, fail)


def _nchw(attrs, x):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _full_extent(x_shape, w_shape, pads, dilations, strides, out):
    """Rows/cols of the uncropped output: every tap's reach, and the requested output."""
    return [max((x_shape[2 + i] - 1) * strides[i] + dilations[i] * (w_shape[2 + i] - 1) + 1,
                pads[2 * i] + out[i]) for i in range(2)]


def _kernels(op):
    def forward(xp, attrs, x, w, bias):
        x = _nchw(attrs, x)
        pads, dilations, strides, out = _checked(op, attrs, x, w)
        n, c_in, h, width = x.shape
        _, cog, kh, kw = w.shape
        g = attrs["groups"]
        cig = c_in // g
        wg = w.reshape(g, cig, cog * kh * kw).swapaxes(-1, -2)[None]
        cols = xp.matmul(wg, x.reshape(n, g, cig, h * width))
        cols = cols.reshape(n, g * cog, kh, kw, h, width)
        full = _full_extent(x.shape, w.shape, pads, dilations, strides, out)
        y = xp.zeros((n, g * cog, full[0], full[1]), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):  # taps overlap: each adds into its own strided window
                y[window(pads, dilations, strides, (h, width), i, j)] += cols[:, :, i, j]
        y = y[:, :, pads[0]:pads[0] + out[0], pads[2]:pads[2] + out[1]]
        if bias is not None:
            y = y + bias.reshape(1, -1, 1, 1).astype(y.dtype)
        y = y.transpose(0, 2, 3, 1) if attrs["data_format"] == "NHWC" else y
        return xp.ascontiguousarray(y)

    def backward(xp, attrs, x, w, dout):
        x, dout = _nchw(attrs, x), _nchw(attrs, dout)
        pads, dilations, strides, out = _checked(op, attrs, x, w)
        n, c_in, h, width = x.shape
        _, cog, kh, kw = w.shape
        g = attrs["groups"]
        cig, k, length = c_in // g, cog * kh * kw, h * width
        full = _full_extent(x.shape, w.shape, pads, dilations, strides, out)
        # dOutput back in the uncropped frame, then conv2d's im2col over Input's grid
        frame = [pads[0], full[0] - pads[0] - out[0], pads[2], full[1] - pads[2] - out[1]]
        cols = im2col(xp, dout, kh, kw, frame, dilations, strides, (h, width))
        cols = cols.reshape(n, g, k, length)
        dx = dw = None
        if wanted(attrs, 0):
            dx = xp.matmul(w.reshape(1, g, cig, k), cols).reshape(n, c_in, h, width)
            dx = dx.transpose(0, 2, 3, 1) if attrs["data_format"] == "NHWC" else dx
            dx = xp.ascontiguousarray(dx)
        if wanted(attrs, 1):
            x_flat = x.reshape(n, g, cig, length).transpose(1, 2, 0, 3).reshape(g, cig, n * length)
            c_flat = cols.transpose(1, 0, 3, 2).reshape(g, n * length, k)
            dw = xp.matmul(x_flat, c_flat).reshape(w.shape)
        return dx, dw

    return forward, backward


def _infer(ctx):
    x, w = ctx.input("Input"), ctx.input("Filter")
    xs, ws = list(x.shape), list(w.shape)

    def fail(message, slot=None):
        ctx.fail(f"Input {xs}, Filter {ws}: {message}", slot=slot)

    if len(xs) != 4:
        fail("Input must be 4-D [N, C, H, W] (or [N, H, W, C] with NHWC)", "Input")
    if len(ws) != 4:
        fail("Filter must be 4-D [C_in, C_out/groups, kh, kw]", "Filter")
    nhwc = ctx.attr("data_format") == "NHWC"
    nchw = [xs[0], xs[3], xs[1], xs[2]] if nhwc else xs
    groups = ctx.attr("groups")
    if nchw[1] >= 0 and ws[0] >= 0 and nchw[1] != ws[0]:
        fail(f"Input has {nchw[1]} channels but Filter's first dim is {ws[0]}", "Filter")
    if nchw[1] >= 0 and nchw[1] % groups:
        fail(f"Input's {nchw[1]} channels do not split into groups={groups}", "Input")
    _, _, _, out = _geometry(ctx.attrs, nchw, ws, fail)
    c_out = ws[1] * groups if ws[1] >= 0 else -1
    bias = ctx.input("Bias")
    if bias is not None and c_out >= 0 and list(bias.shape) not in ([c_out], [-1]):
        fail(f"Bias {list(bias.shape)} must be [{c_out}] (one value per output channel)", "Bias")
    shape = [nchw[0], out[0], out[1], c_out] if nhwc else [nchw[0], c_out, out[0], out[1]]
    ctx.set_output("Output", shape, like=x, lod_level=0)


ATTRS = [
    Attr("strides", AttrType.INTS, [1, 1], doc="[stride_h, stride_w]"),
    Attr("paddings", AttrType.INTS, [0, 0], doc="[pad_h, pad_w] or [top, bottom, left, right]"),
    Attr("output_padding", AttrType.INTS, [],
         doc="extra rows/cols at the bottom/right ([] or 2 values < max(stride, dilation))"),
    Attr("output_size", AttrType.INTS, [],
         doc="exact output [Ho, Wo] ([] : inferred); within [inferred, inferred + stride)"),
    Attr("padding_algorithm", AttrType.STRING, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID"),
         doc="EXPLICIT: use paddings; SAME: from the input dims, dilation 1; VALID: none"),
    Attr("groups", AttrType.INT, 1, at_least(1), doc="channels split into groups"),
    Attr("dilations", AttrType.INTS, [1, 1], doc="[dilation_h, dilation_w]"),
    Attr("data_format", AttrType.STRING, "NCHW", one_of(*_LAYOUTS),
         doc="NCHW or NHWC (AnyLayout: NCHW)"),
]


def _register(op, doc):
    forward, backward = _kernels(op)

    def backward_reading_bias(xp, attrs, x, w, bias, dout):
        # Paddle's grad op takes the forward's Bias slot (empty unless given); Bias gets
        # no gradient and the input gradients do not depend on it.
        return backward(xp, attrs, x, w, dout)

    register(
        op, inputs=["Input", "Filter",
                    Slot("Bias", dispensable=True, no_grad=True,
                         doc="[C_out], added per channel (Paddle: oneDNN only)")],
        outputs=["Output"], attrs=ATTRS, infer_shape=_infer, kernel=forward,
        grad=GradSpec(backward_reading_bias, inputs=("Input", "Filter", "Bias"),
                      out_grads=("Output",),
                      in_grads=("Input", "Filter")),
        share_lod=(), doc=doc, category="conv")


_register("conv2d_transpose", "Output = transposed 2-D convolution (deconvolution) of Input")
_register("depthwise_conv2d_transpose",
          "Output = depthwise transposed 2-D convolution (groups = input channels) of Input")
