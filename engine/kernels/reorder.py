"""Element-reordering ops: ``roll``, ``flip``, ``unbind`` and ``meshgrid``.

Slots, attributes and gradient ops are Paddle 3.3.1's: roll's gradient is ``roll_grad``
(a roll back), flip's is another ``flip`` and unbind's a ``stack`` of the out gradients
(Paddle's makers emit those ops), meshgrid's is ``meshgrid_grad``.
"""
from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, GradSpec, Slot, register, wanted
from .xshape import lod_if_rows_kept


def _host_ints(tensor):
    host = tensor.get() if hasattr(tensor, "get") else tensor
    return [int(v) for v in host.reshape(-1)]


def _norm_axes(axes, rank, op, fail=None):
    out = []
    for a in axes:
        if not -max(rank, 1) <= a < max(rank, 1):
            message = f"axis {list(axes)}: {a} is out of range for rank {rank}"
            if fail:
                fail(message)
            raise ShapeError(f"op {op}: {message}")
        out.append(a + rank if a < 0 else a)
    return out


# ----------------------------------------------------------------------- roll
def _shifts(attrs, shifts_tensor, x):
    shifts = _host_ints(shifts_tensor) if shifts_tensor is not None else list(attrs["shifts"])
    axis = _norm_axes(attrs["axis"], x.ndim, "roll")
    if axis and len(shifts) != len(axis):
        raise ShapeError(f"op roll: shifts {shifts} and axis {list(attrs['axis'])} need the "
                         "same length")
    if not axis and len(shifts) != 1:
        raise ShapeError(f"op roll: without axis (X flattened) shifts {shifts} must hold one "
                         "value")
    return shifts, axis


def _rolled(xp, x, shifts, axis):
    if not axis:  # Paddle rolls the flattened X, then restores its shape
        return xp.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
    return xp.roll(x, tuple(shifts), axis=tuple(axis))


def _roll(xp, attrs, x, shifts_tensor):
    shifts, axis = _shifts(attrs, shifts_tensor, x)
    return _rolled(xp, x, shifts, axis)


def _roll_grad(xp, attrs, x, shifts_tensor, dout):
    if not wanted(attrs, 0):
        return None
    shifts, axis = _shifts(attrs, shifts_tensor, dout)
    return _rolled(xp, dout, [-s for s in shifts], axis)


def _infer_roll(ctx):
    x = ctx.input("X")
    axis = _norm_axes(ctx.attr("axis"), len(x.shape), "roll", lambda m: ctx.fail(m, "X"))
    shifts = ctx.attr("shifts")
    if ctx.input("ShiftsTensor") is None and (axis and len(shifts) != len(axis) or
                                              not axis and len(shifts) != 1):
        ctx.fail(f"shifts {list(shifts)} do not match axis {list(ctx.attr('axis'))}", "X")
    ctx.set_output("Out", x.shape, like=x)


register("roll",
         inputs=["X", Slot("ShiftsTensor", dispensable=True, no_grad=True,
                           doc="1-D int shifts (wins)")],
         outputs=["Out"],
         attrs=[Attr("shifts", AttrType.LONGS, [], doc="steps to shift, one per axis"),
                Attr("axis", AttrType.LONGS, [], doc="dims to roll; [] rolls the flattened X")],
         infer_shape=_infer_roll, kernel=_roll,
         grad=GradSpec(_roll_grad, inputs=("X", "ShiftsTensor")),
         doc="Out = X shifted circularly by shifts along axis", category="shape")


# ----------------------------------------------------------------------- flip
def _flip(xp, attrs, x):
    return xp.flip(x, axis=tuple(_norm_axes(attrs["axis"], x.ndim, "flip"))).copy()


def _infer_flip(ctx):
    x = ctx.input("X")
    axes = _norm_axes(ctx.attr("axis"), len(x.shape), "flip", lambda m: ctx.fail(m, "X"))
    if len(set(axes)) != len(axes):
        ctx.fail(f"axis {list(ctx.attr('axis'))} names a dim twice", "X")
    ctx.set_output("Out", x.shape, like=x)


def _flip_grad_maker(op):
    # Paddle's gradient of flip is a flip of Out@GRAD on the same axes.
    return [GradOp("flip", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]})]


