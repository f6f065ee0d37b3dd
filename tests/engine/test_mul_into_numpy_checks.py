"""mul's and mul_grad's kernel_into (engine/kernels/linalg.py) take the products into the
buffers they get at once and let numpy refuse what does not fit (shapes: ValueError;
``casting="no"``: another dtype): every buffer that does not fit must still give the pure
kernel's bytes, shape and dtype, and one that fits must be written into."""
import numpy as np
import pytest

from fluidscope.engine.ir import registry
from fluidscope.engine.kernels import linalg

MUL, MUL_GRAD = registry.get("mul"), registry.get("mul_grad")
RNG = np.random.default_rng(3)
ROWS = linalg.SMALL_M + 6


def _attrs(opdef, wanted=None, xn=1):
    attrs = opdef.parse_attrs({"x_num_col_dims": xn})
    if wanted is not None:
        attrs[registry.OUTPUTS_WANTED] = wanted
    return attrs


def _a(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _same(got, expected):
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("buf", [
    None, _a(ROWS, 5), _a(ROWS + 1, 5), _a(ROWS, 5, dtype=np.float64), _a(5, ROWS)])
def test_mul_into_is_the_pure_kernel_whatever_buffer_it_gets(buf):
    x, y = _a(ROWS, 7), _a(7, 5)
    expected = MUL.kernel_for("cpu")(np, _attrs(MUL), x, y)
    got = MUL.kernel_into(np, _attrs(MUL), (buf,), x, y)
    _same(got, expected)
    fits = buf is not None and buf.shape == expected.shape and buf.dtype == expected.dtype
    assert (got is buf) == fits


def test_mul_into_flattens_x_as_the_pure_kernel_does_even_with_a_buffer():
    x, y = _a(ROWS, 2, 7), _a(7, 5)
    attrs = _attrs(MUL, xn=2)
    expected = MUL.kernel_for("cpu")(np, attrs, x, y)
    for buf in (_a(ROWS, 5), _a(ROWS * 2, 5), _a(ROWS, 2, 5)):
        _same(MUL.kernel_into(np, attrs, (buf,), x, y), expected)


def test_mul_into_of_mixed_dtypes_is_not_cast_into_the_buffer():
    x, y = _a(ROWS, 7), _a(7, 5, dtype=np.float64)
    expected = MUL.kernel_for("cpu")(np, _attrs(MUL), x, y)
    for buf in (_a(ROWS, 5), _a(ROWS, 5, dtype=np.float64)):
        _same(MUL.kernel_into(np, _attrs(MUL), (buf,), x, y), expected)


@pytest.mark.parametrize("wanted", [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("rows", [ROWS, linalg.SMALL_M - 4])
@pytest.mark.parametrize("bufs", ["fit", "none", "x grew", "y grew", "float64"])
def test_mul_grad_into_is_the_pure_kernel_whatever_buffers_it_gets(wanted, rows, bufs):
    x, y, dout = _a(rows, 7), _a(7, 5), _a(rows, 5)
    attrs = _attrs(MUL_GRAD, wanted)
    expected = MUL_GRAD.kernel_for("cpu")(np, attrs, x, y, dout)
    shapes = {"fit": ((rows, 7), (7, 5)), "none": (None, None),
              "x grew": ((rows + 3, 7), (7, 5)), "y grew": ((rows, 7), (7, 6)),
              "float64": ((rows, 7), (7, 5))}[bufs]
    dtype = np.float64 if bufs == "float64" else np.float32
    given = tuple(None if s is None or not w else _a(*s, dtype=dtype)
                  for s, w in zip(shapes, wanted))
    got = MUL_GRAD.kernel_into(np, attrs, given, x, y, dout)
    for g, e, b in zip(got, expected, given):
        if e is None:
            assert g is None
            continue
        _same(g, e)
    if bufs == "fit" and rows > linalg.SMALL_M:  # both fit: written into, as before
        assert all(g is b for g, b in zip(got, given) if b is not None)


def test_mul_grad_into_of_a_y_that_changed_shape_is_not_written_into_the_old_buffer():
    """The first layer's mul_grad (dY alone) with its buffer from a Y of another shape:
    the products alone would not notice (dOut's columns fit the old buffer)."""
    x, y, dout = _a(ROWS, 7), _a(7, 5), _a(ROWS, 5)
    attrs = _attrs(MUL_GRAD, (False, True))
    old = _a(7, 5)
    y_wider = np.concatenate([y, _a(7, 1)], axis=1)  # [7, 6]: dout no longer fits it
    with pytest.raises(Exception):
        MUL_GRAD.kernel_for("cpu")(np, attrs, x, y_wider, dout)
    with pytest.raises(Exception):
        MUL_GRAD.kernel_into(np, attrs, (None, old), x, y_wider, dout)


def test_a_buffer_of_more_dims_is_not_filled_by_broadcasting():
    """numpy broadcasts 2-D operands up to an output of more dims: such a buffer must be
    left alone."""
    x, y, dout = _a(ROWS, 7), _a(7, 5), _a(ROWS, 5)
    expected = MUL.kernel_for("cpu")(np, _attrs(MUL), x, y)
    _same(MUL.kernel_into(np, _attrs(MUL), (_a(3, ROWS, 5),), x, y), expected)
    attrs = _attrs(MUL_GRAD, (True, True))
    expected = MUL_GRAD.kernel_for("cpu")(np, attrs, x, y, dout)
    for bufs in ((_a(2, ROWS, 7), _a(7, 5)), (_a(ROWS, 7), _a(2, 7, 5))):
        got = MUL_GRAD.kernel_into(np, attrs, bufs, x, y, dout)
        for g, e in zip(got, expected):
            _same(g, e)
