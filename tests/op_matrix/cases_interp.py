"""Cases for the resize ops (kernels/interp.py): nearest, linear, bilinear, trilinear and
bicubic ``*_interp_v2`` against a scalar-loop numpy reference of Paddle's rules (output
size precedence SizeTensor > OutSize > Scale tensor > scale attribute > out_* attributes;
align_corners; align_mode 0 half-pixel / 1; ratio 1/scale when a scale is given).

Ported from Paddle's test/legacy_test: test_bilinear_interp_v2_op.py (create_test_case0-7,
Same, ActualShape, DataLayout, OtherMethod1, WithMethod2/3, Scale1-4, Zero, the
attr_tensor cases with SizeTensor / OutSize / Scale tensors, Uint8) and
test_nearest_interp_v2_op.py (create_test_case0-6 incl. the 5-D case1, Same,
ActualShape, DataLayout, without align_corners, scale, attr_tensor, Uint8); Paddle's
large shapes ([1, 1, 32, 64], [3, 2, 32, 16], ...) run forward only, and the same
settings run on small shapes for the float64 gradient checks.

Compared with PaddlePaddle 3.3.1 (static graph, CPU; /tmp/fs_norm/oracle_interp.py,
paddle_side.py, ours_side.py): 46 configurations (every method, align_corners x
align_mode, up/down sampling, scale attribute and tensor, OutSize, SizeTensor beating
OutSize, identity size, NHWC, 1x1 output, nearest_interp_v2 with its default
interp_method 'bilinear', float32 and float64): outputs and X gradients matched, most of
them bit for bit in float64; the rest differ by float32 rounding of Paddle's weights
(at most 2e-5 relative to max(|value|, 1e-3), i.e. ~1e-7 absolute on unit data).
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(53)
OPS = {"linear": "linear_interp_v2", "bilinear": "bilinear_interp_v2",
       "trilinear": "trilinear_interp_v2", "nearest": "nearest_interp_v2",
       "bicubic": "bicubic_interp_v2"}


def _sizes(i, a, in_sizes):
    """(output sizes, scales or None) by Paddle's precedence."""
    k = len(in_sizes)
    if i.get("SizeTensor"):
        return [int(t.reshape(-1)[0]) for t in i["SizeTensor"]], None
    scales = None
    if i.get("Scale") is not None:
        s = [float(v) for v in i["Scale"].reshape(-1)]
        scales = s[:k] if len(s) > 1 else s * k
    elif a.get("scale"):
        scales = list(a["scale"])[:k]
    if scales:
        out = [int(np.float32(n) * np.float32(s)) for n, s in zip(in_sizes, scales)]
    else:
        out = [a.get(n, 0) for n in ("out_d", "out_h", "out_w")[3 - k:]]
    if i.get("OutSize") is not None:
        out = [int(v) for v in i["OutSize"]]
    return out, scales


def _step(n_in, n_out, scale, align_corners):
    if n_out <= 1:
        return 0.0
    if align_corners:
        return float(np.float32(n_in - 1) / np.float32(n_out - 1))
    if scale:
        return float(np.float32(1.0 / np.float32(scale)))
    return float(np.float32(n_in) / np.float32(n_out))


