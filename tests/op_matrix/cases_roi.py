"""Cases for ``roi_align`` and ``roi_pool`` (kernels/roi.py) against per-box, per-bin numpy
loops (roi_align: Paddle's pre_calc sampling rules rewritten; roi_pool: a max over each
rounded, clipped bin).

Ported from Paddle's test/legacy_test: test_roi_align_op.py (TestROIAlignOp with RoisNum,
TestROIAlignInLodOp with ROIs' LoD, TestROIAlignOpWithAligned) and test_roi_pool_op.py
(TestROIPoolOp with LoD, TestROIPoolInLodOp with RoisNum): their shapes, scales and
integer boxes (made as theirs: image i holds i + 1 boxes); 2 channels instead of 3 so the
float64 gradient check stays fast.

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float64; random real-valued boxes
partly outside the map, spatial_scale 0.25..1, sampling_ratio -1/2/3, aligned on/off;
integer boxes incl. a degenerate one): roi_align Out to 2e-15 and X@GRAD to 5e-16;
roi_pool Out, Argmax and X@GRAD exactly. One difference: Paddle's roi_align_grad clamps
boxes to 1 x 1 even with aligned=True (its forward does not), so for aligned boxes under one
pixel Paddle's X@GRAD is not the gradient of its Out (0.13 apart in one such case); ours
is the true gradient, as the central-difference check here confirms.

Programs built with Paddle's Python APIs in legacy static mode
(paddle.vision.ops.roi_align (aligned, sampling_ratio 2) and roi_pool), with their
backward, replayed op by op in float32 (forward and _grad ops as Paddle wrote them): every
output matched to 3e-7 relative.
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import lod_tensor, port, val

rng = np.random.default_rng(147)

NOT_PORTED = {
    "TestROIAlignOp fp16/bf16, GPU-only classes": "float16/bfloat16 dtypes, GPU places",
    "test_roi_align_op.py / test_roi_pool_op.py API classes (paddle.vision.ops.RoIAlign, "
    "RoIPool, their dygraph checks)": "Python API wrappers of the same ops",
    "TestROIPoolOp's random_integers boxes with batch ids": "same boxes, built here per image",
}


def _counts(i):
    if "RoisNum" in i:
        return list(i["RoisNum"])
    lod = i["ROIs"].lod()[0]
    return [b - a for a, b in zip(lod, lod[1:])]


def _image_of_each(i):
    return np.repeat(np.arange(len(_counts(i))), _counts(i))


def _bilinear(img, y, x):
    """Paddle's bilinear_interpolate on one [C, H, W] image (None: outside)."""
    c, h, w = img.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y = y0 = y1 = h - 1
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x = x0 = x1 = w - 1
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
            + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])


def roi_align_ref(i, a):
    x, rois = i["X"], val(i["ROIs"])
    ph, pw = a["pooled_height"], a["pooled_width"]
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw))
    off = 0.5 if a.get("aligned", False) else 0.0
    for r, (box, b) in enumerate(zip(rois, _image_of_each(i))):
        x0, y0, x1, y1 = box * a["spatial_scale"] - off
        width, height = x1 - x0, y1 - y0
        if not a.get("aligned", False):
            width, height = max(width, 1.0), max(height, 1.0)
        ratio = a.get("sampling_ratio", -1)
        gh = ratio if ratio > 0 else math.ceil(height / ph)
        gw = ratio if ratio > 0 else math.ceil(width / pw)
        count = max(gh * gw, 1)
        for p in range(ph):
            for q in range(pw):
                for iy in range(gh):
                    for ix in range(gw):
                        v = _bilinear(x[b], y0 + p * height / ph + (iy + 0.5) * height / ph / gh,
                                      x0 + q * width / pw + (ix + 0.5) * width / pw / gw)
                        if v is not None:
                            out[r, :, p, q] += v / count
    return {"Out": out}


