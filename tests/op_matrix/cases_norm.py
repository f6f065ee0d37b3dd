"""Cases for the normalisation ops (kernels/norm.py): batch_norm (training, inference,
frozen stats, MomentumTensor, NHWC, ranks 2 to 5, in place running stats), layer_norm,
instance_norm and group_norm, with and without Scale/Bias, against per-channel /
per-row numpy loops written independently of the kernels.

Ported from Paddle's test/legacy_test: test_batch_norm_op.py (TestBatchNormOpInference
shapes [2, 3, 4, 5] and [2, 3] in NCHW/NHWC with and without scale and bias,
TestBatchNormOpTraining and its Case1-3, MomentumVariable, FreezeStats and
FreezeStatsAndScaleBias), test_layer_norm_op.py (TestLayerNormOpByOpTest [2, 6, 6, 3]
and its scale/bias cases, TestLayerNormOp's [2, 3, 4, 5] at begin_norm_axis 1 and 3 and
[1, 3, 4, 5]), test_instance_norm_op.py and test_group_norm_op.py (groups 1, 2, 4,
epsilon 0.5, NHWC); large shapes are shrunk so the float64 gradient checks stay fast.

Compared with PaddlePaddle 3.3.1 (static graph, CPU; /tmp/fs_norm/oracle_cases.py,
paddle_side.py, ours_side.py) on the same inputs: Y, MeanOut, VarianceOut (running stats
updated in place, MeanOut being the Mean variable), SavedMean, SavedVariance and the
X/Scale/Bias gradients of batch_norm (training NCHW/NHWC/2-D/3-D, is_test, frozen stats,
trainable_statistics, MomentumTensor, one element per channel), layer_norm, instance_norm
(4-D, 5-D) and group_norm (NCHW, NHWC) matched to 2e-13 relative in float64 and 2e-5
(outputs) / 2e-4 (gradients, relative to max(|x|, 1e-3)) in float32. Differences found:
Paddle 3.3.1 does not read MomentumTensor (we follow), leaves SavedMean/SavedVariance
unset or uninitialised when normalising with the running stats (we give the running mean
and inverse std, as Paddle's OpTest reference expects), and shapes layer_norm's
Mean/Variance as X's leading dims (we follow).
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.executor import Executor
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime.scope import Scope

from . import OpCase, ProgramCase

rng = np.random.default_rng(41)
LAST = ("NHWC", "NDHWC", "NLC")


def _f(*shape, dtype=np.float64, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


# ----------------------------------------------------------------- batch_norm
def bn_reference(i, a):
    """Paddle's CPU batch_norm, one channel at a time."""
    x = i["X"]
    layout, eps = a.get("data_layout", "NCHW"), a.get("epsilon", 1e-5)
    axis = x.ndim - 1 if layout in LAST else 1
    c = x.shape[axis]
    scale = i.get("Scale") if i.get("Scale") is not None else np.ones(c)
    bias = i.get("Bias") if i.get("Bias") is not None else np.zeros(c)
    mean, var = i["Mean"], i["Variance"]
    mom = a.get("momentum", 0.9)  # Paddle 3.3.1 does not read MomentumTensor
    glob = (a.get("is_test", False) and not a.get("trainable_statistics", False)) or a.get(
        "use_global_stats", False)
    y = np.empty_like(x)
    out = {k: np.empty(c, dtype=mean.dtype) for k in ("MeanOut", "VarianceOut", "SavedMean",
                                                      "SavedVariance")}
    for ch in range(c):
        xc = np.take(x, ch, axis=axis).astype(np.float64)
        if glob:
            m, v = mean[ch], var[ch]
            out["MeanOut"][ch], out["VarianceOut"][ch] = m, v
        elif xc.size == 1:
            m = v = None
            out["MeanOut"][ch], out["VarianceOut"][ch] = mean[ch], var[ch]
        else:
            m = xc.sum() / xc.size
            v = ((xc - m) ** 2).sum() / xc.size  # biased, as Paddle's CPU kernel
            out["MeanOut"][ch] = mean[ch] * mom + m * (1 - mom)
            out["VarianceOut"][ch] = var[ch] * mom + v * (1 - mom)
        index = [slice(None)] * x.ndim
        index[axis] = ch
        if m is None:
            y[tuple(index)] = xc
            out["SavedMean"][ch] = out["SavedVariance"][ch] = 0
            continue
        y[tuple(index)] = (xc - m) / np.sqrt(v + eps) * scale[ch] + bias[ch]
        out["SavedMean"][ch], out["SavedVariance"][ch] = m, 1 / np.sqrt(v + eps)
    out["Y"] = y
    return out


