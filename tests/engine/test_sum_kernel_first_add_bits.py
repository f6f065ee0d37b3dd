"""``sum`` of several equal-shaped inputs starts from ``X0 + X1`` instead of a copy of X0
plus X1 (engine/kernels/reduce.py; a GRU step's four dh_prev terms per frame): the bytes
of the general loop (copy, then ``+=`` each), in float32 and float64, for 2 to 5 inputs;
inputs that broadcast or mix dtypes take the general loop."""
import numpy as np
import pytest

from fluidscope.engine.ir import registry


def _general(xs):
    out = xs[0].copy()
    for x in xs[1:]:
        out += x
    return out


def _sum(xs):
    return registry.get("sum").kernel_for("cpu", "any")(np, {}, list(xs))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("count", [2, 3, 4, 5])
def test_the_first_add_gives_the_general_loops_bytes(count, dtype):
    rng = np.random.default_rng(count)
    # values of mixed magnitudes: each rounding step shows in the last bits
    xs = [(rng.standard_normal((7, 5)) * 10.0 ** rng.integers(-3, 4, (7, 5))).astype(dtype)
          for _ in range(count)]
    got, want = _sum(xs), _general(xs)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert all(not np.shares_memory(got, x) for x in xs)  # a fresh array, no input written


def test_broadcast_or_mixed_inputs_take_the_general_loop():
    rng = np.random.default_rng(0)
    a, row = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    assert _sum([a, row, a]).tobytes() == _general([a, row, a]).tobytes()
    f32 = a.astype(np.float32)
    mixed = _sum([f32, a, f32])
    assert mixed.dtype == np.float32  # X0's dtype, as the loop keeps it
    assert mixed.tobytes() == _general([f32, a, f32]).tobytes()
