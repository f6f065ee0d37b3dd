"""``strided_slice`` and ``strided_slice_grad``: Out = Input[starts:ends:strides] on axes.

Paddle 3.3.1's kernel gives exactly Python's slicing per axis (checked on negative,
clamped and backward bounds): a negative start or end counts from the end of the dim,
bounds are clamped, a start past its end gives an empty dim; a stride must not be 0.
``infer_flags[i] == -1`` marks bounds known only at run time (shape inference leaves
that dim unknown). ``decrease_axis`` drops sliced dims of size 1. Bounds come from
``StartsTensor`` (1-D) over ``StartsTensorList`` (1-element tensors) over the attribute,
likewise for ends and strides. Out carries no LoD.
"""
from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register, wanted
from .slicing import bounds, decreased_shape
from .xshape import lod_if_rows_kept

_KINDS = ("Starts", "Ends", "Strides")
_TENSOR_SLOTS = tuple(f"{k}{suffix}" for k in _KINDS for suffix in ("Tensor", "TensorList"))


def _axis_slice(start, end, stride, fail):
    if stride == 0:
        fail("strides must not be 0")
    return slice(start, end, stride)


def _plan(x_shape, attrs, tensors, fail):
    """Per-dim slices (None on a dim of unknown size, -1: shape inference only)."""
    axes = list(attrs["axes"])
    rank = len(x_shape)
    for a in axes:
        if not 0 <= a < rank:
            fail(f"axes {axes}: {a} is not in [0, {rank})")
    if len(set(axes)) != len(axes):
        fail(f"axes {axes} name a dim twice")
    starts = bounds(attrs, "starts", tensors[0], tensors[1])
    ends = bounds(attrs, "ends", tensors[2], tensors[3])
    strides = bounds(attrs, "strides", tensors[4], tensors[5])
    if not len(starts) == len(ends) == len(strides) == len(axes):
        fail(f"axes {axes} need one start, end and stride each; got starts {starts}, "
             f"ends {ends}, strides {strides}")
    index = [slice(None)] * rank
    for a, s, e, st in zip(axes, starts, ends, strides):
        index[a] = None if x_shape[a] < 0 else _axis_slice(s, e, st, fail)
    return tuple(index)


def _fail_at_run(x_shape):
    def fail(message):
        raise ShapeError(f"op strided_slice: Input {list(x_shape)}: {message}")
    return fail


def _strided_slice(xp, attrs, x, *tensors):
    fail = _fail_at_run(x.shape)
    out = x[_plan(x.shape, attrs, tensors, fail)]
    if attrs["decrease_axis"]:
        out = out.reshape(decreased_shape(list(out.shape), list(attrs["decrease_axis"]), fail))
    return out.copy()  # a view would alias Input


def _strided_slice_grad(xp, attrs, x, *rest):
    if not wanted(attrs, 0):
        return None
    *tensors, dout = rest
    dx = xp.zeros(x.shape, dtype=dout.dtype)
    index = _plan(x.shape, attrs, tensors, _fail_at_run(x.shape))
    dx[index] = dout.reshape(dx[index].shape)  # undo decrease_axis
    return dx


def _infer_strided_slice(ctx):
    x = ctx.input("Input")
    shape = list(x.shape)

    def fail(message):
        ctx.fail(f"Input {shape}: {message}", "Input")

    given = {k: bool(ctx.inputs(k + "Tensor") or ctx.inputs(k + "TensorList")) for k in _KINDS}
    flags = list(ctx.attr("infer_flags"))
    if any(given.values()):
        out = list(shape)
        for i, a in enumerate(ctx.attr("axes")):
            if not 0 <= a < len(shape):
                fail(f"axes {list(ctx.attr('axes'))}: {a} is not in [0, {len(shape)})")
            out[a] = -1
    else:
        index = _plan(shape, ctx.attrs, [None] * 6, fail)
        out = [-1 if s is None else len(range(*s.indices(n))) if n >= 0 else -1
               for s, n in zip(index, shape)]
        for i, a in enumerate(ctx.attr("axes")):
            if i < len(flags) and flags[i] == -1:
                out[a] = -1
    out = decreased_shape(out, list(ctx.attr("decrease_axis")), fail)
    ctx.set_output("Out", out, like=x)  # X's LoD level, as Paddle declares it (any axes)


def _infer_grad(ctx):
    x = ctx.input("Input")
    ctx.set_output("Input@GRAD", x.shape, like=x)


def _grad_maker(op):
    ins = {s: op.input(s) for s in ("Input",) + _TENSOR_SLOTS}
    ins["Out@GRAD"] = [grad_name(op.output("Out")[0])]
    return [GradOp("strided_slice_grad", ins,
                   {"Input@GRAD": [grad_name(op.input("Input")[0])]})]


_ATTRS = [
    Attr("axes", AttrType.INTS, REQUIRED, doc="dims the bounds apply to (>= 0)"),
    Attr("starts", AttrType.INTS, [], doc="first index per axis; negative from the end"),
    Attr("ends", AttrType.INTS, [], doc="end (exclusive) per axis; -1 with a negative "
                                        "stride: through index 0"),
    Attr("strides", AttrType.INTS, [], doc="step per axis, nonzero; negative walks back"),
    Attr("infer_flags", AttrType.INTS, [], doc="-1: that axis's bounds come at run time"),
    Attr("decrease_axis", AttrType.INTS, [], doc="sliced dims of size 1 to drop"),
]
_SLOTS = []
for _kind in _KINDS:
    _SLOTS += [Slot(f"{_kind}Tensor", dispensable=True, no_grad=True,
                    doc=f"int 1-D, one {_kind.lower()[:-1]} per axis (wins)"),
               Slot(f"{_kind}TensorList", duplicable=True, dispensable=True, no_grad=True,
                    doc="one 1-element int tensor per axis")]
# Paddle's slot order: Input, StartsTensor, EndsTensor, StridesTensor, then the lists.
_ORDERED = [_SLOTS[0], _SLOTS[2], _SLOTS[4], _SLOTS[1], _SLOTS[3], _SLOTS[5]]


def _reorder(fn):
    """Kernels receive the tensors in _TENSOR_SLOTS order (tensor, list per kind)."""
    def call(xp, attrs, x, st, et, srt, stl, etl, srtl, *rest):
        return fn(xp, attrs, x, st, stl, et, etl, srt, srtl, *rest)
    return call


register("strided_slice", inputs=[Slot("Input")] + _ORDERED, outputs=["Out"], attrs=_ATTRS,
         infer_shape=_infer_strided_slice, kernel=lod_if_rows_kept(_reorder(_strided_slice)),
         grad=_grad_maker, lod=True, share_lod=(("Input", "Out"),),
         doc="Out = Input[starts:ends:strides] on axes", category="shape")
register("strided_slice_grad", inputs=[Slot("Input")] + _ORDERED + [Slot("Out@GRAD")],
         outputs=[Slot("Input@GRAD", dispensable=True)], attrs=_ATTRS,
         infer_shape=_infer_grad, kernel=_reorder(_strided_slice_grad),
         doc="gradient of strided_slice: dOut scattered into zeros shaped like Input",
         category="gradient", share_lod=(), grad_of="strided_slice")