def _bn_inputs(shape, layout="NCHW", dtype=np.float64, scale_bias=True, stats=True):
    c = shape[-1] if layout in LAST else shape[1]
    ins = {"X": _f(*shape, dtype=dtype),
           "Mean": (_f(c, dtype=dtype) * 0.2) if stats else np.zeros(c, dtype),
           "Variance": _f(c, dtype=dtype, low=0.5, high=1.5) if stats else np.ones(c, dtype)}
    if scale_bias:
        ins["Scale"], ins["Bias"] = _f(c, dtype=dtype, low=0.5, high=1.5), _f(c, dtype=dtype)
    return ins


def _bn(name, shape, attrs, grad="auto", dtype=np.float64, check=None, **kw):
    ins = _bn_inputs(shape, attrs.get("data_layout", "NCHW"), dtype, **kw)
    tol = {} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    return OpCase("batch_norm", ins, bn_reference, attrs=attrs, name=name,
                  grad=grad if dtype == np.float64 else (), grad_outputs=("Y",),
                  check=check, **tol)


def _check_in_place(outs, i, a):
    """MeanOut/VarianceOut named like Mean/Variance (as Paddle programs do): the executor
    updates the persistable running stats in place, step after step."""
    desc, block = new_program()
    c = i["Mean"].size
    for name, array in (("x", i["X"]), ("scale", i["Scale"]), ("bias", i["Bias"])):
        add_var(block, name, array.shape, array.dtype)
    for name in ("mean", "variance"):
        add_var(block, name, (c,), i["Mean"].dtype, persistable=True)
    for name in ("y", "saved_mean", "saved_variance"):
        add_var(block, name, None, i["X"].dtype)
    add_op(block, "batch_norm",
           {"X": ["x"], "Scale": ["scale"], "Bias": ["bias"], "Mean": ["mean"],
            "Variance": ["variance"]},
           {"Y": ["y"], "MeanOut": ["mean"], "VarianceOut": ["variance"],
            "SavedMean": ["saved_mean"], "SavedVariance": ["saved_variance"]}, a)
    scope = Scope()
    scope.var("mean").get_tensor().set(i["Mean"].copy())
    scope.var("variance").get_tensor().set(i["Variance"].copy())
    feed = {"x": i["X"], "scale": i["Scale"], "bias": i["Bias"]}
    expected = dict(i)
    stored = dict(a, momentum=float(np.float32(a["momentum"])))  # a FLOAT attr is float32
    for _ in range(2):
        Executor().run(desc, feed=feed, fetch_list=["y"], scope=scope)
        ref = bn_reference(expected, stored)
        expected = dict(expected, Mean=ref["MeanOut"], Variance=ref["VarianceOut"])
    np.testing.assert_allclose(scope.find_var("mean").get_tensor().value, expected["Mean"],
                               rtol=1e-12)
    np.testing.assert_allclose(scope.find_var("variance").get_tensor().value,
                               expected["Variance"], rtol=1e-12)


def _check_errors(outs, i, a):
    bad = dict(i, Scale=np.ones(4))
    with pytest.raises(FluidscopeError, match=r"Scale \[4\] must hold 3 values"):
        run_op("batch_norm", bad, a)
    with pytest.raises(FluidscopeError, match="groups=2 must be >= 1 and divide the 3 channels"):
        run_op("group_norm", {"X": i["X"]}, {"groups": 2})
    with pytest.raises(FluidscopeError, match="begin_norm_axis=4"):
        run_op("layer_norm", {"X": i["X"]}, {"begin_norm_axis": 4})


