"""The crops of Paddle 1.x/2.x static programs: ``crop_tensor`` (shape and offsets from
attributes, a tensor or a list of 1-element tensors; -1 in shape runs to X's end) and
``crop`` (v1: shape from Y's dims or the attribute, offsets from the Offsets tensor or
the attribute), with Paddle 3.3.1's slots and grad ops (crop_tensor_grad reads X,
Offsets, OffsetsTensor and Out@GRAD; crop_grad X, Y, Offsets and Out@GRAD).

LoD (measured in Paddle 3.3.1): crop_tensor's Out takes X's LoD while it keeps X's rows
(Paddle hands it on even to other rows, where it no longer fits; Out gets none then);
crop's Out gets none.
"""
from ..errors import ShapeError
from ..ir.names import grad_name
from ..ir.registry import Attr, AttrType, GradOp, Slot, register
from ._util import host_ints
from .xshape import lod_if_rows_kept, register_grad, rows_lod_level


def _fail(op):
    def fail(message):
        raise ShapeError(f"op {op}: {message}")
    return fail


def _grad_of_x(op, extra_inputs=()):
    """Maker of ``<op>_grad``: X + ``extra_inputs`` + Out@GRAD -> X@GRAD."""
    def make(fwd):
        ins = {s: fwd.input(s) for s in ("X",) + tuple(extra_inputs)}
        ins["Out@GRAD"] = [grad_name(fwd.output("Out")[0])]
        return [GradOp(op + "_grad", ins, {"X@GRAD": [grad_name(fwd.input("X")[0])]})]
    return make


def _infer_dx_like_x(ctx):
    ctx.set_output("X@GRAD", ctx.input("X").shape, like=ctx.input("Out@GRAD"))


def _check_fits(shape, offsets, x_shape, fail):
    for s, n, o in zip(shape, x_shape, offsets):
        if s <= 0 or o < 0 or o + s > n:
            fail(f"crop of shape {list(shape)} at offsets {list(offsets)} does not fit X "
                 f"{list(x_shape)}")


def _paste(xp, x_shape, offsets, dout):
    """dX: zeros with dOut at the crop's place."""
    dx = xp.zeros(x_shape, dtype=dout.dtype)
    dx[tuple(slice(o, o + s) for o, s in zip(offsets, dout.shape))] = dout
    return dx


# ---------------------------------------------------------------- crop_tensor
def _crop_args(attrs, shape_t, shape_list, offsets_t, offsets_list, x_shape, fail):
    """(shape, offsets) by Paddle's precedence (list of tensors > tensor > attribute);
    a -1 in shape runs to X's end."""
    shape = ([host_ints(t)[0] for t in shape_list] if shape_list else
             host_ints(shape_t) if shape_t is not None else list(attrs["shape"]))
    offsets = ([host_ints(t)[0] for t in offsets_list] if offsets_list else
               host_ints(offsets_t) if offsets_t is not None else list(attrs["offsets"]))
    rank = len(x_shape)
    if len(shape) != rank or len(offsets) != rank:  # Paddle refuses empty offsets too
        fail(f"shape {shape} and offsets {offsets} must hold one value per dim of X "
             f"{list(x_shape)}")
    shape = [n - o if s == -1 else s for s, n, o in zip(shape, x_shape, offsets)]
    _check_fits(shape, offsets, x_shape, fail)
    return shape, offsets


def _crop_tensor(xp, attrs, x, shape_t, shape_list, offsets_t, offsets_list):
    shape, offsets = _crop_args(attrs, shape_t, shape_list, offsets_t, offsets_list, x.shape,
                                _fail("crop_tensor"))
    return x[tuple(slice(o, o + s) for o, s in zip(offsets, shape))].copy()


def _crop_tensor_grad(xp, attrs, x, offsets_t, offsets_list, dout):
    # the crop's shape is dout's; only the offsets are needed
    _, offsets = _crop_args(dict(attrs, shape=list(dout.shape)), None, [], offsets_t,
                            offsets_list, x.shape, _fail("crop_tensor_grad"))
    return _paste(xp, x.shape, offsets, dout)


