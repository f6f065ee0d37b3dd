"""``slice`` (Paddle's basic slicing op) and ``slice_grad``.

Out = Input[starts[i]:ends[i] on axes[i]], step 1. As in Paddle, a negative start or
end counts from the end of its dim, both are then clamped to [0, dim], and an end at
or before its start gives an empty dim. ``decrease_axis`` drops sliced dims of size 1
(all of them: a 0-d tensor). The bounds may come at run time from ``StartsTensor`` /
``EndsTensor`` (1-D int tensors, one entry per axis; they win) or from
``StartsTensorList`` / ``EndsTensorList`` (one 1-element int tensor per axis), then
from the attributes. ``axes`` must be non-negative, as Paddle's kernel requires (the
Python ``paddle.slice`` normalises them before it makes the op).

LoD: like Paddle, Out keeps Input's LoD unless dim 0 (the rows the LoD indexes) is
sliced, which leaves Out without LoD; that is why the kernel is LoD-aware.
"""
from ..errors import ShapeError
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register, wanted
from ..ir.names import grad_name

_TENSOR_SLOTS = ("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")


def _ints(tensor):
    """Python ints of a small int tensor (numpy or cupy)."""
    host = tensor.get() if hasattr(tensor, "get") else tensor
    return [int(v) for v in host.reshape(-1)]


def bounds(attrs, name, tensor, tensor_list):
    """starts or ends: the tensor, else the tensor list, else the attribute."""
    if tensor is not None:
        return _ints(tensor)
    if tensor_list:
        return [_ints(t)[0] for t in tensor_list]
    return list(attrs[name])


def _clamp(value, dim):
    value = value + dim if value < 0 else value
    return min(max(value, 0), dim)


def _check_axes(axes, rank, fail):
    for axis in axes:
        if not 0 <= axis < rank:
            fail(f"axes {axes}: axis {axis} is not in [0, {rank}) for an input of rank {rank}")
    if len(set(axes)) != len(axes):
        fail(f"axes {axes} name a dim twice")


def _index(x_shape, attrs, st, et, sl, el, fail):
    """The tuple of python slices Out = Input[index] takes, before decrease_axis."""
    axes = list(attrs["axes"])
    _check_axes(axes, len(x_shape), fail)
    starts = bounds(attrs, "starts", st, sl)
    ends = bounds(attrs, "ends", et, el)
    if len(starts) != len(axes) or len(ends) != len(axes):
        fail(f"axes {axes} need one start and one end each; got starts {starts}, ends {ends}")
    index = [slice(None)] * len(x_shape)
    for axis, start, end in zip(axes, starts, ends):
        dim = x_shape[axis]
        begin = _clamp(start, dim)
        index[axis] = slice(begin, max(_clamp(end, dim), begin))
    return tuple(index)


def decreased_shape(shape, decrease, fail):
    """``shape`` without the dims in ``decrease``, each of which must be 1 (or unknown)."""
    for axis in decrease:
        if not 0 <= axis < len(shape):
            fail(f"decrease_axis {decrease}: {axis} is not a dim of the sliced shape {shape}")
        if shape[axis] not in (1, -1):
            fail(f"decrease_axis {decrease}: dim {axis} of the sliced shape {shape} has size "
                 f"{shape[axis]}; only dims of size 1 can be dropped")
    return [n for i, n in enumerate(shape) if i not in set(decrease)]


def _fail_at_run(x_shape):
    def fail(message):
        raise ShapeError(f"op slice: Input {list(x_shape)}: {message}")
    return fail


def _slice(xp, attrs, lod, x, st, et, sl, el):
    fail = _fail_at_run(x.shape)
    index = _index(x.shape, attrs, st, et, sl, el, fail)
    out = x[index]
    if attrs["decrease_axis"]:
        out = out.reshape(decreased_shape(list(out.shape), attrs["decrease_axis"], fail))
    if 0 in attrs["axes"]:
        lod.outputs[0] = []  # the rows changed: Input's LoD no longer describes them
    # A copy: a view would alias Input, and later in-place writes must not reach it.
    return out.copy()