TRAIN = {"is_test": False, "momentum": 0.9, "epsilon": 1e-5}
CASES = [
    # TestBatchNormOpInference: [2, 3, 4, 5] and [2, 3], NCHW and NHWC, float32.
    _bn("inference_nchw", [2, 3, 4, 5], {"is_test": True}, dtype=np.float32),
    _bn("inference_nhwc", [2, 4, 5, 3], {"is_test": True, "data_layout": "NHWC"},
        dtype=np.float32),
    _bn("inference_2d", [2, 3], {"is_test": True}, dtype=np.float32),
    _bn("inference_2d_nhwc", [2, 3], {"is_test": True, "data_layout": "NHWC"},
        dtype=np.float32),
    _bn("inference_no_scale_bias", [2, 3, 4, 5], {"is_test": True}, dtype=np.float32,
        scale_bias=False, stats=False),
    # TestBatchNormOpTraining and its cases: [2, 3, 4, 5], NCHW/NHWC, float32.
    _bn("training_f32", [2, 3, 4, 5], TRAIN, dtype=np.float32),
    _bn("training_f32_nhwc", [2, 4, 5, 3], dict(TRAIN, data_layout="NHWC"), dtype=np.float32),
    # float64 gradient checks (Scale and Bias too), on smaller shapes.
    _bn("training", [2, 3, 2, 3], TRAIN, check=_check_in_place),
    _bn("training_nhwc", [2, 2, 3, 3], dict(TRAIN, data_layout="NHWC")),
    _bn("errors", [2, 3, 2, 2], TRAIN, grad=(), check=_check_errors),
    _bn("training_no_scale_bias", [3, 2, 2, 2], TRAIN, scale_bias=False),
    _bn("training_2d", [4, 3], TRAIN),
    _bn("training_ncl", [2, 3, 4], TRAIN),
    _bn("training_5d", [2, 2, 2, 2, 3], dict(TRAIN, data_layout="NDHWC")),
    _bn("one_element_per_channel", [1, 3], TRAIN),
    # TestBatchNormOpFreezeStats(AndScaleBias)Training: use_global_stats while training.
    _bn("freeze_stats", [2, 3, 2, 3], dict(TRAIN, use_global_stats=True)),
    _bn("freeze_stats_nhwc", [2, 2, 3, 3], dict(TRAIN, use_global_stats=True,
                                                data_layout="NHWC")),
    _bn("is_test_grad", [2, 3, 2, 2], {"is_test": True, "epsilon": 1e-3}),
    # with is_test, trainable_statistics keeps the batch stats in the forward pass; Paddle's
    # grad kernel then still takes the running stats, so no gradient check here.
    _bn("trainable_statistics", [2, 3, 2, 2], dict(TRAIN, is_test=True,
                                                   trainable_statistics=True), grad=()),
]


def _bn_program(layout="NCHW", shape=(2, 3, 2, 2), attrs=TRAIN):
    """x -> batch_norm (MeanOut/VarianceOut written into the persistable Mean/Variance, as in
    Paddle programs) -> loss = sum(Y * w): the generic backward and the in-place update."""
    def build():
        i = _bn_inputs(list(shape), layout)
        desc, block = new_program()
        c = i["Mean"].size
        add_var(block, "x", shape, "float64")
        for name in ("scale", "bias", "mean", "variance"):
            add_var(block, name, (c,), "float64", persistable=True,
                    is_parameter=name in ("scale", "bias"), stop_gradient=name not in ("scale", "bias"))
        w = rng.uniform(0.5, 1.5, shape)
        add_var(block, "w", shape, "float64", stop_gradient=True)
        for name in ("y", "saved_mean", "saved_variance", "prod", "loss"):
            add_var(block, name, None, "float64")
        a = dict(attrs, data_layout=layout)
        add_op(block, "batch_norm",
               {"X": ["x"], "Scale": ["scale"], "Bias": ["bias"], "Mean": ["mean"],
                "Variance": ["variance"]},
               {"Y": ["y"], "MeanOut": ["mean"], "VarianceOut": ["variance"],
                "SavedMean": ["saved_mean"], "SavedVariance": ["saved_variance"]}, a)
        add_op(block, "elementwise_mul", {"X": ["y"], "Y": ["w"]}, {"Out": ["prod"]})
        add_op(block, "reduce_sum", {"X": ["prod"]}, {"Out": ["loss"]}, {"reduce_all": True})
        scope = Scope()
        for name, slot in (("scale", "Scale"), ("bias", "Bias"), ("mean", "Mean"),
                           ("variance", "Variance")):
            scope.var(name).get_tensor().set(i[slot].copy())
        ref = bn_reference(i, dict(a, momentum=float(np.float32(a["momentum"]))))
        return ProgramCase(desc, "loss", {"x": i["X"], "w": w}, scope,
                           {"y": ref["Y"], "mean": ref["MeanOut"], "variance": ref["VarianceOut"]},
                           ["x", "scale", "bias"])
    return OpCase("batch_norm", {}, program=build, name=f"program_{layout.lower()}",
                  check_shapes=False)


