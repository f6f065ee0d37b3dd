"""Region-of-interest pooling: ``roi_align`` and ``roi_pool`` with their ``_grad`` ops, as
Paddle 3.3.1's CPU kernels (paddle.vision.ops.roi_align / roi_pool).

X [N, C, H, W]; ROIs [R, 4] boxes (x1, y1, x2, y2) in input-image pixels, scaled by
``spatial_scale``; which image each box belongs to comes from ``RoisNum`` (int [N], boxes
per image) when given, else from ROIs' LoD (Paddle refuses ROIs with neither).
Out [R, C, pooled_height, pooled_width].

roi_align: each bin averages a grid of bilinear samples (``sampling_ratio`` per side, or
``ceil(roi size / pooled size)`` when <= 0) at the sub-cell centres. ``aligned`` shifts the
box by -0.5 pixel; without it the box is at least 1 x 1. Samples beyond one pixel outside
the map read 0; others clamp to the border (Paddle's bilinear_interpolate rules).

roi_pool: the box corners are rounded (half away from zero), the box spans
``end - start + 1`` (>= 1) cells split into ``floor``/``ceil`` bins, clipped to the map;
each bin takes its maximum (Argmax: the flat h * W + w of its first maximum; an empty bin
gives 0 and -1). The gradient adds Out@GRAD at Argmax.

The roi_align gradient is the true gradient of the forward. (Paddle 3.3.1's
roi_align_grad clamps boxes to 1 x 1 even with ``aligned``, so for aligned boxes under one
pixel its X@GRAD is not its forward's gradient; larger boxes agree.)

Both loop over sample / window offsets only (a handful per bin), gathering every ROI and
bin at once; gradients scatter with ``add.at``.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register

_ROI_SLOTS = ["X",
              Slot("ROIs", no_grad=True, doc="[R, 4] boxes (x1, y1, x2, y2); LoD: boxes per image"),
              Slot("RoisNum", dispensable=True, no_grad=True, doc="int [N]: boxes per image")]


def _batch_ids(op, lod, x, rois, rois_num):
    """Image index of every ROI (host numpy int64 [R])."""
    if rois.ndim != 2 or rois.shape[1] != 4:
        raise ShapeError(f"op {op}: ROIs {list(rois.shape)} must be [R, 4]")
    if rois_num is not None:
        counts = [int(v) for v in rois_num.reshape(-1).tolist()]
        what = f"RoisNum {counts}"
    else:
        offsets = lod.offsets(1)
        counts = [b - a for a, b in zip(offsets, offsets[1:])]
        what = f"ROIs' LoD {list(offsets)}"
    if len(counts) != x.shape[0] or sum(counts) != rois.shape[0]:
        raise ShapeError(f"op {op}: {what} must give one box count per image of X "
                         f"{list(x.shape)} summing to the {rois.shape[0]} ROIs")
    return np.repeat(np.arange(len(counts)), counts)


# ------------------------------------------------------------------ roi_align
def _align_axis(xp, start, bin_size, grid, pooled, i, size):
    """One axis of sample tap ``i``: (low, high, weight_low, weight_high, ok) [R, pooled]."""
    dtype = start.dtype.type
    p = xp.arange(pooled, dtype=start.dtype)[None]
    g = xp.maximum(grid, 1).astype(start.dtype)[:, None]
    v = start[:, None] + p * bin_size[:, None] + (dtype(i) + dtype(0.5)) * bin_size[:, None] / g
    ok = (v >= -1) & (v <= size) & (i < grid)[:, None]
    v = xp.maximum(v, 0)
    low = xp.floor(v).astype(xp.int64)
    top = low >= size - 1
    low = xp.where(top, size - 1, low)
    high = xp.where(top, size - 1, low + 1)
    v = xp.where(top, low.astype(v.dtype), v)
    frac = v - low
    return low, high, 1 - frac, frac, ok


def _align_setup(xp, attrs, x, rois):
    dtype = x.dtype.type
    offset = dtype(0.5) if attrs["aligned"] else dtype(0)
    box = rois.astype(x.dtype) * dtype(attrs["spatial_scale"]) - offset
    width, height = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
    if not attrs["aligned"]:
        width, height = xp.maximum(width, 1), xp.maximum(height, 1)
    ph, pw, ratio = attrs["pooled_height"], attrs["pooled_width"], attrs["sampling_ratio"]
    bin_h, bin_w = height / dtype(ph), width / dtype(pw)
    if ratio > 0:
        grid_h = xp.full(height.shape, ratio, dtype=xp.int64)
        grid_w = grid_h
    else:
        grid_h = xp.ceil(height / dtype(ph)).astype(xp.int64)
        grid_w = xp.ceil(width / dtype(pw)).astype(xp.int64)
    count = xp.maximum(grid_h * grid_w, 1).astype(x.dtype)
    return box, bin_h, bin_w, grid_h, grid_w, count


def _align_taps(xp, attrs, x, rois):
    """Yield (ylow/yhigh, xlow/xhigh, 2x2 weights [R, ph, pw] incl. mask and 1/count)."""
    box, bin_h, bin_w, grid_h, grid_w, count = _align_setup(xp, attrs, x, rois)
    h, w = x.shape[2:]
    ph, pw = attrs["pooled_height"], attrs["pooled_width"]
    for iy in range(int(grid_h.max()) if grid_h.size else 0):
        ys = _align_axis(xp, box[:, 1], bin_h, grid_h, ph, iy, h)
        for ix in range(int(grid_w.max()) if grid_w.size else 0):
            xs = _align_axis(xp, box[:, 0], bin_w, grid_w, pw, ix, w)
            ok = ys[4][:, :, None] & xs[4][:, None, :]
            scale = ok / count[:, None, None]
            for yi, wy in ((0, 2), (1, 3)):
                for xi, wx in ((0, 2), (1, 3)):
                    weight = ys[wy][:, :, None] * xs[wx][:, None, :] * scale
                    yield ys[yi][:, :, None], xs[xi][:, None, :], weight


def _roi_align(xp, attrs, lod, x, rois, rois_num):
    ids = xp.asarray(_batch_ids("roi_align", lod, x, rois, rois_num))[:, None, None]
    xt = x.transpose(0, 2, 3, 1)  # [N, H, W, C]: a gather gives [R, ph, pw, C]
    out = xp.zeros((rois.shape[0], attrs["pooled_height"], attrs["pooled_width"], x.shape[1]),
                   dtype=x.dtype)
    for rows, cols, weight in _align_taps(xp, attrs, x, rois):
        out += xt[ids, rows, cols] * weight[..., None].astype(x.dtype)
    return xp.ascontiguousarray(out.transpose(0, 3, 1, 2))


def _roi_align_grad(xp, attrs, lod, x, rois, rois_num, dout):
    ids = xp.asarray(_batch_ids("roi_align", lod, x, rois, rois_num))[:, None, None]
    d = dout.transpose(0, 2, 3, 1)
    dxt = xp.zeros(x.shape[:1] + x.shape[2:] + x.shape[1:2], dtype=dout.dtype)
    for rows, cols, weight in _align_taps(xp, attrs, x, rois):
        shape = weight.shape
        xp.add.at(dxt, (xp.broadcast_to(ids, shape).reshape(-1),
                        xp.broadcast_to(rows, shape).reshape(-1),
                        xp.broadcast_to(cols, shape).reshape(-1)),
                  (d * weight[..., None].astype(d.dtype)).reshape(-1, d.shape[-1]))
    return xp.ascontiguousarray(dxt.transpose(0, 3, 1, 2))


# ------------------------------------------------------------------ roi_pool
def _round(xp, v):
    return xp.where(v >= 0, xp.floor(v + 0.5), xp.ceil(v - 0.5))  # std::round


def _pool_bins(xp, attrs, x, rois):
    """Per axis (start [R, pooled], end [R, pooled]) clipped to the map."""
    dtype = x.dtype.type
    corner = _round(xp, rois.astype(x.dtype) * dtype(attrs["spatial_scale"])).astype(xp.int64)
    bins = []
    for lo, hi, pooled, size in ((1, 3, attrs["pooled_height"], x.shape[2]),
                                 (0, 2, attrs["pooled_width"], x.shape[3])):
        extent = xp.maximum(corner[:, hi] - corner[:, lo] + 1, 1).astype(x.dtype)
        step = (extent / dtype(pooled))[:, None]
        p = xp.arange(pooled, dtype=x.dtype)[None]
        start = xp.floor(p * step).astype(xp.int64) + corner[:, lo:lo + 1]
        end = xp.ceil((p + 1) * step).astype(xp.int64) + corner[:, lo:lo + 1]
        bins.append((xp.clip(start, 0, size), xp.clip(end, 0, size)))
    return bins


def _roi_pool(xp, attrs, lod, x, rois, rois_num):
    ids = xp.asarray(_batch_ids("roi_pool", lod, x, rois, rois_num))[:, None, None]
    (hs, he), (ws, we) = _pool_bins(xp, attrs, x, rois)
    xt = x.transpose(0, 2, 3, 1)
    r, c = rois.shape[0], x.shape[1]
    shape = (r, attrs["pooled_height"], attrs["pooled_width"], c)
    best = xp.full(shape, -xp.inf, dtype=x.dtype)
    arg = xp.full(shape, -1, dtype=xp.int64)
    span_h = int((he - hs).max()) if r else 0
    span_w = int((we - ws).max()) if r else 0
    for dh in range(span_h):  # window offsets, row-major: the first maximum wins
        rows = hs + dh
        row_ok = rows < he
        rows = xp.minimum(rows, x.shape[2] - 1)
        for dw in range(span_w):
            cols = ws + dw
            ok = (row_ok[:, :, None] & (cols < we)[:, None, :])[..., None]
            cols = xp.minimum(cols, x.shape[3] - 1)
            v = xt[ids, rows[:, :, None], cols[:, None, :]]
            better = ok & (v > best)
            best = xp.where(better, v, best)
            flat = (rows[:, :, None] * x.shape[3] + cols[:, None, :])[..., None]
            arg = xp.where(better, flat, arg)
    best = xp.where(arg >= 0, best, 0).astype(x.dtype)
    return (xp.ascontiguousarray(best.transpose(0, 3, 1, 2)),
            xp.ascontiguousarray(arg.transpose(0, 3, 1, 2)))


def _roi_pool_grad(xp, attrs, lod, x, rois, rois_num, argmax, dout):
    ids = xp.asarray(_batch_ids("roi_pool", lod, x, rois, rois_num))
    n, c = x.shape[:2]
    dx = xp.zeros((n, c, x.shape[2] * x.shape[3]), dtype=dout.dtype)
    keep = argmax >= 0
    shape = argmax.shape
    b = xp.broadcast_to(ids.reshape(-1, 1, 1, 1), shape)
    ch = xp.broadcast_to(xp.arange(c).reshape(1, -1, 1, 1), shape)
    xp.add.at(dx, (b[keep], ch[keep], argmax[keep]), dout[keep])
    return dx.reshape(x.shape)


# ------------------------------------------------------------------ registration
def _infer(with_argmax):
    def infer(ctx):
        x, rois = ctx.input("X"), ctx.input("ROIs")
        if len(x.shape) != 4:
            ctx.fail(f"X {list(x.shape)} must be 4-D [N, C, H, W]", "X")
        if len(rois.shape) != 2 or rois.shape[1] not in (4, -1):
            ctx.fail(f"ROIs {list(rois.shape)} must be [R, 4]", "ROIs")
        shape = [rois.shape[0], x.shape[1], ctx.attr("pooled_height"), ctx.attr("pooled_width")]
        ctx.set_output("Out", shape, like=x, lod_level=0)
        if with_argmax:
            ctx.set_output("Argmax", shape, dtype=pb.VarType.INT64, lod_level=0)
    return infer


def _positive(value):
    return None if value > 0 else "must be > 0"


_POOLED = [Attr("pooled_height", AttrType.INT, 1, _positive, doc="output bins per column"),
           Attr("pooled_width", AttrType.INT, 1, _positive, doc="output bins per row"),
           Attr("spatial_scale", AttrType.FLOAT, 1.0, _positive,
                doc="box coordinates -> X's pixels")]
register(
    "roi_align", inputs=_ROI_SLOTS, outputs=["Out"],
    attrs=_POOLED + [
        Attr("sampling_ratio", AttrType.INT, -1,
             doc="samples per bin side (<= 0: ceil(box size / pooled size))"),
        Attr("aligned", AttrType.BOOLEAN, False, doc="shift boxes by -0.5 pixel (pixel centres)")],
    infer_shape=_infer(False), kernel=_roi_align, lod=True, share_lod=(),
    grad=GradSpec(_roi_align_grad, inputs=("X", "ROIs", "RoisNum"), out_grads=("Out",),
                  in_grads=("X",)),
    doc="Out = bilinear average pooling of X inside each box (RoIAlign)", category="pool")
register(
    "roi_pool", inputs=_ROI_SLOTS,
    outputs=["Out", Slot("Argmax", intermediate=True, doc="int64 flat h * W + w of each max")],
    attrs=_POOLED, infer_shape=_infer(True), kernel=_roi_pool, lod=True, share_lod=(),
    grad=GradSpec(_roi_pool_grad, inputs=("X", "ROIs", "RoisNum"), outputs=("Argmax",),
                  out_grads=("Out",), in_grads=("X",)),
    doc="Out = max pooling of X inside each box (RoIPool)", category="pool")
