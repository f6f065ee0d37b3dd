"""softmax_with_cross_entropy and its grad on 2-D scores with hard labels (every
classifier's loss: ``loss._plain_rows``) take a written-out path whose row max goes down
the columns of a transposed copy. It must give the bits of the general path, in float32
and float64, with NaN, infinities, signed zeros, clipped rows and ignored labels, on
both sides of the size where the transposed max is used; and report a bad label as the
general path does."""
import numpy as np
import pytest

from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.kernels import loss

DTYPES = (np.float32, np.float64)
SHAPES = [(128, 10), (loss._MANY_ROWS, loss._FEW_CLASSES), (loss._MANY_ROWS - 1, 10),
          (200, loss._FEW_CLASSES + 1), (64, 1), (40, 2), (3, 7)]
KINDS = ("normal", "far apart", "nan", "infinite", "signed zeros", "ignored")


def _scores(shape, dtype, kind, seed):
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal(shape) * 3).astype(dtype)
    n, c = shape
    with np.errstate(invalid="ignore"):
        if kind == "far apart":
            z[::3] *= 1000  # shifted below -64: clipped
        elif kind == "nan" and n > 4:
            z[1, 0], z[2, :], z[4, 0], z[4, -1] = np.nan, -np.nan, np.nan, -np.nan
            z[3, -1] = dtype(0) * np.inf  # the sign x86 gives a NaN it makes
        elif kind == "infinite" and n > 2:
            z[0, 0], z[1, :], z[2, 0], z[2, -1] = np.inf, -np.inf, np.inf, np.inf
        elif kind == "signed zeros":
            z[:] = -5
            z[:, 0], z[:, -1] = -0.0, 0.0
    return z


def _general(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(loss, "_plain_rows", lambda *a: False)
        return fn(*args)


def _same(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("axis", [-1, 1])
def test_the_rows_path_gives_the_general_paths_bits(monkeypatch, dtype, shape, kind, axis):
    z = _scores(shape, dtype, kind, seed=len(kind) + shape[0])
    rng = np.random.default_rng(5)
    label = rng.integers(0, shape[1], (shape[0], 1))
    attrs = {"axis": axis, "use_softmax": True, "soft_label": False,
             "ignore_index": 1 % shape[1] if kind == "ignored" else -100}
    assert loss._plain_rows(attrs, z, label)
    dloss = rng.random((shape[0], 1)).astype(dtype)
    with np.errstate(all="ignore"):
        softmax, cost = loss._swce(np, attrs, z, label)
        want_softmax, want_cost = _general(monkeypatch, loss._swce, np, attrs, z, label)
        dlogits = loss._swce_grad(np, attrs, label, softmax, dloss)
        want_dlogits = _general(monkeypatch, loss._swce_grad, np, attrs, label, softmax, dloss)
    _same(softmax, want_softmax)
    _same(cost, want_cost)
    _same(dlogits, want_dlogits)


@pytest.mark.parametrize("shape", [(128, 10), (8, 10)])
def test_the_row_max_is_the_max_of_each_row(shape):
    z = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    top = loss._row_max(z)
    assert top.shape == (shape[0], 1)
    np.testing.assert_array_equal(top[:, 0], [max(row) for row in z.tolist()])


def test_other_layouts_take_the_general_path():
    plain = {"axis": -1, "use_softmax": True, "soft_label": False, "ignore_index": -100}
    z, label = np.zeros((4, 3), np.float32), np.zeros((4, 1), np.int64)
    assert loss._plain_rows(plain, z, label)
    assert not loss._plain_rows({**plain, "axis": 0}, z, label)
    assert not loss._plain_rows({**plain, "soft_label": True}, z, z)
    assert not loss._plain_rows({**plain, "use_softmax": False}, z, label)
    assert not loss._plain_rows(plain, z, label[:, 0])
    assert not loss._plain_rows(plain, z.reshape(4, 1, 3), label.reshape(4, 1, 1))


@pytest.mark.parametrize("fn", ["forward", "grad"])
def test_a_bad_label_is_refused_as_the_general_path_refuses_it(monkeypatch, fn):
    attrs = {"axis": -1, "use_softmax": True, "soft_label": False, "ignore_index": -100}
    z = np.zeros((40, 3), np.float32)
    label = np.zeros((40, 1), np.int64)
    label[7] = 3

    def call():
        if fn == "forward":
            return loss._swce(np, attrs, z, label)
        return loss._swce_grad(np, attrs, label, z, np.ones((40, 1), np.float32))

    with pytest.raises(ExecutionError) as fast:
        call()
    with pytest.raises(ExecutionError) as general:
        _general(monkeypatch, call)
    assert str(fast.value) == str(general.value)
    assert "slot Label holds class 3, outside [0, 3)" in str(fast.value)
