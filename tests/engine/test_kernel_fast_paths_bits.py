"""The fc-bias fast paths of elementwise_add (+ grad) and relu's written-out buffer checks
give the bits the general way gives: compared against numpy computed the old way, with
and without recycled buffers, and on broadcasts that must not take the fast path."""
import numpy as np
import pytest

from engine.ir.registry import OUTPUTS_WANTED
from engine.kernels import activation, elementwise

DTYPES = (np.float32, np.float64)


def _rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _old_add(x, y, axis):
    if axis not in (-1, None) and y.ndim != x.ndim:
        y = y.reshape(y.shape + (1,) * (x.ndim - axis - y.ndim))
    return x + y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys,axis", [
    ((32, 128), (128,), -1), ((32, 128), (128,), 1), ((7, 3), (3,), -1),
    ((32, 128), (1, 128), -1), ((32, 128), (32, 1), -1), ((32, 128), (32,), 0),
    ((4, 5, 6), (6,), -1), ((4, 5, 6), (5, 6), 1), ((5,), (5,), -1)])
@pytest.mark.parametrize("recycled", [False, True])
def test_add_forward_matches_the_general_way(dtype, xs, ys, axis, recycled):
    x, y = _rand(xs, dtype, 1), _rand(ys, dtype, 2)
    buf = np.full(xs, 7, dtype) if recycled else None
    got = elementwise._add_into(np, {"axis": axis}, [buf], x, y)
    want = _old_add(x, y, axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)
    assert (got is buf) == recycled  # every case here broadcasts Y into X's shape


def test_add_forward_declines_a_buffer_of_another_dtype():
    x, y = _rand((8, 4), np.float32, 1), _rand((4,), np.float64, 2)
    buf = np.zeros((8, 4), np.float32)
    got = elementwise._add_into(np, {"axis": -1}, [buf], x, y)
    assert got is not buf and got.dtype == np.float64 and np.array_equal(got, x + y)


def _old_add_grad(x, y, dout, axis):
    yb = y if axis in (-1, None) or y.ndim == x.ndim else y.reshape(
        y.shape + (1,) * (x.ndim - axis - y.ndim))
    lead = dout.ndim - yb.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(yb.shape)
                                      if n == 1 and dout.shape[lead + i] != 1)
    dy = dout.sum(axis=axes).reshape(y.shape) if axes else dout
    return dout, dy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys,axis", [
    ((32, 128), (128,), -1), ((32, 128), (128,), 1), ((1000, 33), (33,), -1),
    ((32, 128), (1, 128), -1), ((32, 128), (32, 1), -1), ((32, 128), (32,), 0),
    ((4, 5, 6), (6,), -1), ((6, 6), (6, 6), -1)])
@pytest.mark.parametrize("flags", [None, (True, True), (True, False), (False, True)])
def test_add_grad_matches_the_general_way(dtype, xs, ys, axis, flags):
    x, y, dout = _rand(xs, dtype, 1), _rand(ys, dtype, 2), _rand(xs, dtype, 3)
    attrs = {"axis": axis} if flags is None else {"axis": axis, OUTPUTS_WANTED: flags}
    dx, dy = elementwise._add_grad_kernel(np, attrs, x, y, dout)
    wdx, wdy = _old_add_grad(x, y, dout, axis)
    if flags is None or flags[0]:
        assert dx.shape == xs and np.array_equal(dx, wdx)
    else:
        assert dx is None
    if flags is None or flags[1]:
        assert dy.shape == ys and dy.dtype == wdy.dtype and np.array_equal(dy, wdy)
    else:
        assert dy is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(32, 128), (5,), (3, 4, 5)])
@pytest.mark.parametrize("recycled", [False, True])
def test_relu_and_grad_match_numpy(dtype, shape, recycled):
    x, dout = _rand(shape, dtype, 1), _rand(shape, dtype, 2)
    buf = np.full(shape, 7, dtype) if recycled else None
    out = activation._relu_into(np, {}, [buf], x)
    assert np.array_equal(out, np.maximum(x, 0)) and (out is buf) == recycled
    gbuf = np.full(shape, 7, dtype) if recycled else None
    dx = activation._relu_grad_into(np, {}, [gbuf], out, dout)
    assert np.array_equal(dx, dout * (out > 0)) and (dx is gbuf) == recycled


def test_relu_declines_buffers_that_do_not_fit():
    x = _rand((4, 3), np.float32, 1)
    for buf in (np.zeros((4, 3), np.float64), np.zeros((3, 4), np.float32)):
        assert activation._relu_into(np, {}, [buf], x) is not buf
        assert activation._relu_grad_into(np, {}, [buf], x, x) is not buf
    ints = np.arange(6).reshape(2, 3)  # not float: no buffer (the ufunc could promote)
    assert activation._relu_into(np, {}, [np.zeros((2, 3), ints.dtype)], ints) is not None
    zero_d = np.float64(-2.0) * np.ones(())
    assert activation._relu_into(np, {}, [np.zeros(())], zero_d) == 0.0


def test_the_cached_row_starts_of_the_loss_kernels_are_read_only_and_shared():
    from fluidscope.engine.kernels.loss import flat_positions
    index = np.array([[2], [0], [1]], dtype=np.int64)
    first = flat_positions(np, (3, 4), 1, index)
    np.testing.assert_array_equal(first, [[2], [4], [9]])
    again = flat_positions(np, (3, 4), 1, index)
    np.testing.assert_array_equal(again, first)
    first += 100  # a caller writing into its result leaves the shared column alone
    np.testing.assert_array_equal(flat_positions(np, (3, 4), 1, index), [[2], [4], [9]])
    from fluidscope.engine.kernels import loss
    column = loss._row_starts(np, 3, 4)
    assert column is loss._row_starts(np, 3, 4) and not column.flags.writeable
