"""Ops that only move elements: ``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``,
``shuffle_channel`` (the legacy one), ``temporal_shift``, ``unfold`` (im2col) and ``fold``
(col2im), with their ``_grad`` ops, as Paddle 3.3.1's CPU kernels.

The shuffles are one reshape + transpose (Paddle's kernels are exactly that); each
gradient is the inverse permutation of Out@GRAD (Paddle's grad ops read only Out@GRAD,
so their shape inference inverts the forward's). ``temporal_shift`` views X [N*T, C, H, W]
as [N, T, C, H, W] and moves the first ``int(C * shift_ratio)`` channels one step later in
time and the next ones (up to ``int(C * 2 * shift_ratio)``) one step earlier, zero-filled.

``unfold`` (F.unfold): X [N, C, H, W] -> Y [N, C*kh*kw, L], L = Ho*Wo blocks, channel-major
then kernel row then column, with ``paddings`` [top, left, bottom, right] as Paddle's
UnfoldInferMeta. ``fold`` is its adjoint: X [N, C*kh*kw, L] -> Y [N, C, H, W] with
``output_sizes`` [H, W], overlapping blocks summed; Paddle's fold pads both sides by
``paddings[0]`` (rows) and ``paddings[1]`` (cols) and ignores the other two values.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, at_least, one_of, register, standard_grad_maker
from .loss import register_grad

_FORMATS = one_of("NCHW", "NHWC", "AnyLayout")


def _grad_only(op, kernel, infer, attrs, doc, fwd_infer, category="shape"):
    """Register ``op`` whose gradient op reads Out@GRAD only (X@GRAD from its inverse)."""
    spec = GradSpec(kernel, inputs=(), out_grads=("Out",), in_grads=("X",))
    fwd = register(op, inputs=["X"], outputs=["Out"], attrs=attrs, infer_shape=fwd_infer,
                   kernel=KERNELS[op], grad=standard_grad_maker(spec, op + "_grad"),
                   share_lod=(), doc=doc, category=category)
    register_grad(fwd, spec, op + "_grad", infer)


def _four_d(op, slot, shape):
    if len(shape) != 4:
        raise ShapeError(f"op {op}: slot {slot}: {list(shape)} must be 4-D (NCHW or NHWC)")


def _known(*dims):
    return all(d >= 0 for d in dims)


# ------------------------------------------------------------ pixel (un)shuffle
def _pixel_shapes(shape, r, channel_last, up, fail):
    """Output shape of pixel_shuffle (up) / pixel_unshuffle on a 4-D shape."""
    n, c, h, w = (shape[0], shape[3], shape[1], shape[2]) if channel_last else shape
    if up:
        if _known(c) and c % (r * r):
            fail(f"the channels {c} must be divisible by upscale_factor^2 = {r * r}")
        c, h, w = (c // (r * r) if _known(c) else -1, h * r if _known(h) else -1,
                   w * r if _known(w) else -1)
    else:
        if (_known(h) and h % r) or (_known(w) and w % r):
            fail(f"the height {h} and width {w} must be divisible by downscale_factor {r}")
        c, h, w = (c * r * r if _known(c) else -1, h // r if _known(h) else -1,
                   w // r if _known(w) else -1)
    return [n, h, w, c] if channel_last else [n, c, h, w]


def _pixel_shuffle(xp, x, r, channel_last):
    n = x.shape[0]
    if channel_last:  # [N, H, W, C, r, r] -> [N, H, r, W, r, C]
        h, w, c = x.shape[1], x.shape[2], x.shape[3] // (r * r)
        return xp.ascontiguousarray(x.reshape(n, h, w, c, r, r).transpose(0, 1, 4, 2, 5, 3)
                                    ).reshape(n, h * r, w * r, c)
    c, h, w = x.shape[1] // (r * r), x.shape[2], x.shape[3]
    return xp.ascontiguousarray(x.reshape(n, c, r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
                                ).reshape(n, c, h * r, w * r)


def _pixel_unshuffle(xp, x, r, channel_last):
    n = x.shape[0]
    if channel_last:  # [N, Ho, r, Wo, r, C] -> [N, Ho, Wo, C, r, r]
        h, w, c = x.shape[1] // r, x.shape[2] // r, x.shape[3]
        return xp.ascontiguousarray(x.reshape(n, h, r, w, r, c).transpose(0, 1, 3, 5, 2, 4)
                                    ).reshape(n, h, w, c * r * r)
    c, h, w = x.shape[1], x.shape[2] // r, x.shape[3] // r
    return xp.ascontiguousarray(x.reshape(n, c, h, r, w, r).transpose(0, 1, 3, 5, 2, 4)
                                ).reshape(n, c * r * r, h, w)


def _pixel_op(op, factor, up):
    def check(x, attrs):
        def fail(message):
            raise ShapeError(f"op {op}: X {list(x.shape)}: {message}")
        _four_d(op, "X", x.shape)
        _pixel_shapes(list(x.shape), attrs[factor], attrs["data_format"] == "NHWC", up, fail)

    def forward(xp, attrs, x):
        check(x, attrs)
        move = _pixel_shuffle if up else _pixel_unshuffle
        return move(xp, x, attrs[factor], attrs["data_format"] == "NHWC")

    def backward(xp, attrs, dout):
        move = _pixel_unshuffle if up else _pixel_shuffle
        return move(xp, dout, attrs[factor], attrs["data_format"] == "NHWC")

    def infer(ctx, slot_in="X", slot_out="Out", forward_dir=True):
        x = ctx.input(slot_in)
        _four_d(op, slot_in, x.shape)
        def fail(message):
            ctx.fail(f"X {list(x.shape)}: {message}", slot_in)
        shape = _pixel_shapes(list(x.shape), ctx.attr(factor), ctx.attr("data_format") == "NHWC",
                              up == forward_dir, fail)
        ctx.set_output(slot_out, shape, like=x)

    def infer_grad(ctx):
        infer(ctx, "Out@GRAD", "X@GRAD", False)

    return forward, backward, infer, infer_grad


# ------------------------------------------------------------ channel shuffles
def _channel_shuffle(xp, x, groups, channel_last, op):
    c = x.shape[-1] if channel_last else x.shape[1]
    if c % groups:
        raise ShapeError(f"op {op}: X {list(x.shape)}: the channels {c} must be divisible "
                         f"by groups={groups}")
    if channel_last:
        y = x.reshape(x.shape[:3] + (groups, c // groups)).transpose(0, 1, 2, 4, 3)
    else:
        y = x.reshape((x.shape[0], groups, c // groups) + x.shape[2:]).transpose(0, 2, 1, 3, 4)
    return xp.ascontiguousarray(y).reshape(x.shape)


def _channel_infer(op, group_attr, slot_in, slot_out):
    def infer(ctx):
        x = ctx.input(slot_in)
        _four_d(op, slot_in, x.shape)
        last = ctx.attrs.get("data_format") == "NHWC"
        c, g = (x.shape[3] if last else x.shape[1]), ctx.attr(group_attr)
        if c >= 0 and c % g:
            ctx.fail(f"X {list(x.shape)}: the channels {c} must be divisible by "
                     f"{group_attr}={g}", slot_in)
        ctx.set_output(slot_out, x.shape, like=x)
    return infer


def _channel_kernels(op, group_attr):
    def forward(xp, attrs, x):
        _four_d(op, "X", x.shape)
        return _channel_shuffle(xp, x, attrs[group_attr], attrs.get("data_format") == "NHWC", op)

    def backward(xp, attrs, dout):  # the inverse: C/g groups of g
        last = attrs.get("data_format") == "NHWC"
        c = dout.shape[-1] if last else dout.shape[1]
        return _channel_shuffle(xp, dout, c // attrs[group_attr], last, op)
    return forward, backward


# ------------------------------------------------------------ temporal_shift
def _shift_split(c, ratio):
    # Paddle computes int(c * shift_ratio) with a float32 shift_ratio
    ratio = np.float32(ratio)
    return int(np.float32(c) * ratio), int(np.float32(c) * np.float32(2) * ratio)


def _ratio(value):
    return None if 0 < value < 0.5 else "must lie in (0, 0.5) (Paddle's TemporalShiftInferMeta)"


def _temporal_shift(xp, attrs, x, backward=False):
    last, t = attrs["data_format"] == "NHWC", attrs["seg_num"]
    if x.shape[0] % t:
        raise ShapeError(f"op temporal_shift: X {list(x.shape)}: dim 0 must be divisible "
                         f"by seg_num={t}")
    if last:
        x = x.transpose(0, 3, 1, 2)
    nt, c, h, w = x.shape
    c1, c2 = _shift_split(c, attrs["shift_ratio"])
    v = x.reshape(nt // t, t, c, h, w)
    out = xp.zeros_like(v)
    late, early = (slice(1, None), slice(None, -1))
    if backward:  # the adjoint moves each band the other way
        late, early = early, late
    out[:, late, :c1] = v[:, early, :c1]       # out[t] = x[t - 1] (forward)
    out[:, early, c1:c2] = v[:, late, c1:c2]   # out[t] = x[t + 1]
    out[:, :, c2:] = v[:, :, c2:]
    out = out.reshape(nt, c, h, w)
    return xp.ascontiguousarray(out.transpose(0, 2, 3, 1)) if last else out


def _temporal_infer(slot_in, slot_out):
    def infer(ctx):
        x = ctx.input(slot_in)
        _four_d("temporal_shift", slot_in, x.shape)
        t = ctx.attr("seg_num")
        if x.shape[0] >= 0 and x.shape[0] % t:
            ctx.fail(f"X {list(x.shape)}: dim 0 must be divisible by seg_num={t}", slot_in)
        ctx.set_output(slot_out, x.shape, like=x)
    return infer


# ------------------------------------------------------------ unfold / fold
def _pairs(op, attrs, names):
    for name in names:
        if len(attrs[name]) != 2 or min(attrs[name]) < 1:
            raise ShapeError(f"op {op}: attribute {name} {list(attrs[name])} must hold 2 "
                             "values >= 1 (height, width)")


def _unfold_geometry(op, attrs, h, w, fail):
    """(blocks_h, blocks_w, [top, left, bottom, right]) for an H x W plane."""
    _pairs(op, attrs, ("kernel_sizes", "strides", "dilations"))
    pads = list(attrs["paddings"])
    if len(pads) != 4 or min(pads) < 0:
        raise ShapeError(f"op {op}: attribute paddings {pads} must hold 4 values >= 0 "
                         "([top, left, bottom, right])")
    out = []
    for size, k, s, d, a, b in zip((h, w), attrs["kernel_sizes"], attrs["strides"],
                                   attrs["dilations"], pads[:2], pads[2:]):
        if size < 0:
            out.append(-1)
            continue
        blocks = (size + a + b - (d * (k - 1) + 1)) // s + 1
        if blocks <= 0:
            fail(f"the padded plane {size} + {a} + {b} holds no (dilated) {k}-wide block")
        out.append(blocks)
    return out[0], out[1], pads


def _taps(kernel_sizes, dilations, strides, blocks):
    """(i, j, row slice, col slice) per kernel tap over the padded plane."""
    (kh, kw), (dh, dw), (sh, sw), (bh, bw) = kernel_sizes, dilations, strides, blocks
    for i in range(kh):
        for j in range(kw):
            yield (i, j, slice(i * dh, i * dh + sh * (bh - 1) + 1, sh),
                   slice(j * dw, j * dw + sw * (bw - 1) + 1, sw))


def _unfold(xp, attrs, x, op="unfold"):
    if x.ndim != 4:
        raise ShapeError(f"op {op}: slot X: {list(x.shape)} must be 4-D [N, C, H, W]")
    n, c, h, w = x.shape

    def fail(message):
        raise ShapeError(f"op {op}: X {list(x.shape)}: {message}")
    bh, bw, (top, left, bottom, right) = _unfold_geometry(op, attrs, h, w, fail)
    kh, kw = attrs["kernel_sizes"]
    xpad = xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    cols = xp.empty((n, c, kh, kw, bh, bw), dtype=x.dtype)
    for i, j, rows, cs in _taps(attrs["kernel_sizes"], attrs["dilations"], attrs["strides"],
                                (bh, bw)):
        cols[:, :, i, j] = xpad[:, :, rows, cs]
    return cols.reshape(n, c * kh * kw, bh * bw)


def _col2im(xp, cols, attrs, h, w, top, left, bh, bw):
    """Sum columns [N, C*kh*kw, L] back into [N, C, H, W] (padding ``top``/``left``)."""
    kh, kw = attrs["kernel_sizes"]
    n = cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    cols = cols.reshape(n, c, kh, kw, bh, bw)
    (dh, dw), (sh, sw) = attrs["dilations"], attrs["strides"]
    full_h = max((bh - 1) * sh + dh * (kh - 1) + 1, top + h)
    full_w = max((bw - 1) * sw + dw * (kw - 1) + 1, left + w)
    frame = xp.zeros((n, c, full_h, full_w), dtype=cols.dtype)
    for i, j, rows, cs in _taps(attrs["kernel_sizes"], attrs["dilations"], attrs["strides"],
                                (bh, bw)):
        frame[:, :, rows, cs] += cols[:, :, i, j]  # blocks overlap: add
    return xp.ascontiguousarray(frame[:, :, top:top + h, left:left + w])


def _unfold_grad(xp, attrs, x, dy):
    n, c, h, w = x.shape
    bh, bw, pads = _unfold_geometry("unfold", attrs, h, w, None)
    return _col2im(xp, dy, attrs, h, w, pads[0], pads[1], bh, bw)


def _fold_geometry(op, attrs, x_shape, fail):
    """(C, H, W, blocks_h, blocks_w, pad_h, pad_w) of fold's X [N, C*kh*kw, L]."""
    _pairs(op, attrs, ("kernel_sizes", "strides", "dilations", "output_sizes"))
    pads = list(attrs["paddings"])
    if len(pads) != 4 or min(pads) < 0:
        raise ShapeError(f"op {op}: attribute paddings {pads} must hold 4 values >= 0")
    (kh, kw), (h, w) = attrs["kernel_sizes"], attrs["output_sizes"]
    blocks = [(size + 2 * p - (d * (k - 1) + 1)) // s + 1 for size, p, d, k, s in zip(
        (h, w), pads[:2], attrs["dilations"], (kh, kw), attrs["strides"])]
    if min(blocks) <= 0:
        fail(f"output_sizes {[h, w]} with paddings {pads[:2]} hold no block")
    # Paddle's col2im also counts the blocks with [top, left, bottom, right]: they must agree
    spans = [d * (k - 1) + 1 for d, k in zip(attrs["dilations"], (kh, kw))]
    blocks4 = [(size + a + b - span) // s + 1 for size, a, b, span, s in zip(
        (h, w), pads[:2], pads[2:], spans, attrs["strides"])]
    if blocks4 != blocks:
        fail(f"paddings {pads}: the blocks counted with 2 x [{pads[0]}, {pads[1]}] "
             f"({blocks}) and with top+bottom, left+right ({blocks4}) differ")
    if x_shape[1] >= 0 and x_shape[1] % (kh * kw):
        fail(f"dim 1 ({x_shape[1]}) must be divisible by kh*kw = {kh * kw}")
    if x_shape[2] >= 0 and x_shape[2] != blocks[0] * blocks[1]:
        fail(f"dim 2 ({x_shape[2]}) must equal the number of blocks {blocks[0]} x "
             f"{blocks[1]} = {blocks[0] * blocks[1]}")
    c = x_shape[1] // (kh * kw) if x_shape[1] >= 0 else -1
    return c, h, w, blocks[0], blocks[1], pads[0], pads[1]


