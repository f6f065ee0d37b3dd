"""Creation and size ops without randomness, as Paddle 3.3.1's legacy ops
(slots, attributes and defaults from its OpProtos):

``fill_constant_batch_size_like`` (a constant whose batch dim copies Input's, or
Input's sequence count when Input has a LoD), ``linspace``, ``logspace``, ``tril_indices`` /
``triu_indices``, ``size``, ``shape64``, ``is_empty``, ``increment``, ``sequence_mask``,
``empty`` and ``fill``. None has a gradient: Paddle registers none (their outputs do
not depend differentiably on an input). The random ones are in creation_random.py.

dtypes are Paddle's ``VarType`` enum ints (BOOL 0, INT32 2, INT64 3, FP32 5, FP64 6).
"""
import numpy as np

from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import REQUIRED, Attr, AttrType, Slot, register
from ._util import host_ints, ints_override

_INT64, _FP32 = pb.VarType.INT64, pb.VarType.FP32


def host_scalar(tensor, op, slot):
    """The one value of a 1-element tensor, as a numpy scalar of its dtype."""
    host = tensor.get() if hasattr(tensor, "get") else np.asarray(tensor)
    if host.size != 1:
        raise ShapeError(f"op {op}: {slot} must hold one value, got shape {list(host.shape)}")
    return host.reshape(-1)[0]


def batch_size_like_shape(op, attrs, in_shape, fail):
    """Paddle's BatchSizeLikeOp rule: ``shape`` with dim ``output_dim_idx`` replaced by
    Input's dim ``input_dim_idx``."""
    shape = list(attrs["shape"])
    i, o = attrs["input_dim_idx"], attrs["output_dim_idx"]
    if not shape:
        fail(f"op {op}: shape must not be empty")
    if not 0 <= i < len(in_shape):
        fail(f"op {op}: input_dim_idx={i} is not a dim of Input {list(in_shape)}")
    if not 0 <= o < len(shape):
        fail(f"op {op}: output_dim_idx={o} is not a dim of shape {shape}")
    shape[o] = in_shape[i]
    return shape


def _raise(message):
    raise ShapeError(message)


# ------------------------------------------------- fill_constant_batch_size_like
def _fill_value(attrs, dtype):
    # Paddle: a non-empty str_value wins over value (it keeps precision a float attr loses).
    value = float(attrs["str_value"]) if attrs["str_value"] else attrs["value"]
    return np.asarray(value).astype(dtype)[()]  # a numpy scalar: cupy takes it too


def _fill_constant_bsl(xp, attrs, lod, x):
    shape = batch_size_like_shape("fill_constant_batch_size_like", attrs, x.shape, _raise)
    in_lod = lod.inputs[0]
    if in_lod and attrs["input_dim_idx"] == 0:
        # Paddle's kernel: with a LoD, the batch is the number of sequences, not rows.
        shape[attrs["output_dim_idx"]] = len(in_lod[-1]) - 1
    lod.outputs[0] = []
    dtype = to_numpy_dtype(attrs["dtype"])
    return xp.full(tuple(shape), _fill_value(attrs, dtype), dtype=dtype)


def infer_batch_size_like(ctx):
    x = ctx.input("Input")
    shape = batch_size_like_shape(ctx.op_type, ctx.attrs, list(x.shape), ctx.fail)
    if x.lod_level and ctx.attr("input_dim_idx") == 0:
        shape[ctx.attr("output_dim_idx")] = -1  # the sequence count, known at run time
    to_numpy_dtype(ctx.attr("dtype"))
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


BATCH_SIZE_LIKE_ATTRS = [
    Attr("shape", AttrType.INTS, REQUIRED, doc="Out's shape; dim output_dim_idx is replaced"),
    Attr("input_dim_idx", AttrType.INT, 0, doc="the dim of Input that gives the batch"),
    Attr("output_dim_idx", AttrType.INT, 0, doc="the dim of Out that takes it"),
]

register("fill_constant_batch_size_like",
         inputs=[Slot("Input", no_grad=True, doc="gives the batch size (its sequence count "
                                                 "when it has a LoD)")],
         outputs=["Out"],
         attrs=BATCH_SIZE_LIKE_ATTRS + [
             Attr("dtype", AttrType.INT, _FP32, doc="VarType of Out"),
             Attr("value", AttrType.FLOAT, 0.0, doc="the fill value"),
             Attr("str_value", AttrType.STRING, "", doc="the fill value as text; wins over value"),
             Attr("force_cpu", AttrType.BOOLEAN, False, doc="keep Out in host memory")],
         infer_shape=infer_batch_size_like, kernel=_fill_constant_bsl, lod=True, share_lod=(),
         doc="Out = value in `shape`, its batch dim copied from Input", category="creation")


