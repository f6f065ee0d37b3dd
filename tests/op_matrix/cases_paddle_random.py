"""Paddle's OpTests of dropout, uniform_random and gaussian_random, ported
(PaddlePaddle/Paddle test/legacy_test/test_dropout_op.py, test_uniform_random_op.py,
test_gaussian_random_op.py).

dropout: Paddle's deterministic configurations (p = 0 and p = 1 in training, is_test
in both implementations, a Seed input) with their exact outputs; X shapes reduced
(32 x 64 -> 4 x 8, 2000 -> 50) for the float64 gradient twin. Random masks are
checked by their properties (keep rate, Out = X * mask * scale). fix_seed/seed, extra
attributes in Paddle 3.3.1, fix the mask as in Paddle (checked against Paddle 3.3.1:
the same nonzero seed repeats the mask, another seed changes it, the Seed input wins
over the attribute, seed 0 does not repeat).
uniform_random/gaussian_random: Paddle's shapes, attributes and shape inputs; Paddle's
histogram checks (10 bins, atol 0.01) against the exact bin probabilities.

The deterministic dropout cases match Paddle 3.3.1 (static, CPU) exactly except
downgrade_in_infer's scale, which Paddle rounds as float32 (1 - p): 5e-8 relative.
"""
import math

import numpy as np

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(1418)

NOT_PORTED = {
    "TestFP16DropoutOp": "float16 on CUDA only", "TestFP16DropoutOp2": "float16 on CUDA only",
    "TestBF16DropoutOp": "bfloat16: fluidscope has no bfloat16",
    "TestDropoutOpWithSeedOnCPUPlace": "needs the 'seed' op (not a fluidscope op); the same "
                                       "p=0 dropout with a Seed input is TestDropoutOpWithSeed",
    "TestDropoutOpError": "Python API type checks",
    "TestDropoutFAPI": "Python API; its op-level configurations (p=0/1, both implementations, "
                       "train/test) are the TestDropoutOp* cases; axis= builds other ops",
    "TestDropoutFAPIError": "Python API argument checks",
    "TestDropoutCAPI": "dygraph nn.Dropout",
    "TestDropout2DFAPI and the file's later classes": "Python/dygraph APIs (dropout2d/3d, "
        "alpha_dropout, prim decompositions, GPU random values)",
    "TestUniformRandomFP16Op": "float16 on CUDA only",
    "TestUniformRandomBF16Op": "bfloat16: fluidscope has no bfloat16",
    "TestUniformRandomOpError": "Python API type checks",
    "TestUniformRandomOpSelectedRows": "Out as SelectedRows",
    "TestUniformRandomOpSelectedRowsWithDiagInit": "Out as SelectedRows",
    "TestUniformRandomOpSelectedRowsShapeTensor": "Out as SelectedRows",
    "TestUniformRandomOpSelectedRowsShapeTensorList": "Out as SelectedRows",
    "TestUniformRandomOpApi": "Python initializer API (its diag init is ported as "
                              "TestUniformRandomOpWithDiagInit)",
    "TestUniformRandomOp_attr_tensor_API": "Python API building fill_constant + uniform_random",
    "TestUniformRandomDygraphMode and later classes": "dygraph API",
    "TestGaussianRandomFP16Op": "float16 on CUDA only",
    "TestGaussianRandomBF16Op": "bfloat16, CUDA only",
    "TestGaussianRandomAPI.test_default_dtype": "Python default-dtype API",
    "TestStandardNormalDtype": "Python API dtypes (complex)",
    "TestComplexRandnAPI": "complex dtypes",
    "TestRandomValue": "fixed values of CUDA's Philox generator on a V100",
}


# --------------------------------------------------------------------- dropout
def _dropout_det(out_value, mask_value):
    """Reference for Paddle's deterministic dropout cases."""
    def ref(i, a):
        x = i["X"]
        out = {"Out": (x if out_value == "x" else x * out_value).astype(x.dtype)}
        if mask_value is not None:
            out["Mask"] = np.full(x.shape, mask_value, np.uint8)
        return out
    return ref


def _dropout(name, shape, attrs, out_value, mask_value, seed=None):
    inputs = {"X": rng.random(shape)}
    if seed is not None:
        inputs["Seed"] = np.asarray([seed], np.int32)
    return port("dropout", name, inputs, _dropout_det(out_value, mask_value), dtype="float32",
                attrs=attrs)


