"""Kernel values at the edges the op matrix does not reach (engine/kernels, issue #17:
mutants of these lines survived it): no floating-point warnings on ordinary inputs (a
mutant took the log of negative numbers and masked the NaNs away), Paddle's 1e20 cost of
a zero probability, sequence_reverse over several sequences, and deformable_conv's
gradients over a non-square output."""
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


def test_cross_entropy_of_a_zero_probability_costs_1e20():
    from fluidscope.engine.autodiff.gradcheck import run_op
    x = np.array([[0.0, 1.0], [0.25, 0.75]])
    loss = run_op("cross_entropy", {"X": x, "Label": np.array([[0], [1]])}, {})["Y"]
    np.testing.assert_allclose(loss, [[1e20], [-np.log(0.75)]], rtol=1e-12)


def test_sequence_reverse_reverses_each_sequence_of_a_batch():
    from fluidscope.engine.autodiff.gradcheck import run_op
    from fluidscope.engine.runtime.tensor import LoDTensor
    x = np.arange(12.0).reshape(6, 2)
    out = run_op("sequence_reverse", {"X": LoDTensor(x, [[0, 2, 5, 6]])}, {})["Y"]
    np.testing.assert_array_equal(out, x[[1, 0, 4, 3, 2, 5]])


def test_deformable_conv_gradients_over_a_non_square_output():
    # the op matrix's deformable convolutions all have square outputs, where swapping
    # the output height and width cannot show
    rng = np.random.default_rng(8)
    inputs = {"Input": rng.standard_normal((1, 2, 2, 3)),
              "Offset": rng.uniform(-0.4, 0.4, (1, 18, 2, 3)),
              "Filter": rng.standard_normal((2, 2, 3, 3))}
    attrs = {"paddings": [1, 1], "strides": [1, 1], "dilations": [1, 1], "groups": 1,
             "deformable_groups": 1, "im2col_step": 1}
    assert check_grad("deformable_conv_v1", inputs, attrs, rtol=1e-5) < 1e-5
