"""Reductions: ``mean``, ``sum`` (of several tensors) and Paddle's ``reduce_*`` ops:
sum, mean, max, min, amax, amin, prod, all, any.

Gradients follow Paddle 3.3.1 (checked against it): max/min/amax/amin share dOut evenly
among every element equal to the extremum; prod's gradient is the product of the other
elements (exact where X has zeros: Paddle's CPU kernel divides Out by X there and gives NaN).
Paddle 3.3.1's legacy executor ignores reduce_all on amax/amin and the AxisTensor inputs;
we honour them (its own Python API writes the full ``dim`` list anyway). Its kernels read
``out_dtype`` on reduce_sum only and ``in_dtype`` nowhere (its Python API writes X's own
dtype there): the other reductions keep X's dtype whatever the attributes say, as here.
"""
from math import prod

import numpy as np

from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradOp, GradSpec, Slot, register
from ..ir.names import grad_name


_add_reduce = np.add.reduce


def _mean(xp, attrs, x):
    # sum / n: a third of x.mean()'s fixed cost on small tensors, same float result class.
    if x.__class__ is np.ndarray:
        # the same reduction without ndarray.sum's Python wrapper; numpy's sum over all
        # axes is a scalar, which reshape(()) would give back as it is
        dtype = x.dtype
        return _add_reduce(x, None, dtype) / dtype.type(x.size or 1)
    return (x.sum(dtype=x.dtype) / x.dtype.type(max(x.size, 1))).reshape(())


def _mean_grad(xp, attrs, x, dout):
    value = dout.reshape(()) / max(x.size, 1)
    if xp is np:  # what np.full does, without its Python wrapper
        out = np.empty(x.shape, x.dtype)
        if value.dtype == out.dtype:
            out.fill(value)  # a plain copy of the value (half of copyto's cost)
        else:  # a cast, as np.full makes it (fill casts as setitem would)
            np.copyto(out, value, casting="unsafe")
        return out
    return xp.full(x.shape, value, dtype=x.dtype)


register("mean", inputs=["X"], outputs=["Out"],
         infer_shape=lambda ctx: ctx.set_output("Out", [], like=ctx.input("X")),
         kernel=_mean, grad=GradSpec(_mean_grad, inputs=("X",)),
         doc="Out = mean of all elements of X (a 0-d tensor)", category="math")


def _sum(xp, attrs, xs):
    if len(xs) >= 2:  # a step block's fc of two inputs, a GRU's four dh_prev terms:
        a, b = xs[0], xs[1]  # the first add makes the result instead of copy + add
        if a.ndim and a.shape == b.shape and a.dtype == b.dtype:  # (0-d: + gives a scalar)
            out = a + b  # the same rounding as the loop's out += b
            for x in xs[2:]:
                out += x
            return out
    out = xs[0].copy()
    for x in xs[1:]:
        out += x
    return out


def _infer_sum(ctx):
    xs = ctx.inputs("X")
    if not xs:
        ctx.fail("needs at least one input", slot="X")
    for i, x in enumerate(xs[1:], 1):
        if len(x.shape) != len(xs[0].shape) or any(
                a != b and a >= 0 and b >= 0 for a, b in zip(x.shape, xs[0].shape)):
            ctx.fail(f"input {i} has shape {list(x.shape)}, input 0 has {list(xs[0].shape)}",
                     slot="X")
    ctx.set_output("Out", xs[0].shape, like=xs[0])


def _sum_grad_maker(op):
    # d(sum)/dX_i = dOut: one ``scale`` per input keeps the grad ops ordinary ops.
    dout = grad_name(op.output("Out")[0])
    return [GradOp("scale", {"X": [dout]}, {"Out": [grad_name(x)]}, {"scale": 1.0})
            for x in op.input("X")]


register("sum", inputs=[Slot("X", duplicable=True)], outputs=["Out"],
         infer_shape=_infer_sum, kernel=_sum, grad=_sum_grad_maker, share_lod=(("X", "Out"),),
         lod_agree=("X",),
         doc="Out = X[0] + X[1] + ... (same shapes)", category="math")


