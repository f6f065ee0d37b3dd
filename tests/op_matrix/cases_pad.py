"""Cases for ``pad3d`` and the legacy ``pad`` (kernels/pad.py) against ``numpy.pad``
(constant, reflect, edge = replicate, wrap = circular), cropping for negative paddings.

Ported from Paddle's test/legacy_test/test_pad3d_op.py (TestPad3dOp, TestCase1..10,
batch and channels cut so the float64 gradient check stays fast) and test_pad_op.py
(TestPadOp, TestCase1..3). Also compared with PaddlePaddle 3.3.1 (static graph, CPU,
float64; every mode in NCDHW and NDHWC, paddings larger than the input for circular and
replicate, negative paddings, the Paddings tensor, legacy pad in 1-D and 3-D): Out and
X@GRAD matched to 1e-12.
The pad3d ops paddle.nn.functional.pad puts in a static program (4-D input: unsqueezed
to 5-D; every mode), replayed op by op in float32, matched exactly.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(16)

NOT_PORTED = {
    "*_FP16OP / *_BF16OP": "float16/bfloat16 GPU-only dtypes",
    "TestPadAPI / TestPad1dAPI / TestPad2dAPI / TestPad3dAPI / TestPad3dOpError / "
    "TestPadDataformatError / TestPadCircularMode":
        "paddle.nn.functional.pad / nn.Pad*D Python-API and dygraph tests, not op semantics "
        "(their static programs emit pad3d with the settings ported here)",
    "TestPadOp*_FP16 / TestPadOpBF16 / TestPaddingValueTensor*":
        "fp16/bf16, and the pad_value-from-tensor variant of the new pad API",
}

_NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
            "circular": "wrap"}


def pad3d_reference(x, paddings, mode="constant", value=0.0, data_format="NCDHW"):
    """numpy.pad of the positive parts, then a crop for negative paddings."""
    pairs = [(paddings[4], paddings[5]), (paddings[2], paddings[3]), (paddings[0], paddings[1])]
    spatial = (1, 2, 3) if data_format == "NDHWC" else (2, 3, 4)
    width = [(0, 0)] * 5
    crop = [slice(None)] * 5
    for axis, (a, b) in zip(spatial, pairs):
        width[axis] = (max(a, 0), max(b, 0))
        crop[axis] = slice(max(-a, 0), x.shape[axis] + max(a, 0) + max(b, 0) - max(-b, 0))
    kwargs = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, width, mode=_NP_MODE[mode], **kwargs)[tuple(crop)]


def _ref3d(i, a):
    pads = i["Paddings"].tolist() if i.get("Paddings") is not None else a["paddings"]
    return pad3d_reference(i["X"], pads, a.get("mode", "constant"), a.get("value", 0.0),
                           a.get("data_format", "NCDHW"))


def _check_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="reflect paddings .* must be <"):
        run_op("pad3d", i, dict(a, mode="reflect", paddings=[0, 9, 0, 0, 0, 0]))
    with pytest.raises(FluidscopeError, match="must hold 6 values"):
        run_op("pad3d", i, dict(a, paddings=[1, 1]))


# (Paddle class, X shape, paddings, mode, data_format, value, paddings as a tensor)
_PAD3D = [
    ("TestPad3dOp", (1, 2, 3, 4, 5), [0, 0, 0, 0, 0, 0], "constant", "NCDHW", 0.0, False),
    ("TestCase1", (1, 2, 3, 4, 5), [0, 1, 2, 3, 4, 5], "constant", "NCDHW", 1.0, False),
    ("TestCase2", (1, 3, 4, 5, 2), [1, 1, 1, 1, 1, 1], "constant", "NDHWC", 1.0, False),
    ("TestCase3", (1, 2, 4, 5, 6), [0, 1, 1, 0, 2, 3], "reflect", "NCDHW", 0.0, False),
    ("TestCase4", (1, 4, 4, 4, 2), [0, 1, 2, 1, 2, 3], "reflect", "NDHWC", 0.0, False),
    ("TestCase5", (1, 2, 3, 4, 5), [0, 1, 2, 3, 2, 1], "replicate", "NCDHW", 0.0, False),
    ("TestCase6", (1, 4, 4, 4, 2), [5, 4, 2, 1, 2, 3], "replicate", "NDHWC", 0.0, False),
    ("TestCase7", (1, 2, 3, 4, 5), [0, 1, 2, 3, 2, 1], "circular", "NCDHW", 0.0, False),
    ("TestCase8", (1, 4, 4, 4, 2), [0, 1, 2, 1, 2, 3], "circular", "NDHWC", 0.0, False),
    ("TestCase9", (1, 2, 3, 4, 5), [0, 1, 2, 3, 4, 5], "constant", "NCDHW", 1.0, True),
    ("TestCase10", (1, 3, 4, 5, 2), [0, 1, 2, 3, 4, 5], "constant", "NDHWC", 1.0, True),
    # beyond Paddle's tests: circular wider than the input, crops (negative paddings)
    ("circular_wide", (1, 1, 2, 3, 4), [6, 5, 4, 1, 3, 0], "circular", "NCDHW", 0.0, False),
    ("constant_crop", (1, 2, 3, 4, 5), [-1, 2, 1, -2, 0, 1], "constant", "NCDHW", 2.0, False),
    ("reflect_crop", (1, 2, 3, 4, 5), [-1, 2, 1, -1, 0, 1], "reflect", "NCDHW", 0.0, False),
]


def _pad3d_case(name, shape, pads, mode, fmt, value, as_tensor):
    inputs = {"X": rng.uniform(-1, 1, shape)}
    attrs = {"mode": mode, "data_format": fmt, "value": value}
    if as_tensor:
        inputs["Paddings"] = np.asarray(pads, dtype=np.int32)
        attrs["paddings"] = []
    else:
        attrs["paddings"] = pads
    return OpCase("pad3d", inputs, _ref3d, attrs=attrs, name=name)


CASES = [_pad3d_case(*row) for row in _PAD3D]
CASES[1].check = _check_errors
CASES.append(OpCase("pad3d", {"X": rng.uniform(-1, 1, (2, 2, 3, 3, 3)).astype(np.float32)},
                    _ref3d, attrs={"paddings": [1, 1, 1, 1, 1, 1], "mode": "reflect"},
                    grad=(), name="float32"))


def _pad_ref(i, a):
    x, pads = i["X"], a["paddings"]
    return np.pad(x, [(pads[2 * d], pads[2 * d + 1]) for d in range(x.ndim)],
                  constant_values=a.get("pad_value", 0.0))


def _pad_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="2 x rank"):
        run_op("pad", i, dict(a, paddings=[1, 1]))
    with pytest.raises(FluidscopeError, match=">= 0"):
        run_op("pad", i, dict(a, paddings=[0, -1, 2, 3]))


# test_pad_op.py: TestPadOp ((16, 16) in Paddle), TestCase1..3
CASES += [
    OpCase("pad", {"X": rng.random((4, 5))}, _pad_ref,
           attrs={"paddings": [0, 1, 2, 3], "pad_value": 0.0}, check=_pad_errors,
           name="TestPadOp"),
    OpCase("pad", {"X": rng.random((2, 3, 2, 3))}, _pad_ref,
           attrs={"paddings": [0, 1, 2, 3, 2, 1, 1, 1], "pad_value": 0.5}, name="TestCase1"),
    OpCase("pad", {"X": rng.random((3, 3, 3))}, _pad_ref,
           attrs={"paddings": [0, 0, 0, 0, 1, 2], "pad_value": 1.0}, name="TestCase2"),
    OpCase("pad", {"X": rng.random(10)}, _pad_ref,
           attrs={"paddings": [0, 1], "pad_value": 0.9}, name="TestCase3"),
]