def _fold(xp, attrs, x):
    if x.ndim != 3:
        raise ShapeError(f"op fold: slot X: {list(x.shape)} must be 3-D [N, C*kh*kw, L]")

    def fail(message):
        raise ShapeError(f"op fold: X {list(x.shape)}: {message}")
    _, h, w, bh, bw, ph, pw = _fold_geometry("fold", attrs, x.shape, fail)
    return _col2im(xp, x, attrs, h, w, ph, pw, bh, bw)


def _fold_grad(xp, attrs, x, dy):
    _, h, w, bh, bw, ph, pw = _fold_geometry("fold", attrs, x.shape, None)
    fold_as_unfold = dict(attrs, paddings=[ph, pw, ph, pw])
    return _unfold(xp, fold_as_unfold, dy, "fold_grad")  # same blocks as the forward


def _infer_unfold(ctx):
    x = ctx.input("X")
    if len(x.shape) != 4:
        ctx.fail(f"X {list(x.shape)} must be 4-D [N, C, H, W]", "X")
    bh, bw, _ = _unfold_geometry("unfold", ctx.attrs, x.shape[2], x.shape[3],
                                 lambda m: ctx.fail(f"X {list(x.shape)}: {m}", "X"))
    kh, kw = ctx.attr("kernel_sizes")
    c = x.shape[1] * kh * kw if x.shape[1] >= 0 else -1
    ctx.set_output("Y", [x.shape[0], c, bh * bw if _known(bh, bw) else -1], like=x, lod_level=0)


