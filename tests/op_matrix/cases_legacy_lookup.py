"""Cases for the Paddle 1.x ops of kernels/legacy_lookup.py (top_k v1, lookup_table v1)
and kernels/legacy_interp.py (the v1 resizes bilinear_interp and nearest_interp).

Ported from Paddle's test_top_k_op.py, test_lookup_table_op.py (the dense-W classes),
test_bilinear_interp_op.py and test_nearest_interp_op.py (configurations and numpy
references rewritten; large images shrunk so the float64 gradient check stays fast).

Compared with PaddlePaddle 3.3.1 itself (legacy static mode, the op appended directly,
same inputs and attributes, /tmp/fs14_creation/paddle_cmp.py): every output here equals
Paddle's exactly (top_k's Out and Indices, lookup_table's Out, bilinear_interp and
nearest_interp in float64, float32 and uint8), and the gradients Paddle's backward
computes (top_k_grad, the dense lookup_table_grad, bilinear/nearest_interp_grad) agree to
1.4e-15. One difference: among equal values, Paddle 1.x's top_k leaves the order to
std::partial_sort's heap ([1, 3, 3, 2, 3], k=3 gives indices [2, 4, 1] there); here the
lower index comes first (case ties_lower_index_first). The v1 bilinear half-pixel source
is float32 in Paddle (the v2 op's is double); that was found by this comparison.
A program Paddle saved with lookup_table(is_sparse=True), its backward (W@GRAD declared
SELECTED_ROWS) and an sgd step runs here (dense W@GRAD) to Paddle's updated W exactly
(/tmp/fs14_creation/e2e_sparse.py).
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(1416)

NOT_PORTED = {
    "TestLookupTableWIsSelectedRows* (all dtypes)": "W as SelectedRows: no SelectedRows here",
    "TestLookupTableOp*Int16 / TestEmbedOpError": "int16 tables (int8 ported); Python API",
    "TestBilinearInterpOtherMethod1 / WithMethod2 / WithMethod3": "their set_align_mode is "
    "never called in Paddle (they rerun the base case); ported with the modes they name",
    "TestBilinearInterpCase3/6, Same, ActualShape, attr_tensor_Case2/3, Case1Uint8 (32 x 64 "
    "images)": "ported at 8 x 16 with the same size ratios",
    "TestNearestInterp* with 32 x 64 images": "ported at 8 x 16 with the same size ratios",
    "TestNearestInterpException / TestBilinearInterpOpAPI": "Python API checks",
}


# ---------------------------------------------------------------------- top_k
def _topk_ref(i, a):
    x = i["X"]
    k = int(i["K"][0]) if "K" in i else a.get("k", 1)
    idx = np.zeros(x.shape[:-1] + (k,), np.int64)
    for r in np.ndindex(*x.shape[:-1]):
        row = list(x[r])
        # largest first, the lower index first among equals
        idx[r] = sorted(range(len(row)), key=lambda j: (-row[j], j))[:k]
    return {"Out": np.take_along_axis(x, idx, axis=-1), "Indices": idx}


def _check_topk_refuses(outs, i, a):
    with pytest.raises(FluidscopeError, match="k=4"):
        run_op("top_k", {"X": np.zeros((2, 3))}, {"k": 4})


TOP_K = [
    OpCase("top_k", {"X": rng.random((10, 1))}, _topk_ref, attrs={"k": 1},
           check=_check_topk_refuses, name="paddle_TestTopkOp"),
    OpCase("top_k", {"X": rng.random((6, 5))}, _topk_ref, attrs={"k": 3}, name="k3"),
    OpCase("top_k", {"X": rng.random((2, 3, 6)), "K": np.array([2], np.int32)}, _topk_ref,
           name="variable_k"),
    OpCase("top_k", {"X": np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], np.float32)}, _topk_ref,
           attrs={"k": 3}, grad=(), name="ties_lower_index_first"),
    OpCase("top_k", {"X": rng.integers(0, 50, (3, 7))}, _topk_ref, attrs={"k": 2}, grad=(),
           name="int64"),
]


# --------------------------------------------------------------- lookup_table
def _lookup_ref(i, a):
    w, ids = i["W"], i["Ids"]
    out = w[ids.reshape(-1)].copy()
    pad = a.get("padding_idx", -1)
    if pad != -1:
        out[ids.reshape(-1) == pad] = 0
    return out.reshape(ids.shape[:-1] + (w.shape[1],))


TABLE = rng.random((17, 5))
IDS = np.array([[3], [0], [16], [3]], np.int64)
IDS4 = rng.integers(0, 17, (2, 4, 3, 1)).astype(np.int64)
TABLE_I8 = rng.integers(-128, 127, (17, 5)).astype(np.int8)


def _check_lookup_refuses(outs, i, a):
    with pytest.raises(FluidscopeError, match="end in a dim of 1"):
        run_op("lookup_table", {"W": TABLE, "Ids": np.array([1, 2])}, {})
    with pytest.raises(FluidscopeError, match="outside"):
        run_op("lookup_table", {"W": TABLE, "Ids": np.array([[17]])}, {})


LOOKUP = [
    OpCase("lookup_table", {"W": TABLE, "Ids": IDS}, _lookup_ref, check=_check_lookup_refuses,
           name="paddle_TestLookupTableOp"),
    OpCase("lookup_table", {"W": TABLE, "Ids": IDS4}, _lookup_ref,
           name="paddle_TestLookupTableOpWithTensorIds"),
    OpCase("lookup_table", {"W": TABLE, "Ids": IDS}, _lookup_ref, attrs={"padding_idx": 3},
           name="paddle_TestLookupTableOpWithPadding"),
    OpCase("lookup_table", {"W": TABLE, "Ids": IDS4}, _lookup_ref,
           attrs={"padding_idx": int(IDS4[0, 0, 0, 0])},
           name="paddle_TestLookupTableOpWithTensorIdsAndPadding"),
    OpCase("lookup_table", {"W": TABLE_I8, "Ids": IDS}, _lookup_ref, grad=(),
           name="paddle_TestLookupTableOpInt8"),
    OpCase("lookup_table", {"W": TABLE_I8, "Ids": IDS4}, _lookup_ref,
           attrs={"padding_idx": int(IDS4[1, 0, 0, 0])}, grad=(),
           name="paddle_TestLookupTableOpWithTensorIdsAndPaddingInt8"),
    OpCase("lookup_table", {"W": TABLE.astype(np.float32), "Ids": IDS}, _lookup_ref,
           attrs={"is_sparse": True, "is_test": True}, grad=(), name="float32_sparse_flag"),
]


# ------------------------------------------------------------ v1 interpolation
def _sizes(i, a, x_hw):
    """Paddle 1.x's output size: SizeTensor > OutSize > scale (tensor or attr) > out_h/w."""
    if "SizeTensor" in i:
        return [int(t[0]) for t in i["SizeTensor"]]
    if "OutSize" in i:
        return [int(v) for v in i["OutSize"]]
    scale = float(i["Scale"][0]) if "Scale" in i else a.get("scale", 0.0)
    if scale > 0:
        return [int(np.float32(n) * np.float32(scale)) for n in x_hw]
    return [a["out_h"], a["out_w"]]


