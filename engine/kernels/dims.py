"""Dim-changing ops: ``flatten_contiguous_range``, ``squeeze2``, ``unsqueeze2``, ``stack``
and ``unstack`` (``expand_v2``, ``expand_as_v2`` and ``tile`` are in kernels/expand.py).

Slots, attributes and gradient ops are Paddle 3.3.1's. Like ``reshape2``, the first three
write an intermediate ``XShape`` (size 0, shape ``[0] + X.shape``) that their grad ops read
to restore X's shape; Paddle requires that output on these ops.
"""
from math import prod

from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register
from ._util import ints_override
from .xshape import (XSHAPE_GRAD_SLOTS, infer_from_xshape, lod_if_rows_kept, register_grad,
                     rows_lod_level, xshape, xshape_grad_maker)


def _xshape_reshape_grad(xp, attrs, meta, dout):
    return dout.reshape(meta.shape[1:])


def _register_xshape_op(op_type, inputs, attrs, infer, kernel, doc, grad_inputs=()):
    """An op with Out and XShape whose grad reshapes Out@GRAD back to X's shape."""
    register(op_type, inputs=inputs,
             outputs=["Out", Slot("XShape", intermediate=True, doc="[0] + X.shape, for backward")],
             attrs=attrs, infer_shape=infer, kernel=lod_if_rows_kept(kernel), lod=True,
             category="shape", doc=doc, grad=xshape_grad_maker(op_type + "_grad", grad_inputs))
    ins, outs = XSHAPE_GRAD_SLOTS
    ins = [Slot(s, dispensable=True, duplicable=s.endswith("List")) for s in grad_inputs] + ins
    register_grad(op_type, attrs, ins, outs, infer_from_xshape,
                   lambda xp, a, *args: _xshape_reshape_grad(xp, a, *args[-2:]))


# ---------------------------------------------------------- flatten_contiguous_range
def _flat_shape(shape, start, stop, fail):
    rank = len(shape)
    if rank == 0:  # Paddle flattens a 0-d tensor to [1]
        if start not in (0, -1) or stop not in (0, -1):
            fail(f"start_axis={start}, stop_axis={stop} out of range for a 0-d X")
        return [1]
    lo, hi = (start + rank if start < 0 else start), (stop + rank if stop < 0 else stop)
    if not (0 <= lo < rank and 0 <= hi < rank) or lo > hi:
        fail(f"start_axis={start}, stop_axis={stop} do not name dims start <= stop of X "
             f"{list(shape)} (rank {rank})")
    mid = shape[lo:hi + 1]
    merged = -1 if any(d < 0 for d in mid) else prod(mid)
    return list(shape[:lo]) + [merged] + list(shape[hi + 1:])


def _flatten(xp, attrs, x):
    def fail(message):
        raise ShapeError(f"op flatten_contiguous_range: {message}")
    shape = _flat_shape(list(x.shape), attrs["start_axis"], attrs["stop_axis"], fail)
    return x.reshape(shape), xshape(xp, x)


def _infer_flatten(ctx):
    x = ctx.input("X")
    out = _flat_shape(list(x.shape), ctx.attr("start_axis"), ctx.attr("stop_axis"),
                      lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))
    ctx.set_output("XShape", [0] + list(x.shape), like=x)


_register_xshape_op(
    "flatten_contiguous_range", ["X"],
    [Attr("start_axis", AttrType.INT, REQUIRED, doc="first dim to merge (negative from the end)"),
     Attr("stop_axis", AttrType.INT, REQUIRED, doc="last dim to merge (inclusive)")],
    _infer_flatten, _flatten, "Out = X with dims start_axis..stop_axis merged into one")


# ------------------------------------------------------------------- squeeze2
def _squeezed(shape, axes, fail):
    """Paddle's rule: no axes drops every dim of size 1; listed dims that are not 1
    stay (no error); an unknown (-1) listed dim is taken to be 1."""
    rank = len(shape)
    if not axes:
        return [d for d in shape if d != 1]
    drop = set()
    for a in axes:
        if not -max(rank, 1) <= a < max(rank, 1):
            fail(f"axes {list(axes)}: {a} is out of range for X {list(shape)} (rank {rank})")
        a = a + rank if a < 0 else a
        if rank and shape[a] in (1, -1):
            drop.add(a)
    return [d for i, d in enumerate(shape) if i not in drop]