def _infer_fold(ctx):
    x = ctx.input("X")
    if len(x.shape) != 3:
        ctx.fail(f"X {list(x.shape)} must be 3-D [N, C*kh*kw, L]", "X")
    c, h, w, *_ = _fold_geometry("fold", ctx.attrs, list(x.shape),
                                 lambda m: ctx.fail(f"X {list(x.shape)}: {m}", "X"))
    ctx.set_output("Y", [x.shape[0], c, h, w], like=x, lod_level=0)


# ------------------------------------------------------------ registration
_ps_f, _ps_b, _ps_i, _ps_gi = _pixel_op("pixel_shuffle", "upscale_factor", True)
_pu_f, _pu_b, _pu_i, _pu_gi = _pixel_op("pixel_unshuffle", "downscale_factor", False)
_cs_f, _cs_b = _channel_kernels("channel_shuffle", "groups")
_sc_f, _sc_b = _channel_kernels("shuffle_channel", "group")
KERNELS = {"pixel_shuffle": _ps_f, "pixel_unshuffle": _pu_f, "channel_shuffle": _cs_f,
           "shuffle_channel": _sc_f, "temporal_shift": lambda xp, a, x: _temporal_shift(xp, a, x)}

_grad_only("pixel_shuffle", _ps_b, _ps_gi,
           [Attr("upscale_factor", AttrType.INT, 1, at_least(1), doc="r: C*r*r -> C channels"),
            Attr("data_format", AttrType.STRING, "NCHW", _FORMATS)],
           "Out = X's channel blocks of r*r spread into r x r pixels (sub-pixel upsampling)", _ps_i)
