"""The float64 gradient checker itself: it must fail when it should, NaN included."""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import check_grad


def test_a_nan_numeric_gradient_fails_instead_of_passing_silently():
    # log at -1: the central difference is NaN, the analytic dout / x is finite.
    with pytest.raises(AssertionError, match=r"gradient of X\[0\] at \(0,\)"):
        check_grad("log", {"X": np.array([-1.0, 2.0])}, {})


def test_a_correct_gradient_passes_and_reports_its_worst_error():
    worst = check_grad("log", {"X": np.array([0.5, 2.0])}, {})
    assert 0.0 <= worst < 1e-6
