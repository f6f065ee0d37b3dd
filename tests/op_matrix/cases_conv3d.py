"""Cases for ``conv3d`` and ``conv3d_transpose`` (kernels/conv3d.py) against direct
per-voxel numpy loops (conv3d: a window sum per output voxel; conv3d_transpose: each input
voxel's filter block scattered into the output).

Ported from Paddle's test/legacy_test/test_conv3d_op.py (TestConv3DOp, TestCase1,
TestWithGroup1/2, TestWith1x1, TestWithInput1x1Filter1x1, TestWithDilation, the
*_AsyPadding classes, TestConv3DOp_DiffDataInDiffDim with its PaddingSAME/VALID/ChannelLast
variants) and test_conv3d_transpose_op.py (TestConv3DTransposeOp, TestWithSymmetricPad,
TestWithAsymmetricPad, TestWithSAMEPad, TestWithVALIDPad, TestWithStride, TestWithGroups,
TestWithDilation, Test_NHWC): their attributes, with batch, channels, filter counts and
volumes shrunk (e.g. 5x5x5 -> 3x3x3, 120 filters -> 6) so the float64 gradient check of
Input and Filter stays fast.

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float64; groups, 6-value paddings,
dilations, strides, SAME, VALID, NDHWC/NHWC, output_padding, output_size): Output,
Input@GRAD and Filter@GRAD matched to 1e-14. Paddle's conv3d_transpose reads data_format
"NDHWC" as channel-first (only "NHWC", what its Python API writes, is channel-last); ours
does the same.

Programs built with Paddle's Python APIs in legacy static mode (nn.Conv3D (groups,
dilation, 6-value padding, SAME + NDHWC) and nn.Conv3DTranspose (output_padding, NDHWC,
which the API writes as "NHWC")), with their backward, replayed op by op in float32
(forward and _grad ops as Paddle wrote them): every output matched to 3e-7 relative.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(143)

NOT_PORTED = {
    "TestCUDNN* / *_CudnnPadding*Op / *_CudnnChannelLast / TestCUDNNExhaustiveSearch / "
    "TestCUDNN_NHWC and the other cuDNN conv3d_transpose classes":
        "cuDNN variants of ported CPU configurations (use_cudnn is a runtime hint)",
    "TestFP16CUDNN / TestFP16*CUDNN / *CUDNNBF16OP / *CUDNNFP16OP": "float16/bfloat16 GPU dtypes",
    "the remaining create_test_padding_SAME/VALID_class and create_test_channel_last_class "
    "instances (TestWithGroup1_AsyPadding_*, TestWith1x1_AsyPadding_*)":
        "the same SAME/VALID/channel-last settings as the ported variants on another base",
    "TestConv3DAPI / TestConv3DAPI_Error / TestPIRConv3DAPI_Error / TestConv3DTransposeAPI / "
    "TestConv3DTransposeOpException": "Python API layers and argument checks, no op semantics",
    "TestConv3DOp_2 with use_mkldnn / onednn classes": "oneDNN-only",
}


def _same_pads(size, k, s):
    total = max((-(-size // s) - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def _pads(x_spatial, w_spatial, strides, paddings, dilations, algorithm):
    if algorithm == "VALID":
        return [0] * 6, dilations
    if algorithm == "SAME":
        pads = []
        for size, k, s in zip(x_spatial, w_spatial, strides):
            pads += _same_pads(size, k, s)
        return pads, [1, 1, 1]
    p = list(paddings)
    return ([p[0], p[0], p[1], p[1], p[2], p[2]] if len(p) == 3 else p), dilations


def conv3d_ref(x, w, strides=(1, 1, 1), paddings=(0, 0, 0), dilations=(1, 1, 1), groups=1,
               padding_algorithm="EXPLICIT", data_format="NCDHW"):
    last = data_format in ("NDHWC", "NHWC")
    if last:
        x = x.transpose(0, 4, 1, 2, 3)
    pads, dil = _pads(x.shape[2:], w.shape[2:], strides, paddings, dilations, padding_algorithm)
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(zip(pads[::2], pads[1::2])))
    m, cg = w.shape[:2]
    span = [d * (k - 1) + 1 for d, k in zip(dil, w.shape[2:])]
    out = [(xp.shape[2 + i] - span[i]) // strides[i] + 1 for i in range(3)]
    y = np.zeros((x.shape[0], m, *out))
    for f in range(m):
        g = f // (m // groups)
        for a in range(out[0]):
            for b in range(out[1]):
                for c in range(out[2]):
                    o = [a * strides[0], b * strides[1], c * strides[2]]
                    patch = xp[:, g * cg:(g + 1) * cg, o[0]:o[0] + span[0]:dil[0],
                               o[1]:o[1] + span[1]:dil[1], o[2]:o[2] + span[2]:dil[2]]
                    y[:, f, a, b, c] = (patch * w[f]).sum(axis=(1, 2, 3, 4))
    return y.transpose(0, 2, 3, 4, 1) if last else y


def conv3d_transpose_ref(x, w, strides=(1, 1, 1), paddings=(0, 0, 0), dilations=(1, 1, 1),
                         groups=1, padding_algorithm="EXPLICIT", data_format="NCHW",
                         output_padding=(), output_size=()):
    last = data_format == "NHWC"
    if last:
        x = x.transpose(0, 4, 1, 2, 3)
    pads, dil = _pads(x.shape[2:], w.shape[2:], strides, paddings, dilations, padding_algorithm)
    n, c_in = x.shape[:2]
    cog = w.shape[1]
    cig = c_in // groups
    full = [(x.shape[2 + i] - 1) * strides[i] + dil[i] * (w.shape[2 + i] - 1) + 1 + 8
            for i in range(3)]  # room for output_padding / output_size
    y = np.zeros((n, cog * groups, *full))
    for ci in range(c_in):
        g = ci // cig
        for a in range(x.shape[2]):
            for b in range(x.shape[3]):
                for c in range(x.shape[4]):
                    o = [a * strides[0], b * strides[1], c * strides[2]]
                    span = [d * (k - 1) + 1 for d, k in zip(dil, w.shape[2:])]
                    y[:, g * cog:(g + 1) * cog, o[0]:o[0] + span[0]:dil[0],
                      o[1]:o[1] + span[1]:dil[1], o[2]:o[2] + span[2]:dil[2]] += \
                        x[:, ci, a, b, c][:, None, None, None, None] * w[ci][None]
    natural = [(x.shape[2 + i] - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1]
               + dil[i] * (w.shape[2 + i] - 1) + 1 for i in range(3)]
    if output_size:
        natural = list(output_size)
    elif output_padding:
        natural = [s + p for s, p in zip(natural, output_padding)]
    y = y[:, :, pads[0]:pads[0] + natural[0], pads[2]:pads[2] + natural[1],
          pads[4]:pads[4] + natural[2]]
    return y.transpose(0, 2, 3, 4, 1) if last else y


def _c3(i, a):
    return {"Output": conv3d_ref(i["Input"], i["Filter"], **a)}


def _ct3(i, a):
    return {"Output": conv3d_transpose_ref(i["Input"], i["Filter"], **a)}


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="Input has 3 channels but Filter takes 2"):
        run_op("conv3d", {"Input": i["Input"], "Filter": rng.random((2, 2, 1, 1, 1))}, {})
    with pytest.raises(FluidscopeError, match="paddings"):
        run_op("conv3d", i, dict(a, paddings=[1, 1]))
    with pytest.raises(FluidscopeError, match="output_size"):
        run_op("conv3d_transpose", {"Input": i["Input"], "Filter": rng.random((3, 2, 2, 2, 2))},
               {"output_size": [9, 9, 9]})


def _x(*shape):
    return rng.random(shape)


def _conv(name, xs, ws, check=None, **attrs):
    return port("conv3d", name, {"Input": _x(*xs), "Filter": _x(*ws)}, _c3, attrs=attrs,
                check=check)


def _tconv(name, xs, ws, **attrs):
    return port("conv3d_transpose", name, {"Input": _x(*xs), "Filter": _x(*ws)}, _ct3,
                dtype="float32", attrs=attrs)


_ASY = dict(data_format="NCDHW")
CASES = [
    *_conv("TestConv3DOp", (1, 3, 3, 3, 3), (2, 3, 2, 2, 2), check=_errors),
    *_conv("TestCase1", (1, 3, 3, 3, 3), (2, 3, 3, 3, 3), paddings=[1, 1, 1]),
    *_conv("TestWithGroup1", (1, 3, 3, 3, 3), (3, 1, 2, 2, 2), groups=3),
    *_conv("TestWithGroup2", (1, 3, 3, 3, 3), (3, 1, 3, 3, 3), groups=3, paddings=[1, 1, 1]),
    *_conv("TestWith1x1", (2, 3, 2, 2, 2), (6, 1, 1, 1, 1), groups=3),
    *_conv("TestWithInput1x1Filter1x1", (4, 3, 1, 1, 1), (6, 1, 1, 1, 1), groups=3),
    *_conv("TestWithDilation", (1, 3, 4, 4, 4), (3, 1, 2, 2, 2), groups=3, dilations=[2, 2, 2]),
    *_conv("TestConv3DOp_AsyPadding", (1, 3, 3, 3, 4), (2, 3, 3, 3, 3), strides=[1, 1, 2],
           paddings=[1, 0, 1, 0, 0, 2], **_ASY),
    *_conv("TestConv3DOp_DiffDataInDiffDim", (1, 2, 3, 4, 4), (2, 2, 3, 4, 3),
           strides=[1, 1, 2], paddings=[1, 0, 1, 0, 0, 2], **_ASY),
    *_conv("TestConv3DOp_DiffDataInDiffDim_PaddingSAMEOp", (1, 2, 3, 4, 4), (2, 2, 3, 4, 3),
           strides=[1, 1, 2], paddings=[1, 1, 1], padding_algorithm="SAME", **_ASY),
    *_conv("TestConv3DOp_DiffDataInDiffDim_PaddingVALIDOp", (1, 2, 3, 4, 4), (2, 2, 3, 4, 3),
           strides=[1, 1, 2], paddings=[1, 1, 1], padding_algorithm="VALID", **_ASY),
    *_conv("TestConv3DOp_DiffDataInDiffDim_ChannelLast", (1, 3, 4, 4, 2), (2, 2, 3, 4, 3),
           strides=[1, 1, 2], paddings=[1, 0, 1, 0, 0, 2], data_format="NDHWC"),
    *_conv("TestCase1_AsyPadding", (1, 3, 3, 3, 3), (2, 3, 3, 3, 3),
           paddings=[0, 0, 1, 0, 0, 2], **_ASY),
    *_conv("TestWithGroup1_AsyPadding", (1, 3, 3, 3, 3), (3, 1, 3, 3, 3), groups=3,
           paddings=[1, 1, 1, 0, 0, 2], **_ASY),
    *_conv("TestWithGroup2_AsyPadding", (1, 3, 3, 3, 3), (3, 1, 3, 3, 3), groups=3,
           paddings=[1, 1, 0, 1, 0, 2], **_ASY),
    *_conv("TestWith1x1_AsyPadding", (1, 3, 2, 2, 2), (6, 1, 1, 1, 1), groups=3,
           paddings=[0, 0, 1, 0, 0, 2], **_ASY),
    *_conv("TestWithDilation_AsyPadding", (1, 3, 4, 4, 4), (3, 1, 2, 2, 2), groups=3,
           dilations=[2, 2, 2], paddings=[0, 0, 1, 0, 1, 0], **_ASY),
    *_conv("TestConv3DOp_AsyPadding_PaddingSAMEOp", (1, 3, 3, 3, 4), (2, 3, 3, 3, 3),
           strides=[1, 1, 2], paddings=[1, 1, 1], padding_algorithm="SAME", **_ASY),
    *_conv("TestConv3DOp_AsyPadding_ChannelLast", (1, 3, 3, 4, 3), (2, 3, 3, 3, 3),
           strides=[1, 1, 2], paddings=[1, 0, 1, 0, 0, 2], data_format="NDHWC"),
    *_tconv("TestConv3DTransposeOp", (1, 3, 3, 3, 3), (3, 2, 3, 3, 3)),
    *_tconv("TestWithSymmetricPad", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3), paddings=[1, 1, 1]),
    *_tconv("TestWithAsymmetricPad", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3),
            paddings=[1, 0, 1, 0, 1, 2]),
    *_tconv("TestWithSAMEPad", (1, 2, 3, 3, 3), (2, 2, 3, 3, 4), strides=[1, 1, 2],
            dilations=[1, 2, 1], padding_algorithm="SAME"),
    *_tconv("TestWithVALIDPad", (1, 2, 3, 3, 3), (2, 2, 3, 4, 3), strides=[2, 1, 1],
            padding_algorithm="VALID"),
    *_tconv("TestWithStride", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3), paddings=[1, 1, 1],
            strides=[2, 2, 2]),
    *_tconv("TestWithGroups", (1, 2, 3, 3, 3), (2, 3, 3, 3, 3), paddings=[1, 1, 1], groups=2),
    *_tconv("TestWithDilation", (1, 2, 3, 3, 3), (2, 2, 3, 3, 3), paddings=[1, 1, 1],
            dilations=[2, 2, 2]),
    *_tconv("Test_NHWC", (1, 3, 3, 3, 2), (2, 2, 3, 3, 3), data_format="NHWC"),
    OpCase("conv3d_transpose", {"Input": _x(1, 2, 2, 3, 2), "Filter": _x(2, 1, 2, 3, 2)}, _ct3,
           attrs={"groups": 2, "strides": [2, 1, 2], "paddings": [1, 0, 0, 1, 1, 1],
                  "dilations": [1, 2, 1], "output_padding": [1, 0, 1]}, name="output_padding"),
    OpCase("conv3d_transpose", {"Input": _x(1, 2, 2, 2, 2), "Filter": _x(2, 2, 2, 2, 2)}, _ct3,
           attrs={"strides": [2, 2, 2], "paddings": [1, 1, 1], "output_size": [3, 2, 3]},
           name="output_size"),
]