# ------------------------------------------------------------- reduce_* ops
# Paddle's reduce ops: ``dim`` lists the reduced dims (negative counts from the end);
# ``reduce_all`` or an empty ``dim`` reduces every dim, to shape [] unless keep_dim.
# reduce_all/any/amax/amin also take the dims at run time from AxisTensor (a 1-D int
# tensor) or AxisTensorList (1-element int tensors), which override ``dim``.
def _reduce_axes(attrs, ndim, dims=None):
    """The reduced dims of a rank-``ndim`` input, normalised and sorted."""
    dims = attrs["dim"] if dims is None else dims
    if attrs["reduce_all"] or not dims or ndim == 0:
        return tuple(range(ndim))
    return tuple(sorted({d + ndim if d < 0 else d for d in dims}))


def _runtime_dims(axis_tensor, axis_list):
    """The dims given as tensors, or None when the op carries them in ``dim``."""
    if axis_tensor is not None:
        return [int(v) for v in axis_tensor.reshape(-1).tolist()]
    if axis_list:
        return [int(t.reshape(-1)[0]) for t in axis_list]
    return None


def _reduce_out_dtype(xp, attrs, x, op):
    if op == "sum" and attrs["out_dtype"] != -1:
        return to_numpy_dtype(attrs["out_dtype"])
    if op == "sum" and x.dtype.name in ("bool", "int32"):
        return to_numpy_dtype(pb.VarType.INT64)  # Paddle sums bool and int32 into int64
    return x.dtype


def _reduce_kernel(op, axis_slots=False):
    """Forward kernel of ``reduce_<op>``; ``axis_slots``: it has AxisTensor(List) inputs."""
    def kernel(xp, attrs, x, axis_tensor=None, axis_list=None):
        axes = _reduce_axes(attrs, x.ndim, _runtime_dims(axis_tensor, axis_list))
        keep = attrs["keep_dim"]
        if op in ("all", "any"):  # any dtype; non-zero is true; Out is bool
            return xp.asarray(getattr(xp, op)(x, axis=axes, keepdims=keep))
        dtype = _reduce_out_dtype(xp, attrs, x, op)
        if op in ("sum", "mean", "prod"):
            out = getattr(x, op)(axis=axes, dtype=dtype, keepdims=keep)
        else:  # max, min, amax, amin
            out = getattr(x, op[-3:])(axis=axes, keepdims=keep).astype(dtype, copy=False)
        # numpy returns a scalar when every dim goes; the op's output is a 0-d tensor.
        return xp.asarray(out)
    if axis_slots:
        return kernel
    return lambda xp, attrs, x: kernel(xp, attrs, x)


def _kept(x, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape))


def _reduce_grad_kernel(op):
    def kernel(xp, attrs, x, dout):
        axes = _reduce_axes(attrs, x.ndim)
        g = dout.reshape(_kept(x, axes))
        if op == "mean":
            g = g / max(prod(x.shape[a] for a in axes), 1)
        # astype copies: the gradient is a fresh contiguous array, not a broadcast view.
        return xp.broadcast_to(g, x.shape).astype(x.dtype)
    return kernel


def _extremum_grad(xp, attrs, x, out, dout, dims=None):
    """dOut shared evenly by every element equal to the max (min): Paddle's rule."""
    axes = _reduce_axes(attrs, x.ndim, dims)
    kept = _kept(x, axes)
    hit = x == out.reshape(kept).astype(x.dtype, copy=False)
    share = dout.reshape(kept).astype(x.dtype) / hit.sum(axis=axes, keepdims=True).astype(x.dtype)
    return xp.where(hit, share, xp.zeros_like(x))


def _amax_grad(xp, attrs, x, axis_tensor, axis_list, out, dout):
    return _extremum_grad(xp, attrs, x, out, dout, _runtime_dims(axis_tensor, axis_list))


def _prod_grad(xp, attrs, x, out, dout):
    """dX_i = dOut * (product of the other reduced elements), from exclusive cumulative
    products from both ends: exact where X has zeros, unlike Out / X."""
    axes = _reduce_axes(attrs, x.ndim)
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = rest + list(axes)
    moved = x.transpose(perm)
    flat = moved.reshape(tuple(x.shape[i] for i in rest) + (-1,))
    one = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
    before = xp.concatenate([one, xp.cumprod(flat, axis=-1)[..., :-1]], axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(flat, axis=-1), axis=-1), axis=-1)
    after = xp.concatenate([after[..., 1:], one], axis=-1)
    g = before * after * dout.reshape(flat.shape[:-1] + (1,)).astype(x.dtype)
    inverse = [perm.index(i) for i in range(x.ndim)]
    return g.reshape(moved.shape).transpose(inverse).copy()


