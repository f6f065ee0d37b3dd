"""Dtype and constant ops: ``cast``, ``shape``, ``fill_any_like``, ``range`` and
``assign_value`` (its ``values`` are Paddle Scalars, attribute type SCALARS).

Slots and attributes are Paddle 3.3.1's; dtypes are Paddle's ``VarType`` enum ints
(ir.dtypes: BOOL 0, INT16 1, INT32 2, INT64 3, FP16 4, FP32 5, FP64 6, UINT8 20, INT8 21).
Only ``cast`` has a gradient (another ``cast``, back to the input dtype, as Paddle's);
``shape``, ``fill_any_like``, ``range`` and ``assign_value`` outputs do not depend differentiably on X.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.dtypes import to_numpy_dtype
from ..ir.names import grad_name
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register
from ..ir.proto import framework_pb2 as pb


def _host_scalar(tensor, op, slot):
    """The one value of a 1-element (or 0-d) tensor, as a numpy scalar of its dtype."""
    host = tensor.get() if hasattr(tensor, "get") else tensor
    if host.size != 1:
        raise ShapeError(f"op {op}: {slot} must hold one value, got shape {list(host.shape)}")
    return host.reshape(-1)[0]


# ----------------------------------------------------------------------- cast
def _cast(xp, attrs, x):
    # numpy's astype is C's conversion, as Paddle's kernel (static_cast): floats to ints
    # truncate toward zero, nonzero to bool is True.
    return x.astype(to_numpy_dtype(attrs["out_dtype"]), copy=True)


def _infer_cast(ctx):
    x = ctx.input("X")
    to_numpy_dtype(ctx.attr("out_dtype"))  # fails clearly on a dtype numpy lacks
    ctx.set_output("Out", x.shape, dtype=ctx.attr("out_dtype"), like=x)


def _cast_grad_maker(op):
    # Paddle's gradient of cast is a cast of Out@GRAD back to the input dtype.
    return [GradOp("cast", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]},
                   {"in_dtype": op.attrs["out_dtype"], "out_dtype": op.attrs["in_dtype"]})]


register("cast", inputs=["X"], outputs=["Out"],
         attrs=[Attr("out_dtype", AttrType.INT, REQUIRED, doc="VarType of Out (5 = float32)"),
                Attr("in_dtype", AttrType.INT, REQUIRED, doc="VarType of X")],
         infer_shape=_infer_cast, kernel=_cast, grad=_cast_grad_maker,
         doc="Out = X converted to out_dtype", category="math")


# ---------------------------------------------------------------------- shape
def _shape(xp, attrs, x):
    return xp.asarray(x.shape, dtype=np.int32)


def _infer_shape(ctx):
    # Paddle 3.3.1's legacy shape op writes int32 whatever the Out var declares.
    ctx.set_output("Out", [len(ctx.input("Input").shape)], dtype=pb.VarType.INT32, lod_level=0)


register("shape", inputs=[Slot("Input", no_grad=True)], outputs=["Out"],
         infer_shape=_infer_shape, kernel=_shape, share_lod=(),
         doc="Out = the dims of Input, as a 1-D int32 tensor", category="shape")


# -------------------------------------------------------------- fill_any_like
def _out_dtype(attrs, x_dtype):
    return x_dtype if attrs["dtype"] == -1 else to_numpy_dtype(attrs["dtype"])


def _fill_any_like(xp, attrs, x):
    dtype = _out_dtype(attrs, x.dtype)
    # np.full converts the float value as C does (2.5 -> 2 for ints, nonzero -> True).
    return xp.full(x.shape, np.asarray(attrs["value"]).astype(dtype), dtype=dtype)


def _infer_fill_any_like(ctx):
    x = ctx.input("X")
    dtype = ctx.attr("dtype")
    if dtype != -1:
        to_numpy_dtype(dtype)
    ctx.set_output("Out", x.shape, dtype=None if dtype == -1 else dtype, like=x)


register("fill_any_like", inputs=[Slot("X", no_grad=True)], outputs=["Out"],
         attrs=[Attr("value", AttrType.FLOAT, 0.0, doc="the fill value"),
                Attr("dtype", AttrType.INT, -1, doc="VarType of Out; -1 = X's dtype")],
         infer_shape=_infer_fill_any_like, kernel=_fill_any_like,
         doc="Out = a tensor shaped like X filled with value", category="shape")


# ---------------------------------------------------------------------- range
def _range_size(start, end, step, integral):
    """Paddle's GetSize: step must be nonzero and point from start towards end."""
    if step == 0:
        raise ShapeError("op range: Step must not be 0")
    if start < end and step < 0 or start > end and step > 0:
        raise ShapeError(f"op range: Step {step} points away from End {end} (Start {start})")
    if integral:
        return int((abs(int(end) - int(start)) + abs(int(step)) - 1) // abs(int(step)))
    return int(np.ceil(abs((end - start) / step)))  # in the tensor dtype, as Paddle


def _range(xp, attrs, start, end, step):
    s, e, d = (_host_scalar(t, "range", n) for t, n in
               ((start, "Start"), (end, "End"), (step, "Step")))
    dtype = start.dtype
    e, d = e.astype(dtype), d.astype(dtype)
    size = _range_size(s, e, d, np.issubdtype(dtype, np.integer))
    # Paddle's CPU kernel adds Step to a running value; a sequential cumsum in the
    # tensor dtype gives the same float rounding.
    steps = xp.full((size,), d, dtype=dtype)
    if size:
        steps[0] = s
    return xp.cumsum(steps, dtype=dtype)


def _infer_range(ctx):
    start = ctx.input("Start")
    for slot in ("Start", "End", "Step"):
        meta = ctx.input(slot)
        if any(n > 1 for n in meta.shape):
            ctx.fail(f"must hold one value, got shape {list(meta.shape)}", slot)
    ctx.set_output("Out", [-1], dtype=start.dtype, lod_level=0, like=start)


register("range", inputs=[Slot(s, no_grad=True, doc=f"1-element {s.lower()}")
                          for s in ("Start", "End", "Step")],
         outputs=["Out"], infer_shape=_infer_range, kernel=_range,
         doc="Out = Start, Start+Step, ... up to (not including) End, in Start's dtype",
         category="shape")



# --------------------------------------------------------------- assign_value
def _assign_value(xp, attrs, values_tensor):
    dtype, shape = to_numpy_dtype(attrs["dtype"]), list(attrs["shape"])
    if values_tensor is not None:
        values = values_tensor.reshape(-1).astype(dtype)
    else:
        # ``values`` holds Paddle Scalars (bool, int or float); numpy converts them to
        # the dtype as Paddle's kernel does.
        values = xp.asarray(np.asarray(attrs["values"]).astype(dtype).reshape(-1))
    count = 1
    for d in shape:
        count *= d
    if values.size != count:
        raise ShapeError(f"op assign_value: {values.size} values do not fill shape {shape} "
                         f"({count} elements)")
    return values.reshape(shape)


def _infer_assign_value(ctx):
    to_numpy_dtype(ctx.attr("dtype"))
    shape = list(ctx.attr("shape"))
    if any(d < 0 for d in shape):
        ctx.fail(f"shape {shape} must be fully known")
    if ctx.input("ValuesTensor") is None and len(ctx.attr("values")) != int(np.prod(shape)):
        ctx.fail(f"{len(ctx.attr('values'))} values do not fill shape {shape}")
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register("assign_value",
         inputs=[Slot("ValuesTensor", dispensable=True, no_grad=True,
                      doc="values as a tensor (wins over the attribute)")],
         outputs=["Out"],
         attrs=[Attr("shape", AttrType.INTS, REQUIRED, doc="dims of Out"),
                Attr("dtype", AttrType.INT, REQUIRED, doc="VarType of Out (5 = float32)"),
                Attr("values", AttrType.SCALARS, [], doc="the elements, row-major")],
         infer_shape=_infer_assign_value, kernel=_assign_value, share_lod=(),
         doc="Out = the constant values, shaped and typed by the attributes",
         category="shape")
