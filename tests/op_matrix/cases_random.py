"""Cases for random ops (kernels/random_ops.py): uniform_random, gaussian_random, dropout.

Random outputs have no reference; their ``check`` asserts shape, dtype, range,
moments within a few standard errors, and that a nonzero seed repeats its values.
Dropout's gradient is checked by central differences with a fixed ``Seed`` input (the
same mask on every evaluation), with p = 0, and in test mode.
"""
import numpy as np

from fluidscope.engine import random as fr
from fluidscope.engine.autodiff.gradcheck import analytic_grads, run_op
from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase

rng = np.random.default_rng(14)
X = rng.standard_normal((4, 5))
BIG = rng.uniform(0.5, 1.5, (200, 100))
SEED = np.array([7], np.int32)
FP32, FP64 = pb.VarType.FP32, pb.VarType.FP64


def _check_uniform(outs, i, a):
    out = outs["Out"]
    assert out.shape == tuple(a["shape"]) and out.dtype == np.float32
    low, high = a["min"], a["max"]
    assert out.min() >= low and out.max() < high
    # mean of U(low, high): (low+high)/2 with standard error (high-low)/sqrt(12 n)
    tol = 5 * (high - low) / np.sqrt(12 * out.size)
    assert abs(out.mean() - (low + high) / 2) < tol
    again = run_op("uniform_random", i, a)["Out"]
    np.testing.assert_array_equal(out, again)  # seed 1234 repeats itself


def _check_uniform_global_seed(outs, i, a):
    fr.seed(5)
    first = run_op("uniform_random", i, a)["Out"]
    second = run_op("uniform_random", i, a)["Out"]
    fr.seed(5)
    again = run_op("uniform_random", i, a)["Out"]
    assert not np.array_equal(first, second), "the shared generator must advance"
    np.testing.assert_array_equal(first, again)
    assert outs["Out"].dtype == np.float64 and outs["Out"].shape == (3, 4)


def _check_diag(outs, i, a):
    out = outs["Out"]
    np.testing.assert_array_equal(np.diag(out), np.full(4, 2.0, np.float32))
    off = out[~np.eye(4, dtype=bool)]
    assert off.min() >= 0.0 and off.max() < 1.0


def _check_gaussian(outs, i, a):
    out = outs["Out"]
    assert out.shape == tuple(a["shape"]) and out.dtype == np.float32
    n = out.size
    assert abs(out.mean() - a["mean"]) < 5 * a["std"] / np.sqrt(n)
    assert abs(out.std() - a["std"]) < 5 * a["std"] / np.sqrt(2 * n)
    np.testing.assert_array_equal(out, run_op("gaussian_random", i, a)["Out"])


def _check_shape_tensor(outs, i, a):
    assert outs["Out"].shape == (2, 3, 5) and outs["Out"].dtype == np.float64


def _seeded_keep(i, a):
    """The mask a fixed Seed stands for, made here rather than read from the op: a fresh
    numpy generator seeded with it (engine/random.py's contract for a nonzero op seed)
    keeps an element when its float32 uniform draw is at least dropout_prob."""
    draw = np.random.default_rng(int(i["Seed"].reshape(-1)[0])).random(i["X"].shape,
                                                                      dtype=np.float32)
    return draw >= a["dropout_prob"]


def _check_dropout_train(outs, i, a):
    p = a["dropout_prob"]
    out, mask = outs["Out"], outs["Mask"]
    assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 1}
    # which elements were kept, from Out alone (X has no zeros): the Mask must say the same
    assert np.all(i["X"] != 0)
    kept = out != 0
    np.testing.assert_array_equal(mask, kept.astype(np.uint8))
    # ... and it is the mask the fixed Seed stands for, drawn independently of the op
    np.testing.assert_array_equal(kept, _seeded_keep(i, a))
    np.testing.assert_array_equal(run_op("dropout", i, a)["Out"], out)  # the seed repeats
    keep_rate = kept.mean()
    assert abs(keep_rate - (1 - p)) < 5 * np.sqrt(p * (1 - p) / kept.size)
    scale = 1 / (1 - p) if a.get("dropout_implementation") == "upscale_in_train" else 1.0
    np.testing.assert_allclose(out, i["X"] * kept * scale, rtol=1e-6)  # p is a float32 attr
    # the gradient is dout * keep (* scale); central differences check it too (the cases
    # with a gradient check), the fixed Seed giving the same mask on every evaluation
    dout = rng.standard_normal(out.shape)
    dx = analytic_grads("dropout", i, a, {"Out": dout}, ["X"])["X"]
    np.testing.assert_allclose(dx, dout * kept * scale, rtol=1e-6)