def _ratio(n_in, n_out, align):
    if n_out <= 1:
        return 0.0
    return float(np.float32(n_in - 1) / np.float32(n_out - 1) if align else
                 np.float32(n_in) / np.float32(n_out))


def _interp_ref(i, a):
    x = i["X"]
    nhwc = a.get("data_layout", "NCHW") == "NHWC"
    if nhwc:
        x = x.transpose(0, 3, 1, 2)
    n, c, in_h, in_w = x.shape
    out_h, out_w = _sizes(i, a, (in_h, in_w))
    align = a.get("align_corners", True)
    mode = a.get("align_mode", 1)
    nearest = a.get("interp_method", "bilinear") == "nearest"
    rh, rw = _ratio(in_h, out_h, align), _ratio(in_w, out_w, align)
    out = np.zeros((n, c, out_h, out_w))
    if (out_h, out_w) == (in_h, in_w):
        out = x.astype(np.float64)
    elif nearest:
        for p in range(out_h):
            hi = int(float(np.float32(rh) * np.float32(p)) + (0.5 if align else 0))
            for q in range(out_w):
                wi = int(float(np.float32(rw) * np.float32(q)) + (0.5 if align else 0))
                out[:, :, p, q] = x[:, :, min(hi, in_h - 1), min(wi, in_w - 1)]
    else:
        half = mode == 0 and not align

        def taps(r, k, n_in):
            # Paddle 1.x's source, in float32: r * k, or r * (k + 0.5f) - 0.5f (half-pixel)
            f32 = np.float32
            src = f32(f32(r) * f32(k + 0.5)) - f32(0.5) if half else f32(r) * f32(k)
            lo = max(int(src), 0)
            lam = float(max(src, f32(0)) - f32(lo))
            return lo, min(lo + 1, n_in - 1), lam

        for p in range(out_h):
            h0, h1, lh = taps(rh, p, in_h)
            for q in range(out_w):
                w0, w1, lw = taps(rw, q, in_w)
                out[:, :, p, q] = ((1 - lh) * ((1 - lw) * x[:, :, h0, w0] + lw * x[:, :, h0, w1])
                                   + lh * ((1 - lw) * x[:, :, h1, w0] + lw * x[:, :, h1, w1]))
    if nhwc:
        out = out.transpose(0, 2, 3, 1)
    return out.astype(i["X"].dtype) if i["X"].dtype.kind == "f" else out.astype(i["X"].dtype)


