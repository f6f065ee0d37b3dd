"""Cases for element-wise binary ops, scale, clip and clip_by_norm (kernels/elementwise.py).

Ported from Paddle's test/legacy_test/test_elementwise_{max,min,pow}_op.py,
test_scale_op.py and test_clip_op.py (shapes shrunk so the float64 gradient check stays
fast). Every case of the new ops (max, min, pow, mod, floordiv, clip, clip_by_norm, scale
with ScaleTensor) also matched PaddlePaddle 3.3.1 (legacy static executor, gradients from
``paddle.static.gradients``; remainder_grad from dygraph, 3.3.1's legacy executor has no
kernel for it) on the same inputs: float64 to 1e-10 relative, float32 to 1e-5, ties and
clip bounds included. Where we differ from Paddle 3.3.1, on purpose:
- scale with BiasTensor: Paddle's gradient scale op is handed the forward BiasTensor too,
  so its dX = scale * dOut + bias; ours is scale * dOut.
- max/min/pow gradients with axis != -1 fail in Paddle 3.3.1 (its grad kernels broadcast
  with axis -1); ours honour axis like the forward.
- clip_by_norm: Paddle registers float16/float32 kernels only; ours takes float64 too.
"""
import numpy as np

from fluidscope.engine.autodiff.gradcheck import analytic_grads

from . import OpCase

rng = np.random.default_rng(1)
X = rng.standard_normal((2, 3, 4))
Y_MID = rng.standard_normal(3)
Y_TAIL = rng.standard_normal((3, 4))
POS = rng.uniform(0.5, 2.0, (3, 4))

NOT_PORTED = {
    "TestElementwiseFP16Op": "float16 (all *FP16* classes): fluidscope's kernels run float32/64",
    "TestElementwiseBF16Op": "bfloat16 (all *BF16* classes): no bfloat16 in numpy",
    "TestElementwisePowOpFP16": "float16", "TestElementwisePowBF16Op": "bfloat16",
    "TestElementwisePowGradOpInt": "integer gradients: fluidscope differentiates floats only",
    "TestScaleOpSelectedRows": "SelectedRows are not supported",
    "TestScaleFp16Op": "float16", "TestScaleBF16Op": "bfloat16",
    "TestScaleDoubleGradCheck": "double/triple grad: no higher-order gradients",
    "TestScaleTripleGradCheck": "double/triple grad: no higher-order gradients",
    "TestScaleRaiseError": "Python API type check (paddle.scale([10]))",
    "TestClipOpError": "Python API type check", "TestClipAPI": "Python/dygraph API",
    "TestFP16Case1": "float16 (TestFP16Case1..6)", "TestClipBF16Op": "bfloat16 (TestBF16Case*)",
    "TestCase_ZeroSize": "zero-size tensors are not fed by the op matrix",
}


def _mid(y):
    return y.reshape(1, 3, 1)


def _apart(shape, lo=0.1, hi=1.0):
    """(x, y) with |x - y| >= 0.1 everywhere, Paddle's recipe for max/min away from ties."""
    x = rng.uniform(lo, hi, shape)
    return x, x + rng.choice([-1, 1], shape) * rng.uniform(0.1, 1, shape)


def _maximum(i, a):
    return np.maximum(i["X"], i["Y"])


def _minimum(i, a):
    return np.minimum(i["X"], i["Y"])


def _power(i, a):
    return np.power(i["X"], i["Y"])