register("flip", inputs=["X"], outputs=["Out"],
         attrs=[Attr("axis", AttrType.INTS, REQUIRED, doc="dims to reverse")],
         infer_shape=_infer_flip, kernel=_flip, grad=_flip_grad_maker,
         doc="Out = X reversed along axis", category="shape")


# --------------------------------------------------------------------- unbind
def _unbind(xp, attrs, x):
    axis = _norm_axes([attrs["axis"]], x.ndim, "unbind")[0]
    return [x.take(i, axis=axis) for i in range(x.shape[axis])]


def _infer_unbind(ctx):
    x = ctx.input("X")
    shape = list(x.shape)
    axis = _norm_axes([ctx.attr("axis")], len(shape), "unbind", lambda m: ctx.fail(m, "X"))[0]
    if shape[axis] < 0:
        ctx.fail(f"dim {axis} of X {shape} must be known: it is the number of outputs", "X")
    for i in range(shape[axis]):
        ctx.set_output("Out", shape[:axis] + shape[axis + 1:], like=x, index=i)


def _unbind_grad_maker(op):
    # Paddle's gradient of unbind is a stack of the out gradients (missing ones are
    # zero-filled by backward).
    return [GradOp("stack", {"X": [grad_name(n) for n in op.output("Out")]},
                   {"Y": [grad_name(op.input("X")[0])]})]


register("unbind", inputs=["X"], outputs=[Slot("Out", duplicable=True)],
         attrs=[Attr("axis", AttrType.INT, 0, doc="dim to take apart")],
         infer_shape=_infer_unbind, kernel=lod_if_rows_kept(_unbind), grad=_unbind_grad_maker,
         lod=True,
         doc="Out[i] = X at index i of dim axis (that dim removed)", category="shape")


# ------------------------------------------------------------------- meshgrid
def _grid_shape(xs, op):
    for i, x in enumerate(xs):
        if x.ndim > 1:
            raise ShapeError(f"op {op}: X[{i}] must be 0-d or 1-D, got {list(x.shape)}")
    return tuple(x.size for x in xs)


def _meshgrid(xp, attrs, xs):
    shape = _grid_shape(xs, "meshgrid")
    out = []
    for i, x in enumerate(xs):
        view = [1] * len(xs)
        view[i] = shape[i]
        out.append(xp.broadcast_to(x.reshape(view), shape).copy())
    return out


def _meshgrid_grad(xp, attrs, xs, douts):
    # dX[i] gathers Out[i]@GRAD over every grid axis but its own.
    _grid_shape(xs, "meshgrid")
    grads = []
    for i, (x, d) in enumerate(zip(xs, douts)):
        others = tuple(k for k in range(len(xs)) if k != i)
        grads.append(d.sum(axis=others).reshape(x.shape) if d is not None else None)
    return grads


def _infer_meshgrid(ctx):
    xs = ctx.inputs("X")
    for i, x in enumerate(xs):
        if len(x.shape) > 1:
            ctx.fail(f"X[{i}] must be 0-d or 1-D, got {list(x.shape)}", "X")
    shape = [x.shape[0] if x.shape else 1 for x in xs]
    for i, x in enumerate(xs):
        ctx.set_output("Out", shape, like=x, index=i)


def _infer_meshgrid_grad(ctx):
    for i, x in enumerate(ctx.inputs("X")):
        ctx.set_output("X@GRAD", x.shape, like=x, index=i)


def _meshgrid_grad_maker(op):
    return [GradOp("meshgrid_grad",
                   {"X": op.input("X"), "Out@GRAD": [grad_name(n) for n in op.output("Out")]},
                   {"X@GRAD": [grad_name(n) for n in op.input("X")]})]


register("meshgrid", inputs=[Slot("X", duplicable=True)], outputs=[Slot("Out", duplicable=True)],
         infer_shape=_infer_meshgrid, kernel=_meshgrid, grad=_meshgrid_grad_maker,
         share_lod=(), doc="Out[i] = X[i] spread over the grid of all X sizes (ij indexing)",
         category="shape")
register("meshgrid_grad",
         inputs=[Slot("X", duplicable=True), Slot("Out@GRAD", duplicable=True)],
         outputs=[Slot("X@GRAD", duplicable=True, dispensable=True)],
         infer_shape=_infer_meshgrid_grad, kernel=_meshgrid_grad,
         doc="gradient of meshgrid: each out gradient summed over the other grid axes",
         category="gradient", share_lod=(), grad_of="meshgrid")