def _squeeze2(xp, attrs, x):
    def fail(message):
        raise ShapeError(f"op squeeze2: {message}")
    return x.reshape(_squeezed(list(x.shape), attrs["axes"], fail)), xshape(xp, x)


def _infer_squeeze2(ctx):
    x = ctx.input("X")
    out = _squeezed(list(x.shape), ctx.attr("axes"), lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))
    ctx.set_output("XShape", [0] + list(x.shape), like=x)


_register_xshape_op(
    "squeeze2", ["X"], [Attr("axes", AttrType.INTS, [], doc="dims of size 1 to drop; [] = all")],
    _infer_squeeze2, _squeeze2, "Out = X without its size-1 dims (those in axes)")


# ----------------------------------------------------------------- unsqueeze2
def _unsqueezed(shape, axes, fail):
    """Paddle's rule: the axes are inserted one after another, each into the shape the
    previous ones made (a negative axis counts from that shape's end, plus one)."""
    rank = len(shape)
    marks = [0] * (rank + len(axes))  # 1: an inserted dim
    current = rank
    for axis in axes:
        cur = axis + current + 1 if axis < 0 else axis
        if not 0 <= cur <= current:
            fail(f"axes {list(axes)}: {axis} is out of range for a rank-{current} shape")
        for i in range(current, cur - 1, -1):  # shift inserted dims at or after cur
            if marks[i] == 1:
                marks[i + 1], marks[i] = 1, 0
        marks[cur] = 1
        current += 1
    dims = iter(shape)
    return [1 if m else next(dims) for m in marks]


def _unsqueeze2(xp, attrs, x, axes_tensor, axes_list):
    axes = ints_override(attrs["axes"], axes_tensor, axes_list)

    def fail(message):
        raise ShapeError(f"op unsqueeze2: X {list(x.shape)}: {message}")
    return x.reshape(_unsqueezed(list(x.shape), axes, fail)), xshape(xp, x)


def _infer_unsqueeze2(ctx):
    x = ctx.input("X")
    ctx.set_output("XShape", [0] + list(x.shape), like=x)
    if ctx.input("AxesTensor") is not None:
        n = ctx.input("AxesTensor").shape[0] if ctx.input("AxesTensor").shape else 1
        ctx.set_output("Out", [-1] * (len(x.shape) + max(n, 0)), like=x)
        return
    if ctx.inputs("AxesTensorList"):
        ctx.set_output("Out", [-1] * (len(x.shape) + len(ctx.inputs("AxesTensorList"))), like=x)
        return
    out = _unsqueezed(list(x.shape), ctx.attr("axes"),
                      lambda m: ctx.fail(f"X {list(x.shape)}: {m}", "X"))
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))


_register_xshape_op(
    "unsqueeze2",
    ["X", Slot("AxesTensor", dispensable=True, no_grad=True, doc="1-D int axes (wins)"),
     Slot("AxesTensorList", duplicable=True, dispensable=True, no_grad=True,
          doc="one 1-element int tensor per axis")],
    [Attr("axes", AttrType.INTS, [], doc="where to insert dims of size 1, in order")],
    _infer_unsqueeze2, _unsqueeze2, "Out = X with size-1 dims inserted at axes",
    grad_inputs=("AxesTensor", "AxesTensorList"))


