"""Cases for the crops of Paddle 1.x/2.x programs (kernels/legacy_crop.py): crop_tensor
and crop (v1).

Ported from Paddle's test_crop_tensor_op.py (every OpTest class) and test_crop_op.py
(every OpTest class); configurations and numpy references rewritten, large shapes shrunk
so the float64 gradient check stays fast.

Compared with PaddlePaddle 3.3.1 itself (legacy static mode, the op appended directly,
same inputs and attributes, /tmp/fs14_creation/paddle_cmp.py): every output equals
Paddle's exactly and every gradient (crop_tensor_grad, crop_grad) equals ours exactly.
The ``lod_*`` cases hold Out's LoD to what Paddle gives a LoD input (measured: crop gives
none; crop_tensor hands X's on, and where that is to other rows, where it no longer fits,
Out gets none here).
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .cases_legacy_ops import lod_is, on_values
from .paddle_port import lod_tensor

rng = np.random.default_rng(1417)

NOT_PORTED = {
    "TestCropTensorException / TestCropWithUnknownShape": "Python API (paddle.crop) checks",
    "TestCropNoneOffset / TestCropNoneShape / TestCropError": "Python API (paddle.crop) "
    "checks",
    "crop_tensor TestCase1 (100) / crop TestCase1, 6 (16 x 8 x 32, 10 x 9 x 14)": "ported "
    "with smaller X, same crops",
}


def _times(*values):
    return [np.array([v], np.int32) for v in values]


def _ref_crop(i, a):
    x = i["X"]
    shape = ([int(t[0]) for t in i["ShapeTensor"]] if "ShapeTensor" in i else
             list(i["Shape"]) if "Shape" in i else list(a["shape"]))
    offsets = ([int(t[0]) for t in i["OffsetsTensor"]] if "OffsetsTensor" in i else
               list(i["Offsets"]) if "Offsets" in i else list(a["offsets"]))
    out = x
    for d, (s, o) in enumerate(zip(shape, offsets)):
        s = x.shape[d] - o if s == -1 else s
        out = np.take(out, range(o, o + s), axis=d)
    return out


def _crop(x_shape, shape, offsets, shape_by="attr", offsets_by="attr", shape_attr=None):
    inputs, attrs = {"X": rng.random(x_shape)}, {}
    if shape_by == "attr":
        attrs["shape"] = list(shape)
    elif shape_by == "tensor":
        inputs["Shape"] = np.array(shape, np.int32)
    else:
        inputs["ShapeTensor"], attrs["shape"] = _times(*shape), list(shape_attr or shape)
    if offsets_by == "attr":
        attrs["offsets"] = list(offsets)
    elif offsets_by == "tensor":
        inputs["Offsets"] = np.array(offsets, np.int32)
    else:
        inputs["OffsetsTensor"], attrs["offsets"] = _times(*offsets), list(offsets)
    return inputs, attrs


CROP_CONFIGS = [
    ("TestCropTensorOp", (10, 10), [2, 2], [1, 2], "attr", "attr"),
    ("TestCase1", (20,), [6], [13], "attr", "attr"),
    ("TestCase2", (6, 12), [-1, 8], [0, 0], "attr", "attr"),
    ("TestCase3", (4, 8, 6), [2, 2, 3], [1, 5, 3], "tensor", "attr"),
    ("TestCase4", (4, 3, 6, 6), [-1, 3, -1, 4], [0, 0, 1, 0], "tensor", "attr"),
    ("TestCase5", (2, 3, 4, 5, 4), [1, 1, 2, 3, 2], [1, 0, 0, 2, 2], "attr", "tensor"),
    ("TestCase6", (2, 2, 3, 2, 2, 2), [1, 1, 3, 2, 2, 2], [0] * 6, "tensor", "tensor"),
    ("TestCropTensorOpTensorAttr", (10, 10), [2, 2], [1, 2], "list", "attr"),
    ("TestCropTensorOpTensorAttrCase2", (4, 8, 6, 8), [2, 2, 3, 4], [1, 5, 3, 0], "list", "attr"),
    ("TestCropTensorOpTensorAttrCase3", (6, 8, 6), [2, 2, 3], [1, 5, 3], "attr", "list"),
    ("TestCropTensorOpTensorAttrCase4", (6, 8, 6), [2, 2, 3], [1, 5, 3], "list", "list"),
]
CROP = [
    OpCase("crop_tensor", inputs, _ref_crop, attrs=attrs, name=f"paddle_{name}")
    for name, xs, s, o, sb, ob in CROP_CONFIGS
    for inputs, attrs in [_crop(xs, s, o, sb, ob)]
]
CROP.append(OpCase("crop_tensor", {"X": rng.random((6, 8, 5))}, _ref_crop,
                   attrs={"shape": [-1, -1, 3], "offsets": [1, 5, 2]},
                   name="paddle_TestCropTensorOpTensorAttrCase1"))


def _check_crop_refuses(outs, i, a):
    with pytest.raises(FluidscopeError, match="does not fit"):
        run_op("crop_tensor", {"X": np.zeros((3, 3))}, {"shape": [2, 2], "offsets": [2, 0]})
    with pytest.raises(FluidscopeError, match="offsets"):  # Paddle needs them too
        run_op("crop_tensor", {"X": np.zeros((3, 3))}, {"shape": [2, 2]})


CROP[0].check = _check_crop_refuses


# ----------------------------------------------------------------------- crop
def _ref_crop_v1(i, a):
    x = i["X"]
    shape = list(i["Y"].shape) if "Y" in i else list(a["shape"])
    offsets = list(i["Offsets"]) if "Offsets" in i else list(a["offsets"])
    out = x
    for d, (s, o) in enumerate(zip(shape, offsets)):
        out = np.take(out, range(o, o + s), axis=d)
    return out


def _crop_v1(x_shape, shape, offsets, by_input=False, offset_by_input=False):
    inputs, attrs = {"X": rng.random(x_shape)}, {}
    if by_input:
        inputs["Y"] = rng.random(shape)
    else:
        attrs["shape"] = list(shape)
    if offset_by_input:
        inputs["Offsets"] = np.array(offsets, np.int32)
    else:
        attrs["offsets"] = list(offsets)
    return inputs, attrs


def _check_crop_v1_refuses(outs, i, a):
    with pytest.raises(FluidscopeError, match="offsets"):
        run_op("crop", {"X": np.zeros((3, 3))}, {"shape": [2, 2]})  # Paddle needs offsets
    with pytest.raises(FluidscopeError, match="no -1"):
        run_op("crop", {"X": np.zeros((3, 3))}, {"shape": [2, -1], "offsets": [0, 0]})


CROP_V1 = [
    OpCase("crop", inputs, _ref_crop_v1, attrs=attrs, name=f"paddle_{name}")
    for name, xs, s, o, by_y, by_t in (
        ("TestCropOp", (10, 10), (2, 2), [1, 2], False, False),
        ("TestCase1", (6, 8, 7), (2, 2, 3), [1, 5, 3], False, False),
        ("TestCase2", (15, 8), (15, 8), [0, 0], False, False),
        ("TestCase3", (4, 8, 6), (2, 2, 3), [1, 5, 3], True, False),
        ("TestCase4", (10, 10), (10, 10), [0, 0], True, False),
        ("TestCase5", (3, 4, 10), (2, 2, 3), [1, 0, 2], False, True),
        ("TestCase6", (7, 9, 10), (3, 3, 5), [3, 5, 4], True, True))
    for inputs, attrs in [_crop_v1(xs, s, o, by_y, by_t)]
]
CROP_V1[0].check = _check_crop_v1_refuses

SEQ = rng.random((5, 4))
LOD = [
    OpCase(op, {"X": lod_tensor(SEQ, [[2, 3]])}, on_values(ref), attrs=attrs, grad=(),
           check=lod_is(op, lod), name=f"lod_{name}")
    for op, name, attrs, lod, ref in (
        ("crop_tensor", "rows_kept", {"shape": [5, 2], "offsets": [0, 1]}, [[0, 2, 5]],
         _ref_crop),
        ("crop_tensor", "rows_changed", {"shape": [3, 2], "offsets": [1, 1]}, [], _ref_crop),
        ("crop", "none", {"shape": [5, 2], "offsets": [0, 1]}, [], _ref_crop_v1),
        ("crop", "rows_changed", {"shape": [3, 2], "offsets": [1, 1]}, [], _ref_crop_v1))
]

CASES = CROP + CROP_V1 + LOD