def _check_dropout_float32(outs, i, a):
    out, mask = outs["Out"], outs["Mask"]
    assert out.dtype == np.float32
    kept = out != 0  # X in [0.5, 1.5]: a zero in Out is a dropped element
    np.testing.assert_array_equal(mask, kept.astype(np.uint8))
    np.testing.assert_array_equal(out[kept], i["X"][kept])  # downgrade_in_infer: no scale
    assert abs(kept.mean() - 0.8) < 5 * np.sqrt(0.2 * 0.8 / kept.size)


def _check_no_mask(outs, i, a):
    assert outs["Mask"] is None  # Paddle leaves Mask unset in test mode too


def _dropout_test_ref(i, a):
    if a.get("dropout_implementation") == "upscale_in_train":
        return i["X"]
    return i["X"] * (1 - a["dropout_prob"])


CASES = [
    OpCase("uniform_random", {}, None, grad=(), check=_check_uniform,
           attrs={"shape": [300, 200], "min": -2.0, "max": 3.0, "seed": 1234, "dtype": FP32}),
    OpCase("uniform_random", {}, None, grad=(), check=_check_uniform_global_seed,
           attrs={"shape": [3, 4], "dtype": FP64}, name="global_seed"),
    OpCase("uniform_random", {}, None, grad=(), check=_check_diag, name="diag",
           attrs={"shape": [4, 4], "min": 0.0, "max": 1.0, "seed": 3, "diag_num": 4,
                  "diag_step": 4, "diag_val": 2.0}),
    OpCase("uniform_random", {"ShapeTensor": np.array([2, 3, 5], np.int64)}, None, grad=(),
           check=_check_shape_tensor, attrs={"dtype": FP64, "seed": 9}, name="shape_tensor"),
    OpCase("gaussian_random", {}, None, grad=(), check=_check_gaussian,
           attrs={"shape": [400, 250], "mean": 1.5, "std": 0.5, "seed": 42}),
    OpCase("gaussian_random",
           {"ShapeTensorList": [np.array([2], np.int32), np.array([3], np.int32),
                                np.array([5], np.int32)]},
           None, grad=(), check=_check_shape_tensor, attrs={"dtype": FP64, "seed": 2},
           name="shape_tensor_list"),
    # gradient checks: a fixed Seed gives the same mask on every evaluation
    OpCase("dropout", {"X": X, "Seed": SEED}, None, check=_check_dropout_train,
           name="seeded_upscale",
           attrs={"dropout_prob": 0.4, "dropout_implementation": "upscale_in_train"}),
    OpCase("dropout", {"X": X, "Seed": SEED}, None, check=_check_dropout_train,
           name="seeded_downgrade",
           attrs={"dropout_prob": 0.4}),
    OpCase("dropout", {"X": X}, lambda i, a: {"Out": i["X"], "Mask": np.ones(X.shape, np.uint8)},
           attrs={"dropout_prob": 0.0}, name="p0"),
    # test mode: Mask is declared (inferred) but not produced, so no shape comparison
    OpCase("dropout", {"X": X}, _dropout_test_ref, attrs={"dropout_prob": 0.3, "is_test": True},
           check=_check_no_mask, check_shapes=False, name="test_downgrade"),
    OpCase("dropout", {"X": X}, _dropout_test_ref, name="test_upscale",
           check=_check_no_mask, check_shapes=False,
           attrs={"dropout_prob": 0.3, "is_test": True,
                  "dropout_implementation": "upscale_in_train"}),
    # statistics of the mask and the grad = dout * mask * scale identity
    OpCase("dropout", {"X": BIG, "Seed": SEED}, None, grad=(), check=_check_dropout_train,
           attrs={"dropout_prob": 0.3, "dropout_implementation": "upscale_in_train"},
           name="mask_rate_upscale"),
    OpCase("dropout", {"X": BIG, "Seed": SEED}, None, grad=(), check=_check_dropout_train,
           attrs={"dropout_prob": 0.6, "dropout_implementation": "downgrade_in_infer"},
           name="mask_rate_downgrade"),
    OpCase("dropout", {"X": BIG.astype(np.float32)}, None, grad=(),
           check=_check_dropout_float32, attrs={"dropout_prob": 0.2}, name="float32_unseeded"),
]
