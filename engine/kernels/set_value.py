"""``set_value``: Out = Input with a strided window overwritten, the op a static
program gets from ``paddle.static.setitem(x, index, v)`` (``x[1:3, ::2] = v`` under
to_static), and its gradient ``set_value_grad``.

Slots and attributes are Paddle 3.3.1's. The window is ``axes``/``starts``/``ends``/
``steps`` (the ``*TensorList`` slots, 1-element int tensors, win over ``starts``/``ends``/
``steps``); bounds are normalised as Paddle's ``CheckAndUpdateSliceAttrs`` does (negative
counts from the end, clamped; with a negative step an end of -1 means "through element 0",
which is why Paddle writes INT_MIN there). The value is ``ValueTensor`` when given, else
the Scalars ``values`` reshaped to ``shape`` (converted to Input's dtype, as Paddle's
kernel does); it broadcasts, numpy-style, to the window with the ``decrease_axes`` dropped
and a 1 inserted at each of the ``none_axes`` (what ``x[0, None] = v`` writes).

Gradient (Paddle's ``set_value_grad`` reads only ``Out@GRAD``, ``ValueTensor`` and the
tensor lists): Input@GRAD is Out@GRAD with the window zeroed; ValueTensor@GRAD is
Out@GRAD's window summed back over the dims broadcasting added.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register, wanted
from ._util import unbroadcast
from .slicing import bounds

_LISTS = ("StartsTensorList", "EndsTensorList", "StepsTensorList")


def _fail(op, x_shape):
    def fail(message):
        raise ShapeError(f"op {op}: Input {list(x_shape)}: {message}")
    return fail


def _normalise(start, end, step, dim, fail):
    """One axis's python slice, as Paddle's CheckAndUpdateSliceAttrs clamps it."""
    if step == 0:
        fail("steps must not be 0")
    if dim == 0:
        return slice(0, 0, 1)
    start = start + dim if start < 0 else start
    start = max(start, 0)
    end = end + dim if step > 0 and end < 0 else end
    end = min(end, dim)
    if step > 0:
        start, end = min(start, dim), max(end, 0)
        if end < start:
            fail(f"with step {step} > 0, end {end} must not be before start {start}")
        return slice(start, end, step)
    start = min(start, dim - 1)
    if end < -1:
        end += dim
    end = max(end, -1)
    if start < end:
        fail(f"with step {step} < 0, start {start} must not be before end {end}")
    # end -1 (after clamping) includes element 0: python writes that as None.
    return slice(start, None if end < 0 else end, step)


def window(x_shape, attrs, lists, fail):
    """(index tuple into Input, the window's dims, the dims the value broadcasts to)."""
    axes = list(attrs["axes"])
    rank = len(x_shape)
    for a in axes:
        if not 0 <= a < rank:
            fail(f"axes {axes}: {a} is not in [0, {rank})")
    starts = bounds(attrs, "starts", None, lists[0])
    ends = bounds(attrs, "ends", None, lists[1])
    steps = bounds(attrs, "steps", None, lists[2]) or [1] * len(axes)
    if not len(starts) == len(ends) == len(steps) == len(axes):
        fail(f"axes {axes} need one start, end and step each; got starts {starts}, "
             f"ends {ends}, steps {steps}")
    index = [slice(None)] * rank
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[a] = _normalise(s, e, st, x_shape[a], fail)
    dims = [len(range(*sl.indices(n))) for sl, n in zip(index, x_shape)]
    decrease, nones = set(attrs["decrease_axes"]), sorted(attrs["none_axes"])
    for a in decrease:
        if not 0 <= a < rank or dims[a] != 1:
            fail(f"decrease_axes {sorted(decrease)}: dim {a} of the window {dims} is not 1")
    # Paddle's slice_dims_for_assign: decreased dims dropped, a 1 per none axis.
    assign, cur = [], 0
    for i, n in enumerate(dims):
        while cur < len(nones) and nones[cur] <= i:
            assign.append(1)
            cur += 1
        if i not in decrease:
            assign.append(n)
    assign += [1] * (len(nones) - cur)
    return tuple(index), dims, assign


def _value(xp, attrs, x_dtype, value_tensor, fail):
    if value_tensor is not None:
        return value_tensor.astype(x_dtype, copy=False)
    values, shape = list(attrs["values"]), list(attrs["shape"])
    if not values:
        fail("neither ValueTensor nor the values attribute gives a value")
    count = int(np.prod(shape)) if shape else 1
    if count != len(values):
        fail(f"{len(values)} values do not fill shape {shape}")
    # numpy converts Scalars to the dtype as Paddle's kernel (Scalar::to<T>) does.
    return xp.asarray(np.asarray(values).astype(x_dtype).reshape(shape))


def _fits(value, assign):
    """True when numpy broadcasts ``value`` to exactly ``assign``."""
    try:
        return np.broadcast_shapes(tuple(value.shape), tuple(assign)) == tuple(assign)
    except ValueError:
        return False


def _set_value(xp, attrs, x, value_tensor, *lists):
    fail = _fail("set_value", x.shape)
    index, dims, assign = window(x.shape, attrs, lists, fail)
    value = _value(xp, attrs, x.dtype, value_tensor, fail)
    while value.ndim > len(assign) and value.shape[0] == 1:  # Paddle drops those 1s too
        value = value.reshape(value.shape[1:])
    if not _fits(value, assign):
        fail(f"the value of shape {list(value.shape)} does not broadcast to the window "
             f"{assign}")
    out = x.copy()
    out[index] = xp.broadcast_to(value, tuple(assign)).reshape(tuple(dims))
    return out


def _set_value_grad(xp, attrs, value_tensor, starts, ends, steps, dout):
    fail = _fail("set_value_grad", dout.shape)
    index, dims, assign = window(dout.shape, attrs, (starts, ends, steps), fail)
    dx = dv = None
    if wanted(attrs, 0):
        dx = dout.copy()
        dx[index] = 0
    if wanted(attrs, 1) and value_tensor is not None:
        part = dout[index].reshape(tuple(assign))
        shape = tuple(value_tensor.shape)
        lead = len(shape) - len(assign)  # a value of higher rank had leading 1s
        dv = unbroadcast(part, shape[lead:]).reshape(shape)
    return dx, dv


def _infer_set_value(ctx):
    x = ctx.input("Input")
    rank = len(x.shape)
    axes = list(ctx.attr("axes"))
    for a in axes:
        if not 0 <= a < rank:
            ctx.fail(f"axes {axes}: {a} is not in [0, {rank}) for Input {list(x.shape)}",
                     "Input")
    if ctx.input("ValueTensor") is None and not ctx.attr("values"):
        ctx.fail("neither ValueTensor nor the values attribute gives a value", "ValueTensor")
    ctx.set_output("Out", x.shape, like=x)


_BOUND = "1-element int tensors, one per axis (win over the attribute)"
register(
    "set_value",
    inputs=["Input", Slot("ValueTensor", dispensable=True, doc="the value (wins over values)"),
            *(Slot(s, duplicable=True, dispensable=True, no_grad=True, doc=_BOUND)
              for s in _LISTS)],
    outputs=["Out"],
    attrs=[Attr("dtype", AttrType.INT, 5, doc="VarType of the values attribute"),
           Attr("axes", AttrType.LONGS, doc="dims the window restricts"),
           Attr("starts", AttrType.LONGS, [], doc="window start per axis"),
           Attr("ends", AttrType.LONGS, [], doc="window end per axis (exclusive)"),
           Attr("steps", AttrType.LONGS, [], doc="window step per axis (negative: reversed)"),
           Attr("decrease_axes", AttrType.LONGS, [], doc="axes indexed by an integer"),
           Attr("none_axes", AttrType.LONGS, [], doc="where the index had None"),
           Attr("values", AttrType.SCALARS, [], doc="the value's elements (no ValueTensor)"),
           Attr("shape", AttrType.LONGS, [], doc="dims of the values attribute")],
    infer_shape=_infer_set_value, kernel=_set_value, share_lod=(("Input", "Out"),),
    grad=GradSpec(_set_value_grad, inputs=("ValueTensor",) + _LISTS, out_grads=("Out",),
                  in_grads=("Input", "ValueTensor")),
    doc="Out = Input with Input[starts:ends:steps on axes] = value (x[i:j] = v)",
    category="index")
