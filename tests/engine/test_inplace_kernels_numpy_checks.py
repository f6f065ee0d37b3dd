"""elementwise_add, relu and relu_grad write into their input's own array (a dead input)
at once and let numpy refuse what does not fit (engine/kernels/elementwise.py and
activation.py): whatever they get, they must give the pure kernel's bytes, shape and dtype,
and write into the input only when the result fits it. Any other buffer (a spare from a
run of another batch size) takes the checks, since numpy broadcasts the operands up to a
larger output."""
import numpy as np
import pytest

from fluidscope.engine.ir import registry

ADD, RELU, RELU_GRAD = (registry.get(t) for t in ("elementwise_add", "relu", "relu_grad"))
RNG = np.random.default_rng(9)


def _a(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _same(got, expected):
    assert np.asarray(got).shape == np.asarray(expected).shape
    assert got.dtype == expected.dtype
    assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()


def _add(x, y, buf, axis=-1):
    attrs = ADD.parse_attrs({"axis": axis})
    expected = ADD.kernel_for("cpu")(np, attrs, x.copy(), y)
    return ADD.kernel_into(np, attrs, (buf,), x, y), expected


@pytest.mark.parametrize("xs, ys, axis, fits", [
    ((6, 4), (4,), 1, True),        # an fc layer's bias
    ((6, 4), (4,), -1, True),
    ((6, 4), (6, 4), -1, True),
    ((2, 3, 4), (3,), 1, True),     # Y in the middle: align_y's way, also into X
    ((6, 4), (6,), 0, True),        # Y on the leading axis: align_y's way
    ((1, 4), (6, 4), -1, False),    # Y would grow X
])
def test_add_into_its_dead_input_is_the_pure_kernel(xs, ys, axis, fits):
    x, y = _a(*xs), _a(*ys)
    got, expected = _add(x, y, x, axis)
    _same(got, expected)
    assert (got is x) == fits


def test_add_of_another_dtype_is_not_cast_into_the_dead_input():
    x, y = _a(6, 4), _a(4, dtype=np.float64)
    got, expected = _add(x, y, x, 1)
    _same(got, expected)
    assert got is not x and expected.dtype == np.float64


def test_add_into_a_larger_spare_is_not_broadcast_up():
    """A spare from a run of 6 rows, now 1 row: the sum keeps X's one row."""
    x, y = _a(1, 4), _a(4)
    got, expected = _add(x, y, _a(6, 4), 1)
    _same(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_relu_into_its_dead_input_is_the_pure_kernel(dtype):
    x = (RNG.standard_normal((5, 3)) * 4).astype(dtype)
    expected = RELU.kernel_for("cpu")(np, {}, x.copy())
    got = RELU.kernel_into(np, {}, (x,), x)
    _same(got, expected)
    assert got is x


def test_relu_into_a_larger_spare_or_another_dtype_is_the_pure_kernel():
    x = _a(1, 3)
    expected = RELU.kernel_for("cpu")(np, {}, x)
    for buf in (_a(5, 3), _a(1, 3, dtype=np.float64)):
        _same(RELU.kernel_into(np, {}, (buf,), x), expected)


@pytest.mark.parametrize("out_shape, dout_shape, fits", [
    ((5, 3), (5, 3), True), ((1, 3), (5, 3), True), ((5, 3), (1, 3), False)])
def test_relu_grad_into_its_dead_input_is_the_pure_kernel(out_shape, dout_shape, fits):
    out, dout = np.maximum(_a(*out_shape), 0), _a(*dout_shape)
    expected = RELU_GRAD.kernel_for("cpu")(np, {}, out, dout.copy())
    got = RELU_GRAD.kernel_into(np, {}, (dout,), out, dout)
    _same(got, expected)
    assert (got is dout) == fits


def test_relu_grad_into_a_larger_spare_is_the_pure_kernel():
    out, dout = np.maximum(_a(1, 3), 0), _a(1, 3)
    expected = RELU_GRAD.kernel_for("cpu")(np, {}, out, dout)
    _same(RELU_GRAD.kernel_into(np, {}, (_a(5, 3),), out, dout), expected)


def test_rank_zero_gives_numpys_scalar_as_the_pure_kernels():
    x, y = np.array(-1.5, np.float32), np.array(2.0, np.float32)
    got, expected = _add(x, y, x)
    assert type(got) is type(expected)
    assert type(RELU.kernel_into(np, {}, (x,), x)) is type(RELU.kernel_for("cpu")(np, {}, x))
