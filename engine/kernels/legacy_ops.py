"""Paddle 1.x/2.x shape ops that saved static programs still carry: ``reshape`` and
``transpose`` (v1, no XShape), ``flatten2``, ``expand`` (v1, ``expand_times``),
``reverse`` and ``fill_any`` (the crops are in legacy_crop.py), with Paddle 3.3.1's
slots, attributes and grad ops (the slots its legacy backward writes: ``reshape_grad`` and
``transpose_grad`` read X, Out and Out@GRAD; ``flatten2_grad`` X, XShape and Out@GRAD;
reverse's gradient is another ``reverse`` of Out@GRAD; fill_any_grad reads Out@GRAD only).

LoD (measured in Paddle 3.3.1): reshape, flatten2, reverse and fill_any hand X's LoD on
while Out keeps X's rows (Paddle's reshape hands it on even to other rows, where it no
longer fits; Out gets none then, as xshape.lod_if_rows_kept); transpose and expand give
Out none.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register
from ._util import host_ints
from .shape import infer_reshape2, resolve_shape
from .xshape import lod_if_rows_kept, register_grad, rows_lod_level, xshape


def _fail(op):
    def fail(message):
        raise ShapeError(f"op {op}: {message}")
    return fail


def _grad_of_x(op, extra_inputs=(), outputs=()):
    """Maker of ``<op>_grad``: forward inputs X + ``extra_inputs``, forward ``outputs``,
    Out@GRAD -> X@GRAD (Paddle's legacy DefaultGradOpMaker layouts)."""
    def make(fwd):
        ins = {s: fwd.input(s) for s in ("X",) + tuple(extra_inputs)}
        ins.update({s: fwd.output(s) for s in outputs})
        ins["Out@GRAD"] = [grad_name(fwd.output("Out")[0])]
        outs = {"X@GRAD": [grad_name(fwd.input("X")[0])]}
        return [GradOp(op + "_grad", ins, outs)]
    return make


def _infer_dx_like_x(ctx):
    x, dout = ctx.input("X"), ctx.input("Out@GRAD")
    ctx.set_output("X@GRAD", x.shape, like=dout)


# -------------------------------------------------------------------- reshape
def _reshape_target(attrs, shape_tensor, shape_list):
    # Paddle's v1 kernel: ShapeTensor (list of 1-element tensors) > Shape > attribute.
    if shape_list:
        return [host_ints(t)[0] for t in shape_list]
    if shape_tensor is not None:
        return host_ints(shape_tensor)
    return list(attrs["shape"])


def _reshape(xp, attrs, x, shape_tensor, shape_list):
    target = _reshape_target(attrs, shape_tensor, shape_list)
    return x.reshape(resolve_shape(tuple(x.shape), target, _fail("reshape")))


def _infer_reshape(ctx):
    infer_reshape2(ctx)  # reshape2's rules; v1 has no XShape
    ctx.outputs.pop("XShape", None)
    out = ctx.outputs["Out"][0]
    ctx.outputs["Out"] = []
    ctx.set_output("Out", out.shape, like=ctx.input("X"),
                   lod_level=rows_lod_level(ctx.input("X"), out.shape))


_SHAPE_SLOTS = [Slot("Shape", dispensable=True, no_grad=True, doc="1-D int tensor"),
                Slot("ShapeTensor", duplicable=True, dispensable=True, no_grad=True,
                     doc="one 1-element int tensor per dim")]
_RESHAPE_ATTRS = [Attr("shape", AttrType.INTS, [],
                       doc="target shape; 0 copies X's dim, one -1 is inferred")]

register("reshape", inputs=["X"] + _SHAPE_SLOTS, outputs=["Out"], attrs=_RESHAPE_ATTRS,
         infer_shape=_infer_reshape, kernel=lod_if_rows_kept(_reshape), lod=True,
         share_lod=(("X", "Out"),), grad=_grad_of_x("reshape", ("Shape", "ShapeTensor"), ("Out",)),
         doc="Out = X with a new shape (Paddle 1.x reshape, no XShape)", category="shape")
# Paddle's reshape_grad also declares Shape@GRAD and ShapeTensor@GRAD (always empty).
register_grad("reshape", _RESHAPE_ATTRS,
              [Slot("X", dispensable=True), Slot("Out", dispensable=True)] + _SHAPE_SLOTS
              + [Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True), Slot("Shape@GRAD", dispensable=True),
               Slot("ShapeTensor@GRAD", duplicable=True, dispensable=True)],
              _infer_dx_like_x,
              lambda xp, a, x, out, s, sl, dout: (dout.reshape(x.shape), None, None))


