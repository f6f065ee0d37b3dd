"""Cases for ``conv2d_transpose`` and ``depthwise_conv2d_transpose``
(kernels/conv_transpose.py) against a per-pixel numpy scatter: every input pixel adds
``x * filter`` into the output at ``h * stride + i * dilation - pad_top``.

Ported from Paddle's test/legacy_test/test_conv2d_transpose_op.py (the CPU classes, batch
cut to 1 so the float64 gradient check stays fast). Also compared with PaddlePaddle 3.3.1
(static graph, CPU, float64; plain, stride+padding, asymmetric paddings with dilation,
groups, output_padding, output_size, SAME, SAME with dilation, VALID, NHWC and two
depthwise settings): Output, Input@GRAD and Filter@GRAD matched to 1e-12.
The conv2d_transpose ops of paddle.nn.Conv2DTranspose (output_padding, groups), replayed
op by op in float32, matched exactly.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(15)

NOT_PORTED = {
    "TestCUDNN*": "cuDNN variants of the ported classes (use_cudnn is a runtime hint)",
    "*FP16* / *BF16*": "float16/bfloat16 GPU-only dtypes",
    "TestConv2DTransposeAPI / *OpException / TestConv2DTransposeRepr / *Tensor*OutputSize*":
        "Python-API, dygraph and tensor-valued output_size tests, not op semantics",
    "TestMKLDNN*": "oneDNN-only",
}


def _same(size, k, s):
    total = max((-(-size // s) - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def transpose_reference(x, w, strides=(1, 1), paddings=(0, 0), dilations=(1, 1), groups=1,
                        padding_algorithm="EXPLICIT", data_format="NCHW", output_padding=(),
                        output_size=()):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c_in, h, wd = x.shape
    _, cog, kh, kw = w.shape
    pads = list(paddings) if len(paddings) == 4 else [paddings[0]] * 2 + [paddings[1]] * 2
    if padding_algorithm == "VALID":
        pads = [0, 0, 0, 0]
    elif padding_algorithm == "SAME":
        pads = _same(h, kh, strides[0]) + _same(wd, kw, strides[1])
        dilations = (1, 1)
    full_h = (h - 1) * strides[0] + dilations[0] * (kh - 1) + 1
    full_w = (wd - 1) * strides[1] + dilations[1] * (kw - 1) + 1
    out_h, out_w = full_h - pads[0] - pads[1], full_w - pads[2] - pads[3]
    if output_size:
        out_h, out_w = output_size
    elif output_padding:
        out_h, out_w = out_h + output_padding[0], out_w + output_padding[1]
    big = np.zeros((n, cog * groups, max(full_h, pads[0] + out_h), max(full_w, pads[2] + out_w)))
    cig = c_in // groups
    for ci in range(c_in):
        g = ci // cig
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for b in range(kw):
                        big[:, g * cog:(g + 1) * cog, i * strides[0] + a * dilations[0],
                            j * strides[1] + b * dilations[1]] += x[:, ci, i, j, None] * w[ci, :, a, b]
    out = big[:, :, pads[0]:pads[0] + out_h, pads[2]:pads[2] + out_w]
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


def _ref(i, a):
    out = transpose_reference(i["Input"], i["Filter"], **a)
    if i.get("Bias") is not None:
        shape = (1, 1, 1, -1) if a.get("data_format") == "NHWC" else (1, -1, 1, 1)
        out = out + i["Bias"].reshape(shape)
    return {"Output": out}


def _check_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="output_size .* must lie in"):
        run_op("conv2d_transpose", i, dict(a, output_size=[30, 30]))
    with pytest.raises(FluidscopeError, match="output_padding .* must be >= 0 and <"):
        run_op("conv2d_transpose", i, dict(a, output_padding=[2, 2]))
    with pytest.raises(FluidscopeError, match="channels"):
        run_op("conv2d_transpose", {"Input": i["Input"], "Filter": i["Filter"][:2]}, a)


# (Paddle class, Input NCHW shape, Filter [C_in, C_out/groups, kh, kw], attrs)
_PORTED = [
    ("TestConv2DTransposeOp", [1, 3, 5, 5], [3, 6, 3, 3], {}),
    ("TestWithSymmetricPad", [1, 3, 5, 5], [3, 6, 3, 3], {"paddings": [1, 1]}),
    ("TestWithAsymmetricPad", [1, 3, 5, 5], [3, 6, 3, 3], {"paddings": [1, 0, 1, 2]}),
    ("TestWithSAMEPad", [1, 3, 6, 5], [3, 6, 4, 3],
     {"strides": [2, 1], "dilations": [1, 2], "padding_algorithm": "SAME"}),
    ("TestWithVALIDPad", [1, 3, 5, 5], [3, 6, 3, 3], {"padding_algorithm": "VALID"}),
    ("TestWithGroups", [1, 4, 5, 5], [4, 3, 3, 3], {"paddings": [1, 1], "groups": 2}),
    ("TestWithStride", [1, 3, 5, 5], [3, 6, 3, 3], {"paddings": [1, 1], "strides": [2, 2]}),
    ("TestWithDilation", [1, 3, 5, 5], [3, 6, 3, 3], {"paddings": [1, 1], "dilations": [2, 2]}),
    ("TestWithEvenUpsample", [1, 3, 7, 7], [3, 2, 5, 5],
     {"paddings": [2, 2], "strides": [2, 2], "output_size": [14, 14]}),
    ("TestWithEvenUpsampleOutputPadding", [1, 3, 7, 7], [3, 2, 5, 5],
     {"paddings": [2, 2], "strides": [2, 2], "output_padding": [1, 1]}),
    ("Test_NHWC", [1, 3, 5, 5], [3, 6, 3, 3], {"data_format": "NHWC"}),
    ("TestWithAsymmetricPad_NHWC", [1, 3, 5, 5], [3, 6, 3, 3],
     {"paddings": [1, 0, 1, 2], "data_format": "NHWC"}),
    ("TestWithGroups_NHWC", [1, 4, 5, 5], [4, 3, 3, 3],
     {"paddings": [1, 1], "groups": 2, "data_format": "NHWC"}),
    ("TestWithStride_NHWC", [1, 3, 5, 5], [3, 6, 3, 3],
     {"paddings": [1, 1], "strides": [2, 2], "data_format": "NHWC"}),
    ("TestWithEvenUpsample_NHWC_output_padding", [1, 3, 7, 7], [3, 2, 5, 5],
     {"paddings": [2, 2], "strides": [2, 2], "output_padding": [1, 1], "data_format": "NHWC"}),
    # beyond Paddle's tests: output_size with asymmetric paddings and a crop at the bottom
    ("output_size_asym", [1, 3, 4, 5], [3, 2, 3, 3],
     {"paddings": [1, 2, 1, 0], "strides": [3, 2], "output_size": [11, 11]}),
]


def _input(shape, attrs):
    x = rng.standard_normal(shape)
    return x.transpose(0, 2, 3, 1).copy() if attrs.get("data_format") == "NHWC" else x


CASES = [OpCase("conv2d_transpose", {"Input": _input(xs, a), "Filter": rng.standard_normal(ws)},
                _ref, attrs=a, name=name) for name, xs, ws, a in _PORTED]
CASES[6].check = _check_errors
CASES.append(OpCase("conv2d_transpose", {"Input": rng.standard_normal((1, 2, 3, 3)),
                                         "Filter": rng.standard_normal((2, 3, 2, 2)),
                                         "Bias": rng.standard_normal(3)},
                    _ref, attrs={"strides": [2, 2]}, name="bias"))
CASES.append(OpCase("conv2d_transpose", {
    "Input": rng.standard_normal((2, 3, 4, 4)).astype(np.float32),
    "Filter": rng.standard_normal((3, 2, 3, 3)).astype(np.float32)}, _ref,
    attrs={"strides": [2, 2], "paddings": [1, 1]}, grad=(), rtol=1e-5, atol=1e-5,
    name="float32"))

# TestDepthwiseConvTranspose (Input [2, 8, 16, 16] in Paddle; smaller here) and a
# channel multiplier of 2.
CASES += [
    OpCase("depthwise_conv2d_transpose", {"Input": rng.standard_normal((1, 4, 4, 4)),
                                          "Filter": rng.standard_normal((4, 1, 4, 4))}, _ref,
           attrs={"strides": [2, 2], "paddings": [1, 1], "groups": 4},
           name="TestDepthwiseConvTranspose"),
    OpCase("depthwise_conv2d_transpose", {"Input": rng.standard_normal((1, 4, 4, 3)),
                                          "Filter": rng.standard_normal((3, 2, 3, 3))}, _ref,
           attrs={"strides": [2, 2], "paddings": [1, 1], "groups": 3, "data_format": "NHWC",
                  "output_padding": [1, 0]}, name="multiplier_nhwc"),
]
