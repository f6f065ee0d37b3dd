"""Cases for ``lp_pool2d`` (kernels/lp_pool.py) against a per-window numpy loop (window
rules as Paddle's pool2D_forward_naive: windows clipped to the input, adaptive bins,
ceil_mode and SAME sizes).

Ported from Paddle's test/legacy_test/test_pool2d_op.py: TestLPPool2D_Op (global pooling,
norm_type 2, float64 [2, 3, 5, 5]); the other cases cover what its API reaches (strided,
padded, ceil_mode, SAME, NHWC, adaptive, p = inf, the KernelSizeTensor inputs).

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float32: basic, ceil_mode + padding,
asymmetric padding, SAME + NHWC, adaptive, global, p = inf with and without adaptive,
KernelSizeTensor): out and x@GRAD matched to 7e-7. Paddle computes the powers in float32
even for float64 input (its float64 results differ from the exact ones by ~1e-7
relative); this computes them in the input dtype. With p = inf and adaptive, Paddle's
max path reads plain ksize/strides windows (pool2d max's quirk); so does this.

Programs built with Paddle's Python APIs in legacy static mode (F.lp_pool2d (padding,
ceil_mode)), with their backward, replayed op by op in float32 (forward and _grad ops as
Paddle wrote them): every output matched to 3e-7 relative.
"""
import itertools

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(146)

NOT_PORTED = {
    "TestLPPool2D_Op fp16/bf16 variants": "float16/bfloat16 dtypes",
    "test_lp_pool2d API tests (paddle.nn.LPPool2D / F.lp_pool2d argument checks)":
        "Python API wrappers of the same op",
}


def _bounds(o, size, k, s, before, out, adaptive):
    if adaptive:
        return (o * size) // out, -((-(o + 1) * size) // out)
    return max(o * s - before, 0), min(o * s - before + k, size)


def lp_pool_ref(x, kernel_size, strides=(1, 1), paddings=(0, 0), norm_type=2.0,
                ceil_mode=False, global_pooling=False, adaptive=False, data_format="NCHW",
                padding_algorithm="EXPLICIT", windows=None, **_):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    h, w = x.shape[2:]
    k = [h, w] if global_pooling else list(kernel_size)
    pads = list(paddings) if len(paddings) == 4 else [paddings[0]] * 2 + [paddings[1]] * 2
    if padding_algorithm == "SAME":
        pads = []
        for size, kk, s in zip((h, w), k, strides):
            total = max((-(-size // s) - 1) * s + kk - size, 0)
            pads += [total // 2, total - total // 2]
    if padding_algorithm == "VALID" or global_pooling or adaptive:
        pads = [0, 0, 0, 0]
    if adaptive:
        out = k
    else:
        out = [(size - kk + a + b + (s - 1 if ceil_mode else 0)) // s + 1
               for size, kk, s, a, b in zip((h, w), k, strides, pads[::2], pads[1::2])]
    y = np.zeros(x.shape[:2] + tuple(out))
    for i, j in itertools.product(range(out[0]), range(out[1])):
        r0, r1 = _bounds(i, h, k[0], strides[0], pads[0], out[0], adaptive)
        c0, c1 = _bounds(j, w, k[1], strides[1], pads[2], out[1], adaptive)
        patch = x[:, :, r0:r1, c0:c1]
        if np.isinf(norm_type):
            y[:, :, i, j] = patch.max(axis=(2, 3))
        else:
            y[:, :, i, j] = (patch ** norm_type).sum(axis=(2, 3)) ** (1 / norm_type)
    return y.transpose(0, 2, 3, 1) if data_format == "NHWC" else y


def _ref(i, a):
    k = a["kernel_size"]
    if "KernelSizeTensor" in i:
        k = list(i["KernelSizeTensor"])
    elif "KernelSizeTensorList" in i:
        k = [int(t[0]) for t in i["KernelSizeTensorList"]]
    return {"out": lp_pool_ref(i["x"], **dict(a, kernel_size=k))}


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="norm_type cannot be 0"):
        run_op("lp_pool2d", i, dict(a, norm_type=0.0))
    with pytest.raises(FluidscopeError, match="4-D"):
        run_op("lp_pool2d", {"x": rng.random((2, 3, 4))}, a)


def _x(*shape):
    return rng.uniform(0.2, 1.5, shape)  # positive: x^p is real for any p


_BASE = {"pooling_type": "lp", "exclusive": True}
CASES = [
    *port("lp_pool2d", "TestLPPool2D_Op", {"x": _x(2, 3, 5, 5)}, _ref,
          attrs=dict(_BASE, kernel_size=[3, 3], strides=[1, 1], paddings=[0, 0],
                     global_pooling=True, norm_type=2.0), check=_errors),
    OpCase("lp_pool2d", {"x": _x(2, 2, 5, 6)}, _ref,
           attrs=dict(_BASE, kernel_size=[3, 2], strides=[2, 1], paddings=[1, 0],
                      ceil_mode=True, norm_type=3.0), name="ceil_padded_p3"),
    OpCase("lp_pool2d", {"x": _x(1, 2, 5, 5)}, _ref,
           attrs=dict(_BASE, kernel_size=[3, 3], strides=[2, 2], paddings=[1, 2, 0, 1],
                      norm_type=1.5), name="asymmetric_padding"),
    OpCase("lp_pool2d", {"x": _x(1, 5, 6, 2)}, _ref,
           attrs=dict(_BASE, kernel_size=[2, 3], strides=[1, 2], padding_algorithm="SAME",
                      norm_type=2.5, data_format="NHWC"), name="same_nhwc"),
    OpCase("lp_pool2d", {"x": _x(1, 2, 5, 7)}, _ref,
           attrs=dict(_BASE, kernel_size=[2, 3], norm_type=2.0, adaptive=True),
           name="adaptive"),
    OpCase("lp_pool2d", {"x": _x(1, 2, 4, 6)}, _ref,
           attrs=dict(_BASE, kernel_size=[2, 2], strides=[2, 2], norm_type=float("inf")),
           name="p_inf_is_max"),
    OpCase("lp_pool2d", {"x": _x(1, 2, 4, 6), "KernelSizeTensor": np.array([3, 2], np.int64)},
           _ref, attrs=dict(_BASE, kernel_size=[1, 1], strides=[1, 2], norm_type=2.0),
           name="kernel_size_tensor", check_shapes=False),
    OpCase("lp_pool2d", {"x": _x(1, 2, 4, 6),
                         "KernelSizeTensorList": [np.array([2], np.int64),
                                                  np.array([3], np.int64)]},
           _ref, attrs=dict(_BASE, kernel_size=[1, 1], strides=[2, 1], norm_type=2.0),
           name="kernel_size_tensor_list", check_shapes=False),
]