# ------------------------------------------------------------------ transpose
def _perm(axis, ndim, fail):
    perm = [a + ndim if a < 0 else a for a in axis]
    if sorted(perm) != list(range(ndim)):
        fail(f"axis {list(axis)} is not a permutation of the {ndim} dims of X")
    return perm


def _transpose(xp, attrs, x):
    return xp.ascontiguousarray(xp.transpose(x, _perm(attrs["axis"], x.ndim, _fail("transpose"))))


def _transpose_grad(xp, attrs, x, out, dout):
    perm = _perm(attrs["axis"], dout.ndim, _fail("transpose_grad"))
    return xp.ascontiguousarray(xp.transpose(dout, list(np.argsort(perm))))


def _infer_transpose(ctx):
    x = ctx.input("X")
    perm = _perm(ctx.attr("axis"), len(x.shape), lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", [x.shape[p] for p in perm], like=x, lod_level=0)


_TRANSPOSE_ATTRS = [Attr("axis", AttrType.INTS, REQUIRED, doc="Out dim i is X dim axis[i]")]
register("transpose", inputs=["X"], outputs=["Out"], attrs=_TRANSPOSE_ATTRS,
         infer_shape=_infer_transpose, kernel=_transpose, share_lod=(),
         grad=_grad_of_x("transpose", (), ("Out",)),
         doc="Out = X with its dims permuted (Paddle 1.x transpose, no XShape)", category="shape")
register_grad("transpose", _TRANSPOSE_ATTRS,
              [Slot("X", dispensable=True), Slot("Out", dispensable=True), Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True)],
              _infer_dx_like_x,
              _transpose_grad)


# ------------------------------------------------------------------- flatten2
def _numel(dims):
    """Elements of ``dims``; -1 when a dim is unknown."""
    return -1 if any(d < 0 for d in dims) else int(np.prod(dims, dtype=np.int64))


def _flatten2_shape(shape, axis, fail):
    if not 0 <= axis <= len(shape):
        fail(f"axis={axis} must be in [0, {len(shape)}] for X {list(shape)}")
    return [_numel(shape[:axis]), _numel(shape[axis:])]


def _flatten2(xp, attrs, x):
    shape = _flatten2_shape(list(x.shape), attrs["axis"], _fail("flatten2"))
    return x.reshape(shape), xshape(xp, x)


def _infer_flatten2(ctx):
    x = ctx.input("X")
    out = _flatten2_shape(list(x.shape), ctx.attr("axis"), lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))
    ctx.set_output("XShape", [0] + list(x.shape), like=x)


def _flatten2_grad_maker(fwd):
    return [GradOp("flatten2_grad", {"X": fwd.input("X"), "XShape": fwd.output("XShape"),
                                     "Out@GRAD": [grad_name(fwd.output("Out")[0])]},
                   {"X@GRAD": [grad_name(fwd.input("X")[0])]})]


def _infer_flatten2_grad(ctx):
    meta, dout = ctx.input("XShape"), ctx.input("Out@GRAD")
    shape = list(meta.shape)[1:] if meta is not None else list(ctx.input("X").shape)
    ctx.set_output("X@GRAD", shape, like=dout)


def _flatten2_grad(xp, attrs, x, meta, dout):
    # XShape carries X's dims (Paddle's grad reads it); X stands in when it is absent
    return dout.reshape(meta.shape[1:] if meta is not None else x.shape)


_FLATTEN_ATTRS = [Attr("axis", AttrType.INT, 1, doc="dims before it make Out's rows, the rest "
                                                    "its columns")]
register("flatten2", inputs=["X"],
         outputs=["Out", Slot("XShape", intermediate=True, doc="[0] + X.shape, for backward")],
         attrs=_FLATTEN_ATTRS, infer_shape=_infer_flatten2, kernel=lod_if_rows_kept(_flatten2),
         lod=True, share_lod=(("X", "Out"),), grad=_flatten2_grad_maker,
         doc="Out = X as a matrix [prod(dims before axis), prod(the rest)]", category="shape")
register_grad("flatten2", _FLATTEN_ATTRS,
              [Slot("X", dispensable=True), Slot("XShape", dispensable=True), Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True)], _infer_flatten2_grad, _flatten2_grad)


# --------------------------------------------------------------------- expand
def _expand_times(attrs, times_tensor, times_list):
    # Paddle's get_expand_times: ExpandTimes > expand_times_tensor > expand_times.
    if times_tensor is not None:
        return host_ints(times_tensor)
    if times_list:
        return [host_ints(t)[0] for t in times_list]
    return list(attrs["expand_times"])


def _check_times(times, rank, fail):
    if len(times) != rank:
        fail(f"expand_times {times} must hold one count per dim of X (rank {rank})")
    if any(t <= 0 for t in times):
        fail(f"expand_times {times} must be positive")