def _keys(d, a=-0.75):
    """Keys' cubic convolution weight at distance d."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    if d < 2:
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return 0.0


def _taps(method, n_in, n_out, r, a):
    """For each output index: [(source index, weight), ...]."""
    ac = a.get("align_corners", True)
    taps = []
    for k in range(n_out):
        rk = float(np.float32(r) * np.float32(k))  # Paddle: float ratio * int k, in float32
        if method == "nearest":
            taps.append([(min(int(rk + 0.5) if ac else int(rk), n_in - 1), 1.0)])
        elif method == "bicubic":
            src = rk if ac else r * (k + 0.5) - 0.5
            f = math.floor(src)
            taps.append([(min(max(f + j, 0), n_in - 1), _keys(src - (f + j)))
                         for j in (-1, 0, 1, 2)])
        else:
            half = a.get("align_mode", 1) == 0 and not ac
            src = max(r * (k + 0.5) - 0.5, 0.0) if half else rk
            lo = int(src)
            lam = src - lo
            taps.append([(lo, 1 - lam), (min(lo + 1, n_in - 1), lam)])
    return taps


def interp_reference(i, a):
    x = i["X"]
    method = a.get("interp_method", "bilinear")
    last = a.get("data_layout", "NCHW") == "NHWC"
    axes = list(range(1, x.ndim - 1)) if last else list(range(2, x.ndim))
    in_sizes = [x.shape[ax] for ax in axes]
    out, scales = _sizes(i, a, in_sizes)
    if out == in_sizes:
        return {"Out": x.copy()}
    y = x.astype(np.float64)
    for n, (ax, n_in, n_out) in enumerate(zip(axes, in_sizes, out)):
        r = _step(n_in, n_out, scales[n] if scales else None, a.get("align_corners", True))
        shape = list(y.shape)
        shape[ax] = n_out
        res = np.zeros(shape)
        for k, taps in enumerate(_taps(method, n_in, n_out, r, a)):
            dst = [slice(None)] * y.ndim
            dst[ax] = k
            for src, w in taps:
                res[tuple(dst)] += w * np.take(y, src, axis=ax)
        y = res
    return {"Out": y.astype(x.dtype) if x.dtype.kind == "f" else np.trunc(y).astype(x.dtype)}


def _case(method, shape, attrs, name, grad="auto", dtype=np.float64, op=None, check=None,
          **extra):
    x = (rng.integers(0, 256, shape).astype(np.uint8) if dtype == np.uint8
         else rng.uniform(-1, 1, shape).astype(dtype))
    ins = {"X": x}
    ins.update(extra)
    a = {"interp_method": method}
    a.update(attrs)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype != np.uint8 else {"rtol": 0, "atol": 1}
    return OpCase(op or OPS[method], ins, interp_reference, attrs=a, name=name, check=check,
                  grad=grad if dtype == np.float64 else (), **tol)


def _i32(*v):
    return np.array(v, dtype=np.int32)


def _check_errors(outs, i, a):
    x = i["X"]
    with pytest.raises(FluidscopeError, match="no output size"):
        run_op("bilinear_interp_v2", {"X": x}, {"interp_method": "bilinear"})
    with pytest.raises(FluidscopeError, match="interp_method 'linear' does not apply"):
        run_op("bilinear_interp_v2", {"X": x}, {"interp_method": "linear", "out_w": 3})
    with pytest.raises(FluidscopeError, match=r"scale \[2.0\] must hold 2 values"):
        run_op("bilinear_interp_v2", {"X": x}, {"interp_method": "bilinear", "scale": [2.0]})


AC1 = {"align_corners": True, "align_mode": 1}
FWD = dict(grad=())  # Paddle's large shapes: forward and shapes only
CASES = [
    # --- test_bilinear_interp_v2_op.py
    _case("bilinear", [2, 3, 5, 5], dict(AC1, out_h=2, out_w=2), "case0_outsize", OutSize=_i32(3, 3)),
    _case("bilinear", [4, 1, 7, 8], dict(AC1, out_h=1, out_w=1), "case1_to_1x1"),
    _case("bilinear", [1, 2, 9, 6], dict(AC1, out_h=12, out_w=12), "case2_up"),
    _case("bilinear", [1, 1, 32, 64], dict(AC1, out_h=64, out_w=32), "case3_paddle", **FWD),
    _case("bilinear", [4, 1, 7, 8], dict(AC1, out_h=1, out_w=1), "case4_outsize", OutSize=_i32(2, 2)),
    _case("bilinear", [1, 2, 9, 6], dict(AC1, out_h=12, out_w=12), "case5_outsize", OutSize=_i32(11, 11)),
    _case("bilinear", [1, 1, 32, 64], dict(AC1, out_h=64, out_w=32), "case6_paddle", OutSize=_i32(65, 33), **FWD),
    _case("bilinear", [1, 1, 32, 64], {"out_h": 64, "out_w": 32, "scale": [2.0, 0.5],
                                       "align_corners": False, "align_mode": 1}, "case7_paddle", **FWD),
    _case("bilinear", [1, 1, 4, 8], {"scale": [2.0, 0.5], "align_corners": False, "align_mode": 1}, "case7"),
    _case("bilinear", [1, 2, 4, 5], dict(AC1, out_h=4, out_w=5), "same", check=_check_errors),
    _case("bilinear", [3, 2, 32, 16], dict(AC1, out_h=64, out_w=32), "actual_shape", OutSize=_i32(66, 40), **FWD),
    _case("bilinear", [2, 5, 5, 3], dict(AC1, out_h=2, out_w=2, data_layout="NHWC"), "nhwc", OutSize=_i32(3, 3)),
    _case("bilinear", [2, 3, 5, 5], {"out_h": 3, "out_w": 4, "align_corners": False, "align_mode": 1}, "method1"),
    _case("bilinear", [2, 3, 5, 5], {"out_h": 3, "out_w": 7, "align_corners": False, "align_mode": 0}, "method2"),
    _case("bilinear", [2, 3, 5, 5], {"out_h": 7, "out_w": 3, "align_corners": True, "align_mode": 0}, "method3"),
    _case("bilinear", [1, 2, 5, 7], dict(AC1, out_h=60, out_w=25, scale=[2.0, 2.0]), "scale1"),
    _case("bilinear", [1, 2, 5, 7], dict(AC1, out_h=60, out_w=25, scale=[1.0, 1.0]), "scale2"),
    _case("bilinear", [1, 2, 5, 7], dict(AC1, out_h=60, out_w=25, scale=[1.5, 1.5]), "scale3"),
    _case("bilinear", [1, 2, 5, 7], dict(AC1, out_h=60, out_w=25, scale=[1.5, 0.5]), "scale4"),
    _case("bilinear", [1, 2, 5, 7], {"out_h": 60, "out_w": 25, "scale": [1.5, 0.7],
                                     "align_corners": False, "align_mode": 0}, "scale_half_pixel"),
    _case("bilinear", [2, 3, 5, 7], {"out_h": 60, "out_w": 25, "scale": [0.2, 0.2],
                                     "align_corners": False, "align_mode": 0}, "zero"),
    _case("bilinear", [2, 3, 5, 5], {"out_h": 3, "out_w": 3, "align_corners": True}, "size_tensor",
          SizeTensor=[_i32(3), _i32(3)]),
    _case("bilinear", [1, 3, 9, 6], {"out_h": 12, "out_w": 12, "align_corners": True}, "size_tensor_beats_outsize",
          SizeTensor=[_i32(8), _i32(12)], OutSize=_i32(5, 5)),
    _case("bilinear", [1, 2, 8, 4], {"out_h": 64, "out_w": 32, "align_corners": True}, "scale_tensor",
          Scale=np.array([2.0], np.float32)),
    _case("bilinear", [1, 2, 5, 6], {"scale": [3.0, 3.0], "align_corners": False, "align_mode": 0},
          "scale_tensor_per_dim", Scale=np.array([1.5, 0.7], np.float32)),
    _case("bilinear", [2, 3, 6, 5], {"out_h": 9, "out_w": 11, "align_corners": False, "align_mode": 0}, "f32",
          dtype=np.float32),
    _case("bilinear", [1, 3, 9, 6], dict(AC1, out_h=10, out_w=9), "uint8", dtype=np.uint8),
    _case("bilinear", [4, 1, 7, 8], dict(AC1, out_h=5, out_w=13), "uint8_outsize", dtype=np.uint8,
          OutSize=_i32(6, 15)),
    # an input feeding many outputs: the gradient takes the dense-matrix path
    _case("bilinear", [1, 2, 2, 3], {"out_h": 40, "out_w": 5, "align_corners": False, "align_mode": 0},
          "large_upsample"),
    _case("nearest", [1, 2, 3, 1], {"out_h": 2, "out_w": 30, "align_corners": False}, "large_upsample"),
    # --- test_nearest_interp_v2_op.py
    _case("nearest", [2, 3, 4, 5], {"out_h": 2, "out_w": 2, "align_corners": True}, "case0_outsize",
          OutSize=_i32(3, 3)),
    _case("nearest", [4, 1, 1, 7, 8], {"out_d": 1, "out_h": 1, "out_w": 1, "align_corners": True}, "case1_5d"),
    _case("nearest", [1, 2, 9, 6], {"out_h": 12, "out_w": 12, "align_corners": True}, "case2_up"),
    _case("nearest", [1, 1, 32, 64], {"out_h": 64, "out_w": 32, "align_corners": True}, "case3_paddle", **FWD),
    _case("nearest", [4, 1, 7, 8], {"out_h": 1, "out_w": 1, "align_corners": True}, "case4_outsize",
          OutSize=_i32(2, 2)),
    _case("nearest", [1, 2, 9, 6], {"out_h": 12, "out_w": 12, "align_corners": True}, "case5_outsize",
          OutSize=_i32(11, 11)),
    _case("nearest", [1, 1, 32, 64], {"out_h": 64, "out_w": 32, "align_corners": True}, "case6_paddle",
          OutSize=_i32(65, 129), **FWD),
    _case("nearest", [1, 2, 4, 5], {"out_h": 4, "out_w": 5, "align_corners": True}, "same"),
    _case("nearest", [3, 2, 32, 16], {"out_h": 64, "out_w": 32, "align_corners": True}, "actual_shape",
          OutSize=_i32(66, 40), **FWD),
    _case("nearest", [2, 4, 4, 5], {"out_h": 2, "out_w": 2, "align_corners": True, "data_layout": "NHWC"},
          "nhwc", OutSize=_i32(3, 8)),
    _case("nearest", [2, 3, 4, 5], {"out_h": 7, "out_w": 3, "align_corners": False}, "no_align_corners"),
    _case("nearest", [1, 2, 5, 7], {"scale": [2.0, 1.5], "align_corners": False}, "scale"),
    _case("nearest", [1, 2, 3, 4, 5], {"out_d": 5, "out_h": 3, "out_w": 7, "align_corners": False}, "5d"),
    _case("nearest", [1, 3, 4, 5, 2], {"scale": [1.5, 0.5, 2.0], "align_corners": True,
                                       "data_layout": "NHWC"}, "5d_ndhwc_scale"),
    _case("nearest", [2, 3, 4, 5], {"out_h": 3, "out_w": 3, "align_corners": True}, "size_tensor",
          SizeTensor=[_i32(3), _i32(3)]),
    _case("nearest", [1, 3, 9, 6], dict(out_h=10, out_w=9, align_corners=True), "uint8", dtype=np.uint8),
    # Paddle reads interp_method, not the op type: nearest_interp_v2 defaults to bilinear.
    _case("bilinear", [1, 2, 4, 5], {"out_h": 6, "out_w": 7}, "default_method_is_bilinear",
          op="nearest_interp_v2"),
    # --- linear, trilinear and bicubic (test_linear/trilinear/bicubic_interp_v2_op.py settings)
    _case("linear", [1, 3, 100], dict(AC1, out_w=50), "paddle_down", **FWD),
    _case("linear", [2, 3, 7], {"out_w": 11, "align_corners": False, "align_mode": 0}, "half_pixel"),
    _case("linear", [2, 3, 7], {"out_w": 4, "align_corners": False, "align_mode": 1}, "mode1"),
    _case("linear", [2, 3, 7], dict(AC1, out_w=10), "align_corners"),
    _case("linear", [1, 9, 3], {"scale": [1.7], "align_corners": False, "align_mode": 0,
                                "data_layout": "NHWC"}, "nwc_scale"),
    _case("trilinear", [1, 2, 3, 4, 5], {"out_d": 5, "out_h": 3, "out_w": 7, "align_corners": False,
                                          "align_mode": 0}, "half_pixel"),
    _case("trilinear", [1, 2, 3, 4, 5], dict(AC1, out_d=2, out_h=6, out_w=4), "align_corners"),
    _case("trilinear", [1, 3, 4, 5, 2], {"scale": [1.5, 0.5, 2.0], "align_corners": False, "align_mode": 1,
                                          "data_layout": "NHWC"}, "ndhwc_scale"),
    _case("bicubic", [2, 2, 5, 6], {"out_h": 9, "out_w": 7, "align_corners": True}, "up_align_corners"),
    _case("bicubic", [1, 2, 8, 9], {"out_h": 3, "out_w": 5, "align_corners": False}, "down"),
    _case("bicubic", [1, 2, 5, 6], {"scale": [1.7, 0.8], "align_corners": False}, "scale"),
    _case("bicubic", [2, 5, 6, 2], {"out_h": 4, "out_w": 9, "align_corners": False, "data_layout": "NHWC"},
          "nhwc"),
    _case("bicubic", [2, 3, 6, 5], {"out_h": 9, "out_w": 4, "align_corners": False}, "f32", dtype=np.float32),
]

# Every op type runs every interp_method (Paddle: the attribute, not the op type, picks the
# method; X's rank picks the dims), small shapes, float64, gradient-checked.
_SHAPES = {"linear": ([1, 2, 4], {"out_w": 6}), "bilinear": ([1, 1, 3, 4], {"out_h": 5, "out_w": 3}),
           "bicubic": ([1, 1, 3, 4], {"out_h": 5, "out_w": 3}),
           "nearest": ([1, 1, 3, 4], {"out_h": 5, "out_w": 3}),
           "trilinear": ([1, 1, 2, 3, 3], {"out_d": 3, "out_h": 2, "out_w": 4})}
for _op in OPS.values():
    for _method, (_shape, _size) in _SHAPES.items():
        if OPS[_method] != _op:
            CASES.append(_case(_method, _shape, dict(_size, align_corners=False, align_mode=0),
                               f"method_{_method}", op=_op))
CASES += [
    # the size inputs of every op type: SizeTensor beats OutSize beats Scale beats out_*
    _case("linear", [1, 2, 4], {"out_w": 3}, "outsize", OutSize=_i32(7)),
    _case("linear", [1, 2, 4], {"out_w": 3}, "size_tensor", SizeTensor=[_i32(6)], OutSize=_i32(7)),
    _case("linear", [1, 2, 4], {"out_w": 3, "align_corners": False}, "scale_tensor",
          Scale=np.array([1.5], np.float32)),
    _case("bicubic", [1, 1, 3, 4], {"out_h": 2, "out_w": 2}, "outsize", OutSize=_i32(5, 6)),
    _case("bicubic", [1, 1, 3, 4], {"out_h": 2, "out_w": 2}, "size_tensor",
          SizeTensor=[_i32(4), _i32(5)]),
    _case("bicubic", [1, 1, 3, 4], {"out_h": 2, "out_w": 2, "align_corners": False},
          "scale_tensor", Scale=np.array([1.5, 0.75], np.float32)),
    _case("trilinear", [1, 1, 2, 3, 3], {"out_d": 1, "out_h": 1, "out_w": 1}, "outsize",
          OutSize=_i32(3, 2, 4)),
    _case("trilinear", [1, 1, 2, 3, 3], {"out_d": 1, "out_h": 1, "out_w": 1}, "size_tensor",
          SizeTensor=[_i32(3), _i32(4), _i32(2)]),
    _case("trilinear", [1, 1, 2, 3, 3], {"out_d": 1, "out_h": 1, "out_w": 1,
                                          "align_corners": False}, "scale_tensor",
          Scale=np.array([1.5], np.float32)),
    _case("nearest", [1, 1, 3, 4], {"out_h": 2, "out_w": 2, "align_corners": False},
          "scale_tensor", Scale=np.array([1.7, 0.5], np.float32)),
    # attributes a configuration does not read: out_d/out_h beyond X's spatial dims, and
    # align_mode outside the linear methods
    _case("linear", [1, 2, 4], {"out_d": 9, "out_h": 9, "out_w": 6}, "out_d_h_unused"),
    _case("bilinear", [1, 1, 3, 4], {"out_d": 9, "out_h": 5, "out_w": 3}, "out_d_unused"),
    _case("bicubic", [1, 1, 3, 4], {"out_d": 9, "out_h": 5, "out_w": 3, "align_corners": False,
                                     "align_mode": 0}, "out_d_mode0_unused"),
    _case("nearest", [1, 1, 3, 4], {"out_h": 5, "out_w": 3, "align_corners": False,
                                     "align_mode": 0}, "mode0_unused"),
]

NOT_PORTED = {
    "Test*InterpOpFP16 / Test*Case*FP16 / Test*BF16*": "float16/bfloat16",
    "TestBilinearInterpOpZoomOutForFloat16 / ZoomInForFloat16": "float16 on CUDA",
    "Test*InterpOpAPI_dy* / *_0DTensorScale* / *_0DTensorOutSize": "dygraph paddle.nn.functional"
        ".interpolate API; the Scale / SizeTensor / OutSize tensors they make are covered above",
    "TestNearestInterpException / TestBilinearInterpOpError": "Python-layer argument errors",
    "TestBilinearInterp(Case*)Uint8 with [2, 3, 32, 64]": "same settings run on the small "
        "uint8 shapes above",
}