# ---------------------------------------------------------- stack / unstack
def _norm_axis(axis, rank, fail):
    """axis into [0, rank), negative counting from the end."""
    if not -rank <= axis < rank:
        fail(f"axis={axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _stack_fail(message):
    raise ShapeError(f"op stack: {message}")


def _stack(xp, attrs, xs):
    return xp.stack(xs, axis=_norm_axis(attrs["axis"], xs[0].ndim + 1, _stack_fail))


def _infer_stack(ctx):
    xs = ctx.inputs("X")
    if not xs:
        ctx.fail("needs at least one input", "X")
    shape = list(xs[0].shape)
    for i, m in enumerate(xs[1:], 1):
        if len(m.shape) != len(shape) or any(a != b and a >= 0 and b >= 0
                                              for a, b in zip(m.shape, shape)):
            ctx.fail(f"input {i} has shape {list(m.shape)} but input 0 has {shape}; stack needs "
                     "equal shapes", "X")
    axis = _norm_axis(ctx.attr("axis"), len(shape) + 1, lambda m: ctx.fail(m, "X"))
    ctx.set_output("Y", shape[:axis] + [len(xs)] + shape[axis:], like=xs[0])


def _stack_grad(xp, attrs, xs, dy):
    axis = _norm_axis(attrs["axis"], dy.ndim, _stack_fail)
    return [dy.take(i, axis=axis) for i in range(dy.shape[axis])]


def _infer_stack_grad(ctx):
    for i, x in enumerate(ctx.inputs("X")):
        ctx.set_output("X@GRAD", x.shape, like=x, index=i)


def _stack_grad_maker(op):
    return [GradOp("stack_grad", {"X": op.input("X"), "Y@GRAD": [grad_name(op.output("Y")[0])]},
                   {"X@GRAD": [grad_name(n) for n in op.input("X")]})]


_STACK_ATTRS = [Attr("axis", AttrType.INT, 0, doc="where the new dim goes (in [-(R+1), R])")]
register("stack", inputs=[Slot("X", duplicable=True)], outputs=["Y"], attrs=_STACK_ATTRS,
         infer_shape=_infer_stack, kernel=lod_if_rows_kept(_stack), grad=_stack_grad_maker,
         lod=True, share_lod=(("X", "Y"),),
         doc="Y = the equal-shaped X[0], X[1], ... stacked along a new dim axis",
         category="shape")
register_grad("stack", _STACK_ATTRS, [Slot("X", duplicable=True), Slot("Y@GRAD")],
               [Slot("X@GRAD", duplicable=True, dispensable=True)], _infer_stack_grad,
               _stack_grad)


def _unstack(xp, attrs, x):
    axis = _norm_axis(attrs["axis"], x.ndim, lambda m: _unstack_fail(m, x))
    if attrs["num"] not in (0, x.shape[axis]):
        _unstack_fail(f"num={attrs['num']} but dim {axis} has {x.shape[axis]}", x)
    return [x.take(i, axis=axis) for i in range(x.shape[axis])]


def _unstack_fail(message, x):
    raise ShapeError(f"op unstack: X {list(x.shape)}: {message}")


def _infer_unstack(ctx):
    x = ctx.input("X")
    shape = list(x.shape)
    axis = _norm_axis(ctx.attr("axis"), len(shape), lambda m: ctx.fail(m, "X"))
    num = ctx.attr("num")
    if shape[axis] >= 0 and num not in (0, shape[axis]):
        ctx.fail(f"num={num} but dim {axis} of X {shape} has {shape[axis]}", "X")
    count = shape[axis] if shape[axis] >= 0 else num
    for i in range(count):
        ctx.set_output("Y", shape[:axis] + shape[axis + 1:], like=x, lod_level=0, index=i)


def _unstack_grad(xp, attrs, dys):
    return xp.stack(dys, axis=_norm_axis(attrs["axis"], dys[0].ndim + 1, _stack_fail))


def _infer_unstack_grad(ctx):
    dys = ctx.inputs("Y@GRAD")
    shape = list(dys[0].shape)
    axis = _norm_axis(ctx.attr("axis"), len(shape) + 1, lambda m: ctx.fail(m, "Y@GRAD"))
    ctx.set_output("X@GRAD", shape[:axis] + [len(dys)] + shape[axis:], like=dys[0])


def _unstack_grad_maker(op):
    # Y@GRAD pieces nobody produced are zero-filled by backward (fill_zeros_like).
    return [GradOp("unstack_grad", {"Y@GRAD": [grad_name(n) for n in op.output("Y")]},
                   {"X@GRAD": [grad_name(op.input("X")[0])]})]


_UNSTACK_ATTRS = [Attr("axis", AttrType.INT, 0, doc="dim to take apart"),
                  Attr("num", AttrType.INT, 0, doc="number of outputs (X's dim at axis)")]
register("unstack", inputs=["X"], outputs=[Slot("Y", duplicable=True)], attrs=_UNSTACK_ATTRS,
         infer_shape=_infer_unstack, kernel=_unstack, grad=_unstack_grad_maker, share_lod=(),
         doc="Y[i] = X taken at index i of dim axis (that dim removed)", category="shape")
register_grad("unstack", _UNSTACK_ATTRS, [Slot("Y@GRAD", duplicable=True)],
               [Slot("X@GRAD", dispensable=True)], _infer_unstack_grad, _unstack_grad)
