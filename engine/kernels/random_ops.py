"""Random ops: ``uniform_random``, ``gaussian_random`` (initialisers) and ``dropout``.

Random numbers come from ``fluidscope.engine.random``: the shared generator of the
device, or a fresh one seeded by the op's nonzero ``seed`` attribute (``Seed`` input
for dropout) so that op repeats its values on every run.
"""
from .. import random as fr
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradSpec, Slot, in_range, one_of, register

_FLOATS_DRAWN_DIRECTLY = ("float32", "float64")  # Generator.random/standard_normal dtypes


def _tensor_gives_shape(shape_attr):
    """Paddle 3.3.1 (uniform_random, gaussian_random) reads ShapeTensor only when the
    shape attribute is empty; a full attribute wins. One with -1 dims cannot be the
    shape, so ShapeTensor gives it then too (Paddle would fail)."""
    return not shape_attr or any(d < 0 for d in shape_attr)


def _shape_of(attrs, shape_tensor, shape_tensor_list):
    # Paddle's precedence: ShapeTensorList, then ShapeTensor (see above), then the attr.
    if shape_tensor_list:
        return tuple(int(t.reshape(-1)[0]) for t in shape_tensor_list)
    if shape_tensor is not None and _tensor_gives_shape(attrs["shape"]):
        return tuple(int(d) for d in shape_tensor.reshape(-1).tolist())
    return tuple(attrs["shape"])


def _draw(xp, attrs, shape, method):
    """Values from ``Generator.<method>`` in the op's dtype (drawn in float32 for
    narrower floats, which Generator cannot draw directly)."""
    dtype = to_numpy_dtype(attrs["dtype"])
    drawn = dtype if dtype.name in _FLOATS_DRAWN_DIRECTLY else xp.float32
    values = getattr(fr.generator(xp, attrs["seed"]), method)(shape, dtype=drawn)
    return values, dtype


def _uniform_random(xp, attrs, shape_tensor, shape_tensor_list):
    shape = _shape_of(attrs, shape_tensor, shape_tensor_list)
    out, dtype = _draw(xp, attrs, shape, "random")
    return uniform_to_range(out, attrs, dtype)


def uniform_to_range(out, attrs, dtype):
    """Samples of [0, 1) (``out``, ours to change) to [min, max) in ``dtype``, with Paddle's
    diag_num/diag_step/diag_val entries (uniform_random and its batch_size_like form)."""
    out *= attrs["max"] - attrs["min"]  # in place; Python floats keep its dtype
    out += attrs["min"]
    out = out.astype(dtype, copy=False)
    if attrs["diag_num"] > 0:
        # Paddle's identity-like init: diag_num entries at flat i * (diag_step + 1).
        flat = out.reshape(-1)
        for i in range(attrs["diag_num"]):
            flat[i * attrs["diag_step"] + i] = attrs["diag_val"]
    return out


def _gaussian_random(xp, attrs, shape_tensor, shape_tensor_list):
    shape = _shape_of(attrs, shape_tensor, shape_tensor_list)
    out, dtype = _draw(xp, attrs, shape, "standard_normal")
    out *= attrs["std"]
    out += attrs["mean"]
    return out.astype(dtype, copy=False)


def _infer_random(ctx):
    shape_tensor, shape_list = ctx.input("ShapeTensor"), ctx.inputs("ShapeTensorList")
    attr_shape = list(ctx.attr("shape"))
    if shape_list:
        # the Python API writes -1 in the attribute where a tensor gives the dim: the
        # other dims are known (an attribute without -1 does not describe the list)
        template = len(attr_shape) == len(shape_list) and any(d < 0 for d in attr_shape)
        shape = attr_shape if template else [-1] * len(shape_list)
    elif shape_tensor is not None and _tensor_gives_shape(attr_shape):
        count = shape_tensor.shape[0] if len(shape_tensor.shape) == 1 else -1
        if count < 0:
            ctx.fail(f"ShapeTensor {list(shape_tensor.shape)} must be a 1-D tensor of known "
                     "length", slot="ShapeTensor")
        shape = [-1] * count
    else:
        shape = ctx.attr("shape")
        if any(d < 0 for d in shape):
            ctx.fail(f"shape {shape} has a negative dim; give ShapeTensor for a run-time shape")
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


_SHAPE_INPUTS = [
    Slot("ShapeTensor", dispensable=True, no_grad=True, doc="int tensor [rank]: the shape"),
    Slot("ShapeTensorList", duplicable=True, dispensable=True, no_grad=True,
         doc="int tensors [1], one per dim"),
]
_SEED_DOC = "0: the shared generator (see engine.random.seed); else a fixed seed"

