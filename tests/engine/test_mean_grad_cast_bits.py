"""mean_grad fills its output with ``ndarray.fill`` when the value has the output's dtype
(issue #16 item 2) and casts as ``np.full`` does otherwise: a float gradient spread over
an integer input (NaN, huge, negative) gives np.full's bytes and raises nothing, where
``fill`` alone would refuse NaN or overflow."""
import numpy as np
import pytest

from fluidscope.engine.ir import registry


@pytest.mark.parametrize("x_dtype", ["int32", "int64", "bool", "float16", "float32"])
@pytest.mark.parametrize("value", [float("nan"), 1e30, -3.7, 0.25, -0.0])
@pytest.mark.parametrize("dout_dtype", ["float32", "float64"])
def test_mean_grad_is_np_full_for_any_pair_of_dtypes(x_dtype, value, dout_dtype):
    grad = registry.get("mean_grad").kernel_for("cpu", "any")
    x = np.zeros((4, 2), dtype=x_dtype)
    dout = np.array([value], dtype=dout_dtype)
    with np.errstate(all="ignore"):
        want = np.full(x.shape, dout.reshape(()) / x.size, dtype=x.dtype)
        got = grad(np, {}, x, dout)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
