"""Random creation ops, as Paddle 3.3.1's legacy ops: ``uniform_random_batch_size_like``,
``randint``, ``randperm``, ``bernoulli``, ``truncated_gaussian_random`` (the
TruncatedNormal initializer of saved startup programs) and ``seed`` (the seed tensor a
dropout reads).

They follow random_ops.py: numbers come from ``fluidscope.engine.random`` (the
device's shared generator, or a fresh one seeded by a nonzero ``seed`` attribute so the
op repeats itself). Values are not Paddle's (another generator), only their law is.
None has a gradient (Paddle registers none).
"""
import math

import numpy as np

from .. import random as fr
from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import REQUIRED, Attr, AttrType, Slot, register
from ._util import host_ints, ints_override
from .creation import BATCH_SIZE_LIKE_ATTRS, batch_size_like_shape
from .random_ops import uniform_to_range
from .special import erf

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
    return uniform_to_range(_uniform(xp, fr.generator(xp, attrs["seed"]), shape, dtype),
                            attrs, dtype)


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
def _randint(xp, attrs, shape_tensor, shape_list):
    low, high = attrs["low"], attrs["high"]
    if low >= high:
        raise ShapeError(f"op randint: low={low} must be < high={high}")
    shape = tuple(ints_override(attrs["shape"], shape_tensor, shape_list))
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


# -------------------------------------------------- truncated_gaussian_random
# Giles' single-precision erfinv ("Approximating the erfinv function", 2010), refined
# by Newton steps on erf (special.py) to double precision.
_GILES_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                  -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
               -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)


def _horner(coeffs, t):
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * t + c
    return acc


def erfinv(xp, y):
    """The inverse error function of float64 ``y`` in (-1, 1), elementwise."""
    w = -xp.log((1.0 - y) * (1.0 + y))
    central = _horner(_GILES_CENTRAL, xp.minimum(w, 5.0) - 2.5)
    tail = _horner(_GILES_TAIL, xp.sqrt(xp.maximum(w, 5.0)) - 3.0)
    x = xp.where(w < 5.0, central, tail) * y
    for _ in range(2):  # Newton: erf'(x) = 2 / sqrt(pi) * exp(-x^2)
        x = x - (erf(xp, x) - y) / (2.0 / math.sqrt(math.pi) * xp.exp(-x * x))
    return x


def _normal_cdf(z):
    return (1.0 + math.erf(z / math.sqrt(2.0))) / 2.0


def _truncated_gaussian(xp, attrs):
    mean, std, low, high = attrs["mean"], attrs["std"], attrs["a"], attrs["b"]
    if std <= 0 or low >= high:
        raise ShapeError(f"op truncated_gaussian_random: std={std} must be > 0 and "
                         f"a={low} < b={high}")
    # Paddle's law: N(mean, std^2) conditioned on [a, b] (absolute bounds), drawn by
    # the inverse CDF of a uniform between the CDFs of a and b.
    cdf_a, cdf_b = _normal_cdf((low - mean) / std), _normal_cdf((high - mean) / std)
    u = fr.generator(xp, attrs["seed"]).random(tuple(attrs["shape"]), dtype=xp.float64)
    y = xp.clip(2.0 * (cdf_a + (cdf_b - cdf_a) * u) - 1.0, -1 + 1e-16, 1 - 1e-16)
    out = xp.clip(math.sqrt(2.0) * erfinv(xp, y) * std + mean, low, high)
    return out.astype(to_numpy_dtype(attrs["dtype"]))


def _infer_truncated_gaussian(ctx):
    shape = list(ctx.attr("shape"))
    if any(d < 0 for d in shape):
        ctx.fail(f"shape {shape} has a negative dim")
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register("truncated_gaussian_random", inputs=[], outputs=["Out"],
         attrs=[Attr("shape", AttrType.INTS, REQUIRED, doc="Out's shape"),
                Attr("mean", AttrType.FLOAT, 0.0), Attr("std", AttrType.FLOAT, 1.0),
                Attr("seed", AttrType.INT, 0, doc=_SEED_DOC),
                Attr("a", AttrType.FLOAT, -2.0, doc="lowest value (absolute, not in stds)"),
                Attr("b", AttrType.FLOAT, 2.0, doc="highest value (absolute, not in stds)"),
                Attr("dtype", AttrType.INT, pb.VarType.FP32, doc="VarType of Out")],
         infer_shape=_infer_truncated_gaussian, kernel=_truncated_gaussian, share_lod=(),
         doc="Out = normal samples N(mean, std^2) kept within [a, b]", category="random")


# ----------------------------------------------------------------------- seed
def _seed(xp, attrs):
    value = attrs["seed"]
    if value == 0:
        # Paddle draws a fresh seed; here a nonzero int32 from the shared generator, so
        # engine.random.seed(n) repeats it (and a dropout reading it fixes its mask).
        value = 1 + int(fr.generator(xp, 0).random() * (2 ** 31 - 2))
    return xp.asarray([value], dtype=xp.int32)


register("seed", inputs=[], outputs=["Out"],
         attrs=[Attr("seed", AttrType.INT, 0, doc="the seed; 0: a random one")],
         infer_shape=lambda ctx: ctx.set_output("Out", [1], dtype=pb.VarType.INT32, lod_level=0),
         kernel=_seed, share_lod=(),
         doc="Out = [seed], or a random seed when seed is 0 (dropout's Seed input)",
         category="random")
