"""Deformable convolution: ``deformable_conv`` (DCN v2, with Mask) and ``deformable_conv_v1``
(DCN v1, no Mask) with their ``_grad`` ops, as Paddle 3.3.1's CPU kernels
(paddle.vision.ops.deform_conv2d / DeformConv2D).

Input [N, C, H, W], Filter [M, C/groups, kh, kw] (OIHW), Offset [N, 2*dg*kh*kw, Ho, Wo],
Mask [N, dg*kh*kw, Ho, Wo] (dg = ``deformable_groups``) -> Output [N, M, Ho, Wo] with
conv2d's ``Ho = (H + 2*pad_h - (dilation_h*(kh - 1) + 1)) // stride_h + 1`` (``paddings``
is [pad_h, pad_w]). Filter tap k = (i, j) of output pixel (ho, wo) reads the Input of
deformable group g at ``(ho*stride_h - pad_h + i*dilation_h + Offset[:, g*2*K + 2*k],
wo*stride_w - pad_w + j*dilation_w + Offset[:, g*2*K + 2*k + 1])`` by bilinear
interpolation (0 unless -1 < y < H and -1 < x < W; corners outside the map read 0),
times ``Mask[:, g*K + k]``; the columns are then one grouped matmul with Filter, as conv2d.
``im2col_step`` only batches Paddle's work; it does not change the result.

Gradients are the exact derivatives of that (Paddle's col2im / col2im_coord): Input by
scattering the bilinear weights (``add.at``), Offset by the bilinear slopes, Mask by the
samples, Filter by one matmul over the batch. The loops run over the kh*kw filter taps
and the 4 interpolation corners only.
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, at_least, register, wanted


def _geometry(op, attrs, xs, ws, fail):
    """[Ho, Wo] (-1 where unknown) after checking the attributes and channel counts."""
    for name in ("strides", "paddings", "dilations"):
        if len(attrs[name]) != 2:
            fail(f"{name} {list(attrs[name])} must hold 2 values (height, width)")
    if min(attrs["strides"]) < 1 or min(attrs["dilations"]) < 1 or min(attrs["paddings"]) < 0:
        fail(f"strides {attrs['strides']} and dilations {attrs['dilations']} must be >= 1 "
             f"and paddings {attrs['paddings']} >= 0")
    g, dg = attrs["groups"], attrs["deformable_groups"]
    if xs[1] >= 0 and ws[1] >= 0 and xs[1] != ws[1] * g:
        fail(f"Input has {xs[1]} channels but Filter takes {ws[1]} per group x groups={g}")
    if ws[0] >= 0 and ws[0] % g:
        fail(f"Filter's {ws[0]} output channels do not split into groups={g}")
    if xs[1] >= 0 and xs[1] % dg:
        fail(f"Input's {xs[1]} channels do not split into deformable_groups={dg}")
    out = []
    for size, k, s, p, d in zip(xs[2:], ws[2:], attrs["strides"], attrs["paddings"],
                                attrs["dilations"]):
        if size < 0 or k < 0:
            out.append(-1)
            continue
        span = d * (k - 1) + 1
        if size + 2 * p < span:
            fail(f"the padded input dim {size} + 2 x {p} is smaller than the filter span {span}")
        out.append((size + 2 * p - span) // s + 1)
    return out


def _check(op, attrs, x, offset, w, mask):
    def fail(message):
        shapes = f"Input {list(x.shape)}, Offset {list(offset.shape)}, Filter {list(w.shape)}"
        if mask is not None:
            shapes += f", Mask {list(mask.shape)}"
        raise ShapeError(f"op {op}: {shapes}: {message}")
    if x.ndim != 4 or w.ndim != 4:
        fail("Input and Filter must be 4-D")
    out = _geometry(op, attrs, x.shape, w.shape, fail)
    k, dg = w.shape[2] * w.shape[3], attrs["deformable_groups"]
    want = (x.shape[0], 2 * dg * k, out[0], out[1])
    if tuple(offset.shape) != want:
        fail(f"Offset must be {list(want)} ([N, 2 * deformable_groups * kh * kw, Ho, Wo])")
    if mask is not None and tuple(mask.shape) != (want[0], dg * k) + want[2:]:
        fail(f"Mask must be {[want[0], dg * k, out[0], out[1]]}")
    return out


def _taps(xp, attrs, x, offset, w, out):
    """Per filter tap: (k, y, x positions [N, dg, Ho, Wo], in-range mask, 4 corners
    (rows, cols, weight, valid) and the bilinear slopes' signs)."""
    n, dg = x.shape[0], attrs["deformable_groups"]
    h, width = x.shape[2:]
    kh, kw = w.shape[2:]
    (sh, sw), (ph, pw), (dh, dw) = attrs["strides"], attrs["paddings"], attrs["dilations"]
    off = offset.reshape(n, dg, kh * kw, 2, out[0], out[1])
    base_y = (xp.arange(out[0]) * sh - ph).reshape(1, 1, -1, 1).astype(x.dtype)
    base_x = (xp.arange(out[1]) * sw - pw).reshape(1, 1, 1, -1).astype(x.dtype)
    for k in range(kh * kw):
        i, j = divmod(k, kw)
        y = base_y + i * dh + off[:, :, k, 0]
        xx = base_x + j * dw + off[:, :, k, 1]
        inside = (y > -1) & (xx > -1) & (y < h) & (xx < width)
        y0, x0 = xp.floor(y), xp.floor(xx)
        ly, lx = y - y0, xx - x0
        corners = []
        for cy, wy, sy in ((y0, 1 - ly, -1), (y0 + 1, ly, 1)):
            for cx, wx, sx in ((x0, 1 - lx, -1), (x0 + 1, lx, 1)):
                valid = inside & (cy >= 0) & (cy <= h - 1) & (cx >= 0) & (cx <= width - 1)
                rows = xp.clip(cy, 0, h - 1).astype(xp.int64)
                cols = xp.clip(cx, 0, width - 1).astype(xp.int64)
                corners.append((rows, cols, wy, wx, sy, sx, valid))
        yield k, corners


def _grouped(x, dg):
    """[N, dg, H, W, C/dg]: a gather at [N, dg, Ho, Wo] positions gives every channel."""
    n, c, h, w = x.shape
    return x.reshape(n, dg, c // dg, h, w).transpose(0, 1, 3, 4, 2)


def _index(xp, n, dg):
    return xp.arange(n).reshape(-1, 1, 1, 1), xp.arange(dg).reshape(1, -1, 1, 1)


def _columns(xp, attrs, x, offset, w, mask, out):
    """[N, C, kh*kw, Ho, Wo] sampled (and masked) columns."""
    n, c = x.shape[:2]
    dg, kk = attrs["deformable_groups"], w.shape[2] * w.shape[3]
    xg = _grouped(x, dg)
    ni, gi = _index(xp, n, dg)
    cols = xp.empty((n, dg, c // dg, kk, out[0], out[1]), dtype=x.dtype)
    for k, corners in _taps(xp, attrs, x, offset, w, out):
        val = 0
        for rows, cc, wy, wx, _, _, valid in corners:
            weight = (wy * wx * valid)[..., None]
            val = val + xg[ni, gi, rows, cc] * weight  # [N, dg, Ho, Wo, C/dg]
        if mask is not None:
            val = val * mask.reshape(n, dg, kk, out[0], out[1])[:, :, k, :, :, None]
        cols[:, :, :, k] = xp.moveaxis(val, -1, 2)
    return cols.reshape(n, c, kk, out[0], out[1])


def _forward(op):
    def kernel(xp, attrs, x, offset, w, mask=None):
        out = _check(op, attrs, x, offset, w, mask)
        n, g, m = x.shape[0], attrs["groups"], w.shape[0]
        kdim = w[0].size
        cols = _columns(xp, attrs, x, offset, w, mask, out).reshape(n, g, kdim, -1)
        y = xp.matmul(w.reshape(1, g, m // g, kdim), cols)
        return y.reshape(n, m, out[0], out[1])
    return kernel


def _backward(op):
    def kernel(xp, attrs, x, offset, w, mask, dout):
        out = _check(op, attrs, x, offset, w, mask)
        n, c = x.shape[:2]
        g, m, dg = attrs["groups"], w.shape[0], attrs["deformable_groups"]
        kk, kdim = w.shape[2] * w.shape[3], w[0].size
        d = dout.reshape(n, g, m // g, -1)
        dw = None
        if wanted(attrs, 2):
            cols = _columns(xp, attrs, x, offset, w, mask, out).reshape(n, g, kdim, -1)
            d_flat = d.transpose(1, 2, 0, 3).reshape(g, m // g, -1)
            dw = xp.matmul(d_flat, cols.transpose(1, 0, 3, 2).reshape(g, -1, kdim)).reshape(w.shape)
        dcols = xp.matmul(w.reshape(1, g, m // g, kdim).swapaxes(-1, -2), d)
        dcols = dcols.reshape(n, dg, c // dg, kk, out[0], out[1])
        xg = _grouped(x, dg)
        dxg = xp.zeros_like(xg)
        doff = xp.zeros((n, dg, kk, 2, out[0], out[1]), dtype=x.dtype)
        dmask = xp.zeros((n, dg, kk, out[0], out[1]), dtype=x.dtype)
        m_all = None if mask is None else mask.reshape(n, dg, kk, out[0], out[1])
        ni, gi = _index(xp, n, dg)
        for k, corners in _taps(xp, attrs, x, offset, w, out):
            dc = xp.moveaxis(dcols[:, :, :, k], 2, -1)  # [N, dg, Ho, Wo, C/dg]
            mk = 1 if m_all is None else m_all[:, :, k, :, :, None]
            val, slope_y, slope_x = 0, 0, 0
            for rows, cc, wy, wx, sy, sx, valid in corners:
                v = xg[ni, gi, rows, cc] * valid[..., None]
                val = val + v * (wy * wx)[..., None]
                slope_y = slope_y + v * (sy * wx)[..., None]
                slope_x = slope_x + v * (wy * sx)[..., None]
                share = dc * mk * (wy * wx * valid)[..., None]
                idx = tuple(xp.broadcast_to(a, rows.shape).reshape(-1) for a in (ni, gi, rows, cc))
                xp.add.at(dxg, idx, share.reshape(-1, share.shape[-1]))
            doff[:, :, k, 0] = (dc * mk * slope_y).sum(axis=-1)
            doff[:, :, k, 1] = (dc * mk * slope_x).sum(axis=-1)
            dmask[:, :, k] = (dc * val).sum(axis=-1)
        dx = xp.ascontiguousarray(dxg.transpose(0, 1, 4, 2, 3).reshape(x.shape))
        grads = [dx, doff.reshape(offset.shape), dw]
        if mask is not None:
            grads.append(dmask.reshape(mask.shape))
        return tuple(grads)
    return kernel


def _infer(ctx):
    x, off, w, mask = (ctx.input(s) for s in ("Input", "Offset", "Filter", "Mask"))
    xs, ws = list(x.shape), list(w.shape)

    def fail(message, slot=None):
        ctx.fail(f"Input {xs}, Offset {list(off.shape)}, Filter {ws}: {message}", slot=slot)
    if len(xs) != 4 or len(ws) != 4:
        fail("Input and Filter must be 4-D", "Input")
    out = _geometry(ctx.op_type, ctx.attrs, xs, ws, fail)
    k, dg = ws[2] * ws[3], ctx.attr("deformable_groups")
    if len(off.shape) != 4 or (ws[2] >= 0 and ws[3] >= 0 and off.shape[1] not in (2 * dg * k, -1)):
        fail(f"Offset must be [N, 2 * deformable_groups * kh * kw = {2 * dg * k}, Ho, Wo]",
             "Offset")
    if mask is not None and (len(mask.shape) != 4 or mask.shape[1] not in (dg * k, -1)):
        fail(f"Mask {list(mask.shape)} must be [N, deformable_groups * kh * kw = {dg * k}, "
             "Ho, Wo]", "Mask")
    ctx.set_output("Output", [xs[0], ws[0]] + out, like=x, lod_level=0)


_ATTRS = [
    Attr("strides", AttrType.INTS, [1, 1], doc="[stride_h, stride_w]"),
    Attr("paddings", AttrType.INTS, [0, 0], doc="[pad_h, pad_w] (both sides)"),
    Attr("dilations", AttrType.INTS, [1, 1], doc="[dilation_h, dilation_w]"),
    Attr("groups", AttrType.INT, 1, at_least(1), doc="convolution groups"),
    Attr("deformable_groups", AttrType.INT, 1, at_least(1),
         doc="channel groups sharing one set of offsets (and mask)"),
    Attr("im2col_step", AttrType.INT, 64, at_least(1), doc="Paddle's batch chunk; no effect"),
]

_v2_grad = _backward("deformable_conv")
_v1_grad = _backward("deformable_conv_v1")
register(
    "deformable_conv", inputs=["Input", "Offset", "Filter", "Mask"], outputs=["Output"],
    attrs=_ATTRS, infer_shape=_infer, kernel=_forward("deformable_conv"),
    grad=GradSpec(_v2_grad, inputs=("Input", "Offset", "Filter", "Mask"), out_grads=("Output",),
                  in_grads=("Input", "Offset", "Filter", "Mask")),
    share_lod=(), doc="Output = modulated deformable 2-D convolution (DCN v2) of Input",
    category="conv")
register(
    "deformable_conv_v1", inputs=["Input", "Offset", "Filter"], outputs=["Output"],
    attrs=_ATTRS, infer_shape=_infer, kernel=_forward("deformable_conv_v1"),
    grad=GradSpec(lambda xp, attrs, x, offset, w, dout: _v1_grad(xp, attrs, x, offset, w, None,
                                                                dout),
                  inputs=("Input", "Offset", "Filter"), out_grads=("Output",),
                  in_grads=("Input", "Offset", "Filter")),
    share_lod=(), doc="Output = deformable 2-D convolution (DCN v1) of Input", category="conv")
