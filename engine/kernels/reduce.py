"""Reductions: ``mean``, ``sum`` (of several tensors), ``reduce_sum``, ``reduce_mean``."""
from math import prod

from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradOp, GradSpec, Slot, register
from ..ir.names import grad_name


def _mean(xp, attrs, x):
    # sum / n: a third of x.mean()'s fixed cost on small tensors, same float result class.
    return (x.sum(dtype=x.dtype) / x.dtype.type(max(x.size, 1))).reshape(())


def _mean_grad(xp, attrs, x, dout):
    return xp.full(x.shape, dout.reshape(()) / max(x.size, 1), dtype=x.dtype)


register("mean", inputs=["X"], outputs=["Out"],
         infer_shape=lambda ctx: ctx.set_output("Out", [], like=ctx.input("X")),
         kernel=_mean, grad=GradSpec(_mean_grad, inputs=("X",)),
         doc="Out = mean of all elements of X (a 0-d tensor)", category="math")


def _sum(xp, attrs, xs):
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


# ------------------------------------------------- reduce_sum / reduce_mean
# Paddle's reduce ops: ``dim`` lists the reduced dims (negative counts from the end);
# ``reduce_all`` or an empty ``dim`` reduces every dim, to shape [] unless keep_dim.
def _reduce_axes(attrs, ndim):
    """The reduced dims of a rank-``ndim`` input, normalised and sorted."""
    dims = attrs["dim"]
    if attrs["reduce_all"] or not dims or ndim == 0:
        return tuple(range(ndim))
    return tuple(sorted({d + ndim if d < 0 else d for d in dims}))


def _reduce_out_dtype(xp, attrs, x, op):
    if attrs["out_dtype"] != -1:
        return to_numpy_dtype(attrs["out_dtype"])
    if op == "sum" and x.dtype.name in ("bool", "int32"):
        return to_numpy_dtype(pb.VarType.INT64)  # Paddle sums bool and int32 into int64
    return x.dtype


def _reduce_kernel(op):
    def kernel(xp, attrs, x):
        if attrs["in_dtype"] != -1:
            x = x.astype(to_numpy_dtype(attrs["in_dtype"]), copy=False)
        dtype = _reduce_out_dtype(xp, attrs, x, op)
        axes = _reduce_axes(attrs, x.ndim)
        reduce = x.sum if op == "sum" else x.mean
        # numpy returns a scalar when every dim goes; the op's output is a 0-d tensor.
        return xp.asarray(reduce(axis=axes, dtype=dtype, keepdims=attrs["keep_dim"]))
    return kernel


def _reduce_grad_kernel(op):
    def kernel(xp, attrs, x, dout):
        axes = _reduce_axes(attrs, x.ndim)
        kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        g = dout.reshape(kept)
        if op == "mean":
            g = g / max(prod(x.shape[a] for a in axes), 1)
        # astype copies: the gradient is a fresh contiguous array, not a broadcast view.
        return xp.broadcast_to(g, x.shape).astype(x.dtype)
    return kernel


def _infer_reduce(op):
    def infer(ctx):
        x = ctx.input("X")
        shape, rank = list(x.shape), len(x.shape)
        for d in ctx.attr("dim"):
            if not -max(rank, 1) <= d < max(rank, 1):
                ctx.fail(f"dim {d} is out of range for X {shape} of rank {rank}", slot="X")
        axes = set(_reduce_axes(ctx.attrs, rank))
        if ctx.attr("keep_dim"):
            out = [1 if i in axes else n for i, n in enumerate(shape)]
        else:
            out = [n for i, n in enumerate(shape) if i not in axes]
        dtype = x.dtype
        if ctx.attr("in_dtype") != -1:
            dtype = ctx.attr("in_dtype")
        if ctx.attr("out_dtype") != -1:
            dtype = ctx.attr("out_dtype")
        elif op == "sum" and dtype in (pb.VarType.BOOL, pb.VarType.INT32):
            dtype = pb.VarType.INT64
        ctx.set_output("Out", out, dtype=dtype, like=x)
    return infer


_REDUCE_ATTRS = [
    Attr("dim", AttrType.INTS, [0], doc="dims to reduce; negative counts from the end"),
    Attr("keep_dim", AttrType.BOOLEAN, False, doc="keep reduced dims with size 1"),
    Attr("reduce_all", AttrType.BOOLEAN, False, doc="reduce every dim (ignores dim)"),
    Attr("in_dtype", AttrType.INT, -1, doc="VarType to cast X to first (-1: none)"),
    Attr("out_dtype", AttrType.INT, -1, doc="VarType of Out (-1: X's)"),
]

for _op, _doc in (("sum", "Out = sum of X over dim"), ("mean", "Out = mean of X over dim")):
    register(f"reduce_{_op}", inputs=["X"], outputs=["Out"], attrs=_REDUCE_ATTRS,
             infer_shape=_infer_reduce(_op), kernel=_reduce_kernel(_op),
             grad=GradSpec(_reduce_grad_kernel(_op), inputs=("X",)),
             share_lod=(),  # Paddle keeps the LoD only when dim 0 survives; we never do
             doc=_doc, category="math")
