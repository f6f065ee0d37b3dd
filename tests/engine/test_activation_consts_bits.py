"""sigmoid, sigmoid_grad and tanh_grad on numpy float32/float64 arrays call the ufuncs
with constants of the array's dtype (engine.kernels.activation): their bytes equal the
general path's (Python-scalar constants), with NaN, +-inf, -0.0, tiny and huge values,
strided inputs and in-place aliasing; 0-D, float16 and mixed dtypes take the general path."""
import types

import numpy as np
import pytest

from fluidscope.engine.ir import registry

# numpy under another name: the kernels' `xp is np` test fails, so they run the general
# path (what a cupy array gets) with the very same numpy functions
GENERAL_XP = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("__")})

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 20.0, -20.0, 1e30, -1e30, 0.5]


def _kernel(op):
    return registry.get(op).kernel_for("cpu", "any")


def _values(dtype, seed, strided):
    rng = np.random.default_rng(seed)
    wide = (rng.standard_normal((9, 36)) * 4).astype(dtype)
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        wide.flat[:len(SPECIALS)] = SPECIALS
        wide[2, 12:12 + len(SPECIALS)] = SPECIALS
    return wide[:, 12:24] if strided else np.ascontiguousarray(wide[:, 12:24])


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strided", [False, True])
def test_sigmoid_bytes_equal_the_general_path(dtype, strided):
    x = _values(dtype, 0, strided)
    before = x.copy()
    with np.errstate(all="ignore"):
        _same(_kernel("sigmoid")(np, {}, x), _kernel("sigmoid")(GENERAL_XP, {}, x))
    _same(x, before)  # the input is never written


@pytest.mark.parametrize("op", ["sigmoid_grad", "tanh_grad"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strided", [False, True])
def test_grad_bytes_equal_the_general_path(op, dtype, strided):
    out = np.tanh(_values(dtype, 1, strided)) if op == "tanh_grad" else _values(dtype, 1, strided)
    dout = _values(dtype, 2, strided)
    out_before, dout_before = out.copy(), dout.copy()
    with np.errstate(all="ignore"):
        got = _kernel(op)(np, {}, out, dout)
        want = _kernel(op)(GENERAL_XP, {}, out, dout)
    _same(got, want)
    _same(out, out_before)
    _same(dout, dout_before)
    assert not np.shares_memory(got, out) and not np.shares_memory(got, dout)


@pytest.mark.parametrize("op", ["sigmoid_grad", "tanh_grad"])
def test_grads_with_a_broadcast_or_other_dtype_dout_match_the_general_path(op):
    out = np.tanh(_values(np.float32, 3, False))
    for dout in (_values(np.float64, 4, False), _values(np.float32, 4, False)[0]):
        with np.errstate(all="ignore"):  # inf * 0
            _same(_kernel(op)(np, {}, out, dout), _kernel(op)(GENERAL_XP, {}, out, dout))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_zero_d_and_float16_keep_their_dtype_and_values(dtype):
    for x in (np.array(0.3, dtype), _values(dtype, 5, False)):
        with np.errstate(all="ignore"):
            got = _kernel("sigmoid")(np, {}, x)
            want = _kernel("sigmoid")(GENERAL_XP, {}, x)
            _same(np.asarray(got), np.asarray(want))
            for op in ("sigmoid_grad", "tanh_grad"):
                _same(np.asarray(_kernel(op)(np, {}, x, x)),
                      np.asarray(_kernel(op)(GENERAL_XP, {}, x, x)))


def test_sigmoid_values_are_the_logistic_function():
    x = np.linspace(-8, 8, 33)
    np.testing.assert_allclose(_kernel("sigmoid")(np, {}, x), 1 / (1 + np.exp(-x)),
                               rtol=1e-14, atol=1e-16)
    t = np.tanh(x)
    np.testing.assert_allclose(_kernel("tanh_grad")(np, {}, t, x), x * (1 - t * t), rtol=1e-15)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(_kernel("sigmoid_grad")(np, {}, s, x), x * s * (1 - s),
                               rtol=1e-15)