def _infer_reduce(op):
    def infer(ctx):
        x = ctx.input("X")
        shape, rank = list(x.shape), len(x.shape)
        for d in ctx.attr("dim"):
            if not -max(rank, 1) <= d < max(rank, 1):
                ctx.fail(f"dim {d} is out of range for X {shape} of rank {rank}", slot="X")
        keep = ctx.attr("keep_dim")
        runtime = ctx.input("AxisTensor") is not None or bool(ctx.inputs("AxisTensorList"))
        if runtime and not ctx.attr("reduce_all"):
            # The dims are known at run time only: every output dim is unknown, and
            # without keep_dim the rank drops by the number of dims given.
            axis = ctx.input("AxisTensor")
            count = axis.shape[0] if axis is not None and axis.shape else len(
                ctx.inputs("AxisTensorList")) or len(ctx.attr("dim"))
            out = [-1] * (rank if keep or count < 0 else max(rank - count, 0))
        else:
            axes = set(_reduce_axes(ctx.attrs, rank))
            out = ([1 if i in axes else n for i, n in enumerate(shape)] if keep
                   else [n for i, n in enumerate(shape) if i not in axes])
        dtype = x.dtype
        if op in ("all", "any"):
            dtype = pb.VarType.BOOL
        elif op == "sum" and ctx.attr("out_dtype") != -1:
            dtype = ctx.attr("out_dtype")
        if op == "sum" and ctx.attr("out_dtype") == -1 and dtype in (
                pb.VarType.BOOL, pb.VarType.INT32):
            dtype = pb.VarType.INT64
        ctx.set_output("Out", out, dtype=dtype, like=x)
    return infer


def _reduce_attrs(dim_type):
    return [
        Attr("dim", dim_type, [0], doc="dims to reduce; negative counts from the end"),
        Attr("keep_dim", AttrType.BOOLEAN, False, doc="keep reduced dims with size 1"),
        Attr("reduce_all", AttrType.BOOLEAN, False, doc="reduce every dim (ignores dim)"),
        Attr("in_dtype", AttrType.INT, -1, doc="X's VarType (Paddle's kernels never read it)"),
        Attr("out_dtype", AttrType.INT, -1, doc="reduce_sum: VarType of Out (-1: X's); "
                                               "unread by the other reductions (Paddle)"),
    ]


_AXIS_SLOTS = [Slot("AxisTensor", dispensable=True, no_grad=True,
                    doc="1-D int dims; overrides dim"),
               Slot("AxisTensorList", dispensable=True, duplicable=True, no_grad=True,
                    doc="1-element int dims; override dim")]


def _register_reduce(op, doc, grad, axis_slots=False):
    register(f"reduce_{op}", inputs=["X"] + (_AXIS_SLOTS if axis_slots else []), outputs=["Out"],
             attrs=_reduce_attrs(AttrType.LONGS if axis_slots else AttrType.INTS),
             infer_shape=_infer_reduce(op), kernel=_reduce_kernel(op, axis_slots), grad=grad,
             share_lod=(),  # Paddle keeps the LoD only when dim 0 survives; we never do
             doc=doc, category="math")


for _op, _doc in (("sum", "Out = sum of X over dim"), ("mean", "Out = mean of X over dim")):
    _register_reduce(_op, _doc, GradSpec(_reduce_grad_kernel(_op), inputs=("X",)))
_register_reduce("max", "Out = max of X over dim (ties share the gradient)",
                 GradSpec(_extremum_grad, inputs=("X",), outputs=("Out",)))
_register_reduce("min", "Out = min of X over dim (ties share the gradient)",
                 GradSpec(_extremum_grad, inputs=("X",), outputs=("Out",)))
_register_reduce("prod", "Out = product of X over dim",
                 GradSpec(_prod_grad, inputs=("X",), outputs=("Out",)))
for _op in ("amax", "amin"):
    _register_reduce(_op, f"Out = {_op[1:]} of X over dim (ties share the gradient)",
                     GradSpec(_amax_grad, inputs=("X", "AxisTensor", "AxisTensorList"),
                              outputs=("Out",)), axis_slots=True)
_register_reduce("all", "Out = true where every X over dim is non-zero (bool)", None,
                 axis_slots=True)
_register_reduce("any", "Out = true where some X over dim is non-zero (bool)", None,
                 axis_slots=True)
