"""Random creation ops, as Paddle 3.3.1's legacy ops: ``uniform_random_batch_size_like``,
``randint``, ``randperm`` and ``bernoulli``.

They follow random_ops.py: numbers come from ``fluidscope.engine.random`` (the
device's shared generator, or a fresh one seeded by a nonzero ``seed`` attribute so the
op repeats itself). Values are not Paddle's (another generator), only their law is.
None has a gradient (Paddle registers none).
"""
import numpy as np

from .. import random as fr
from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import REQUIRED, Attr, AttrType, Slot, register
from .creation import BATCH_SIZE_LIKE_ATTRS, batch_size_like_shape, host_ints

_SEED_DOC = "0: the shared generator (see engine.random.seed); else a fixed seed"


def _raise(message):
    raise ShapeError(message)


def _uniform(xp, gen, shape, dtype):
    """Uniform [0, 1) in a float dtype (drawn in float32 for narrower floats)."""
    drawn = dtype if dtype.name in ("float32", "float64") else np.dtype(np.float32)
    return gen.random(shape, dtype=drawn)


# ----------------------------------------------- uniform_random_batch_size_like
def _uniform_bsl(xp, attrs, x):
    shape = tuple(batch_size_like_shape("uniform_random_batch_size_like", attrs, x.shape,
                                        _raise))
    dtype = to_numpy_dtype(attrs["dtype"])
    out = _uniform(xp, fr.generator(xp, attrs["seed"]), shape, dtype)
    out *= attrs["max"] - attrs["min"]
    out += attrs["min"]
    out = out.astype(dtype, copy=False)
    if attrs["diag_num"] > 0:
        # Paddle's identity-like init: diag_num entries at flat i * (diag_step + 1).
        flat = out.reshape(-1)
        for i in range(attrs["diag_num"]):
            flat[i * attrs["diag_step"] + i] = attrs["diag_val"]
    return out


def _infer_uniform_bsl(ctx):
    x = ctx.input("Input")
    shape = batch_size_like_shape(ctx.op_type, ctx.attrs, list(x.shape), ctx.fail)
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register("uniform_random_batch_size_like",
         inputs=[Slot("Input", no_grad=True, doc="gives the batch size")],
         outputs=["Out"],
         attrs=BATCH_SIZE_LIKE_ATTRS + [
             Attr("min", AttrType.FLOAT, -1.0), Attr("max", AttrType.FLOAT, 1.0),
             Attr("seed", AttrType.INT, 0, doc=_SEED_DOC),
             Attr("diag_num", AttrType.INT, 0, doc="entries set to diag_val (identity init)"),
             Attr("diag_step", AttrType.INT, 0), Attr("diag_val", AttrType.FLOAT, 1.0),
             Attr("dtype", AttrType.INT, pb.VarType.FP32, doc="VarType of Out")],
         infer_shape=_infer_uniform_bsl, kernel=_uniform_bsl, share_lod=(),
         doc="Out = uniform samples in [min, max), its batch dim copied from Input",
         category="random")


# -------------------------------------------------------------------- randint
def _randint_shape(attrs, shape_tensor, shape_list):
    # Paddle's randint: ShapeTensor, then ShapeTensorList, then the attribute.
    if shape_tensor is not None:
        return tuple(host_ints(shape_tensor))
    if shape_list:
        return tuple(host_ints(t)[0] for t in shape_list)
    return tuple(attrs["shape"])


def _randint(xp, attrs, shape_tensor, shape_list):
    low, high = attrs["low"], attrs["high"]
    if low >= high:
        raise ShapeError(f"op randint: low={low} must be < high={high}")
    shape = _randint_shape(attrs, shape_tensor, shape_list)
    u = fr.generator(xp, attrs["seed"]).random(shape, dtype=xp.float64)
    # floor(u * n) with u in [0, 1) is uniform over the n integers of [low, high)
    return (xp.floor(u * (high - low)) + low).astype(to_numpy_dtype(attrs["dtype"]))


def _infer_randint(ctx):
    shape_tensor, shape_list = ctx.input("ShapeTensor"), ctx.inputs("ShapeTensorList")
    if ctx.attr("low") >= ctx.attr("high"):
        ctx.fail(f"low={ctx.attr('low')} must be < high={ctx.attr('high')}")
    if shape_tensor is not None:
        if len(shape_tensor.shape) != 1 or shape_tensor.shape[0] < 0:
            ctx.fail(f"must be 1-D of known length, got {list(shape_tensor.shape)}",
                     "ShapeTensor")
        shape = [-1] * shape_tensor.shape[0]
    elif shape_list:
        shape = [-1] * len(shape_list)
    else:
        shape = list(ctx.attr("shape"))
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


_SHAPE_INPUTS = [
    Slot("ShapeTensor", dispensable=True, no_grad=True, doc="int tensor [rank]: the shape"),
    Slot("ShapeTensorList", duplicable=True, dispensable=True, no_grad=True,
         doc="int tensors [1], one per dim"),
]

register("randint", inputs=_SHAPE_INPUTS, outputs=["Out"],
         attrs=[Attr("low", AttrType.INT, REQUIRED, doc="smallest value"),
                Attr("high", AttrType.INT, REQUIRED, doc="one above the largest value"),
                Attr("shape", AttrType.LONGS, [], doc="Out's shape"),
                Attr("dtype", AttrType.INT, pb.VarType.INT64, doc="VarType of Out (int32/int64)"),
                Attr("seed", AttrType.INT, 0, doc=_SEED_DOC)],
         infer_shape=_infer_randint, kernel=_randint, share_lod=(),
         doc="Out = uniform random integers in [low, high)", category="random")


# ------------------------------------------------------------------- randperm
def _randperm(xp, attrs):
    n = attrs["n"]
    if n < 0:
        raise ShapeError(f"op randperm: n={n} must be >= 0")
    # ``seed`` is one of Paddle's extra attributes here; a saved program may carry it.
    gen = fr.generator(xp, int(attrs.get("seed", 0)))
    # argsort of iid uniforms is a uniform permutation (numpy and cupy both have it)
    return xp.argsort(gen.random((n,)), kind="stable").astype(to_numpy_dtype(attrs["dtype"]))


def _infer_randperm(ctx):
    if ctx.attr("n") < 0:
        ctx.fail(f"n={ctx.attr('n')} must be >= 0")
    ctx.set_output("Out", [ctx.attr("n")], dtype=ctx.attr("dtype"), lod_level=0)


register("randperm", inputs=[], outputs=["Out"],
         attrs=[Attr("n", AttrType.INT, REQUIRED, doc="permute 0 .. n-1"),
                Attr("dtype", AttrType.INT, pb.VarType.INT64, doc="VarType of Out")],
         infer_shape=_infer_randperm, kernel=_randperm, share_lod=(),
         doc="Out = a random permutation of 0 .. n-1", category="random")


# ------------------------------------------------------------------ bernoulli
def _bernoulli(xp, attrs, x):
    if x.size and (float(x.min()) < 0 or float(x.max()) > 1):
        raise ShapeError("op bernoulli: X holds probabilities, which must be in [0, 1]")
    u = _uniform(xp, fr.generator(xp, 0), x.shape, np.dtype(str(x.dtype)))
    return (u < x).astype(x.dtype)


def _infer_bernoulli(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x.shape, like=x, lod_level=0)


register("bernoulli", inputs=[Slot("X", no_grad=True, doc="probabilities in [0, 1]")],
         outputs=["Out"], infer_shape=_infer_bernoulli, kernel=_bernoulli, share_lod=(),
         doc="Out = 1 with probability X, else 0 (X's dtype)", category="random")