_grad_only("pixel_unshuffle", _pu_b, _pu_gi,
           [Attr("downscale_factor", AttrType.INT, 1, at_least(1),
                 doc="r: r x r pixels -> channels"),
            Attr("data_format", AttrType.STRING, "NCHW", _FORMATS)],
           "Out = X's r x r pixel blocks gathered into channels (inverse of pixel_shuffle)", _pu_i)
_grad_only("channel_shuffle", _cs_b,
           _channel_infer("channel_shuffle", "groups", "Out@GRAD", "X@GRAD"),
           [Attr("groups", AttrType.INT, checker=at_least(1), doc="channel groups to interleave"),
            Attr("data_format", AttrType.STRING, "NCHW", _FORMATS)],
           "Out = X's channels [g, C/g] transposed to [C/g, g] (ShuffleNet)",
           _channel_infer("channel_shuffle", "groups", "X", "Out"))
_grad_only("shuffle_channel", _sc_b,
           _channel_infer("shuffle_channel", "group", "Out@GRAD", "X@GRAD"),
           [Attr("group", AttrType.INT, 1, at_least(1), doc="channel groups to interleave")],
           "Out = X's NCHW channels [g, C/g] transposed to [C/g, g] (legacy channel_shuffle)",
           _channel_infer("shuffle_channel", "group", "X", "Out"))