def _slice_grad(xp, attrs, x, st, et, sl, el, dout):
    if not wanted(attrs, 0):
        return None
    index = _index(x.shape, attrs, st, et, sl, el, _fail_at_run(x.shape))
    dx = xp.zeros(x.shape, dtype=dout.dtype)
    region = dx[index]
    region[...] = dout.reshape(region.shape)  # undo decrease_axis
    return dx


def _infer_slice(ctx):
    x = ctx.input("Input")
    shape = list(x.shape)
    axes = list(ctx.attr("axes"))

    def fail(message):
        ctx.fail(f"Input {shape}: {message}", slot="Input")

    _check_axes(axes, len(shape), fail)
    at_run_time = any(ctx.inputs(s) for s in _TENSOR_SLOTS)
    starts, ends, flags = ctx.attr("starts"), ctx.attr("ends"), ctx.attr("infer_flags")
    if not at_run_time and (len(starts) != len(axes) or len(ends) != len(axes)):
        fail(f"axes {axes} need one start and one end each; got starts {starts}, ends {ends}")
    out = list(shape)
    for i, axis in enumerate(axes):
        unknown = at_run_time or (i < len(flags) and flags[i] == -1) or shape[axis] < 0
        if unknown:
            out[axis] = -1
        else:
            begin = _clamp(starts[i], shape[axis])
            out[axis] = max(_clamp(ends[i], shape[axis]) - begin, 0)
    out = decreased_shape(out, list(ctx.attr("decrease_axis")), fail)
    ctx.set_output("Out", out, like=x, lod_level=0 if 0 in axes else x.lod_level)


def _infer_slice_grad(ctx):
    x = ctx.input("Input")
    ctx.set_output("Input@GRAD", x.shape, like=x)


def _slice_grad_maker(op):
    ins = {s: op.input(s) for s in ("Input",) + _TENSOR_SLOTS}
    ins["Out@GRAD"] = [grad_name(op.output("Out")[0])]
    return [GradOp("slice_grad", ins, {"Input@GRAD": [grad_name(op.input("Input")[0])]})]


_ATTRS = [
    Attr("axes", AttrType.INTS, REQUIRED, doc="dims that starts and ends apply to (>= 0)"),
    Attr("starts", AttrType.INTS, [], doc="first index per axis; negative counts from the end"),
    Attr("ends", AttrType.INTS, [], doc="end index (exclusive) per axis; clamped to the dim"),
    Attr("infer_flags", AttrType.INTS, [], doc="-1: that axis's bounds come at run time"),
    Attr("decrease_axis", AttrType.INTS, [], doc="sliced dims of size 1 to drop from Out"),
]
_BOUND_SLOTS = [
    Slot("StartsTensor", dispensable=True, no_grad=True, doc="int 1-D, one start per axis"),
    Slot("EndsTensor", dispensable=True, no_grad=True, doc="int 1-D, one end per axis"),
    Slot("StartsTensorList", duplicable=True, dispensable=True, no_grad=True,
         doc="one 1-element int tensor per axis"),
    Slot("EndsTensorList", duplicable=True, dispensable=True, no_grad=True,
         doc="one 1-element int tensor per axis"),
]

register("slice", inputs=[Slot("Input")] + _BOUND_SLOTS, outputs=["Out"], attrs=_ATTRS,
         infer_shape=_infer_slice, kernel=_slice, grad=_slice_grad_maker,
         share_lod=(("Input", "Out"),), lod=True,
         doc="Out = Input[starts:ends] on axes (step 1)", category="shape")
register("slice_grad", inputs=[Slot("Input")] + _BOUND_SLOTS + [Slot("Out@GRAD")],
         outputs=[Slot("Input@GRAD", dispensable=True)], attrs=_ATTRS,
         infer_shape=_infer_slice_grad, kernel=_slice_grad,
         doc="gradient of slice: dOut scattered into zeros shaped like Input",
         category="gradient", share_lod=(("Input", "Input@GRAD"),), grad_of="slice")
