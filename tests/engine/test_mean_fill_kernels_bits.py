"""fill_constant, mean and mean_grad (the three small ops around a training step's loss)
take shorter ways on numpy (issue #16 item 2): each must give exactly what the plain
numpy expression gives (bytes, dtype, shape, scalar or array), and fill_constant's kept
arrays must never leak between calls (a caller writing into one, 0.0 against -0.0).
"""
import math

import numpy as np
import pytest

from fluidscope.engine.ir import registry
from fluidscope.engine.ir.dtypes import to_numpy_dtype, to_var_type

DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool"]


def _kernel(op):
    return registry.get(op).kernel_for("cpu", "any")


def _fill_attrs(dtype, shape, value, str_value=""):
    return {"dtype": to_var_type(dtype), "shape": list(shape), "value": value,
            "str_value": str_value, "force_cpu": False, "place_type": -1}


def _same(got, want):
    assert type(got) is type(want)
    assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [[1], [], [3, 4], [0, 2]])
@pytest.mark.parametrize("value", [1.0, -0.0, 0.0, 2.5, -7.25, float("inf"), 1e30])
def test_fill_constant_is_np_full_every_call(dtype, shape, value):
    fill = _kernel("fill_constant")
    attrs = _fill_attrs(dtype, shape, value)
    with np.errstate(all="ignore"):
        want = np.full(tuple(shape), value, dtype=to_numpy_dtype(attrs["dtype"]))
        first = fill(np, attrs, None, None, [])
        first[...] = 1  # the caller owns what it got: the next call is unchanged
        second = fill(np, attrs, None, None, [])
    _same(second, want)
    assert second is not first


def test_fill_constant_tells_zero_from_minus_zero_and_reads_str_value():
    fill = _kernel("fill_constant")
    for value in (0.0, -0.0, 0.0, -0.0):
        got = fill(np, _fill_attrs("float32", [2], value), None, None, [])
        assert math.copysign(1.0, float(got[0])) == math.copysign(1.0, value)
    got = fill(np, _fill_attrs("float64", [2], 0.0, str_value="nan"), None, None, [])
    assert np.isnan(got).all()
    got = fill(np, _fill_attrs("float64", [2], 0.0, str_value="-inf"), None, None, [])
    assert (got == -np.inf).all()
    nan = fill(np, _fill_attrs("float32", [1], float("nan")), None, None, [])
    assert np.isnan(nan).all()


def test_fill_constant_with_shape_or_value_tensors_is_unchanged():
    fill = _kernel("fill_constant")
    attrs = _fill_attrs("float32", [-1, 3], 1.5)
    got = fill(np, attrs, None, None, [np.array([2]), np.array([3])])
    _same(got, np.full((2, 3), 1.5, np.float32))
    got = fill(np, attrs, np.array([4.0]), np.array([1, 2]), [])
    _same(got, np.full((1, 2), 4.0, np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
@pytest.mark.parametrize("shape", [(128, 1), (5,), (), (0, 3), (7, 11, 2)])
def test_mean_and_mean_grad_are_the_plain_expressions(dtype, shape):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 1000).astype(dtype)
    want = (x.sum(dtype=x.dtype) / x.dtype.type(max(x.size, 1))).reshape(())
    with np.errstate(all="ignore"):
        got = _kernel("mean")(np, {}, x)
    _same(got, want)
    grad = _kernel("mean_grad")
    for dout in (np.array(0.37, dtype=want.dtype), np.array([1.0], dtype=want.dtype)):
        want_grad = np.full(x.shape, dout.reshape(()) / max(x.size, 1), dtype=x.dtype)
        _same(grad(np, {}, x, dout), want_grad)
