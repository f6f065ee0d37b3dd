"""The elementwise grad kernels compute only the gradients the executor says are wanted
(OUTPUTS_WANTED): a wanted gradient has the very bytes it has when both are computed,
an unwanted one is None and is not computed at all (a grads function that reads nothing
for it), with and without broadcasting, in float32 and float64."""
import numpy as np
import pytest

from engine.ir import registry
from engine.ir.registry import OUTPUTS_WANTED

DTYPES = (np.float32, np.float64)
# op type -> its grad kernel's inputs besides dOut, by name (div also reads Out)
GRAD_OPS = ("elementwise_add_grad", "elementwise_sub_grad", "elementwise_mul_grad",
            "elementwise_div_grad", "elementwise_max_grad", "elementwise_min_grad",
            "elementwise_pow_grad", "remainder_grad")
SHAPES = [((6, 5), (6, 5), -1), ((6, 5), (5,), -1), ((4, 3, 5), (3,), 1), ((6, 5), (1, 5), -1)]


def _operands(op, xs, ys, dtype, axis=-1):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, xs).astype(dtype)  # positive: pow's log, div, mod stay finite
    y = rng.uniform(0.5, 2.0, ys).astype(dtype)
    x.flat[0] = y.flat[0]  # a tie for max/min
    dout = rng.standard_normal(xs).astype(dtype)
    if op == "elementwise_div_grad":
        out = registry.get("elementwise_div").kernel_for("cpu", "float32")(
            np, {"axis": axis}, x, y)
        return (x, y, out, dout)
    return (x, y, dout)


def _kernel(op):
    return registry.get(op).kernel_for("cpu", "float32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys,axis", SHAPES)
@pytest.mark.parametrize("op", GRAD_OPS)
def test_a_wanted_gradient_has_the_bytes_of_both(op, xs, ys, axis, dtype):
    kernel = _kernel(op)
    ins = _operands(op, xs, ys, dtype, axis)
    both = kernel(np, {"axis": axis}, *ins)
    assert both[0] is not None and both[1] is not None
    for want in ((True, False), (False, True)):
        got = kernel(np, {"axis": axis, OUTPUTS_WANTED: want}, *ins)
        for k in (0, 1):
            if want[k]:
                assert got[k].shape == both[k].shape and got[k].dtype == both[k].dtype
                assert got[k].tobytes() == both[k].tobytes(), (op, want, k)
            else:
                assert got[k] is None, (op, want, k)


class _Counted(np.ndarray):
    """An array that counts the arithmetic done with it (ufunc calls)."""
    calls = 0

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        type(self).calls += 1
        inputs = tuple(np.asarray(a) if isinstance(a, _Counted) else a for a in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


@pytest.mark.parametrize("op,unwanted_reads", [("elementwise_mul_grad", "x"),
                                               ("elementwise_mul_grad", "y")])
def test_an_unwanted_gradient_is_not_computed(op, unwanted_reads):
    """mul's dY = dOut * X reads X only for dY (and dX = dOut * Y reads Y only for dX):
    with that gradient unwanted, the operand is not touched by any arithmetic."""
    x, y, dout = _operands(op, (6, 5), (6, 5), np.float64)
    counted = (x if unwanted_reads == "x" else y).view(_Counted)
    ins = (counted, y, dout) if unwanted_reads == "x" else (x, counted, dout)
    want = (True, False) if unwanted_reads == "x" else (False, True)
    _Counted.calls = 0
    got = _kernel(op)(np, {"axis": -1, OUTPUTS_WANTED: want}, *ins)
    assert _Counted.calls == 0
    assert got[1 - want.index(True)] is None
    _Counted.calls = 0
    _kernel(op)(np, {"axis": -1}, *ins)  # both: the operand is read
    assert _Counted.calls == 1
