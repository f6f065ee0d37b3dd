"""Ops that create tensors: ``fill_constant``, ``fill_zeros_like``."""
from math import copysign

import numpy as np

from ..ir.dtypes import to_numpy_dtype
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, Slot, register, same_as


# (dtype, shape, value's type, value, its sign) -> the array xp.full made for them, for a
# fill_constant of attributes only (a training step's loss gradient, every step): a copy
# of it costs a quarter of xp.full and holds the same bytes. The sign tells 0.0 from -0.0
# (equal keys otherwise); a NaN is never equal to itself, so it is not kept.
_FILLED = {}
_FILLED_MAX = 256


def _fill_constant(xp, attrs, value_tensor, shape_tensor, shape_tensor_list):
    if value_tensor is None and shape_tensor is None and not shape_tensor_list and xp is np:
        value = float(attrs["str_value"]) if attrs["str_value"] else attrs["value"]
        key = (attrs["dtype"], tuple(attrs["shape"]), value.__class__, value,
               copysign(1.0, value))
        filled = _FILLED.get(key)
        if filled is None:
            filled = _fill(xp, attrs, None, None, None)
            if value == value:
                if len(_FILLED) >= _FILLED_MAX:
                    _FILLED.clear()
                _FILLED[key] = filled
        return filled.copy()
    return _fill(xp, attrs, value_tensor, shape_tensor, shape_tensor_list)


def _fill(xp, attrs, value_tensor, shape_tensor, shape_tensor_list):
    # Paddle's precedence (checked against Paddle 3.3.1): the shape from ShapeTensor,
    # else ShapeTensorList, else the attribute; the value from ValueTensor, else
    # str_value (how Paddle writes nan/inf and big integers), else the attribute.
    dtype = to_numpy_dtype(attrs["dtype"])
    if shape_tensor is not None:
        shape = [int(d) for d in shape_tensor.reshape(-1).tolist()]
    elif shape_tensor_list:
        shape = [int(t.reshape(-1)[0]) for t in shape_tensor_list]
    else:
        shape = attrs["shape"]
    if value_tensor is not None:
        value = value_tensor.reshape(())
    elif attrs["str_value"]:
        value = float(attrs["str_value"])
    else:
        value = attrs["value"]
    return xp.full(tuple(shape), value, dtype=dtype)


def _infer_fill_constant(ctx):
    """Out's rank and known dims: from the attribute, whose -1 dims the shape tensors
    fill at run time (the Python API writes paddle.full([n, 92]) with a tensor n as
    shape=[-1, 92] plus ShapeTensorList); all unknown when only a tensor gives them."""
    shape = list(ctx.attr("shape"))
    shape_tensor, shape_list = ctx.input("ShapeTensor"), ctx.inputs("ShapeTensorList")
    if shape_tensor is not None:
        # every dim comes from the tensor: its length is Out's rank (when unknown,
        # the attribute's rank if it has one)
        rank = shape_tensor.shape[0] if len(shape_tensor.shape) == 1 else -1
        shape = [-1] * (rank if rank >= 0 else max(len(shape), 1))
    elif shape_list:  # an attribute without -1 does not describe the list
        template = len(shape) == len(shape_list) and any(d < 0 for d in shape)
        shape = shape if template else [-1] * len(shape_list)
    elif any(d < 0 for d in shape):
        ctx.fail(f"shape {shape} has a negative dim and no ShapeTensor or ShapeTensorList "
                 f"gives it")
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
