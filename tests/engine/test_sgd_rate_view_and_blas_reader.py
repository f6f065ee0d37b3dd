"""Two things a training step no longer looks up on every call, and why they stay right.

* sgd's ``kernel_into`` keeps the 0-d view of the last learning-rate array it read
  (engine/kernels/optimizer.py ``_rate``): a rate written in place, or another rate array,
  must still give the pure kernel's bytes.
* the BLAS thread policy reads an OpenBLAS pool's count through the library function
  threadpoolctl would call (engine/runtime/threads.py ``count_readers``): it must follow
  every change of the count, made by anyone.
"""
import numpy as np
import pytest

from fluidscope.engine.ir import registry
from fluidscope.engine.runtime import threads

SGD = registry.get("sgd")
RNG = np.random.default_rng(5)


def _update(rate, into):
    param = RNG.standard_normal((9, 4)).astype(np.float32)
    grad = RNG.standard_normal((9, 4)).astype(np.float32)
    attrs = SGD.parse_attrs({})
    expected, _ = SGD.kernel_for("cpu")(np, attrs, param, rate.copy(), grad, None)
    buf = grad.copy() if into else np.empty_like(param)
    got, _ = SGD.kernel_into(np, attrs, (buf, None), param, rate, grad.copy() if not into
                             else buf, None)
    return got.tobytes(), expected.tobytes()


@pytest.mark.parametrize("into", [False, True])
def test_a_rate_written_in_place_or_replaced_gives_the_pure_kernels_bytes(into):
    rate = np.array([0.125], np.float32)
    got, expected = _update(rate, into)
    assert got == expected
    rate[0] = 0.3711  # the same array, another value: the kept view must see it
    got, expected = _update(rate, into)
    assert got == expected
    other = np.array([0.0093], np.float32)  # another array: not the kept view
    got, expected = _update(other, into)
    assert got == expected
    shaped = np.array([[0.75]], np.float32)  # one element, another shape
    got, expected = _update(shaped, into)
    assert got == expected


def test_the_updates_differ_when_the_rate_differs():
    """The comparison above can fail: another rate gives other bytes."""
    a, _ = _update(np.array([0.125], np.float32), True)
    b, _ = _update(np.array([0.3711], np.float32), True)
    assert a != b


threadpoolctl = pytest.importorskip("threadpoolctl")


def test_the_count_readers_follow_every_change_of_the_blas_count(monkeypatch):
    monkeypatch.setattr(threads, "_POLICY", threads._Policy())
    readers = threads._POLICY.count_readers()
    pools = threads._POLICY.blas()
    if not pools:
        pytest.skip("numpy loaded no BLAS library threadpoolctl knows")
    assert len(readers) == len(pools)
    assert threads._POLICY.count_readers() is readers  # found once per list of pools
    for limit in (2, 1, 3):
        with threadpoolctl.threadpool_limits(limits=limit, user_api="blas"):
            assert [read() for read in readers] == [p.get_num_threads() for p in pools]
            assert [read() for read in readers] == [limit] * len(pools)
    monkeypatch.setattr(threads._POLICY, "pools", [])
    assert threads._POLICY.count_readers() == ()  # the pools replaced: found again


@pytest.mark.parametrize("param_dtype, param_shape", [(np.float64, (9, 4)), (np.float32, (1, 4))])
def test_an_update_into_a_dead_gradient_that_does_not_fit_param_is_the_pure_kernel(
        param_dtype, param_shape):
    """The dead gradient as the buffer (sgd's inplace pair) with Param of another dtype or
    shape: the update goes the general way and leaves the gradient as it was."""
    param = RNG.standard_normal(param_shape).astype(param_dtype)
    grad = RNG.standard_normal((9, 4)).astype(np.float32)
    rate, attrs = np.array([0.25], np.float32), SGD.parse_attrs({})
    before = grad.copy()
    expected, _ = SGD.kernel_for("cpu")(np, attrs, param, rate, grad.copy(), None)
    got, _ = SGD.kernel_into(np, attrs, (grad, None), param, rate, grad, None)
    assert got is not grad and grad.tobytes() == before.tobytes()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()
