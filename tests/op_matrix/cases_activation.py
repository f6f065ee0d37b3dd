"""Cases for activations and unary math (kernels/activation.py), with the 0-D
regressions (sigmoid's forward and tanh's gradient once wrote in place into numpy
scalars) and Paddle's test_softmax_op.py configurations (shapes and every axis)."""
import numpy as np

from . import OpCase

rng = np.random.default_rng(12)
X = rng.standard_normal((3, 4))
# relu's kink is at 0: keep every element at least 0.1 away from it.
AWAY_FROM_0 = np.where(X >= 0, X + 0.1, X - 0.1)
POS = rng.uniform(0.5, 2.0, (3, 4))
BATCH = rng.standard_normal((2, 3, 5))


def _softmax(x, axis):
    # Paddle clips X - max at -64 (so a later log stays finite); its test's reference too
    e = np.exp(np.maximum(x - x.max(axis=axis, keepdims=True), -64.0))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_rows(x, axis):
    """Paddle's reference: the stable softmax applied along ``axis`` one row at a time."""
    def row(v):
        e = np.exp((v - v.max()).clip(-64.0))
        return e / e.sum()
    return np.apply_along_axis(row, axis, x)


def _softmax_case(shape, axis, seed):
    x = np.random.default_rng(seed).uniform(0.1, 1, shape)
    # 720 summed outputs: the numeric gradient's rounding needs a looser rtol there
    return OpCase("softmax", {"X": x}, lambda i, a: _softmax_rows(i["X"], a["axis"]),
                  attrs={"axis": axis}, name=f"paddle_{'x'.join(map(str, shape))}_axis{axis}",
                  grad_rtol=1e-4 if x.size > 200 else 1e-5)


def _keeps_float32(outs, inputs, attrs):
    assert outs["Out"].dtype == np.float32, outs["Out"].dtype


CASES = [
    OpCase("relu", {"X": AWAY_FROM_0}, lambda i, a: np.maximum(i["X"], 0)),
    OpCase("relu", {"X": AWAY_FROM_0.astype(np.float32)}, lambda i, a: np.maximum(i["X"], 0),
           check=_keeps_float32, grad=(), name="float32"),
    OpCase("tanh", {"X": X}, lambda i, a: np.tanh(i["X"])),
    OpCase("sigmoid", {"X": X * 3}, lambda i, a: 1 / (1 + np.exp(-i["X"]))),
    OpCase("sigmoid", {"X": np.array([-800.0, -30.0, 0.0, 30.0, 800.0], np.float32)},
           lambda i, a: np.array([0, 1 / (1 + np.exp(30.0)), 0.5, 1 / (1 + np.exp(-30.0)), 1]),
           check=_keeps_float32, grad=(), name="saturates_float32"),
    OpCase("exp", {"X": X}, lambda i, a: np.exp(i["X"])),
    OpCase("log", {"X": POS}, lambda i, a: np.log(i["X"])),
    OpCase("square", {"X": X}, lambda i, a: i["X"] ** 2),
    OpCase("softmax", {"X": X}, lambda i, a: _softmax(i["X"], -1)),
    OpCase("softmax", {"X": BATCH}, lambda i, a: _softmax(i["X"], 1), attrs={"axis": 1},
           name="axis1"),
    OpCase("softmax", {"X": BATCH}, lambda i, a: _softmax(i["X"], 0), attrs={"axis": -3},
           name="negative_axis"),
    OpCase("softmax", {"X": (X * 10).astype(np.float32)}, lambda i, a: _softmax(i["X"], -1),
           check=_keeps_float32, grad=(), rtol=1e-5, name="float32"),
    # 0-D inputs (Paddle's *_ZeroDim tests)
    OpCase("sigmoid", {"X": np.array(0.7)}, lambda i, a: 1 / (1 + np.exp(-i["X"])),
           name="zero_dim"),
    OpCase("tanh", {"X": np.array(-0.4)}, lambda i, a: np.tanh(i["X"]), name="zero_dim"),
    OpCase("relu", {"X": np.array(0.3)}, lambda i, a: np.maximum(i["X"], 0), name="zero_dim"),
    OpCase("exp", {"X": np.array(0.3)}, lambda i, a: np.exp(i["X"]), name="zero_dim"),
    OpCase("log", {"X": np.array(0.3)}, lambda i, a: np.log(i["X"]), name="zero_dim"),
    OpCase("square", {"X": np.array(0.3)}, lambda i, a: i["X"] ** 2, name="zero_dim"),
    OpCase("softmax", {"X": np.array(0.3)}, lambda i, a: np.array(1.0), name="zero_dim"),
    # Paddle 3.3.1's output for shifts past -64 (they all become exp(-64))
    OpCase("softmax", {"X": np.array([[0.0, -10.0, -63.0, -65.0, -100.0, -800.0]])},
           lambda i, a: np.array([[9.99954602e-01, 4.53978687e-05, 4.35941208e-28,
                                   1.60373808e-28, 1.60373808e-28, 1.60373808e-28]]),
           rtol=1e-8, atol=0, name="clips_like_paddle"),
    # test_softmax_op.py: TestSoftmaxOp, TestSoftmaxOp2..6 and the 5-D cuDNN shapes
    _softmax_case((10, 10), -1, 0),
    *[_softmax_case((2, 3, 4, 5), axis, 1 + axis) for axis in (-1, 0, 1, 2, 3)],
    *[_softmax_case((2, 3, 4, 5, 6), axis, 10 + axis) for axis in (0, 4)],
]
