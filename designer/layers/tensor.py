"""Tensor-shaping layers: ``concat``, ``split``, ``reshape``, ``transpose``; constants."""
from fluidscope.engine.ir.dtypes import to_var_type
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper


@layer_spec("tensor", inputs={"input": "list"})
def concat(input, axis=0, name=None):
    """Join a list of Variables along ``axis``."""
    if not isinstance(input, (list, tuple)) or not input:
        raise DesignError(f"concat: input must be a non-empty list of Variables, got {input!r}")
    helper = LayerHelper("concat", name)
    out = helper.create_tmp(input[0].dtype)
    helper.append_op("concat", {"X": list(input)}, {"Out": out}, {"axis": axis})
    return out


@layer_spec("tensor", inputs={"input": "tensor"}, types={"num_or_sections": "int_or_ints"},
            outputs=("outs*",))
def split(input, num_or_sections, dim=-1, name=None):
    """Split along ``dim`` into ``num`` equal parts or parts of the given sizes."""
    helper = LayerHelper("split", name)
    if isinstance(num_or_sections, int):
        count, attrs = num_or_sections, {"num": num_or_sections, "axis": dim}
    else:
        count, attrs = len(num_or_sections), {"sections": list(num_or_sections), "axis": dim}
    outs = [helper.create_tmp(input.dtype) for _ in range(count)]
    helper.append_op("split", {"X": input}, {"Out": outs}, attrs)
    return outs


def _with_xshape(op_type, x, attrs, name):
    """An op writing Out plus XShape (the input shape its gradient needs, Paddle's way)."""
    helper = LayerHelper(op_type, name)
    out = helper.create_tmp(x.dtype)
    xshape = helper.create_tmp(x.dtype, stop_gradient=True)
    helper.append_op(op_type, {"X": x}, {"Out": out, "XShape": xshape}, attrs)
    return out


@layer_spec("tensor", inputs={"x": "tensor"}, types={"shape": "ints"})
def reshape(x, shape, name=None):
    """New shape with Paddle's rules: 0 copies the input dim, -1 is inferred (once)."""
    return _with_xshape("reshape2", x, {"shape": list(shape)}, name)


@layer_spec("tensor", inputs={"x": "tensor"}, types={"perm": "ints"})
def transpose(x, perm, name=None):
    """Permute dims by ``perm``."""
    return _with_xshape("transpose2", x, {"axis": list(perm)}, name)


@layer_spec("tensor", inputs={}, types={"shape": "ints", "dtype": "dtype", "value": "number"})
def fill_constant(shape, dtype, value, name=None):
    """A constant tensor (not trainable)."""
    helper = LayerHelper("fill_constant", name)
    out = helper.create_tmp(dtype, stop_gradient=True)
    helper.append_op("fill_constant", outputs={"Out": out},
                     attrs={"shape": list(shape), "dtype": to_var_type(dtype), "value": float(value)})
    return out


@layer_spec("tensor", inputs={"x": "tensor", "output": "tensor?"})
def assign(x, output=None, name=None):
    """Copy ``x`` into ``output`` (a new Variable when None)."""
    helper = LayerHelper("assign", name)
    output = output or helper.create_tmp(x.dtype)
    helper.append_op("assign", {"X": x}, {"Out": output})
    return output