def _max_min_cases(op, ref):
    same = _apart((3, 5))
    vec = _apart((10,))
    x4 = rng.uniform(0.5, 1, (2, 3, 2, 5))
    y4 = x4[:, :, :1] + rng.choice([-1, 1], (2, 3, 1, 5)) * rng.uniform(1, 2, (2, 3, 1, 5))
    x2 = rng.uniform(0.5, 1, (1, 3, 10))
    return [
        OpCase(op, {"X": same[0], "Y": same[1]}, ref, name="TestElementwiseOp"),
        OpCase(op, {"X": rng.uniform(0.1, 1, ()), "Y": rng.uniform(0.1, 1, ())}, ref,
               name="ZeroDim1"),
        OpCase(op, {"X": rng.uniform(0.1, 1, (3, 5)), "Y": rng.uniform(0.1, 1, ())}, ref,
               name="ZeroDim2"),
        OpCase(op, {"X": rng.uniform(0.1, 1, ()), "Y": rng.uniform(0.1, 1, (3, 5))}, ref,
               name="ZeroDim3"),
        OpCase(op, {"X": rng.integers(-5, 6, (2, 3, 4)).astype(np.float64),
                    "Y": np.array([0.5])}, ref, name="scalar"),
        OpCase(op, {"X": vec[0], "Y": vec[1]}, ref, name="Vector"),
        OpCase(op, {"X": x2, "Y": x2[0, 0] + rng.choice([-1, 1], 10) * rng.uniform(1, 2, 10)},
               ref, name="broadcast_2"),
        OpCase(op, {"X": x4, "Y": y4}, ref, name="broadcast_4"),
        # Paddle's axis: Y [2] lines up with X's dim 0.
        OpCase(op, {"X": rng.uniform(-1, 1, (2, 3)), "Y": np.array([-0.5, 0.5])},
               lambda i, a: ref({"X": i["X"], "Y": i["Y"].reshape(2, 1)}, a),
               attrs={"axis": 0}, name="axis0"),
        # Exact ties: Paddle gives each side half of dOut, which is also what the central
        # difference measures, so the float64 check covers the tie rule.
        OpCase(op, {"X": np.array([[1., 2., 3.], [4., 5., 6.]]),
                    "Y": np.array([[1., 3., 2.], [4., 4., 6.]])}, ref, name="ties"),
        OpCase(op, {"X": same[0].astype(np.float32), "Y": same[1].astype(np.float32)}, ref,
               check=_is_float32, grad=(), name="float32"),
    ]


def _is_float32(outs, inputs, attrs):
    assert outs["Out"].dtype == np.float32, outs["Out"].dtype


def _pow_cases():
    def pair(sx, sy, xr=(1, 2), yr=(1, 2)):
        return {"X": rng.uniform(*xr, sx), "Y": rng.uniform(*yr, sy)}
    return [
        OpCase("elementwise_pow", pair((4, 5), (4, 5)), _power, name="TestElementwisePowOp"),
        OpCase("elementwise_pow", pair((), ()), _power, name="ZeroDim1"),
        OpCase("elementwise_pow", pair((4, 5), ()), _power, name="ZeroDim2"),
        OpCase("elementwise_pow", pair((), (4, 5)), _power, name="ZeroDim3"),
        OpCase("elementwise_pow", pair((4, 4), (4, 4), yr=(0.1, 1)), _power, name="big_shape_1"),
        OpCase("elementwise_pow", pair((4, 4), (4, 4), yr=(0.2, 2)), _power, name="big_shape_2"),
        OpCase("elementwise_pow", pair((3, 3, 4), (1,), (0.1, 1), (0.1, 1)), _power, name="scalar"),
        OpCase("elementwise_pow", pair((10,), (10,), (0.1, 1), (1, 3)), _power, name="tensor"),
        OpCase("elementwise_pow", pair((2, 1, 10), (10,), (0.1, 1), (0.1, 1)), _power,
               name="broadcast_0"),
        OpCase("elementwise_pow", pair((2, 3, 3, 5), (2, 3, 1, 5), (0.1, 1), (0.1, 1)), _power,
               name="broadcast_4"),
        OpCase("elementwise_pow", {"X": np.array([1, 3, 6]), "Y": np.array([1, 1, 1])}, _power,
               grad=(), name="Int"),
        OpCase("elementwise_pow", {"X": rng.uniform(1, 2, (2, 3)), "Y": rng.uniform(1, 2, 2)},
               lambda i, a: np.power(i["X"], i["Y"].reshape(2, 1)), attrs={"axis": 0},
               name="axis0"),
    ]


