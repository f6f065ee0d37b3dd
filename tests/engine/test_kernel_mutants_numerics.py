"""Kernels compute on ordinary inputs without floating-point warnings (engine/kernels,
issue #17: a mutant that took the log of negative numbers and masked the NaNs away
afterwards survived the op matrix, whose values came out right)."""
import warnings

import numpy as np

from fluidscope.engine.autodiff.gradcheck import analytic_grads, check_grad


def test_logcumsumexp_gradient_of_positive_output_gradients_warns_of_nothing():
    x = np.random.default_rng(3).standard_normal((2, 3))
    seed = np.full((2, 3), 0.5)  # every output gradient positive and below 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads = analytic_grads("logcumsumexp", {"X": x}, {"axis": 1}, {"Out": seed}, ["X"])
    # d/dx_j sum_i g_i log(sum_{k<=i} e^x_k) = e^x_j sum_{i>=j} g_i / sum_{k<=i} e^x_k
    e = np.exp(x)
    want = e * np.flip(np.cumsum(np.flip(seed / np.cumsum(e, axis=1), 1), axis=1), 1)
    np.testing.assert_allclose(grads["X"], want, rtol=1e-12)
    assert check_grad("logcumsumexp", {"X": x}, {"axis": 1}) < 1e-6