_grad_only("temporal_shift", lambda xp, a, d: _temporal_shift(xp, a, d, backward=True),
           _temporal_infer("Out@GRAD", "X@GRAD"),
           [Attr("seg_num", AttrType.INT, checker=at_least(1),
                 doc="T: frames per clip (X is [N*T, ...])"),
            Attr("shift_ratio", AttrType.FLOAT, 0.25, _ratio,
                 doc="channel share shifted each way in time, in (0, 0.5)"),
            Attr("data_format", AttrType.STRING, "NCHW", _FORMATS)],
           "Out = X with a channel band shifted one frame later and one earlier (TSM)",
           _temporal_infer("X", "Out"))

_WINDOW_ATTRS = [
    Attr("kernel_sizes", AttrType.INTS, doc="[kh, kw]"),
    Attr("strides", AttrType.INTS, doc="[stride_h, stride_w]"),
    Attr("paddings", AttrType.INTS, doc="[top, left, bottom, right] (fold: [ph, pw, ph, pw])"),
    Attr("dilations", AttrType.INTS, doc="[dilation_h, dilation_w]"),
]
register("unfold", inputs=["X"], outputs=["Y"], attrs=_WINDOW_ATTRS, infer_shape=_infer_unfold,
         kernel=lambda xp, a, x: _unfold(xp, a, x),
         grad=GradSpec(_unfold_grad, inputs=("X",), out_grads=("Y",), in_grads=("X",)),
         share_lod=(), doc="Y = sliding kh x kw blocks of X as columns [N, C*kh*kw, L] (im2col)",
         category="conv")
register("fold", inputs=["X"], outputs=["Y"],
         attrs=[Attr("output_sizes", AttrType.INTS, doc="[H, W] of Y")] + _WINDOW_ATTRS,
         infer_shape=_infer_fold, kernel=_fold,
         grad=GradSpec(_fold_grad, inputs=("X",), out_grads=("Y",), in_grads=("X",)),
         share_lod=(), doc="Y = columns [N, C*kh*kw, L] summed back into [N, C, H, W] (col2im)",
         category="conv")