def _mod_inputs():
    # x / y kept away from integers: mod jumps there and the central difference with it.
    y = rng.choice([-1, 1], (3, 4)) * rng.uniform(0.5, 2, (3, 4))
    q = rng.integers(-4, 4, (3, 4)) + rng.uniform(0.1, 0.9, (3, 4))
    return {"X": q * y, "Y": y}


def _check_clip_boundary(outs, i, a):
    """Paddle's clip gradient passes dOut where min <= X <= max, bounds included (the
    central difference would see half there, so the rule is checked directly)."""
    g = rng.uniform(0.5, 1.5, i["X"].shape)
    dx = analytic_grads("clip", i, a, {"Out": g}, ["X"])["X"]
    lo = i["Min"].item() if "Min" in i else a["min"]
    hi = i["Max"].item() if "Max" in i else a["max"]
    np.testing.assert_allclose(dx, np.where((i["X"] >= lo) & (i["X"] <= hi), g, 0.0))


def _clip_case(name, shape, lo, hi, min_t=None, max_t=None, x=None):
    inputs = {}
    if min_t is not None:
        inputs["Min"] = np.array([min_t])
    if max_t is not None:
        inputs["Max"] = np.array([max_t])
    lo_v = lo if min_t is None else min_t
    hi_v = hi if max_t is None else max_t
    if x is None:  # Paddle's recipe: values near a bound move off it (no kink in the check)
        x = rng.random(shape)
        off = 0.25 if 0.5 in (lo_v, hi_v) else 0.5
        x[(np.abs(x - lo_v) < 0.006) | (np.abs(x - hi_v) < 0.006)] = off
    inputs["X"] = x
    return OpCase("clip", inputs, lambda i, a: np.clip(i["X"], lo_v, hi_v),
                  attrs={"min": lo, "max": hi}, name=name)


def _clip_by_norm_ref(i, a):
    x, m = i["X"], a["max_norm"]
    norm = np.sqrt((x.astype(np.float64) ** 2).sum())
    return (x * (m / norm) if norm > m else x).astype(x.dtype)


def _scale_grad_uses_tensor(outs, i, a):
    """Regression: dX = ScaleTensor * dOut, not the (overridden) scale attribute."""
    g = rng.uniform(0.5, 1.5, i["X"].shape)
    dx = analytic_grads("scale", i, a, {"Out": g}, ["X"])["X"]
    np.testing.assert_allclose(dx, g * i["ScaleTensor"].item())


