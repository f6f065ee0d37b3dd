"""Cases for ``pool2d``, ``pool3d``, ``max_pool2d_with_index`` and ``max_pool3d_with_index``
(kernels/pool.py) against per-window numpy loops.

Ported from Paddle's test/legacy_test/test_pool2d_op.py (base cases TestPool2D_Op and
TestCase1..5 with their ceil-mode, asymmetric-padding, channel-last, SAME, VALID,
include-padding, adaptive and strides variants; shapes shrunk to 1-2 channels so the
float64 gradient check stays fast), test_pool_max_op.py (max_pool{2,3}d_with_index:
every CPU class) and test_pool3d_op.py (base classes and their variants, as for 2-D).

Also compared with PaddlePaddle 3.3.1 (static graph, CPU, float64; 60 configurations:
max/avg x exclusive x explicit/asymmetric/ceil/SAME/VALID/adaptive/global/NHWC, tie
breaking, float32, pool3d, both with_index ops): outputs, Mask and max X@GRAD matched to
1e-12; avg X@GRAD to 2e-8 (Paddle scales by a float32 ``1/n`` even in float64). Two Paddle behaviours the references here follow on purpose: the non-exclusive
avg divisor is the window clipped at ``in + pad_before``, and ``pool2d``/``pool3d`` *max*
with ``adaptive`` reads plain ``ksize``/``strides`` windows (Paddle's CPU kernel ignores
``adaptive`` there; its adaptive max API emits ``max_pool2d_with_index``).
The ops that paddle.nn.functional's max/avg/adaptive pool2d and pool3d (with and
without return_mask) put in a static program, replayed op by op in float32, matched to 6e-8.
"""
import itertools

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(14)
FLT_MAX = float(np.finfo(np.float32).max)

NOT_PORTED = {
    "TestLPPool2D_Op": "lp_pool2d is its own op: ported in cases_lp_pool.py",
    "*_CUDNNOp / *_CUDNNOpCeilMode / *CudnnPadding*Op / TestCUDNNAvgInclude*":
        "cuDNN variants: same attributes as the ported CPU cases (use_cudnn is a runtime hint)",
    "*_Fp16Op / *_CUDNNFp16Op / *_Bf16Op / *_FP16OP / *_BF16OP": "float16/bfloat16 GPU-only dtypes",
    "*_AsyPadding_channel_last / *_channel_last_CeilModeCast / *_channel_last_Padding*Op / "
    "TestCase5_channel_last_Max / TestAvgInclude_channel_last / "
    "TestAvgPoolAdaptive_AsyPadding_channel_last":
        "combinations of ported settings with NHWC (a transpose around the same kernel); "
        "each base class has its own ported NHWC case",
    "test_pool3d_op.py: TestCase3_AsyPadding, *_channel_last beyond TestCase1/5, the other "
    "Padding{SAME,VALID} and CeilMode combinations, TestAvgPoolAdaptive_AsyPadding":
        "the same settings as ported classes combined differently (paddings are ignored by "
        "global/adaptive pooling); the 3-D kernel is the 2-D one",
    "TestMaxPool2dV2Op / TestCase8..10 (test_pool_max_op.py)":
        "max_pool2d_v2 is a cuDNN-frontend PIR op without a legacy OpProto",
}


def _windows(size, k, s, before, out, adaptive):
    """[(start, end, divisor_span)] per output index, Paddle's CPU rules."""
    rows = []
    for o in range(out):
        if adaptive:
            a, b = (o * size) // out, -((-(o + 1) * size) // out)
            rows.append((a, b, b - a))
        else:
            start = o * s - before
            end = min(start + k, size + before)
            rows.append((max(start, 0), min(start + k, size), end - start))
    return rows


