"""Element-wise, activation and reduction layers, one op each.

The simple ones are generated from the registry (their docstrings are the ops' doc
lines), so no second list of what the ops mean exists here.
"""
import numbers

from fluidscope.engine import registry
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper


def _unary_layer(op_type, attr_names=()):
    def layer(x, name=None, **attrs):
        unknown = set(attrs) - set(attr_names)
        if unknown:
            raise DesignError(f"{op_type}: unexpected argument(s) {sorted(unknown)}")
        helper = LayerHelper(op_type, name)
        out = helper.create_tmp(x.dtype)
        helper.append_op(op_type, {"X": x}, {"Out": out}, attrs)
        return out
    layer.__name__ = op_type
    doc = registry.get(op_type).doc
    extra = f" Attributes: {', '.join(attr_names)}." if attr_names else ""
    layer.__doc__ = f"{doc}.{extra} Returns the output Variable (op ``{op_type}``)."
    category = "activation" if registry.get(op_type).category == "activation" else "math"
    return layer_spec(category, inputs={"x": "tensor"}, name=op_type,
                      attrs={a: _UNARY_ATTRS[a] for a in attr_names})(layer)


# the attributes a generated unary layer may take (type, default: the op's default)
_UNARY_ATTRS = {"axis": ("int", -1), "approximate": ("bool", False), "alpha": ("float", 0.02),
                "threshold": ("float", 6.0), "scale": ("float", 6.0), "offset": ("float", 3.0)}


relu = _unary_layer("relu")
tanh = _unary_layer("tanh")
sigmoid = _unary_layer("sigmoid")
exp = _unary_layer("exp")
log = _unary_layer("log")
square = _unary_layer("square")
softmax = _unary_layer("softmax", ("axis",))
# the activations of convolutional and transformer networks (Fluid's names and attributes)
gelu = _unary_layer("gelu", ("approximate",))
relu6 = _unary_layer("relu6")
leaky_relu = _unary_layer("leaky_relu", ("alpha",))
hard_swish = _unary_layer("hard_swish", ("threshold", "scale", "offset"))


def _elementwise_layer(op_type):
    def layer(x, y, axis=-1, act=None, name=None):
        helper = LayerHelper(op_type, name)
        out = helper.create_tmp(x.dtype)
        helper.append_op(op_type, {"X": x, "Y": y}, {"Out": out}, {"axis": axis})
        return helper.append_activation(out, act)
    layer.__name__ = op_type
    layer.__doc__ = f"{registry.get(op_type).doc}. Returns the output Variable."
    return layer_spec("math", inputs={"x": "tensor", "y": "tensor"}, name=op_type)(layer)


elementwise_add = _elementwise_layer("elementwise_add")
elementwise_sub = _elementwise_layer("elementwise_sub")
elementwise_mul = _elementwise_layer("elementwise_mul")
elementwise_div = _elementwise_layer("elementwise_div")


@layer_spec("math", inputs={"x": "tensor"})
def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    """Out = scale * x + bias (or scale * (x + bias) when bias_after_scale is False)."""
    helper = LayerHelper("scale", name)
    out = helper.create_tmp(x.dtype)
    helper.append_op("scale", {"X": x}, {"Out": out},
                     {"scale": float(scale), "bias": float(bias), "bias_after_scale": bias_after_scale})
    return helper.append_activation(out, act)


@layer_spec("math", inputs={"x": "tensor"})
def mean(x, name=None):
    """Mean of all elements of ``x``: a 0-d Variable (op ``mean``)."""
    helper = LayerHelper("mean", name)
    out = helper.create_tmp(x.dtype)
    helper.append_op("mean", {"X": x}, {"Out": out})
    return out


def _reduce_layer(op_type):
    def layer(input, dim=None, keep_dim=False, name=None):
        helper = LayerHelper(op_type, name)
        out = helper.create_tmp(input.dtype)
        dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        helper.append_op(op_type, {"X": input}, {"Out": out},
                         {"dim": dims or [0], "keep_dim": keep_dim, "reduce_all": not dims})
        return out
    layer.__name__ = op_type
    layer.__doc__ = (f"{registry.get(op_type).doc}. ``dim`` None reduces every axis. "
                     "Returns the output Variable.")
    return layer_spec("math", inputs={"input": "tensor"}, types={"dim": "int_or_ints"},
                      name=op_type)(layer)


reduce_mean = _reduce_layer("reduce_mean")
reduce_sum = _reduce_layer("reduce_sum")


@layer_spec("math", inputs={"x": "tensor", "y": "tensor"})
def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with numpy broadcasting over batch dims (op ``matmul_v2``)."""
    helper = LayerHelper("matmul_v2", name)
    out = helper.create_tmp(x.dtype)
    helper.append_op("matmul_v2", {"X": x, "Y": y}, {"Out": out},
                     {"trans_x": transpose_x, "trans_y": transpose_y})
    return out


def binary(x, other, op_type, reverse=False):
    """``x <op> other`` for Variable arithmetic; a Python number becomes a ``scale``."""
    if isinstance(other, numbers.Number):
        value = float(other)
        if op_type == "elementwise_add":
            return scale(x, 1.0, value)
        if op_type == "elementwise_sub":
            return scale(x, -1.0, value) if reverse else scale(x, 1.0, -value)
        if op_type == "elementwise_mul":
            return scale(x, value)
        if op_type == "elementwise_div" and not reverse:
            return scale(x, 1.0 / value)
        from .tensor import fill_constant
        other = fill_constant([1], x.dtype, value)
    a, b = (other, x) if reverse else (x, other)
    return _elementwise_layer(op_type)(a, b)
