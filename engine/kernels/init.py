"""Ops that create tensors: ``fill_constant``, ``fill_zeros_like``."""
from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, Slot, register, same_as


def _fill_constant(xp, attrs, value_tensor, shape_tensor, shape_tensor_list):
    dtype = to_numpy_dtype(attrs["dtype"])
    shape = attrs["shape"] if shape_tensor is None else [int(d) for d in shape_tensor.tolist()]
    if shape_tensor_list:
        shape = [int(t.reshape(())) for t in shape_tensor_list]
    value = attrs["value"] if value_tensor is None else value_tensor.reshape(())
    if attrs["str_value"]:
        value = float(attrs["str_value"])
    return xp.full(tuple(shape), value, dtype=dtype)


def _infer_fill_constant(ctx):
    shape = ctx.attr("shape")
    if any(d < 0 for d in shape) and ctx.input("ShapeTensor") is None:
        ctx.fail(f"shape {shape} has a negative dim")
    ctx.set_output("Out", shape, dtype=ctx.attr("dtype"), lod_level=0)


register(
    "fill_constant",
    inputs=[Slot("ValueTensor", dispensable=True), Slot("ShapeTensor", dispensable=True),
            Slot("ShapeTensorList", duplicable=True, dispensable=True)],
    outputs=["Out"],
    attrs=[Attr("dtype", AttrType.INT, pb.VarType.FP32), Attr("shape", AttrType.LONGS, []),
           Attr("value", AttrType.FLOAT, 0.0), Attr("str_value", AttrType.STRING, ""),
           Attr("force_cpu", AttrType.BOOLEAN, False), Attr("place_type", AttrType.INT, -1)],
    infer_shape=_infer_fill_constant, kernel=_fill_constant,
    doc="Out = a tensor of `shape` filled with `value`", category="init")


register("fill_zeros_like", inputs=["X"], outputs=["Out"], infer_shape=same_as(),
         kernel=lambda xp, attrs, x: xp.zeros_like(x),
         doc="Out = zeros shaped like X (stands in for a missing gradient)", category="init")