CASES += [_bn_program(), _bn_program("NHWC", (2, 2, 2, 3))]
# TestBatchNormOpTrainingMomentumVariable: MomentumTensor given (Paddle 3.3.1's kernels
# do not read it: a [0.7] tensor with momentum=0.9 updates with 0.9).
_mt = _bn_inputs([2, 3, 2, 2])
_mt["MomentumTensor"] = np.array([0.7])
CASES.append(OpCase("batch_norm", _mt, bn_reference, attrs=TRAIN, name="momentum_tensor",
                    grad=("X", "Scale", "Bias"), grad_outputs=("Y",)))


# ----------------------------------------------------------------- layer_norm
def ln_reference(i, a):
    x, begin, eps = i["X"], a.get("begin_norm_axis", 1), a.get("epsilon", 1e-5)
    left = int(np.prod(x.shape[:begin]))
    rows = x.reshape(left, -1)
    y, mean, var = np.empty_like(rows), np.empty(left, x.dtype), np.empty(left, x.dtype)
    for r in range(left):
        mean[r] = rows[r].mean()
        var[r] = ((rows[r] - mean[r]) ** 2).mean()
        y[r] = (rows[r] - mean[r]) / np.sqrt(var[r] + eps)
        if i.get("Scale") is not None:
            y[r] = y[r] * i["Scale"]
        if i.get("Bias") is not None:
            y[r] = y[r] + i["Bias"]
    lead = x.shape[:begin]
    return {"Y": y.reshape(x.shape), "Mean": mean.reshape(lead), "Variance": var.reshape(lead)}


def _ln(name, shape, begin, scale=True, bias=True, dtype=np.float64, grad="auto"):
    d = int(np.prod(shape[begin:]))
    ins = {"X": _f(*shape, dtype=dtype)}
    if scale:
        ins["Scale"] = _f(d, dtype=dtype, low=0.5, high=1.5)
    if bias:
        ins["Bias"] = _f(d, dtype=dtype)
    tol = {} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    return OpCase("layer_norm", ins, ln_reference, attrs={"begin_norm_axis": begin,
                                                          "epsilon": 1e-5},
                  name=name, grad=grad if dtype == np.float64 else (), **tol)


CASES += [
    # TestLayerNormOpByOpTest and its FP64/FP32 cases: [2, 6, 6, 3], scale/bias on or off.
    _ln("paddle_2x6x6x3", [2, 6, 6, 3], 1, grad=()),
    _ln("paddle_2x6x6x3_f32", [2, 6, 6, 3], 1, dtype=np.float32),
    _ln("paddle_2x6x6x3_no_scale", [2, 6, 6, 3], 1, scale=False, grad=()),
    _ln("paddle_2x3_f32", [2, 3], 1, dtype=np.float32),
    # TestLayerNormOp: [2, 3, 4, 5] at begin_norm_axis 1 and 3, [1, 3, 4, 5].
    _ln("axis3", [2, 3, 4, 5], 3),
    _ln("axis1", [2, 3, 2, 2], 1),
    _ln("batch1", [1, 3, 2, 2], 1),
    _ln("no_scale", [2, 3, 2, 2], 2, scale=False),
    _ln("no_bias", [2, 3, 2, 2], 2, bias=False),
    _ln("no_scale_no_bias", [2, 3, 4], 1, scale=False, bias=False),
]


# ------------------------------------------------- instance_norm / group_norm
def gn_reference(i, a, groups=None, inverse=False):
    """Per (sample, group) normalisation with per-channel scale and bias."""
    x, eps = i["X"], a.get("epsilon", 1e-5)
    last = a.get("data_layout", "NCHW") in LAST
    xc = np.moveaxis(x, -1, 1) if last else x
    n, c = xc.shape[:2]
    groups = groups or a["groups"]
    y, mean, var = np.empty_like(xc), np.empty((n, groups)), np.empty((n, groups))
    size = c // groups
    for s in range(n):
        for g in range(groups):
            block = xc[s, g * size:(g + 1) * size]
            mean[s, g] = block.mean()
            var[s, g] = ((block - mean[s, g]) ** 2).mean()
            y[s, g * size:(g + 1) * size] = (block - mean[s, g]) / np.sqrt(var[s, g] + eps)
    for ch in range(c):
        if i.get("Scale") is not None:
            y[:, ch] *= i["Scale"][ch]
        if i.get("Bias") is not None:
            y[:, ch] += i["Bias"][ch]
    y = np.moveaxis(y, 1, -1) if last else y
    if inverse:  # instance_norm keeps 1 / sqrt(var + epsilon), flattened to [N * C]
        return {"Y": y, "SavedMean": mean.reshape(-1), "SavedVariance": 1 / np.sqrt(var + eps).reshape(-1)}
    return {"Y": y, "Mean": mean, "Variance": var}