def _expand(xp, attrs, x, times_tensor, times_list):
    times = _expand_times(attrs, times_tensor, times_list)
    _check_times(times, x.ndim, _fail("expand"))
    return xp.tile(x, times)


def _expand_grad(xp, attrs, x, times_tensor, times_list, dout):
    times = _expand_times(attrs, times_tensor, times_list)
    # Out dim i is times[i] copies of X dim i: sum the copies back.
    split = []
    for t, n in zip(times, x.shape):
        split += [t, n]
    return dout.reshape(split).sum(axis=tuple(range(0, 2 * x.ndim, 2)))


def _infer_expand(ctx):
    x = ctx.input("X")
    rank = len(x.shape)
    if ctx.input("ExpandTimes") is not None or ctx.inputs("expand_times_tensor"):
        out = [-1] * rank
    else:
        times = ctx.attr("expand_times")
        _check_times(times, rank, lambda m: ctx.fail(m, "X"))
        out = [-1 if d < 0 else d * t for d, t in zip(x.shape, times)]
    ctx.set_output("Out", out, like=x, lod_level=0)


_EXPAND_IN = [Slot("ExpandTimes", dispensable=True, no_grad=True, doc="1-D int tensor of counts"),
              Slot("expand_times_tensor", duplicable=True, dispensable=True, no_grad=True,
                   doc="one 1-element int tensor per dim")]
_EXPAND_ATTRS = [Attr("expand_times", AttrType.INTS, [], doc="copies of X along each dim")]
register("expand", inputs=["X"] + _EXPAND_IN, outputs=["Out"], attrs=_EXPAND_ATTRS,
         infer_shape=_infer_expand, kernel=_expand, share_lod=(),
         grad=_grad_of_x("expand", ("ExpandTimes", "expand_times_tensor")),
         doc="Out = X tiled expand_times[i] times along dim i (Paddle 1.x expand)",
         category="shape")
register_grad("expand", _EXPAND_ATTRS, [Slot("X")] + _EXPAND_IN + [Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True)], _infer_dx_like_x, _expand_grad)


# -------------------------------------------------------------------- reverse
def _axes(axis, ndim, fail):
    axes = [a + ndim if a < 0 else a for a in axis]
    if not axes or any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        fail(f"axis {list(axis)} must name distinct dims of a rank-{ndim} X")
    return tuple(axes)


def _reverse(xp, attrs, x):
    return xp.flip(x, axis=_axes(attrs["axis"], x.ndim, _fail("reverse"))).copy()


def _infer_reverse(ctx):
    x = ctx.input("X")
    _axes(ctx.attr("axis"), len(x.shape), lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", x.shape, like=x)


def _reverse_grad_maker(fwd):
    # Paddle's gradient of reverse: reverse Out@GRAD along the same axes.
    return [GradOp("reverse", {"X": [grad_name(fwd.output("Out")[0])]},
                   {"Out": [grad_name(fwd.input("X")[0])]}, dict(fwd.attrs))]


register("reverse", inputs=["X"], outputs=["Out"],
         attrs=[Attr("axis", AttrType.INTS, REQUIRED, doc="dims to reverse")],
         infer_shape=_infer_reverse, kernel=_reverse, grad=_reverse_grad_maker,
         doc="Out = X with the order of the listed dims reversed", category="shape")


# ------------------------------------------------------------------- fill_any
def _fill_any(xp, attrs, x):
    # the float value converted to X's dtype as Paddle's static_cast (ints truncate)
    return xp.full(x.shape, np.asarray(attrs["value"]).astype(x.dtype)[()], dtype=x.dtype)


def _fill_any_grad_maker(fwd):
    return [GradOp("fill_any_grad", {"Out@GRAD": [grad_name(fwd.output("Out")[0])]},
                   {"X@GRAD": [grad_name(fwd.input("X")[0])]})]


_FILL_ATTRS = [Attr("value", AttrType.FLOAT, 0.0, doc="the fill value")]
register("fill_any", inputs=["X"], outputs=["Out"], attrs=_FILL_ATTRS,
         infer_shape=lambda ctx: ctx.set_output("Out", ctx.input("X").shape, like=ctx.input("X")),
         kernel=_fill_any, grad=_fill_any_grad_maker,
         doc="Out = X's shape and dtype filled with value (X's values are dropped)",
         category="creation")
register_grad("fill_any", _FILL_ATTRS, [Slot("Out@GRAD")], [Slot("X@GRAD", dispensable=True)],
              lambda ctx: ctx.set_output("X@GRAD", ctx.input("Out@GRAD").shape,
                                         like=ctx.input("Out@GRAD")),
              lambda xp, attrs, dout: xp.zeros_like(dout))