TRAIN = {"fix_seed": True, "is_test": False}
UP = {"dropout_implementation": "upscale_in_train"}
CASES = []
CASES += _dropout("TestDropoutOp", (4, 8), dict(TRAIN, dropout_prob=0.0), "x", 1)
CASES += _dropout("TestDropoutOp_ZeroDim", (), dict(TRAIN, dropout_prob=0.0), "x", 1)
CASES += _dropout("TestDropoutOpInput1d", (50,), dict(TRAIN, dropout_prob=0.0), "x", 1)
CASES += _dropout("TestDropoutOp2", (4, 8), dict(TRAIN, dropout_prob=1.0), 0.0, 0)
CASES += _dropout("TestDropoutOp2_ZeroDim", (), dict(TRAIN, dropout_prob=1.0), 0.0, 0)
CASES += _dropout("TestDropoutOp3", (4, 8, 2), dict(TRAIN, dropout_prob=0.0), "x", 1)
CASES += _dropout("TestDropoutOp4", (4, 8), {"dropout_prob": 0.35, "fix_seed": True,
                                             "is_test": True}, 1 - np.float32(0.35), None)
CASES += _dropout("TestDropoutOp5", (4, 8, 3), {"dropout_prob": 0.75, "is_test": True},
                  0.25, None)
CASES += _dropout("TestDropoutOp6", (4, 8), dict(TRAIN, dropout_prob=1.0, **UP), 0.0, 0)
CASES += _dropout("TestDropoutOp7", (4, 8, 2), dict(TRAIN, dropout_prob=0.0, **UP), "x", 1)
CASES += _dropout("TestDropoutOp8", (4, 8), dict(dropout_prob=0.35, fix_seed=True,
                                                 is_test=True, **UP), "x", None)
CASES += _dropout("TestDropoutOp9", (4, 8, 3), dict(dropout_prob=0.75, is_test=True, **UP),
                  "x", None)
CASES += _dropout("TestDropoutOpWithSeed", (4, 8), {"dropout_prob": 0.0}, "x", 1, seed=125)


def _check_fixed_seed(outs, i, a):
    """fix_seed + a nonzero seed: the same mask every run (Paddle 3.3.1); another seed
    another mask; the Seed input wins over the attribute; Out = X * mask (* scale)."""
    again = run_op("dropout", i, a)
    np.testing.assert_array_equal(outs["Mask"], again["Mask"])
    other = run_op("dropout", i, dict(a, seed=a["seed"] + 1))
    assert not np.array_equal(outs["Mask"], other["Mask"])
    by_input = run_op("dropout", dict(i, Seed=np.array([9], np.int32)), a)["Mask"]
    by_input_other_attr = run_op("dropout", dict(i, Seed=np.array([9], np.int32)),
                                 dict(a, seed=77))["Mask"]
    np.testing.assert_array_equal(by_input, by_input_other_attr)
    scale = 1 / (1 - a["dropout_prob"]) if a.get("dropout_implementation") else 1.0
    np.testing.assert_allclose(outs["Out"], i["X"] * outs["Mask"] * scale, rtol=1e-6)
    keep = outs["Mask"].mean()
    assert abs(keep - (1 - a["dropout_prob"])) < 5 * math.sqrt(0.25 / outs["Mask"].size)


# Regression: fix_seed/seed were ignored (a fresh mask each run). The gradient check
# passes only with a fixed mask: each central difference re-runs the op.
CASES += [
    OpCase("dropout", {"X": rng.random((20, 30))}, None, check=_check_fixed_seed,
           attrs={"dropout_prob": 0.5, "fix_seed": True, "seed": 5}, name="fix_seed_attr"),
    OpCase("dropout", {"X": rng.random((3, 4))}, None, check=_check_fixed_seed,
           attrs={"dropout_prob": 0.4, "fix_seed": True, "seed": 11, **UP},
           name="fix_seed_attr_upscale"),
]


def _check_fapi_p07(outs, i, a):
    """TestDropoutFAPI res13 (p=0.7, upscale, on ones): kept values are 1/0.3."""
    out, mask = outs["Out"], outs["Mask"]
    np.testing.assert_allclose(out[mask == 1], 1 / np.float32(0.3), rtol=1e-6)
    assert (out[mask == 0] == 0).all()
    assert abs(mask.mean() - 0.3) < 5 * math.sqrt(0.21 / mask.size)


CASES.append(OpCase("dropout", {"X": np.ones((40, 40), np.float32)}, None, grad=(),
                    check=_check_fapi_p07, attrs={"dropout_prob": 0.7, **UP},
                    name="paddle_TestDropoutFAPI_p07_upscale"))