def roi_pool_ref(i, a):
    x, rois = i["X"], val(i["ROIs"])
    ph, pw = a["pooled_height"], a["pooled_width"]
    h, w = x.shape[2:]
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw))
    arg = np.full(out.shape, -1, dtype=np.int64)
    for r, (box, b) in enumerate(zip(rois, _image_of_each(i))):
        sx, sy, ex, ey = [int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
                          for v in box * a["spatial_scale"]]
        bh, bw = max(ey - sy + 1, 1) / ph, max(ex - sx + 1, 1) / pw
        for p in range(ph):
            for q in range(pw):
                h0 = min(max(math.floor(p * bh) + sy, 0), h)
                h1 = min(max(math.ceil((p + 1) * bh) + sy, 0), h)
                w0 = min(max(math.floor(q * bw) + sx, 0), w)
                w1 = min(max(math.ceil((q + 1) * bw) + sx, 0), w)
                if h1 <= h0 or w1 <= w0:
                    continue
                patch = x[b, :, h0:h1, w0:w1].reshape(x.shape[1], -1)
                k = patch.argmax(axis=1)  # first maximum, row-major
                out[r, :, p, q] = patch.max(axis=1)
                arg[r, :, p, q] = (h0 + k // (w1 - w0)) * w + w0 + k % (w1 - w0)
    return {"Out": out, "Argmax": arg}


def _paddle_rois(batch, h, w, scale, ph, pw):
    """Paddle's make_rois: image i gets i + 1 integer boxes of at least pooled size."""
    rois = []
    for b in range(batch):
        for _ in range(b + 1):
            x1 = rng.integers(0, w // scale - pw + 1)
            y1 = rng.integers(0, h // scale - ph + 1)
            x2 = rng.integers(x1 + pw, w // scale + 1)
            y2 = rng.integers(y1 + ph, h // scale + 1)
            rois.append([x1, y1, x2, y2])
    return np.array(rois, dtype=np.float64), [b + 1 for b in range(batch)]


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="no LoD"):
        run_op("roi_align", {"X": i["X"], "ROIs": val(i["ROIs"])}, a)
    with pytest.raises(FluidscopeError, match="one box count per image"):
        run_op("roi_pool", {"X": i["X"], "ROIs": val(i["ROIs"]),
                            "RoisNum": np.array([1, 1], np.int32)}, {})


def _case(op, name, lod, aligned=None, x_shape=(3, 2, 8, 6), scale=0.5, pooled=(2, 2),
          ratio=-1, check=None):
    rois, counts = _paddle_rois(x_shape[0], x_shape[2], x_shape[3], scale, *pooled)
    inputs = {"X": rng.random(x_shape)}
    if lod:
        inputs["ROIs"] = lod_tensor(rois, [counts])
    else:
        inputs.update(ROIs=rois, RoisNum=np.array(counts, np.int32))
    attrs = {"spatial_scale": scale, "pooled_height": pooled[0], "pooled_width": pooled[1]}
    if op == "roi_align":
        attrs.update(sampling_ratio=ratio, aligned=aligned)
    ref = roi_align_ref if op == "roi_align" else roi_pool_ref
    return port(op, name, inputs, ref, attrs=attrs, check=check, grad_outputs=("Out",))


CASES = [
    *_case("roi_align", "TestROIAlignOp", lod=False, aligned=False),
    *_case("roi_align", "TestROIAlignInLodOp", lod=True, aligned=False, check=_errors),
    *_case("roi_align", "TestROIAlignOpWithAligned", lod=False, aligned=True),
    *_case("roi_pool", "TestROIPoolOp", lod=True, x_shape=(3, 3, 6, 4), scale=0.25),
    *_case("roi_pool", "TestROIPoolInLodOp", lod=False, x_shape=(3, 3, 6, 4), scale=0.25),
    OpCase("roi_align", {"X": rng.random((2, 2, 5, 4)),
                         "ROIs": np.array([[-3.0, -2.5, 6.5, 3.0], [1.2, 0.7, 2.9, 9.5],
                                           [2.0, 2.0, 2.3, 2.1]]),
                         "RoisNum": np.array([2, 1], np.int32)},
           roi_align_ref, attrs={"spatial_scale": 0.8, "pooled_height": 3, "pooled_width": 2,
                                 "sampling_ratio": 2, "aligned": True},
           name="boxes_outside_and_tiny"),
    OpCase("roi_pool", {"X": rng.random((1, 2, 5, 6)),
                        "ROIs": np.array([[-4.0, -3.0, 3.0, 2.0], [5.0, 4.0, 9.0, 9.0],
                                          [2.4, 1.5, 2.4, 1.5]]),
                        "RoisNum": np.array([3], np.int32)},
           roi_pool_ref, attrs={"spatial_scale": 1.0, "pooled_height": 3, "pooled_width": 2},
           grad_outputs=("Out",), name="boxes_outside_empty_bins"),
]