BOUNDS = np.array([[0.2, 0.5, 0.7], [0.1, 0.45, 0.9]])
CASES = [
    OpCase("elementwise_add", {"X": X, "Y": X * 0.5}, lambda i, a: i["X"] + i["Y"], name="same"),
    OpCase("elementwise_add", {"X": X, "Y": Y_MID}, lambda i, a: i["X"] + _mid(i["Y"]),
           attrs={"axis": 1}, name="axis1"),
    OpCase("elementwise_add", {"X": X, "Y": Y_TAIL}, lambda i, a: i["X"] + i["Y"], name="tail"),
    OpCase("elementwise_sub", {"X": X, "Y": Y_MID}, lambda i, a: i["X"] - _mid(i["Y"]),
           attrs={"axis": 1}),
    OpCase("elementwise_mul", {"X": X, "Y": Y_TAIL}, lambda i, a: i["X"] * i["Y"]),
    OpCase("elementwise_div", {"X": X, "Y": POS}, lambda i, a: i["X"] / i["Y"]),
    *_max_min_cases("elementwise_max", _maximum),
    *_max_min_cases("elementwise_min", _minimum),
    *_pow_cases(),
    OpCase("elementwise_mod", _mod_inputs(),
           lambda i, a: i["X"] - np.floor(i["X"] / i["Y"]) * i["Y"],
           name="float_signs"),
    OpCase("elementwise_mod", {"X": np.array([[-7, 7, 5, -5]], np.int32),
                               "Y": np.array([3, -3, 5, 2], np.int32)},
           lambda i, a: np.array([[2, -2, 0, 1]], np.int32), grad=(), name="int32_python_sign"),
    OpCase("elementwise_mod", {"X": rng.uniform(1, 9, (2, 3)), "Y": np.array([2.5, 4.0])},
           lambda i, a: np.mod(i["X"], i["Y"].reshape(2, 1)), attrs={"axis": 0}, grad=(),
           name="axis0"),
    OpCase("elementwise_floordiv", {"X": np.array([[-7., 7., 5., -5.5]]),
                                    "Y": np.array([3., -3., 5., 2.])},
           lambda i, a: np.array([[-3., -3., 1., -3.]]), name="float_signs"),
    OpCase("elementwise_floordiv", {"X": np.array([[-7, 7], [9, -1]], np.int64),
                                    "Y": np.array([2, -4], np.int64)},
           lambda i, a: np.array([[-4, -2], [4, 0]], np.int64), name="int64"),
    OpCase("scale", {"X": X}, lambda i, a: i["X"] * 2.5 + 1.0, attrs={"scale": 2.5, "bias": 1.0}),
    OpCase("scale", {"X": X}, lambda i, a: (i["X"] + 1.0) * 2.5,
           attrs={"scale": 2.5, "bias": 1.0, "bias_after_scale": False}, name="bias_first"),
    OpCase("scale", {"X": rng.random((4, 5))}, lambda i, a: i["X"] * -2.3,
           attrs={"scale": -2.3}, name="TestScaleOp"),
    OpCase("scale", {"X": rng.random((4, 5)), "ScaleTensor": np.array([-2.3])},
           lambda i, a: i["X"] * -2.3, check=_scale_grad_uses_tensor,
           name="TestScaleOpScaleVariable"),
    OpCase("scale", {"X": X, "ScaleTensor": np.array([3.0])}, lambda i, a: (i["X"] + 1.0) * 3.0,
           attrs={"scale": 2.0, "bias": 1.0, "bias_after_scale": False},
           check=_scale_grad_uses_tensor, name="scale_tensor_bias_first"),
    OpCase("scale", {"X": X, "BiasTensor": np.array([3.0])}, lambda i, a: i["X"] * 2.0 + 3.0,
           attrs={"scale": 2.0, "bias": 1.0}, name="bias_tensor"),
    _clip_case("TestClipOp", (3, 4, 4), 0.3, 0.8, min_t=0.1, max_t=0.8),
    _clip_case("TestCase1", (4, 4, 3), 0.0, 0.7),
    _clip_case("TestCase2", (4, 6), 0.0, 1.0),
    _clip_case("TestCase3", (2, 4, 5), 0.2, 0.7),
    _clip_case("TestCase4", (2, 4, 4), 0.2, 0.7, min_t=0.3, max_t=0.8),
    _clip_case("TestCase5", (2, 4, 5), 0.5, 0.5),
    OpCase("clip", {"X": rng.choice([0.5, 1.0], (2, 4, 5))}, lambda i, a: i["X"],
           attrs={"min": 0.5, "max": 1.0}, grad=(), check=_check_clip_boundary,
           name="TestCase6_on_bounds"),
    OpCase("clip", {"X": BOUNDS, "Min": np.array([0.45]), "Max": np.array([0.7])},
           lambda i, a: np.clip(i["X"], 0.45, 0.7), attrs={"min": -9.0, "max": 9.0}, grad=(),
           check=_check_clip_boundary, name="tensor_bounds_on_bounds"),
    OpCase("clip", {"X": (rng.random((3, 4)) * 10).astype(np.int32)},
           lambda i, a: np.clip(i["X"], 2, 8), attrs={"min": 2.0, "max": 8.0}, grad=(),
           name="int32"),
    OpCase("clip_by_norm", {"X": rng.standard_normal((3, 4)).astype(np.float32)},
           _clip_by_norm_ref, attrs={"max_norm": 1.0}, rtol=1e-5, name="scaled"),
    OpCase("clip_by_norm", {"X": rng.standard_normal((3, 4))}, _clip_by_norm_ref,
           attrs={"max_norm": 100.0}, name="within_norm"),
]
