"""Cases for ``deformable_conv`` and ``deformable_conv_v1`` (kernels/deform_conv.py) against a
per-output-pixel numpy loop (each tap's deformed position, a 4-corner bilinear read with
Paddle's DmcnIm2colBilinear bounds, times the mask, times the filter).

Ported from Paddle's test/legacy_test/test_deformable_conv_op.py
(TestModulatedDeformableConvOp, TestWithStride, TestWithDilation, TestWith3x3,
TestWithGroup, TestWithDouble) and test_deformable_conv_v1_op.py (the same classes without
Mask): their paddings, strides, dilations and groups, with batch, channels and filters
shrunk (2 x 2 maps and a few channels) so the float64 gradient check of Input, Offset, Mask
and Filter stays fast (the 3 x 3 output cases check a subset); offsets reach past the map
border.

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float64; groups, deformable_groups,
strides, dilations, large offsets): Output always matched to 1e-15; Input, Offset, Mask and
Filter gradients matched to 5e-15 with im2col_step = 1, which is what
paddle.vision.ops.deform_conv2d writes. With im2col_step > 1 Paddle's grad kernel returns
different gradients (off by O(1)) while its forward is unchanged; ours ignores im2col_step
and gives the true gradient, as the central-difference check confirms.

Programs built with paddle.vision.ops.DeformConv2D in legacy static mode (with Mask: stride
2; without: groups 2, deformable_groups 2), with their backward, replayed op by op in
float32: every output matched to 3e-7 relative.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from .paddle_port import port

rng = np.random.default_rng(148)

NOT_PORTED = {
    "TestModulatedDeformableConvInvalidInput / TestDeformConv2DAPI / "
    "TestDeformConv2DAPI_CPU_FP16": "Python API argument checks, float16",
    "the float32 dtype of the ported classes": "ported in float64 (and a float32 forward twin)",
}


def _sample(img, y, x):
    """Paddle's DmcnIm2colBilinear on one [H, W] plane."""
    h, w = img.shape
    if not (-1 < y < h and -1 < x < w):
        return 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    total = 0.0
    for cy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for cx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= cy < h and 0 <= cx < w:
                total += wy * wx * img[cy, cx]
    return total


def deform_conv_ref(i, a):
    x, off, w = i["Input"], i["Offset"], i["Filter"]
    mask = i.get("Mask")
    (sh, sw), (ph, pw), (dh, dw) = a["strides"], a["paddings"], a.get("dilations", [1, 1])
    g, dg = a.get("groups", 1), a.get("deformable_groups", 1)
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    ho, wo = off.shape[2:]
    out = np.zeros((n, m, ho, wo))
    for b in range(n):
        for oy in range(ho):
            for ox in range(wo):
                cols = np.zeros((c, kh, kw))
                for ch in range(c):
                    grp = ch // (c // dg)
                    for ki in range(kh):
                        for kj in range(kw):
                            k = ki * kw + kj
                            at = grp * 2 * kh * kw + 2 * k  # this tap's (dy, dx) channels
                            y = oy * sh - ph + ki * dh + off[b, at, oy, ox]
                            xx = ox * sw - pw + kj * dw + off[b, at + 1, oy, ox]
                            v = _sample(x[b, ch], y, xx)
                            if mask is not None:
                                v *= mask[b, grp * kh * kw + k, oy, ox]
                            cols[ch, ki, kj] = v
                for f in range(m):
                    grp = f // (m // g)
                    out[b, f, oy, ox] = (cols[grp * cg:(grp + 1) * cg] * w[f]).sum()
    return {"Output": out}


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="Offset must be"):
        run_op("deformable_conv", dict(i, Offset=i["Offset"][:, :4]), a)
    with pytest.raises(FluidscopeError, match="deformable_groups"):
        run_op("deformable_conv", i, dict(a, deformable_groups=3))


def _case(name, xs, ws, pad, stride=(1, 1), dil=(1, 1), groups=1, dg=1, mask=True,
          check=None, grad="auto"):
    out = [(xs[2 + d] + 2 * pad[d] - (dil[d] * (ws[2 + d] - 1) + 1)) // stride[d] + 1
           for d in range(2)]
    k = ws[2] * ws[3]
    inputs = {"Input": rng.random(xs),
              "Offset": rng.uniform(-1.8, 1.8, (xs[0], 2 * dg * k, *out)),
              "Filter": rng.random(ws)}
    op = "deformable_conv_v1"
    if mask:
        inputs["Mask"] = rng.random((xs[0], dg * k, *out))
        op = "deformable_conv"
    attrs = {"paddings": list(pad), "strides": list(stride), "dilations": list(dil),
             "groups": groups, "deformable_groups": dg, "im2col_step": 1}
    # grad_rtol 1e-4: tiny Offset gradients next to O(10) losses (central-difference noise)
    return port(op, name, inputs, deform_conv_ref, dtype="float32", attrs=attrs, check=check,
                grad=grad, grad_rtol=1e-4)


CASES = [
    *_case("TestModulatedDeformableConvOp", (1, 2, 2, 2), (2, 2, 3, 3), (1, 1), check=_errors),
    *_case("TestWithStride", (1, 1, 2, 2), (2, 1, 3, 3), (3, 3), stride=(2, 2),
           grad=("Input", "Filter", "Mask")),
    *_case("TestWithDilation", (2, 1, 2, 2), (2, 1, 3, 3), (2, 2), dil=(2, 2)),
    *_case("TestWith3x3", (1, 2, 3, 3), (3, 2, 3, 3), (1, 1), grad=("Input", "Offset")),
    *_case("TestWithGroup", (1, 4, 2, 2), (2, 2, 3, 3), (1, 1), groups=2, dg=2),
    *_case("TestWithDouble", (1, 3, 2, 2), (2, 3, 3, 3), (1, 1)),
    *_case("v1_TestDeformConvOp", (1, 2, 2, 2), (2, 2, 3, 3), (1, 1), mask=False),
    *_case("v1_TestWithStride", (1, 1, 2, 2), (2, 1, 3, 3), (3, 3), stride=(2, 2), mask=False,
           grad=("Input", "Filter")),
    *_case("v1_TestWithDilation", (2, 1, 2, 2), (2, 1, 3, 3), (2, 2), dil=(2, 2), mask=False),
    *_case("v1_TestWithGroup", (1, 4, 2, 2), (4, 2, 3, 3), (1, 1), groups=2, dg=4, mask=False),
]