# ------------------------------------------------------------------- linspace
def _linspace(xp, attrs, start, stop, num):
    dtype = to_numpy_dtype(attrs["dtype"])
    # Paddle casts Start and Stop to dtype first, then steps in double from both ends:
    # the first half counts up from Start, the second down from Stop.
    a = host_scalar(start, "linspace", "Start").astype(dtype)
    b = host_scalar(stop, "linspace", "Stop").astype(dtype)
    n = int(host_scalar(num, "linspace", "Num"))
    if n <= 0:
        raise ShapeError(f"op linspace: Num={n} must be > 0")
    if n == 1:
        return xp.full((1,), a, dtype=dtype)
    step = float(b - a) / (n - 1)  # (stop - start) in dtype, as Paddle's static_cast<double>
    i = xp.arange(n, dtype=xp.float64)
    up = float(a) + step * i
    down = float(b) - step * (n - 1 - i)
    values = xp.where(i < n // 2, up, down)
    if np.issubdtype(dtype, np.integer):
        values = xp.trunc(values)  # C's double -> int conversion
    return values.astype(dtype)


def _infer_linspace(ctx):
    for slot in ("Start", "Stop", "Num"):
        meta = ctx.input(slot)
        if any(d > 1 for d in meta.shape):
            ctx.fail(f"must hold one value, got shape {list(meta.shape)}", slot)
    to_numpy_dtype(ctx.attr("dtype"))
    ctx.set_output("Out", [-1], dtype=ctx.attr("dtype"), lod_level=0)


register("linspace",
         inputs=[Slot("Start", no_grad=True, doc="1-element first value"),
                 Slot("Stop", no_grad=True, doc="1-element last value"),
                 Slot("Num", no_grad=True, doc="1-element int32 count")],
         outputs=["Out"],
         attrs=[Attr("dtype", AttrType.INT, REQUIRED, doc="VarType of Out")],
         infer_shape=_infer_linspace, kernel=_linspace, share_lod=(),
         doc="Out = Num evenly spaced values from Start to Stop (both included)",
         category="creation")


# ------------------------------------------------------------------- logspace
def _logspace(xp, attrs, start, stop, num, base):
    dtype = to_numpy_dtype(attrs["dtype"])
    # Paddle: Start, Stop and Base cast to dtype; exponents stepped in double as
    # linspace's; each value pow(base, exponent) in double, then cast (ints truncate).
    a, b, bs = (host_scalar(t, "logspace", n).astype(dtype)
                for t, n in ((start, "Start"), (stop, "Stop"), (base, "Base")))
    n = int(host_scalar(num, "logspace", "Num"))
    if n <= 0:
        raise ShapeError(f"op logspace: Num={n} must be > 0")
    i = xp.arange(n, dtype=xp.float64)
    if n == 1:
        exponents = xp.full((1,), float(a))
    else:
        step = float(b - a) / (n - 1)
        exponents = xp.where(i < n // 2, float(a) + step * i, float(b) - step * (n - 1 - i))
    values = xp.power(float(bs), exponents)
    if np.issubdtype(dtype, np.integer):
        values = xp.trunc(values)
    return values.astype(dtype)


def _infer_logspace(ctx):
    for slot in ("Start", "Stop", "Num", "Base"):
        meta = ctx.input(slot)
        if any(d > 1 for d in meta.shape):
            ctx.fail(f"must hold one value, got shape {list(meta.shape)}", slot)
    to_numpy_dtype(ctx.attr("dtype"))
    ctx.set_output("Out", [-1], dtype=ctx.attr("dtype"), lod_level=0)


register("logspace",
         inputs=[Slot("Start", no_grad=True, doc="1-element first exponent"),
                 Slot("Stop", no_grad=True, doc="1-element last exponent"),
                 Slot("Num", no_grad=True, doc="1-element int32 count"),
                 Slot("Base", no_grad=True, doc="1-element base")],
         outputs=["Out"],
         attrs=[Attr("dtype", AttrType.INT, REQUIRED, doc="VarType of Out")],
         infer_shape=_infer_logspace, kernel=_logspace, share_lod=(),
         doc="Out = Base ** (Num evenly spaced exponents from Start to Stop)",
         category="creation")


# --------------------------------------------------------- tril/triu_indices
def _tri_count(rows, cols, offset, lower):
    return int(np.tril_indices(rows, offset, cols)[0].size if lower else
               np.triu_indices(rows, offset, cols)[0].size)


def _tri_indices(lower, r, c):
    def kernel(xp, attrs):
        rows, cols, offset = attrs[r], attrs[c], attrs["offset"]
        make = np.tril_indices if lower else np.triu_indices
        # index lists depend on attributes only: built on the host, then moved
        out = np.stack(make(rows, offset, cols)).astype(to_numpy_dtype(attrs["dtype"]))
        return xp.asarray(out.reshape(2, -1))
    return kernel


def _infer_tri(lower, r, c):
    def infer(ctx):
        rows, cols = ctx.attr(r), ctx.attr(c)
        if rows < 0 or cols < 0:
            ctx.fail(f"{r}={rows} and {c}={cols} must be >= 0")
        to_numpy_dtype(ctx.attr("dtype"))
        n = _tri_count(rows, cols, ctx.attr("offset"), lower)
        ctx.set_output("out", [2, n], dtype=ctx.attr("dtype"), lod_level=0)
    return infer


for _op, _lower, _r, _c in (("tril_indices", True, "rows", "cols"),
                            ("triu_indices", False, "row", "col")):
    _which = "on or below" if _lower else "on or above"
    register(_op, inputs=[], outputs=["out"],
             attrs=[Attr(_r, AttrType.INT, 0, doc="rows of the matrix"),
                    Attr(_c, AttrType.INT, 0, doc="columns of the matrix"),
                    Attr("offset", AttrType.INT, 0, doc="diagonal: 0 main, > 0 above"),
                    Attr("dtype", AttrType.INT, _INT64, doc="VarType of out (int32/int64)")],
             infer_shape=_infer_tri(_lower, _r, _c), kernel=_tri_indices(_lower, _r, _c),
             share_lod=(),
             doc=f"out = [2, N] row/column indices of the entries {_which} the offset diagonal",
             category="creation")


# ----------------------------------------------------- size, shape64, is_empty
def _size(xp, attrs, x):
    return xp.asarray(int(np.prod(x.shape, dtype=np.int64)), dtype=xp.int64)


def _shape64(xp, attrs, x):
    return xp.asarray(x.shape, dtype=xp.int64)


def _is_empty(xp, attrs, x):
    return xp.asarray(x.size == 0)


def _infer_scalar(out_slot, dtype):
    def infer(ctx):
        ctx.set_output(out_slot, [], dtype=dtype, lod_level=0)
    return infer


def _infer_shape64(ctx):
    ctx.set_output("out", [len(ctx.input("input").shape)], dtype=_INT64, lod_level=0)


register("size", inputs=[Slot("Input", no_grad=True)], outputs=["Out"],
         infer_shape=_infer_scalar("Out", _INT64), kernel=_size, share_lod=(),
         doc="Out = the number of elements of Input (0-D int64)", category="shape")
register("shape64", inputs=[Slot("input", no_grad=True)], outputs=["out"],
         infer_shape=_infer_shape64, kernel=_shape64, share_lod=(),
         doc="out = the dims of input, as a 1-D int64 tensor", category="shape")
register("is_empty", inputs=[Slot("X", no_grad=True)], outputs=["Out"],
         infer_shape=_infer_scalar("Out", pb.VarType.BOOL), kernel=_is_empty, share_lod=(),
         doc="Out = (X has no elements), a 0-D bool", category="shape")


# ------------------------------------------------------------------ increment
def _increment(xp, attrs, x):
    if x.size != 1:
        raise ShapeError(f"op increment: X must hold one value, got shape {list(x.shape)}")
    # X's dtype is kept: the float step is converted to it as Paddle's static_cast<T>.
    return x + np.asarray(attrs["step"]).astype(x.dtype)[()]


def _infer_increment(ctx):
    x = ctx.input("X")
    if any(d > 1 for d in x.shape):
        ctx.fail(f"must hold one value, got shape {list(x.shape)}", "X")
    ctx.set_output("Out", x.shape, like=x)


register("increment", inputs=[Slot("X", no_grad=True, doc="1-element counter")],
         outputs=["Out"], attrs=[Attr("step", AttrType.FLOAT, 1.0, doc="added to X")],
         infer_shape=_infer_increment, kernel=_increment,
         doc="Out = X + step (a loop counter; no gradient)", category="math")


# -------------------------------------------------------------- sequence_mask
def _sequence_mask(xp, attrs, x, max_len_tensor):
    if max_len_tensor is not None:
        maxlen = int(host_scalar(max_len_tensor, "sequence_mask", "MaxLenTensor"))
        if maxlen <= 0:
            raise ShapeError(f"op sequence_mask: MaxLenTensor={maxlen} must be > 0")
    else:
        maxlen = attrs["maxlen"]
        if maxlen < 0:  # Paddle: -1 (any negative) means the largest length in X
            maxlen = int(x.max()) if x.size else 0
    steps = xp.arange(maxlen, dtype=xp.int64)
    mask = steps < x.astype(xp.int64)[..., None]
    return mask.astype(to_numpy_dtype(attrs["out_dtype"]))


def _infer_sequence_mask(ctx):
    x = ctx.input("X")
    maxlen = ctx.attr("maxlen")
    to_numpy_dtype(ctx.attr("out_dtype"))
    known = maxlen >= 0 and ctx.input("MaxLenTensor") is None
    ctx.set_output("Y", list(x.shape) + [maxlen if known else -1],
                   dtype=ctx.attr("out_dtype"), lod_level=0)


register("sequence_mask",
         inputs=[Slot("X", no_grad=True, doc="int lengths, any shape"),
                 Slot("MaxLenTensor", dispensable=True, no_grad=True,
                      doc="1-element int: mask width (beats maxlen)")],
         outputs=["Y"],
         attrs=[Attr("maxlen", AttrType.INT, -1, doc="mask width; < 0: the largest length"),
                Attr("out_dtype", AttrType.INT, REQUIRED, doc="VarType of Y")],
         infer_shape=_infer_sequence_mask, kernel=_sequence_mask, share_lod=(),
         doc="Y[..., j] = j < X[...] (1 on the first X steps of each row)",
         category="sequence")


# ---------------------------------------------------------------- empty, fill
def _empty(xp, attrs, shape_tensor, shape_list):
    shape = tuple(ints_override(attrs["shape"], shape_tensor, shape_list))
    if any(d < 0 for d in shape):
        raise ShapeError(f"op empty: shape {list(shape)} has a negative dim")
    # Uninitialised memory, as Paddle's: the values mean nothing, only shape and dtype.
    return xp.empty(shape, dtype=to_numpy_dtype(attrs["dtype"]))


def _infer_empty(ctx):
    shape_tensor, shape_list = ctx.input("ShapeTensor"), ctx.inputs("ShapeTensorList")
    if shape_tensor is not None:
        if len(shape_tensor.shape) != 1 or shape_tensor.shape[0] < 0:
            ctx.fail(f"must be 1-D of known length, got {list(shape_tensor.shape)}",
                     "ShapeTensor")
        shape = [-1] * shape_tensor.shape[0]
    elif shape_list:
        shape = [-1] * len(shape_list)
    else:
        shape = list(ctx.attr("shape"))
    to_numpy_dtype(ctx.attr("dtype"))
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register("empty",
         inputs=[Slot("ShapeTensor", dispensable=True, no_grad=True,
                      doc="int tensor [rank]: the shape (beats the rest)"),
                 Slot("ShapeTensorList", duplicable=True, dispensable=True, no_grad=True,
                      doc="int tensors [1], one per dim")],
         outputs=["Out"],
         attrs=[Attr("shape", AttrType.LONGS, [], doc="Out's shape"),
                Attr("dtype", AttrType.INT, _FP32, doc="VarType of Out")],
         infer_shape=_infer_empty, kernel=_empty, share_lod=(),
         doc="Out = an uninitialised tensor of `shape` (values mean nothing)",
         category="creation")


def _fill(xp, attrs):
    shape = tuple(attrs["shape"])
    values = np.asarray(attrs["value"], dtype=np.float64)
    if values.size != int(np.prod(shape, dtype=np.int64)):
        raise ShapeError(f"op fill: {values.size} values do not fill shape {list(shape)}")
    # The float values converted to dtype as Paddle's cast (ints truncate).
    return xp.asarray(values.astype(to_numpy_dtype(attrs["dtype"])).reshape(shape))


def _infer_fill(ctx):
    shape = list(ctx.attr("shape"))
    if int(np.prod(shape, dtype=np.int64)) != len(ctx.attr("value")) or any(d < 0 for d in shape):
        ctx.fail(f"{len(ctx.attr('value'))} values do not fill shape {shape}")
    to_numpy_dtype(ctx.attr("dtype"))
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register("fill", inputs=[], outputs=["Out"],
         attrs=[Attr("value", AttrType.FLOATS, REQUIRED, doc="the values, row-major"),
                Attr("shape", AttrType.INTS, REQUIRED, doc="Out's shape"),
                Attr("dtype", AttrType.INT, _FP32, doc="VarType of Out"),
                Attr("force_cpu", AttrType.BOOLEAN, False, doc="keep Out in host memory")],
         infer_shape=_infer_fill, kernel=_fill, share_lod=(),
         doc="Out = the listed values in `shape`", category="creation")