def _infer_crop_tensor(ctx):
    x = ctx.input("X")
    rank = len(x.shape)
    if ctx.input("Shape") is not None or ctx.inputs("ShapeTensor"):
        out = [-1] * rank
    else:
        shape = list(ctx.attr("shape"))
        if len(shape) != rank:
            ctx.fail(f"shape {shape} must hold one value per dim of X {list(x.shape)}", "X")
        offsets_known = ctx.input("Offsets") is None and not ctx.inputs("OffsetsTensor")
        offsets = list(ctx.attr("offsets"))
        if offsets_known and len(offsets) != rank:
            ctx.fail(f"offsets {offsets} must hold one value per dim of X {list(x.shape)}", "X")
        offsets = offsets if offsets_known else [0] * rank
        out = [s if s != -1 else (n - o if offsets_known and n >= 0 else -1)
               for s, n, o in zip(shape, x.shape, offsets)]
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))


_CROP_IN = [Slot("Shape", dispensable=True, no_grad=True, doc="1-D int tensor: Out's shape"),
            Slot("ShapeTensor", duplicable=True, dispensable=True, no_grad=True,
                 doc="one 1-element int tensor per dim"),
            Slot("Offsets", dispensable=True, no_grad=True, doc="1-D int tensor: the start"),
            Slot("OffsetsTensor", duplicable=True, dispensable=True, no_grad=True,
                 doc="one 1-element int tensor per dim")]
_CROP_ATTRS = [Attr("shape", AttrType.INTS, [], doc="Out's shape; -1 runs to X's end"),
               Attr("offsets", AttrType.INTS, [], doc="where the crop starts in X")]
register("crop_tensor", inputs=["X"] + _CROP_IN, outputs=["Out"], attrs=_CROP_ATTRS,
         infer_shape=_infer_crop_tensor, kernel=lod_if_rows_kept(_crop_tensor), lod=True,
         share_lod=(("X", "Out"),),
         grad=_grad_of_x("crop_tensor", ("Offsets", "OffsetsTensor")),
         doc="Out = the block of X of `shape` starting at `offsets`", category="shape")
register_grad("crop_tensor", _CROP_ATTRS, [Slot("X")] + _CROP_IN[2:] + [Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True)], _infer_dx_like_x, _crop_tensor_grad)


# ----------------------------------------------------------------------- crop
def _crop_offsets(attrs, offsets_t, rank, fail):
    offsets = host_ints(offsets_t) if offsets_t is not None else list(attrs["offsets"])
    if len(offsets) != rank:
        fail(f"offsets {offsets} must hold one value per dim of X (rank {rank})")
    return offsets


def _crop(xp, attrs, x, y, offsets_t):
    fail = _fail("crop")
    shape = list(y.shape) if y is not None else list(attrs["shape"])
    if len(shape) != x.ndim:
        fail(f"shape {shape} must hold one value per dim of X {list(x.shape)}")
    offsets = _crop_offsets(attrs, offsets_t, x.ndim, fail)
    _check_fits(shape, offsets, x.shape, fail)
    return x[tuple(slice(o, o + s) for o, s in zip(offsets, shape))].copy()


def _crop_grad(xp, attrs, x, y, offsets_t, dout):
    return _paste(xp, x.shape, _crop_offsets(attrs, offsets_t, x.ndim, _fail("crop_grad")),
                  dout)


def _infer_crop(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    shape = list(y.shape) if y is not None else list(ctx.attr("shape"))
    if len(shape) != len(x.shape):
        ctx.fail(f"shape {shape} must hold one value per dim of X {list(x.shape)}", "X")
    if y is None and any(d < 0 for d in shape):
        ctx.fail(f"shape {shape} must be positive (crop takes no -1; crop_tensor does)")
    ctx.set_output("Out", shape, like=x, lod_level=0)


_CROP_V1_IN = [Slot("Y", dispensable=True, no_grad=True, doc="Out takes its shape"),
               Slot("Offsets", dispensable=True, no_grad=True, doc="1-D int tensor: the start")]
_CROP_V1_ATTRS = [Attr("offsets", AttrType.INTS, [], doc="where the crop starts in X"),
                  Attr("shape", AttrType.INTS, [], doc="Out's shape when Y is not given")]
register("crop", inputs=["X"] + _CROP_V1_IN, outputs=["Out"], attrs=_CROP_V1_ATTRS,
         infer_shape=_infer_crop, kernel=_crop, share_lod=(),
         grad=_grad_of_x("crop", ("Y", "Offsets")),
         doc="Out = the block of X of Y's shape (or `shape`) at `offsets` (Paddle 1.x crop)",
         category="shape")
register_grad("crop", _CROP_V1_ATTRS, [Slot("X")] + _CROP_V1_IN + [Slot("Out@GRAD")],
              [Slot("X@GRAD", dispensable=True)], _infer_dx_like_x, _crop_grad)