def _interp(op, name, shape, out_h, out_w, scale=0.0, out_size=None, align=True, mode=1,
            layout="NCHW", method=None, dtype=np.float64, **inputs):
    x = (rng.integers(0, 256, shape).astype(np.uint8) if dtype == np.uint8 else
         rng.random(shape).astype(dtype))
    ins = {"X": x, **inputs}
    if out_size is not None:
        ins["OutSize"] = np.array(out_size, np.int32)
    attrs = {"out_h": out_h, "out_w": out_w, "scale": scale, "align_corners": align,
             "align_mode": mode, "data_layout": layout,
             "interp_method": method or ("nearest" if op == "nearest_interp" else "bilinear")}
    # uint8: Paddle's own test allows 1 (the float sum truncated back)
    return OpCase(op, ins, _interp_ref, attrs=attrs, name=name, rtol=1e-6,
                  atol=1.0 if dtype == np.uint8 else 1e-6 if dtype == np.float32 else 1e-9,
                  grad=() if dtype != np.float64 else "auto")


_B = "bilinear_interp"
BILINEAR = [
    _interp(_B, "paddle_TestBilinearInterpOp", (2, 3, 5, 5), 2, 2, out_size=[3, 3]),
    _interp(_B, "paddle_TestBilinearInterpCase1", (4, 1, 7, 8), 1, 1),
    _interp(_B, "paddle_TestBilinearInterpCase2", (3, 3, 9, 6), 12, 12),
    _interp(_B, "paddle_TestBilinearInterpCase3", (1, 1, 8, 16), 16, 8),
    _interp(_B, "paddle_TestBilinearInterpCase4", (4, 1, 7, 8), 1, 1, out_size=[2, 2]),
    _interp(_B, "paddle_TestBilinearInterpCase5", (3, 3, 9, 6), 12, 12, out_size=[11, 11]),
    _interp(_B, "paddle_TestBilinearInterpCase6", (1, 1, 8, 16), 16, 8, out_size=[17, 9]),
    _interp(_B, "paddle_TestBilinearInterpSame", (2, 3, 8, 16), 8, 16),
    _interp(_B, "paddle_TestBilinearInterpActualShape", (3, 2, 8, 4), 16, 8, out_size=[17, 10]),
    _interp(_B, "paddle_TestBilinearInterpDataLayout", (2, 5, 5, 3), 2, 2, out_size=[3, 3],
            layout="NHWC"),
    _interp(_B, "paddle_TestBilinearInterpOpUint8", (1, 3, 9, 6), 10, 9, dtype=np.uint8),
    _interp(_B, "paddle_TestBilinearInterpCase2Uint8", (4, 1, 7, 8), 5, 13, out_size=[6, 15],
            dtype=np.uint8),
    _interp(_B, "paddle_TestBilinearInterpOtherMethod1", (2, 3, 5, 5), 3, 4, align=False),
    _interp(_B, "paddle_TestBilinearInterpWithMethod2", (2, 3, 5, 5), 3, 7, align=False, mode=0),
    _interp(_B, "paddle_TestBilinearInterpWithMethod3", (2, 3, 5, 5), 3, 4, mode=0),
    _interp(_B, "paddle_TestBilinearInterpScale1", (2, 3, 5, 7), 60, 25, scale=2.0),
    _interp(_B, "paddle_TestBilinearInterpScale2", (2, 3, 5, 7), 60, 25, scale=1.0),
    _interp(_B, "paddle_TestBilinearInterpScale3", (2, 3, 5, 7), 60, 25, scale=1.5),
    _interp(_B, "paddle_TestBilinearInterpZero", (2, 3, 5, 7), 60, 25, scale=0.2, align=False,
            mode=0),
    _interp(_B, "paddle_TestBilinearInterpOp_attr_tensor", (2, 3, 5, 5), 3, 3,
            SizeTensor=[np.array([3], np.int32), np.array([3], np.int32)]),
    _interp(_B, "paddle_TestBilinearInterp_attr_tensor_Case1", (3, 3, 9, 6), 12, 12,
            SizeTensor=[np.array([8], np.int32), np.array([12], np.int32)]),
    _interp(_B, "paddle_TestBilinearInterp_attr_tensor_Case2", (3, 2, 8, 4), 16, 8,
            out_size=[17, 10]),
    _interp(_B, "paddle_TestBilinearInterp_attr_tensor_Case3", (3, 2, 8, 4), 16, 8,
            Scale=np.array([2.0], np.float32)),
    _interp(_B, "float32", (1, 2, 4, 5), 7, 3, align=False, dtype=np.float32),
]

