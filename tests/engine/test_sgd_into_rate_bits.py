"""sgd's kernel_into (engine/kernels/optimizer.py) gives the bytes of the pure kernel for
every learning-rate dtype: the rate is cast to the parameter's dtype only when it differs
(a float64 rate on float32 parameters must not make the product a float64 one), whether
the update is written into a spare buffer or into the dead gradient itself."""
import numpy as np
import pytest

from fluidscope.engine.ir import registry

SGD = registry.get("sgd")
RNG = np.random.default_rng(11)


def _attrs():
    return SGD.parse_attrs({})


@pytest.mark.parametrize("param_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rate_dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("into", ["spare", "the gradient"])
def test_sgd_into_is_the_pure_kernel_byte_for_byte(param_dtype, rate_dtype, into):
    param = RNG.standard_normal((37, 11)).astype(param_dtype)
    grad = RNG.standard_normal((37, 11)).astype(param_dtype)
    rate = np.array([0.0371], rate_dtype)  # not exact in float16/float32: the cast shows
    expected, _ = SGD.kernel_for("cpu")(np, _attrs(), param, rate, grad, None)
    grad_arg = grad.copy()
    buf = np.full(param.shape, np.nan, param_dtype) if into == "spare" else grad_arg
    got, master = SGD.kernel_into(np, _attrs(), (buf, None), param.copy(), rate, grad_arg, None)
    assert got is buf and master is None
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_a_rate_of_another_dtype_changes_the_bits_when_not_cast():
    """The check above can fail: multiplying float32 gradients by a float64 rate and
    rounding once (no cast of the rate first) gives other bytes for these values."""
    grad = RNG.standard_normal((37, 11)).astype(np.float32)
    rate = np.array([0.0371], np.float64).reshape(())
    cast_first = grad * rate.astype(np.float32)
    uncast = np.multiply(grad, rate, out=np.empty_like(grad))  # float64 product, one rounding
    assert cast_first.tobytes() != uncast.tobytes()


def test_a_buffer_that_does_not_fit_is_left_alone():
    param = RNG.standard_normal((5, 4)).astype(np.float32)
    grad = RNG.standard_normal((5, 4)).astype(np.float32)
    rate = np.array([0.5], np.float64)
    expected, _ = SGD.kernel_for("cpu")(np, _attrs(), param, rate, grad, None)
    for buf in (np.zeros((5, 5), np.float32), np.zeros((5, 4), np.float64)):
        before = buf.copy()
        got, _ = SGD.kernel_into(np, _attrs(), (buf, None), param, rate, grad, None)
        assert got is not buf and got.tobytes() == expected.tobytes()
        assert buf.tobytes() == before.tobytes()