# -------------------------------------------------------------- uniform_random
def _uniform_hist(lo=-5.0, hi=10.0, diag=0):
    """Paddle's output_hist: 10 equal bins over [min, max), each ~0.1 (atol 0.01); with
    a diagonal init, the diagonal is diag_val and left out."""
    def check(outs, i, a):
        out = np.array(outs["Out"], dtype=np.float64)
        assert out.dtype == np.float64 and outs["Out"].dtype == np.float32
        if diag:
            idx = np.arange(diag)
            np.testing.assert_array_equal(out[idx, idx], 1.0)
            out[idx, idx] = 100.0
        assert out[out < 100].min() >= lo and out[out < 100].max() < hi
        hist, _ = np.histogram(out, range=(lo, hi))
        np.testing.assert_allclose(hist / out.size, np.full(10, 0.1), rtol=0, atol=0.01)
        assert out.shape == (1000, 784)
    return check


U_ATTRS = {"min": -5.0, "max": 10.0, "seed": 10}
U_LIST = [np.array([1000], np.int64), np.array([784], np.int64)]
CASES += [
    OpCase("uniform_random", {"ShapeTensorList": U_LIST}, None, attrs=U_ATTRS, grad=(),
           check=_uniform_hist(), name="paddle_TestUniformRandomOp_attr_tensorlist"),
    OpCase("uniform_random", {"ShapeTensorList": U_LIST}, None, grad=(),
           attrs={"min": -5, "max": 10, "seed": 10}, check=_uniform_hist(),
           name="paddle_TestMaxMinAreInt"),
    OpCase("uniform_random", {"ShapeTensorList": [v.astype(np.int32) for v in U_LIST]}, None,
           attrs=U_ATTRS, grad=(), check=_uniform_hist(),
           name="paddle_TestUniformRandomOp_attr_tensorlist_int32"),
    OpCase("uniform_random", {"ShapeTensor": np.array([1000, 784], np.int64)}, None,
           attrs=U_ATTRS, grad=(), check=_uniform_hist(),
           name="paddle_TestUniformRandomOp_attr_tensor"),
    OpCase("uniform_random", {"ShapeTensor": np.array([1000, 784], np.int32)}, None,
           attrs=U_ATTRS, grad=(), check=_uniform_hist(),
           name="paddle_TestUniformRandomOp_attr_tensor_int32"),
    OpCase("uniform_random", {}, None, grad=(), check=_uniform_hist(),
           attrs={"shape": [1000, 784], "min": -5.0, "max": 10.0, "dtype": pb.VarType.FP32},
           name="paddle_TestUniformRandomOp"),
    OpCase("uniform_random", {}, None, grad=(), check=_uniform_hist(diag=784),
           attrs={"shape": [1000, 784], "min": -5.0, "max": 10.0, "seed": 10,
                  "diag_num": 784, "diag_step": 784, "diag_val": 1.0},
           name="paddle_TestUniformRandomOpWithDiagInit"),
]


def _check_same_seed_same_values(outs, i, a):
    """TestUniformRandomOp_API_seed: two ops with seed 10 give equal values in [5, 10)."""
    np.testing.assert_array_equal(outs["Out"], run_op("uniform_random", i, a)["Out"])
    assert outs["Out"].min() >= 5 and outs["Out"].max() < 10


CASES.append(OpCase("uniform_random", {}, None, grad=(), check=_check_same_seed_same_values,
                    attrs={"shape": [2, 3, 2], "min": 5.0, "max": 10.0, "seed": 10},
                    name="paddle_TestUniformRandomOp_API_seed"))


# ------------------------------------------------------------- gaussian_random
def _normal_cdf(x, mean, std):
    return 0.5 * (1 + math.erf((x - mean) / (std * math.sqrt(2))))


def _gaussian_hist(shape=(123, 92), lo=-3.0, hi=5.0):
    """Paddle's check: the histogram over [-3, 5) (10 bins) within 0.01 of N(mean, std)'s;
    here against the exact bin probabilities instead of a second sample."""
    def check(outs, i, a):
        out = outs["Out"]
        assert out.shape == shape and out.dtype == np.float32
        hist, edges = np.histogram(out, range=(lo, hi))
        mean, std = float(a["mean"]), float(a["std"])
        expected = [_normal_cdf(b, mean, std) - _normal_cdf(e, mean, std)
                    for e, b in zip(edges, edges[1:])]
        np.testing.assert_allclose(hist / out.size, expected, rtol=0, atol=0.01)
    return check