register(
    "uniform_random", inputs=_SHAPE_INPUTS, outputs=["Out"],
    attrs=[Attr("shape", AttrType.LONGS, []),
           Attr("dtype", AttrType.INT, pb.VarType.FP32),
           Attr("min", AttrType.FLOAT, -1.0), Attr("max", AttrType.FLOAT, 1.0),
           Attr("seed", AttrType.INT, 0, doc=_SEED_DOC),
           Attr("diag_num", AttrType.INT, 0, doc="entries set to diag_val (identity init)"),
           Attr("diag_step", AttrType.INT, 0), Attr("diag_val", AttrType.FLOAT, 1.0)],
    infer_shape=_infer_random, kernel=_uniform_random, share_lod=(),
    doc="Out = uniform samples in [min, max) of `shape`", category="random")

register(
    "gaussian_random", inputs=_SHAPE_INPUTS, outputs=["Out"],
    attrs=[Attr("shape", AttrType.LONGS, []),
           Attr("mean", AttrType.FLOAT, 0.0), Attr("std", AttrType.FLOAT, 1.0),
           Attr("seed", AttrType.INT, 0, doc=_SEED_DOC),
           Attr("dtype", AttrType.INT, pb.VarType.FP32)],
    infer_shape=_infer_random, kernel=_gaussian_random, share_lod=(),
    doc="Out = normal samples N(mean, std^2) of `shape`", category="random")


# ------------------------------------------------------------------- dropout
def _keep_scale(attrs):
    """Factor on kept values in training: 1/(1-p) when upscaling, else 1."""
    p = attrs["dropout_prob"]
    if attrs["dropout_implementation"] != "upscale_in_train":
        return 1.0
    return 0.0 if p >= 1.0 else 1.0 / (1.0 - p)


def _dropout(xp, attrs, x, seed):
    p = attrs["dropout_prob"]
    upscale = attrs["dropout_implementation"] == "upscale_in_train"
    if attrs["is_test"]:
        # Inference: no mask; downgrade_in_infer scales by the keep rate instead.
        return (x if upscale else x * (1.0 - p)), None
    if p == 0.0:
        return x, xp.ones(x.shape, dtype=xp.uint8)
    # Paddle's seed precedence: the Seed input; else, with fix_seed (one of Paddle's
    # extra attributes, which programs saved by Paddle carry), the seed attribute, so
    # that every run draws the same mask; else the shared generator. fix_seed with
    # seed 0 draws a fresh mask each run in Paddle 3.3.1 too (the shared generator).
    if seed is not None:
        op_seed = int(seed.reshape(-1)[0])
    else:
        op_seed = int(attrs.get("seed", 0)) if attrs.get("fix_seed", False) else 0
    keep = fr.generator(xp, op_seed).random(x.shape, dtype=xp.float32) >= p
    out = x * keep
    scale = _keep_scale(attrs)
    if scale != 1.0:
        out *= scale
    return out, keep.astype(xp.uint8)


def _dropout_grad(xp, attrs, mask, dout):
    p = attrs["dropout_prob"]
    if attrs["is_test"]:
        upscale = attrs["dropout_implementation"] == "upscale_in_train"
        return dout if upscale else dout * (1.0 - p)
    dx = dout * mask  # uint8 mask: the product keeps dout's float dtype
    scale = _keep_scale(attrs)
    if scale != 1.0:
        dx *= scale
    return dx


def _infer_dropout(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x.shape, like=x)
    # Declared even in test mode, as Paddle's DropoutInferMeta does (a Paddle program
    # always names a Mask var); the kernel leaves it empty (None) there, like Paddle.
    ctx.set_output("Mask", x.shape, dtype=pb.VarType.UINT8, like=x)


register(
    "dropout",
    inputs=[Slot("X"), Slot("Seed", dispensable=True, no_grad=True,
                            doc="int32 [1]: a fixed seed for the mask (0: shared generator)")],
    outputs=[Slot("Out"), Slot("Mask", intermediate=True,
                               doc="uint8, 1 where X was kept (training only)")],
    attrs=[Attr("dropout_prob", AttrType.FLOAT, 0.5, checker=in_range(0.0, 1.0),
                doc="probability of zeroing an element"),
           Attr("is_test", AttrType.BOOLEAN, False, doc="inference: no mask"),
           Attr("dropout_implementation", AttrType.STRING, "downgrade_in_infer",
                checker=one_of("downgrade_in_infer", "upscale_in_train"),
                doc="downgrade_in_infer: Out = X*mask, X*(1-p) in test; "
                    "upscale_in_train: Out = X*mask/(1-p), X in test")],
    infer_shape=_infer_dropout, kernel=_dropout,
    grad=GradSpec(_dropout_grad, inputs=(), outputs=("Mask",)),
    doc="Out = X with elements zeroed at random (rate dropout_prob)", category="random")