_N = "nearest_interp"
NEAREST = [
    _interp(_N, "paddle_TestNearestInterpOp", (2, 3, 4, 5), 2, 3),
    _interp(_N, "paddle_TestNearestNeighborInterpCase1", (4, 1, 7, 8), 1, 1),
    _interp(_N, "paddle_TestNearestNeighborInterpCase2", (3, 3, 9, 6), 12, 12),
    _interp(_N, "paddle_TestNearestNeighborInterpCase3", (1, 1, 8, 16), 16, 8),
    _interp(_N, "paddle_TestNearestNeighborInterpCase4", (4, 1, 7, 8), 1, 1, out_size=[2, 2]),
    _interp(_N, "paddle_TestNearestNeighborInterpCase5", (3, 3, 9, 6), 12, 12,
            out_size=[11, 11]),
    _interp(_N, "paddle_TestNearestNeighborInterpCase6", (1, 1, 8, 16), 16, 8,
            out_size=[17, 33]),
    _interp(_N, "paddle_TestNearestNeighborInterpSame", (2, 3, 8, 16), 8, 16),
    _interp(_N, "paddle_TestNearestNeighborInterpActualShape", (3, 2, 8, 4), 16, 8,
            out_size=[17, 10]),
    _interp(_N, "paddle_TestNearestNeighborInterpDataLayout", (2, 4, 4, 5), 2, 2,
            out_size=[3, 8], layout="NHWC"),
    _interp(_N, "paddle_TestNearestInterpOpUint8", (1, 3, 9, 6), 10, 9, dtype=np.uint8),
    _interp(_N, "paddle_TestNearestInterpWithoutCorners", (2, 3, 4, 5), 2, 3, align=False),
    _interp(_N, "paddle_TestNearestNeighborInterpScale1", (3, 2, 7, 5), 64, 32, scale=2.0),
    _interp(_N, "paddle_TestNearestNeighborInterpScale2", (3, 2, 5, 7), 64, 32, scale=1.5),
    _interp(_N, "paddle_TestNearestNeighborInterpScale3", (3, 2, 7, 5), 64, 32, scale=1.0),
    _interp(_N, "paddle_TestNearestInterp_attr_tensor_Case3", (3, 2, 8, 4), 16, 8,
            Scale=np.array([2.0], np.float32)),
    _interp(_N, "paddle_TestNearestInterp_attr_tensor_Case1", (3, 3, 9, 6), 12, 12,
            SizeTensor=[np.array([8], np.int32), np.array([12], np.int32)]),
    _interp(_B, "nearest_method_on_bilinear_op", (1, 2, 3, 4), 5, 7, method="nearest"),
    _interp(_N, "bilinear_method_on_nearest_op", (1, 2, 3, 4), 5, 7, method="bilinear",
            align=False, mode=0),
    # out_d (declared for Paddle's 5-D kernels) never sizes a 4-D X; align_mode is read
    # by bilinear only, so nearest ignores mode 0
    _interp(_N, "out_d_and_mode0_ignored", (1, 2, 3, 4), 5, 2, align=False, mode=0),
]
for _c in BILINEAR[-2:] + NEAREST[-1:]:
    _c.attrs["out_d"] = 7

CASES = TOP_K + LOOKUP + BILINEAR + NEAREST