def _check_api_moments(outs, i, a):
    """TestGaussianRandomAPI: [2000, 500], mean 0 and std 1 within 0.1."""
    out = outs["Out"]
    assert out.shape == (2000, 500)
    assert abs(out.mean()) < 0.1 and abs(out.std() - 1) < 0.1


G_ATTRS = {"mean": 1.0, "std": 2.0, "seed": 10, "use_mkldnn": False}
G_LIST = [np.array([123], np.int32), np.array([92], np.int32)]
CASES += [
    OpCase("gaussian_random", {}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[123, 92]), name="paddle_TestGaussianRandomOp"),
    OpCase("gaussian_random", {}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[123, 92], mean=1, std=2), name="paddle_TestMeanStdAreInt"),
    # the shape attribute holds -1 where ShapeTensorList gives the size
    OpCase("gaussian_random", {"ShapeTensorList": G_LIST}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[-1, 92]),
           name="paddle_TestGaussianRandomOp_ShapeTensorList"),
    OpCase("gaussian_random", {"ShapeTensorList": G_LIST}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[-1, -1]),
           name="paddle_TestGaussianRandomOp2_ShapeTensorList"),
    OpCase("gaussian_random", {"ShapeTensorList": G_LIST}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[123, -1], use_mkldnn=True),
           name="paddle_TestGaussianRandomOp3_ShapeTensorList"),
    OpCase("gaussian_random", {"ShapeTensorList": G_LIST}, None, grad=(), check=_gaussian_hist(),
           attrs=dict(G_ATTRS, shape=[123, -1]),
           name="paddle_TestGaussianRandomOp4_ShapeTensorList"),
    OpCase("gaussian_random", {"ShapeTensor": np.array([123, 92], np.int32)}, None, grad=(),
           check=_gaussian_hist(), attrs=G_ATTRS,
           name="paddle_TestGaussianRandomOp1_ShapeTensor"),
    OpCase("gaussian_random", {}, None, grad=(), check=_check_api_moments,
           attrs={"shape": [2000, 500], "mean": 0.0, "std": 1.0, "seed": 10},
           name="paddle_TestGaussianRandomAPI_attr_shape"),
    OpCase("gaussian_random", {"ShapeTensorList": [np.array([2000], np.int64),
                                                   np.array([500], np.int32)]}, None, grad=(),
           check=_check_api_moments, attrs={"mean": 0.0, "std": 1.0, "seed": 10},
           name="paddle_TestGaussianRandomAPI_mixed_shape_list"),
    OpCase("gaussian_random", {"ShapeTensor": np.array([2000, 500], np.int64)}, None, grad=(),
           check=_check_api_moments, attrs={"mean": 0.0, "std": 1.0, "seed": 10},
           name="paddle_TestGaussianRandomAPI_shape_tensor_int64"),
]


# Regressions (Paddle 3.3.1 itself): uniform_random and gaussian_random read ShapeTensor
# only when the shape attribute is empty (fluidscope let ShapeTensor win over a full
# attribute); ShapeTensorList wins over both; shape inference keeps the attribute's
# known dims next to a ShapeTensorList (it gave all -1).
def _check_shape(expected):
    def check(outs, i, a):
        assert outs["Out"].shape == expected, outs["Out"].shape
    return check


def _infer_keeps_dims(outs, i, a):
    from fluidscope.engine.autodiff.gradcheck import build_single_op
    assert outs["Out"].shape == (4, 5)
    assert list(build_single_op("gaussian_random", i, a)[3]["Out"][0].shape) == [-1, 5]


_ST, _STL = np.array([2, 3], np.int32), [np.array([4], np.int32), np.array([5], np.int32)]
for _op in ("uniform_random", "gaussian_random"):
    CASES += [
        OpCase(_op, {"ShapeTensor": _ST}, None, attrs={"shape": [6, 7], "seed": 1}, grad=(),
               check=_check_shape((6, 7)), name="full_shape_attr_over_shape_tensor"),
        OpCase(_op, {"ShapeTensor": _ST}, None, attrs={"shape": [], "seed": 1}, grad=(),
               check=_check_shape((2, 3)), name="shape_tensor_when_attr_empty"),
        OpCase(_op, {"ShapeTensor": _ST, "ShapeTensorList": _STL}, None, grad=(),
               attrs={"shape": [6, 7], "seed": 1}, check=_check_shape((4, 5)),
               name="shape_tensor_list_first"),
    ]
CASES.append(OpCase("gaussian_random", {"ShapeTensorList": _STL}, None, grad=(),
                    attrs={"shape": [-1, 5], "seed": 1},
                    check=_infer_keeps_dims,
                    name="infer_keeps_known_dims"))
