"""Cases for kernels/rearrange.py: ``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``,
``shuffle_channel``, ``temporal_shift``, ``unfold`` and ``fold``, against per-element numpy
loops (index arithmetic written out, not the kernels' reshapes).

Ported from Paddle's test/legacy_test: test_pixel_shuffle_op.py (TestPixelShuffleOp,
TestChannelLast), test_pixel_unshuffle.py (TestPixelUnshuffleOp, its channel-last class),
test_channel_shuffle.py (TestChannelShuffleOp, its channel-last class),
test_shuffle_channel_op.py (TestShuffleChannelOp, float32, shape shrunk from [5, 64, 4, 4]),
test_temporal_shift_op.py (TestTemporalShift, 2, 3, 4), test_unfold_op.py (TestUnfoldOp,
shrunk from 20x20 to 6x5), test_fold_op.py (TestFoldOp, TestFoldshape, TestFoldshape1d).

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float64, ops appended directly, grads
from append_backward with a random upstream gradient): every op's output and X@GRAD matched
exactly (0 difference) on NCHW/NHWC, asymmetric unfold paddings, dilated/strided fold.
Differences found: Paddle 3.3.1's CPU ``shuffle_channel`` returns garbage in float64 (its
float64 kernel misreads the buffer; float32 matches ours exactly) and its
``shuffle_channel_grad`` applies the forward permutation to Out@GRAD instead of its inverse
(wrong unless the permutation is an involution, e.g. group = C / group): ours gives the true
gradient, which the central-difference check here confirms. Paddle's ``fold``
refuses paddings whose [top, left, bottom, right] block count differs from the
2 x [top, left] one, as ours does; its temporal_shift refuses a shift_ratio outside (0, 0.5),
as ours does.

Programs built with Paddle's Python APIs in legacy static mode (F.pixel_shuffle
(NCHW/NHWC), F.pixel_unshuffle, F.channel_shuffle, F.temporal_shift, F.unfold and F.fold),
with their backward, replayed op by op in float32 (forward and _grad ops as Paddle wrote
them): every output matched to 3e-7 relative.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(141)

NOT_PORTED = {
    "TestPixelShuffleFP16Op / TestPixelShuffleBF16Op / TestPixelUnshuffle*FP16/BF16 / "
    "TestChannelShuffle*FP16/BF16 / TestTemporalShiftFP16 / TestTemporalShiftFP16OP / "
    "TestTemporalShiftBF16 / TestUnfoldFP16Op / TestUnfoldBF16Op": "float16/bfloat16 dtypes",
    "TestFold_Complex64 / TestFold_Complex128": "complex dtypes: fluidscope kernels are real",
    "TestPixelShuffleAPI / TestPixelUnshuffleAPI / TestChannelShuffleAPI / TestUnfoldAPI / "
    "TestFoldAPI / TestTemporalShiftAPI": "Python API (dygraph/layer) wrappers of the same ops",
    "TestPixelShuffleError / TestFoldOpError / TestTemporalShiftAPI.test_error":
        "Python API argument checks (types, data_format strings) made before any op exists",
}


def pixel_shuffle_ref(x, r, data_format="NCHW"):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    out = np.zeros((n, c // (r * r), h * r, w * r), x.dtype)
    for oc in range(c // (r * r)):
        for i in range(h * r):
            for j in range(w * r):
                out[:, oc, i, j] = x[:, oc * r * r + (i % r) * r + j % r, i // r, j // r]
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


def pixel_unshuffle_ref(x, r, data_format="NCHW"):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    out = np.zeros((n, c * r * r, h // r, w // r), x.dtype)
    for ic in range(c):
        for i in range(h):
            for j in range(w):
                out[:, ic * r * r + (i % r) * r + j % r, i // r, j // r] = x[:, ic, i, j]
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


def channel_shuffle_ref(x, g, data_format="NCHW"):
    last = data_format == "NHWC"
    c = x.shape[-1] if last else x.shape[1]
    out = np.empty_like(x)
    for k in range(c):  # input channel k = (group i, member j) lands at j * g + i
        i, j = divmod(k, c // g)
        if last:
            out[..., j * g + i] = x[..., k]
        else:
            out[:, j * g + i] = x[:, k]
    return out


def temporal_shift_ref(x, seg_num, ratio, data_format="NCHW"):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    nt, c, h, w = x.shape
    c1, c2 = int(c * ratio), int(c * 2 * ratio)
    out = np.zeros_like(x)
    for row in range(nt):
        t = row % seg_num
        for ch in range(c):
            src = t - 1 if ch < c1 else t + 1 if ch < c2 else t
            if 0 <= src < seg_num:
                out[row, ch] = x[row - t + src, ch]
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


def _blocks(size, a, b, k, s, d):
    return (size + a + b - (d * (k - 1) + 1)) // s + 1


def unfold_ref(x, kernel_sizes, strides, paddings, dilations):
    """Paddle's test loop: Y[n, c*kh*kw + i*kw + j, oh*Wo + ow] = X at the tap."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel_sizes, strides, dilations
    bh = _blocks(h, paddings[0], paddings[2], kh, sh, dh)
    bw = _blocks(w, paddings[1], paddings[3], kw, sw, dw)
    y = np.zeros((n, c * kh * kw, bh * bw), x.dtype)
    for row in range(c * kh * kw):
        ch, i, j = row // (kh * kw), (row // kw) % kh, row % kw
        for col in range(bh * bw):
            hi = (col // bw) * sh - paddings[0] + i * dh
            wi = (col % bw) * sw - paddings[1] + j * dw
            if 0 <= hi < h and 0 <= wi < w:
                y[:, row, col] = x[:, ch, hi, wi]
    return y


def fold_ref(x, output_sizes, kernel_sizes, strides, paddings, dilations):
    n, rows, _ = x.shape
    (h, w), (kh, kw), (sh, sw), (dh, dw) = output_sizes, kernel_sizes, strides, dilations
    bh = _blocks(h, paddings[0], paddings[2], kh, sh, dh)
    bw = _blocks(w, paddings[1], paddings[3], kw, sw, dw)
    y = np.zeros((n, rows // (kh * kw), h, w), x.dtype)
    for row in range(rows):
        ch, i, j = row // (kh * kw), (row // kw) % kh, row % kw
        for col in range(bh * bw):
            hi = (col // bw) * sh - paddings[0] + i * dh
            wi = (col % bw) * sw - paddings[1] + j * dw
            if 0 <= hi < h and 0 <= wi < w:
                y[:, ch, hi, wi] += x[:, row, col]
    return y


def _ps(i, a):
    return pixel_shuffle_ref(i["X"], a["upscale_factor"], a.get("data_format", "NCHW"))


def _pu(i, a):
    return pixel_unshuffle_ref(i["X"], a["downscale_factor"], a.get("data_format", "NCHW"))


def _cs(i, a):
    return channel_shuffle_ref(i["X"], a["groups"], a.get("data_format", "NCHW"))


def _sc(i, a):
    return channel_shuffle_ref(i["X"], a["group"])


def _ts(i, a):
    return temporal_shift_ref(i["X"], a["seg_num"], a.get("shift_ratio", 0.25),
                              a.get("data_format", "NCHW"))


def _uf(i, a):
    return {"Y": unfold_ref(i["X"], a["kernel_sizes"], a["strides"], a["paddings"], a["dilations"])}


def _fd(i, a):
    return {"Y": fold_ref(i["X"], a["output_sizes"], a["kernel_sizes"], a["strides"],
                          a["paddings"], a["dilations"])}


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="divisible by upscale_factor"):
        run_op("pixel_shuffle", {"X": rng.standard_normal((1, 5, 2, 2))}, {"upscale_factor": 2})
    with pytest.raises(FluidscopeError, match=r"must lie in \(0, 0.5\)"):
        run_op("temporal_shift", {"X": rng.standard_normal((4, 4, 2, 2))},
               {"seg_num": 2, "shift_ratio": 0.5})
    with pytest.raises(FluidscopeError, match="divisible by seg_num=4"):
        run_op("temporal_shift", {"X": rng.standard_normal((6, 4, 2, 2))}, {"seg_num": 4})
    with pytest.raises(FluidscopeError, match="number of blocks"):
        run_op("fold", {"X": rng.standard_normal((2, 4, 5))},
               {"output_sizes": [3, 3], "kernel_sizes": [2, 2], "strides": [1, 1],
                "paddings": [0, 0, 0, 0], "dilations": [1, 1]})
    with pytest.raises(FluidscopeError, match="differ"):
        run_op("fold", {"X": rng.standard_normal((1, 4, 6))},
               {"output_sizes": [4, 5], "kernel_sizes": [2, 2], "strides": [2, 2],
                "paddings": [0, 1, 3, 3], "dilations": [1, 1]})


def _r(*shape):
    return rng.random(shape)


_UNFOLD = {"kernel_sizes": [3, 3], "strides": [1, 1], "paddings": [1, 1, 1, 1], "dilations": [1, 1]}
_FOLD = {"kernel_sizes": [2, 2], "strides": [1, 1], "paddings": [0, 0, 0, 0], "dilations": [1, 1],
         "output_sizes": [4, 5]}

CASES = [
    *port("pixel_shuffle", "TestPixelShuffleOp", {"X": _r(2, 9, 2, 3)}, _ps,
          attrs={"upscale_factor": 3, "data_format": "NCHW"}, check=_errors),
    *port("pixel_shuffle", "TestChannelLast", {"X": _r(2, 2, 3, 9)}, _ps,
          attrs={"upscale_factor": 3, "data_format": "NHWC"}),
    *port("pixel_unshuffle", "TestPixelUnshuffleOp", {"X": _r(2, 1, 6, 6)}, _pu,
          attrs={"downscale_factor": 3, "data_format": "NCHW"}),
    *port("pixel_unshuffle", "TestChannelLast", {"X": _r(2, 4, 6, 2)}, _pu,
          attrs={"downscale_factor": 2, "data_format": "NHWC"}),
    *port("channel_shuffle", "TestChannelShuffleOp", {"X": _r(2, 9, 2, 2)}, _cs,
          attrs={"groups": 3, "data_format": "NCHW"}),
    *port("channel_shuffle", "TestChannelLast", {"X": _r(2, 2, 2, 9)}, _cs,
          attrs={"groups": 3, "data_format": "NHWC"}),
    *port("shuffle_channel", "TestShuffleChannelOp", {"X": _r(2, 8, 2, 2)}, _sc,
          dtype="float32", attrs={"group": 4}),
    *port("temporal_shift", "TestTemporalShift", {"X": _r(6, 4, 2, 2)}, _ts,
          attrs={"seg_num": 3, "shift_ratio": 0.25, "data_format": "NCHW"}),
    *port("temporal_shift", "TestTemporalShift2", {"X": _r(4, 9, 2, 2)}, _ts,
          attrs={"seg_num": 2, "shift_ratio": 0.2, "data_format": "NCHW"}),
    *port("temporal_shift", "TestTemporalShift3", {"X": _r(3, 10, 2, 2)}, _ts,
          attrs={"seg_num": 1, "shift_ratio": 0.3, "data_format": "NCHW"}),
    *port("temporal_shift", "TestTemporalShift4", {"X": _r(6, 2, 2, 4)}, _ts,
          attrs={"seg_num": 3, "shift_ratio": 0.25, "data_format": "NHWC"}),
    *port("unfold", "TestUnfoldOp", {"X": _r(2, 2, 6, 5)}, _uf, attrs=_UNFOLD),
    OpCase("unfold", {"X": rng.standard_normal((2, 3, 6, 5))}, _uf,
           attrs={"kernel_sizes": [2, 3], "strides": [2, 1], "paddings": [1, 0, 2, 1],
                  "dilations": [1, 2]}, name="asymmetric_dilated"),
    *port("fold", "TestFoldOp", {"X": _r(3, 12, 12)}, _fd, attrs=_FOLD),
    *port("fold", "TestFoldshape", {"X": _r(2, 27, 6)}, _fd,
          attrs=dict(_FOLD, kernel_sizes=[3, 3])),
    *port("fold", "TestFoldshape1d", {"X": _r(2, 27, 3)}, _fd,
          attrs=dict(_FOLD, kernel_sizes=[1, 3], output_sizes=[1, 5])),
    OpCase("fold", {"X": rng.standard_normal((2, 12, 12))}, _fd,
           attrs={"output_sizes": [4, 5], "kernel_sizes": [2, 3], "strides": [1, 2],
                  "paddings": [1, 1, 1, 1], "dilations": [2, 1]}, name="padded_dilated"),
]