def in_reference(i, a):
    return gn_reference(i, a, groups=i["X"].shape[1], inverse=True)


def _affine_inputs(shape, c, scale=True, bias=True, dtype=np.float64):
    ins = {"X": _f(*shape, dtype=dtype)}
    if scale:
        ins["Scale"] = _f(c, dtype=dtype, low=0.5, high=1.5)
    if bias:
        ins["Bias"] = _f(c, dtype=dtype)
    return ins


def _in(name, shape, grad="auto", dtype=np.float64, eps=1e-5, **kw):
    tol = {} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    return OpCase("instance_norm", _affine_inputs(shape, shape[1], dtype=dtype, **kw),
                  in_reference, attrs={"epsilon": eps}, name=name,
                  grad=grad if dtype == np.float64 else (), **tol)


def _gn(name, shape, groups, layout="NCHW", grad="auto", dtype=np.float64, eps=1e-5, **kw):
    c = shape[-1] if layout in LAST else shape[1]
    tol = {} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    return OpCase("group_norm", _affine_inputs(shape, c, dtype=dtype, **kw), gn_reference,
                  attrs={"epsilon": eps, "groups": groups, "data_layout": layout}, name=name,
                  grad=grad if dtype == np.float64 else (), **tol)


CASES += [
    # test_instance_norm_op.py: [2, 3, 4, 5] float32/float64, 5-D, no scale/bias.
    _in("paddle_2x3x4x5_f32", [2, 3, 4, 5], dtype=np.float32),
    _in("nchw", [2, 3, 2, 3]),
    _in("ncdhw", [2, 2, 2, 2, 2]),
    _in("no_scale_bias", [2, 3, 2, 2], scale=False, bias=False),
    _in("ncl_eps", [2, 3, 4], eps=0.5),
    # test_group_norm_op.py: groups 1, 2, 4, big epsilon, NHWC (channel counts shrunk).
    _gn("paddle_groups2_f32", [2, 8, 3, 5], 2, dtype=np.float32),
    _gn("groups2", [2, 4, 2, 3], 2),
    _gn("groups1", [2, 4, 2, 2], 1),
    _gn("groups4", [2, 4, 2, 2], 4, eps=0.5),
    _gn("nhwc", [2, 2, 3, 4], 2, layout="NHWC"),
    _gn("no_scale_bias", [2, 4, 3], 2, scale=False, bias=False),
    _gn("only_scale", [2, 6, 2], 3, bias=False),
]

NOT_PORTED = {
    "TestFP16BatchNormOpInference": "float16 on a CUDA place",
    "TestBF16BatchNormOpInference": "bfloat16 on a CUDA place",
    "TestBatchNormOpTrainingCase2": "sets FLAGS_cudnn_batchnorm_spatial_persistent (cuDNN only); "
                                    "its numbers are TestBatchNormOpTraining's",
    "TestBatchNormOpError / TestDygraphBatchNormAPIError / TestDygraphBatchNormTrainableStats":
        "Python-layer (dygraph / paddle.static.nn) API errors, not the op",
    "TestBatchNormChannelLast / TestBatchNormUseGlobalStats": "dygraph nn.BatchNorm layers; "
        "their NHWC and use_global_stats settings are covered by the op cases above",
    "TestLayerNormBF16OpByOpTest (+ _case2-4)": "bfloat16 on a CUDA place",
    "TestLayerNormOp shapes [92, 513, 1134], [512, 1024], [1, 128, 256, 256], ...":
        "large-shape kernel selection tests; the same settings run here on small shapes",
    "TestLayerNormAPI / TestDygraphLayerNormAPIError": "Python-layer API",
    "TestFP16ScaleBiasLayerNorm / TestBF16ScaleBiasLayerNorm / TestFastMathLayerNormOp":
        "float16/bfloat16 on CUDA",
    "TestGetSetKeepLayerNormScaleBiasFP32Flag": "AMP flag, no op",
    "TestInstanceNormOpFP16 / TestInstanceNormBF16Op": "float16/bfloat16 on CUDA",
    "TestGroupNormFP16Op* / TestGroupNormBF16Op*": "float16/bfloat16",
    "TestGroupNormOpLargeData(_DataLayout)": "shape (2, 32, 64, 64): too slow for a float64 "
                                              "gradient check; same settings run smaller",
    "TestGroupNormException / TestGroupNormAPI*": "Python-layer API errors",
}
