"""``cumsum``: running sums along an axis (``flatten``, ``exclusive``, ``reverse``).

Its gradient is a cumsum of dOut in the other direction with the same ``exclusive``:
Out_j = sum over i <= j of X_i gives dX_i = sum over j >= i of dOut_j (strict
inequalities when exclusive). Matches Paddle 3.3.1's ``cumsum_grad`` (checked against it).
"""
from ..ir.registry import Attr, AttrType, GradSpec, register


def _cumsum_along(xp, x, axis, exclusive, reverse):
    """Running sum of ``x`` along ``axis``; x.ndim >= 1. Keeps x's dtype."""
    if reverse:
        x = xp.flip(x, axis=axis)
    out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        # Shift by one (exact: no subtraction of X), the first entry becomes 0.
        shifted = xp.zeros_like(out)
        dst = [slice(None)] * out.ndim
        src = [slice(None)] * out.ndim
        dst[axis], src[axis] = slice(1, None), slice(None, -1)
        shifted[tuple(dst)] = out[tuple(src)]
        out = shifted
    return xp.flip(out, axis=axis) if reverse else out


def _cumsum(xp, attrs, x):
    if attrs["flatten"] or x.ndim == 0:
        flat = _cumsum_along(xp, x.reshape(-1), 0, attrs["exclusive"], attrs["reverse"])
        return flat if attrs["flatten"] else flat.reshape(x.shape)
    return _cumsum_along(xp, x, attrs["axis"], attrs["exclusive"], attrs["reverse"])


def _cumsum_grad(xp, attrs, x, dout):
    if attrs["flatten"] or x.ndim == 0:
        flat = _cumsum_along(xp, dout.reshape(-1), 0, attrs["exclusive"], not attrs["reverse"])
        return flat.reshape(x.shape)
    return _cumsum_along(xp, dout, attrs["axis"], attrs["exclusive"], not attrs["reverse"])


def _infer_cumsum(ctx):
    x = ctx.input("X")
    rank, axis = len(x.shape), ctx.attr("axis")
    if ctx.attr("flatten"):
        n = 1
        for d in x.shape:
            n = -1 if d < 0 or n < 0 else n * d
        ctx.set_output("Out", [n], like=x)
        return
    if not -max(rank, 1) <= axis < max(rank, 1):
        ctx.fail(f"axis={axis} is out of range for X {list(x.shape)} of rank {rank}", slot="X")
    ctx.set_output("Out", x.shape, like=x)


register(
    "cumsum", inputs=["X"], outputs=["Out"],
    attrs=[Attr("axis", AttrType.INT, -1,
                doc="the dim summed along (negative counts from the end)"),
           Attr("flatten", AttrType.BOOLEAN, False, doc="sum over X flattened to 1-D (Out is 1-D)"),
           Attr("exclusive", AttrType.BOOLEAN, False, doc="leave out the element itself"),
           Attr("reverse", AttrType.BOOLEAN, False, doc="sum from the end backwards")],
    infer_shape=_infer_cumsum, kernel=_cumsum,
    grad=GradSpec(_cumsum_grad, inputs=("X",)),
    doc="Out = running sum of X along axis", category="math")