def _resolve(x_shape, a, nd):
    """(ksize, strides, before-pads, out) from attrs, written out from Paddle's docs."""
    spatial = list(x_shape[2:])
    ksize, strides = list(a["ksize"]), list(a.get("strides", [1] * nd))
    pads = list(a.get("paddings", [0] * nd))
    pairs = [(p, p) for p in pads] if len(pads) == nd else list(zip(pads[::2], pads[1::2]))
    algo = a.get("padding_algorithm", "EXPLICIT")
    if algo == "SAME":
        pairs = []
        for size, k, s in zip(spatial, ksize, strides):
            total = max((int(np.ceil(size / s)) - 1) * s + k - size, 0)
            pairs.append((total // 2, total - total // 2))
    if algo == "VALID" or a.get("global_pooling") or a.get("adaptive"):
        pairs = [(0, 0)] * nd
    if a.get("global_pooling"):
        ksize = spatial
    if a.get("adaptive"):
        return ksize, strides, pairs, ksize
    extra = [s - 1 if a.get("ceil_mode") else 0 for s in strides]
    out = [int((size - k + p + q + e) / s) + 1
           for size, k, s, (p, q), e in zip(spatial, ksize, strides, pairs, extra)]
    return ksize, strides, pairs, out


def pool_reference(x, a, nd=2):
    """Out of pool2d/pool3d: loops over every output position."""
    last = a.get("data_format", "NCHW") in ("NHWC", "NDHWC")
    if last:
        x = np.moveaxis(x, -1, 1)
    ksize, strides, pairs, out = _resolve(x.shape, a, nd)
    ptype, adaptive = a["pooling_type"], a.get("adaptive", False)
    per_dim = [_windows(x.shape[2 + d], ksize[d], strides[d], pairs[d][0], out[d],
                        adaptive and ptype == "avg") for d in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*(range(o) for o in out)):
        win = [per_dim[d][o] for d, o in enumerate(pos)]
        patch = x[(slice(None), slice(None)) + tuple(slice(b, e) for b, e, _ in win)]
        if ptype == "max":
            flat = patch.reshape(patch.shape[:2] + (-1,))
            y[(slice(None), slice(None)) + pos] = np.maximum(
                flat.max(axis=2) if flat.shape[2] else -FLT_MAX, -FLT_MAX)
        else:
            exclusive = a.get("exclusive", True) or adaptive
            div = np.prod([(e - b) if exclusive else span for b, e, span in win])
            y[(slice(None), slice(None)) + pos] = patch.sum(axis=tuple(range(2, 2 + nd))) / div
    return np.moveaxis(y, 1, -1) if last else y


def with_index_reference(x, a, nd=2):
    """Out and Mask (flat plane index of the first strict maximum) of max_pool*_with_index."""
    ksize, strides, pairs, out = _resolve(x.shape, a, nd)
    per_dim = [_windows(x.shape[2 + d], ksize[d], strides[d], pairs[d][0], out[d],
                        a.get("adaptive", False)) for d in range(nd)]
    y = np.full(x.shape[:2] + tuple(out), -FLT_MAX)
    mask = np.full(y.shape, -1, dtype=np.int32)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for pos in itertools.product(*(range(o) for o in out)):
            ranges = [range(per_dim[d][o][0], per_dim[d][o][1]) for d, o in enumerate(pos)]
            for src in itertools.product(*ranges):
                if x[(n, c) + src] > y[(n, c) + pos]:
                    y[(n, c) + pos] = x[(n, c) + src]
                    mask[(n, c) + pos] = np.ravel_multi_index(src, x.shape[2:])
    return {"Out": y, "Mask": mask}


def _ref2(i, a):
    return {"Out": pool_reference(i["X"], a, 2)}


def _ref3(i, a):
    return {"Out": pool_reference(i["X"], a, 3)}


def _check_errors(outs, i, a):
    x = i["X"]
    with pytest.raises(FluidscopeError, match="pooling_type"):
        run_op("pool2d", {"X": x}, dict(a, pooling_type="sum"))
    with pytest.raises(FluidscopeError, match="paddings"):
        run_op("pool2d", {"X": x}, dict(a, paddings=[1, 1, 1]))
    with pytest.raises(FluidscopeError, match="output would be empty"):
        run_op("pool2d", {"X": x[:, :, :2, :2]}, dict(a, ksize=[5, 5], paddings=[0, 0]))


# Paddle's base configurations: (name, attrs, NCHW shape).
_BASE = {
    "TestPool2D_Op": (dict(pooling_type="avg", ksize=[3, 3], global_pooling=True), [1, 2, 5, 5]),
    "TestCase1": (dict(pooling_type="avg", ksize=[3, 3]), [1, 2, 7, 7]),
    "TestCase2": (dict(pooling_type="avg", ksize=[3, 3], paddings=[1, 1]), [1, 2, 7, 7]),
    "TestCase3": (dict(pooling_type="max", ksize=[3, 3], global_pooling=True), [1, 2, 5, 5]),
    "TestCase4": (dict(pooling_type="max", ksize=[3, 3]), [1, 2, 7, 7]),
    "TestCase5": (dict(pooling_type="max", ksize=[3, 3], paddings=[1, 1]), [1, 2, 7, 7]),
}
_ASY = {"TestPool2D_Op": [1, 0, 1, 2], "TestCase1": [1, 0, 1, 0], "TestCase2": [1, 2, 1, 2],
        "TestCase3": [1, 0, 1, 2], "TestCase4": [1, 0, 1, 0], "TestCase5": [2, 2, 1, 2]}


def _ported():
    configs = []
    for name, (attrs, shape) in _BASE.items():
        configs.append((name, attrs, shape))
        configs.append((name + "_AsyPadding", dict(attrs, paddings=_ASY[name]), shape))
        configs.append((name + "_channel_last", dict(attrs, data_format="NHWC"), shape))
        configs.append((name + "_PaddingSAMEOp", dict(attrs, padding_algorithm="SAME"), shape))
        configs.append((name + "_PaddingVALIDOp",
                        dict(attrs, paddings=[1, 1], padding_algorithm="VALID"), shape))
    for name in ("TestCase1", "TestCase2", "TestCase1_AsyPadding", "TestCase2_AsyPadding"):
        base = _BASE[name.split("_")[0]][0]
        pads = _ASY[name.split("_")[0]] if "Asy" in name else base.get("paddings", [0, 0])
        configs.append((name + "_CeilModeCast", dict(base, paddings=pads, ceil_mode=True),
                        [1, 2, 7, 7]))
    configs += [
        ("TestAvgInclude", dict(_BASE["TestCase2"][0], exclusive=False), [1, 2, 7, 7]),
        ("TestAvgInclude_AsyPadding", dict(_BASE["TestCase2"][0], exclusive=False,
                                           paddings=[1, 2, 1, 2]), [1, 2, 7, 7]),
        ("TestAvgPoolAdaptive", dict(_BASE["TestCase1"][0], adaptive=True), [1, 2, 7, 7]),
        ("TestAvgPoolAdaptiveAsyOutSize", dict(pooling_type="avg", ksize=[2, 3], adaptive=True,
                                               paddings=[0, 0, 0, 0]), [2, 2, 6, 6]),
        ("TestAvgPoolAdaptive_AsyPadding", dict(_BASE["TestCase1"][0], adaptive=True,
                                                paddings=[1, 1, 0, 2]), [1, 2, 7, 7]),
        ("TestAvgPoolAdaptive_channel_last", dict(_BASE["TestCase1"][0], adaptive=True,
                                                  data_format="NHWC"), [1, 2, 7, 7]),
        ("TestCase5_Max", dict(_BASE["TestCase5"][0]), [1, 2, 7, 7]),
        ("TestCase1_strides", dict(_BASE["TestCase1"][0], strides=[1, 2]), [1, 2, 4, 5]),
        ("TestCase1_strides_PaddingSAMEOp", dict(_BASE["TestCase1"][0], strides=[1, 2],
                                                 padding_algorithm="SAME"), [1, 2, 4, 5]),
        # beyond Paddle's tests: settings the model zoo uses and the kernel's edge rules
        ("resnet_stem_maxpool", dict(pooling_type="max", ksize=[3, 3], strides=[2, 2],
                                     paddings=[1, 1]), [1, 2, 8, 8]),
        ("include_ceil_asym", dict(pooling_type="avg", ksize=[3, 3], strides=[2, 3],
                                   paddings=[0, 2, 1, 0], ceil_mode=True, exclusive=False),
         [1, 2, 7, 6]),
        ("adaptive_upsample", dict(pooling_type="avg", ksize=[9, 8], adaptive=True), [1, 2, 7, 6]),
        ("adaptive_max_reads_windows", dict(pooling_type="max", ksize=[4, 5], adaptive=True),
         [1, 2, 7, 6]),  # (no window past the input: a -FLT_MAX output drowns the numeric grad)
    ]
    return configs


def _nhwc(x, attrs):
    return x.transpose(0, 2, 3, 1).copy() if attrs.get("data_format") == "NHWC" else x


CASES = [OpCase("pool2d", {"X": _nhwc(rng.standard_normal(shape), attrs)}, _ref2, attrs=attrs,
                name=name) for name, attrs, shape in _ported()]
next(c for c in CASES if c.name == "TestCase1").check = _check_errors
CASES.append(OpCase("pool2d", {"X": rng.integers(0, 3, (1, 2, 6, 6)).astype(np.float64)}, _ref2,
                    attrs=dict(pooling_type="max", ksize=[3, 3], paddings=[1, 1]), grad=(),
                    name="ties_forward"))
CASES.append(OpCase("pool2d", {"X": rng.standard_normal((2, 3, 6, 5)).astype(np.float32)}, _ref2,
                    attrs=dict(pooling_type="avg", ksize=[3, 2], strides=[2, 2], paddings=[1, 1],
                               exclusive=False), grad=(), rtol=1e-5, atol=1e-6, name="float32"))

# test_pool3d_op.py: (class, attrs, NCDHW shape); one channel and dims cut to 5 (6 where
# a 4-tap window needs it) so the float64 gradient check stays fast.
_AVG3, _MAX3 = dict(pooling_type="avg"), dict(pooling_type="max")
_G3 = dict(ksize=[2, 3, 1], strides=[2, 2, 3], global_pooling=True)
_C1 = dict(ksize=[3, 3, 3], strides=[1, 1, 1])
_C2 = dict(ksize=[3, 3, 4], strides=[1, 3, 2], paddings=[1, 1, 1])
_POOL3D = [
    ("TestPool3D_Op", dict(_AVG3, **_G3), (1, 1, 5, 6, 5)),
    ("TestCase1", dict(_AVG3, **_C1), (1, 1, 5, 5, 5)),
    ("TestCase2", dict(_AVG3, **_C2), (1, 1, 5, 6, 6)),
    ("TestCase3", dict(_MAX3, **_G3), (1, 1, 5, 6, 5)),
    ("TestCase4", dict(_MAX3, **_C1), (1, 1, 5, 5, 5)),
    ("TestCase5", dict(_MAX3, **_C2), (1, 1, 5, 6, 6)),
    ("TestCase1_CeilModeCast", dict(_AVG3, ceil_mode=True, **_C1), (1, 1, 5, 5, 5)),
    ("TestCase2_CeilModeCast", dict(_AVG3, ceil_mode=True, **_C2), (1, 1, 5, 6, 6)),
    ("TestAvgInclude", dict(_AVG3, exclusive=False, **_C2), (1, 1, 5, 6, 6)),
    ("TestAvgPoolAdaptive", dict(_AVG3, adaptive=True, **_C1), (1, 1, 5, 5, 5)),
    ("TestAvgPoolAdaptiveAsyOutSize", dict(_AVG3, ksize=[2, 2, 3], adaptive=True),
     (1, 1, 3, 4, 4)),
    ("TestPool3D_Op_AsyPadding", dict(_AVG3, ksize=[3, 4, 3], strides=[1, 1, 2],
                                      paddings=[0, 0, 0, 2, 3, 0], global_pooling=True),
     (1, 1, 5, 5, 6)),
    ("TestCase1_AsyPadding", dict(_AVG3, ksize=[3, 3, 4], strides=[1, 1, 2],
                                  paddings=[1, 0, 2, 1, 2, 1]), (1, 1, 5, 5, 6)),
    ("TestCase2_AsyPadding", dict(_AVG3, ksize=[3, 3, 3], paddings=[1, 2, 1, 1, 1, 0]),
     (1, 1, 5, 5, 5)),
    ("TestCase4_AsyPadding", dict(_MAX3, ksize=[3, 3, 3], paddings=[1, 0, 2, 1, 2, 1]),
     (1, 1, 5, 5, 5)),
    ("TestCase5_AsyPadding", dict(_MAX3, ksize=[3, 3, 3], paddings=[1, 2, 1, 1, 1, 0]),
     (1, 1, 5, 5, 5)),
    ("TestCase1_AsyPadding_CeilModeCast", dict(_AVG3, ksize=[3, 3, 4], strides=[1, 1, 2],
                                               paddings=[1, 0, 2, 1, 2, 1], ceil_mode=True),
     (1, 1, 5, 5, 6)),
    ("TestAvgInclude_AsyPadding", dict(_AVG3, exclusive=False, ksize=[3, 3, 4],
                                       strides=[1, 3, 2], paddings=[2, 2, 1, 1, 0, 0]),
     (1, 1, 5, 6, 6)),
    ("TestCase1_channel_last", dict(_AVG3, data_format="NDHWC", **_C1), (1, 1, 5, 5, 5)),
    ("TestCase5_channel_last", dict(_MAX3, data_format="NDHWC", **_C2), (1, 1, 5, 6, 6)),
    ("TestCase1_PaddingSAMEOp", dict(_AVG3, padding_algorithm="SAME", **_C1), (1, 1, 5, 5, 5)),
    ("TestCase5_PaddingVALIDOp", dict(_MAX3, padding_algorithm="VALID", **_C2), (1, 1, 5, 6, 6)),
    # beyond Paddle's tests
    ("max_ceil_asym_strided", dict(_MAX3, ksize=[2, 3, 2], strides=[2, 1, 2], ceil_mode=True,
                                   paddings=[1, 0, 0, 1, 1, 0]), (1, 2, 5, 4, 5)),
    ("avg_same_strided_ndhwc", dict(_AVG3, ksize=[2, 2, 3], strides=[2, 2, 2],
                                    padding_algorithm="SAME", data_format="NDHWC"),
     (1, 2, 5, 4, 5)),
]


def _ndhwc(x, attrs):
    return np.moveaxis(x, 1, -1).copy() if attrs.get("data_format") == "NDHWC" else x


CASES += [OpCase("pool3d", {"X": _ndhwc(rng.standard_normal(shape), attrs)}, _ref3,
                 attrs=attrs, name=name) for name, attrs, shape in _POOL3D]


def _idx2(i, a):
    return with_index_reference(i["X"], a, 2)


def _idx3(i, a):
    return with_index_reference(i["X"], a, 3)


# test_pool_max_op.py (batch and channels cut; 3-D inputs 5^3 instead of 7^3)
def _with_index(op, name, shape, ksize, strides, paddings, global_pool=False, adaptive=False):
    nd = len(ksize)
    return OpCase(op, {"X": np.round(rng.random(shape) * 100.0, 2)}, _idx2 if nd == 2 else _idx3,
                  attrs=dict(ksize=ksize, strides=strides, paddings=paddings,
                             global_pooling=global_pool, adaptive=adaptive),
                  grad_outputs=("Out",), name=name)


_M3, _M2 = "max_pool3d_with_index", "max_pool2d_with_index"
CASES += [
    _with_index(_M3, "TestMaxPoolWithIndex_Op", (1, 1, 5, 5, 5), [3, 3, 3], [2, 2, 2], [1, 1, 1]),
    _with_index(_M3, "TestCase1", (1, 1, 5, 5, 5), [3, 3, 3], [2, 2, 2], [1, 1, 1], True),
    _with_index(_M3, "TestCase2", (1, 1, 5, 5, 5), [3, 3, 3], [2, 2, 2], [0, 0, 0], True),
    _with_index(_M3, "TestCase3", (1, 1, 5, 5, 5), [3, 3, 3], [2, 2, 2], [0, 0, 0]),
    _with_index(_M3, "TestCastAdaptive3d", (1, 1, 5, 4, 5), [3, 3, 3], [2, 2, 2], [1, 1, 1],
                adaptive=True),
    _with_index(_M2, "TestCase4", (1, 2, 7, 7), [3, 3], [1, 1], [1, 1], True),
    _with_index(_M2, "TestCase5", (1, 2, 7, 7), [3, 3], [1, 1], [1, 1]),
    _with_index(_M2, "TestCase6", (1, 2, 7, 7), [3, 3], [2, 2], [0, 0], True),
    _with_index(_M2, "TestCase7", (1, 2, 7, 7), [3, 3], [2, 2], [0, 0]),
    _with_index(_M2, "TestCastAdaptive2d", (1, 2, 7, 7), [3, 3], [2, 2], [0, 0], adaptive=True),
    OpCase(_M2, {"X": rng.standard_normal((1, 2, 7, 6))}, _idx2,
           attrs=dict(ksize=[3, 3], strides=[2, 2], paddings=[1, 1], ceil_mode=True),
           grad_outputs=("Out",), name="ceil_mode"),
    OpCase(_M2, {"X": rng.standard_normal((1, 2, 7, 6))}, _idx2,
           attrs=dict(ksize=[4, 5], adaptive=True), grad_outputs=("Out",), name="adaptive_up"),
    OpCase(_M2, {"X": rng.integers(0, 3, (1, 2, 6, 6)).astype(np.float64)},
           _idx2, attrs=dict(ksize=[3, 3], paddings=[1, 1]), grad=(), name="ties"),
]
