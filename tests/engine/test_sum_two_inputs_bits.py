"""``sum`` of two same-shape, same-dtype inputs is one add: the same bytes as the general
copy-then-add loop (kept for more inputs, mixed dtypes, 0-d and broadcast inputs)."""
import numpy as np
import pytest

from fluidscope.engine import registry

SUM = registry.get("sum").kernel_for("cpu", "any")


def _loop(xs):
    out = xs[0].copy()
    for x in xs[1:]:
        out += x
    return out


def _pairs(dtype):
    rng = np.random.default_rng(7)
    if dtype == np.bool_:
        return rng.random((5, 3)) > 0.5, rng.random((5, 3)) > 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, (5, 3), dtype=dtype, endpoint=True)
        return a, rng.integers(info.min, info.max, (5, 3), dtype=dtype, endpoint=True)
    a = rng.standard_normal((5, 3)).astype(dtype)
    b = rng.standard_normal((5, 3)).astype(dtype)
    a[0, :] = [np.nan, -0.0, np.inf]
    b[0, :] = [1.0, 0.0, -np.inf]
    a[1, :] = np.finfo(dtype).max
    b[1, :] = np.finfo(dtype).max
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32,
                                   np.int64, np.bool_])
def test_two_inputs_give_the_loops_bytes_and_leave_the_inputs_alone(dtype):
    a, b = _pairs(dtype)
    keep_a, keep_b = a.copy(), b.copy()
    with np.errstate(all="ignore"):
        got, want = SUM(np, {}, [a, b]), _loop([a, b])
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert got is not a and got is not b
    assert a.tobytes() == keep_a.tobytes() and b.tobytes() == keep_b.tobytes()


@pytest.mark.parametrize("xs", [
    [np.array(1.5, np.float32), np.array(2.0, np.float32)],             # 0-d: still an array
    [np.ones((2, 3), np.float32), np.ones((2, 3), np.float64)],        # X[0]'s dtype kept
    [np.ones((2, 3), np.float32), np.ones((3,), np.float32)],          # broadcast into X[0]
    [np.ones((2, 3)), np.full((2, 3), 2.0), np.full((2, 3), 4.0)]])    # three inputs
def test_other_inputs_take_the_general_loop(xs):
    got, want = SUM(np, {}, xs), _loop(xs)
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
