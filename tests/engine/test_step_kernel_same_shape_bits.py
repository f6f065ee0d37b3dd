"""The same-shape fast paths of elementwise_add's kernel_into and split's column cut
(a recurrent step's per-frame gate sums and gate split) give exactly the general path's
bytes and views, for float32 and float64, with NaN, +-inf and -0.0; shapes and attributes
off the fast path still take the general path (and its errors)."""
import numpy as np
import pytest

from fluidscope.engine.errors import ShapeError
from fluidscope.engine.ir import registry

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e30]


def _operands(dtype, shape=(7, 12), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    x.flat[:len(SPECIALS)] = SPECIALS
    y.flat[3:3 + len(SPECIALS)] = SPECIALS
    return x, y


def _add_into():
    return registry.get("elementwise_add").kernel_into


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strided", [False, True])
def test_same_shape_add_into_bytes_equal_the_general_add(dtype, strided):
    x, y = _operands(dtype)
    if strided:  # gate slices of a wider array: not contiguous
        wide = np.concatenate([x, y, x], axis=1)
        x, y = wide[:, 12:24], wide[:, :12]
    expected = np.add(x, y)  # the general path's ufunc, written to a fresh array
    out = np.full(x.shape, 7, dtype)
    got = _add_into()(np, {"axis": -1}, [out], x, y)
    assert got is out
    assert got.tobytes() == expected.tobytes()
    # in place into X (the op's inplace pair)
    x2 = x.copy()
    got = _add_into()(np, {"axis": -1}, [x2], x2, y)
    assert got is x2 and got.tobytes() == expected.tobytes()


def test_add_into_off_the_fast_path_still_broadcasts_and_checks_dtypes():
    x, _ = _operands(np.float32, (2, 3, 4))
    y = np.arange(3, dtype=np.float32)
    got = _add_into()(np, {"axis": 1}, [np.empty_like(x)], x, y)
    assert got.tobytes() == (x + y.reshape(3, 1)).tobytes()
    # same shape, another dtype: no write into a float32 buffer of float64 sums
    y64 = x.astype(np.float64)
    out = np.empty_like(x)
    got = _add_into()(np, {"axis": -1}, [out], x, y64)
    assert got is not out and got.dtype == np.float64
    assert got.tobytes() == (x + y64).tobytes()
    # no buffer, or one of the wrong shape: a fresh array
    got = _add_into()(np, {"axis": -1}, [None], x, x)
    assert got.tobytes() == (x + x).tobytes()
    small = np.empty((2, 3), np.float32)
    assert _add_into()(np, {"axis": -1}, [small], x, x) is not small


def _split(x, **attrs):
    full = {"axis": 1, "num": 0, "sections": []}
    full.update(attrs)
    return registry.get("split").kernel_for("cpu", "any")(np, full, x, None, [])


def _general_split(x, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("attrs,sizes", [
    ({"num": 4}, [3, 3, 3, 3]), ({"num": 1}, [12]),
    ({"sections": [8, 4]}, [8, 4]), ({"sections": [0, 12]}, [0, 12]),
    ({"sections": [-1, 4]}, [8, 4]),  # a -1: the general path
])
@pytest.mark.parametrize("axis", [1, -1])
def test_column_split_gives_the_general_views(dtype, attrs, sizes, axis):
    x, _ = _operands(dtype)
    x = np.concatenate([x, x], axis=1)[:, 5:17]  # strided, as a gate slice
    got = _split(x, axis=axis, **attrs)
    want = _general_split(x, sizes, 1)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.strides == w.strides
        assert np.shares_memory(g, x) or g.size == 0
        assert g.tobytes() == w.tobytes()


@pytest.mark.parametrize("attrs,message", [
    ({"num": 5}, "num=5 does not divide the split dim of length 12"),
    ({"sections": [8, 5]}, "do not add up to the split dim of length 12"),
    ({"sections": [8, -2, 6]}, "may hold one -1"),
])
def test_column_split_errors_are_the_general_ones(attrs, message):
    x, _ = _operands(np.float32)
    with pytest.raises(ShapeError, match=message):
        _split(x, **attrs)


def test_other_ranks_and_axes_take_the_general_split():
    x, _ = _operands(np.float64, (4, 6, 2))
    got = _split(x, axis=1, num=3)
    for g, w in zip(got, np.split(x, 3, axis=1)):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()
    x2, _ = _operands(np.float32)
    got = _split(x2, axis=0, sections=[2, 5])
    for g, w in zip(got, np.split(x2, [2], axis=0)):
        assert g.shape == w.shape and g.tobytes() == w.tobytes()
