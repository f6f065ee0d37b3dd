"""Paddle v1's MixedLayer: projections and operators summed into one output.

    with fd.mixed_layer(size=200, act="tanh", bias_attr=True) as m:
        m += fd.full_matrix_projection(x)
        m += fd.table_projection(ids, vocab_size=1000)
    out = m.output          # m itself also works where a Variable is expected

A projection (one input, maybe a parameter) or an operator (two inputs, no parameter)
is a description until the ``with`` block ends; then the layer lowers to ordinary
ops: one op chain per input, their outputs summed by one ``sum`` (a single input is
used as is), ``elementwise_add`` of a ``[size]`` bias unless ``bias_attr`` is False,
then the activation op. Every op records the layer in ``op_namescope`` and the line
that made its projection in ``op_callstack``; parameters are ``mixed_0.w_<k>`` /
``mixed_0.b_0`` in the global block, so a recurrent group's step may use the layer.
Inputs are ``[batch, width]`` matrices (wider ones are flattened after dim 0) and each
projection's output is ``[batch, size]``. The projections and operators are in
``mixed_inputs.py``.
"""
from fluidscope.engine import registry
from fluidscope.engine.errors import DesignError

from ..callsite import user_frame
from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper
from ..views import Variable
from .mixed_inputs import (ConvOperator, Context, DotMul, DotMulOperator, FullMatrix, Identity,
                           Lowering, MixedInput, Table, TransFullMatrix)

__all__ = [
    "mixed_layer", "MixedLayer", "full_matrix_projection", "trans_full_matrix_projection",
    "table_projection", "identity_projection", "dot_mul_projection", "scaling_projection",
    "context_projection", "dot_mul_operator", "conv_operator",
]


# ------------------------------------------------------------- the layer
class MixedLayer(Variable):
    """The ``with`` target of ``mixed_layer``; after the block, a view of its output."""

    def __init__(self, size=0, act=None, bias_attr=False, name=None, dtype=None):
        self.helper = LayerHelper("mixed", name)
        self.layer_name = self.helper.name
        if size is not None and (not isinstance(size, int) or size < 0):
            raise DesignError(f"mixed_layer '{self.layer_name}': size must be an int >= 0, got {size!r}")
        if act not in (None, "", "linear") and not registry.has(act):
            raise DesignError(f"mixed_layer '{self.layer_name}': activation {act!r} is not an op")
        self.size, self.size_from = size or None, None
        self.act, self.bias_attr, self.dtype_arg = act or None, bias_attr, dtype
        self.items, self.state, self._output = [], "new", None

    def _who(self):
        return f"mixed_layer '{self.layer_name}'"

    def __enter__(self):
        if self.state != "new":
            raise DesignError(f"{self._who()} was already entered; use one with block per layer")
        self.state = "open"
        return self

    def __iadd__(self, item):
        if self.state != "open":
            raise DesignError(f"{self._who()}: add projections inside its with block (it is "
                              f"{'closed' if self.state == 'closed' else 'not entered yet'})")
        if not isinstance(item, MixedInput):
            raise DesignError(f"{self._who()}: += takes a projection or operator, got {item!r}; "
                              "wrap a Variable, e.g. identity_projection(x)")
        item.index = len(self.items) + 1
        gives = item.gives()
        if gives is not None and self.size is None:
            self.size, self.size_from = gives, item.describe()
        elif gives is not None and gives != self.size:
            origin = f" (from {self.size_from})" if self.size_from else ""
            raise DesignError(f"{self._who()}: {item.describe()} gives size {gives}, the "
                              f"layer's size is {self.size}{origin}")
        self.items.append(item)
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.state = "closed"
            return False
        self._close()
        return False

    def _close(self):
        self.state = "closed"
        if not self.items:
            raise DesignError(f"{self._who()} has no projection or operator; add one with +=")
        if self.size is None:
            raise DesignError(f"{self._who()}: no size given and no input fixes one; pass size=")
        floats = [x.dtype for it in self.items for x in it.inputs if x.dtype.startswith("float")]
        dtype = self.dtype_arg or (floats[0] if floats else "float32")
        helper, outs, flattened = self.helper, [], {}
        for item in self.items:
            try:
                outs.append(item.lower(Lowering(helper, self.size, dtype, item.site, flattened)))
            except DesignError as exc:
                text = str(exc)
                raise DesignError(text if text.startswith(self._who()) else
                                  f"{self._who()}: {item.describe()}: {text}") from None
        before = len(helper.block.desc.ops)
        low = Lowering(helper, self.size, dtype, user_frame(), flattened)
        out = outs[0] if len(outs) == 1 else low.op("sum", {"X": outs})
        bias = helper.create_parameter(self.bias_attr, [self.size], dtype, is_bias=True)
        if bias is not None:
            out = low.op("elementwise_add", {"X": out, "Y": bias}, {"axis": 1})
        out = low.op(self.act, {"X": out}) if self.act else out
        if out is self.items[0].inputs[0] and len(helper.block.desc.ops) == before:
            out = low.op("assign", {"X": out})  # an identity alone: the layer's own output
        self._output = out

    @property
    def output(self):
        """The layer's output Variable (after its with block)."""
        if self.state != "closed" or self._output is None:
            raise DesignError(f"{self._who()} has no output until its with block ends")
        return self._output

    # A Variable view of the output: these are what Variable's properties read.
    block = property(lambda self: self.output.block)
    name = property(lambda self: self.output.name)

    def __repr__(self):
        if self._output is None:
            return f"MixedLayer({self.layer_name!r}, {self.state}, {len(self.items)} inputs)"
        return f"MixedLayer({self.layer_name!r}) -> {self._output!r}"


@layer_spec("mixed", inputs={"input": "rows?"})
def mixed_layer(size=0, input=None, name=None, act=None, bias_attr=False, dtype=None):
    """A mixed layer of width ``size`` (0: the width its first sized input gives).

    Use as ``with mixed_layer(...) as m: m += projection...``; or pass ``input`` (a
    projection or a list) to get the output Variable at once. ``bias_attr``: False
    (v1's default) no bias, None/True/ParamAttr a ``[size]`` bias. ``act``: an
    activation op name or None. ``dtype``: of parameters and output (default: the
    first float input's)."""
    layer = MixedLayer(size, act, bias_attr, name, dtype)
    if input is None:
        return layer
    with layer:
        for item in input if isinstance(input, (list, tuple)) else [input]:
            layer += item
    return layer.output


# ---------------------------------------------------- projections, operators
@layer_spec("projection", inputs={"input": "tensor"})
def full_matrix_projection(input, size=0, param_attr=None):
    """input @ W, W [width, size] (op ``mul``)."""
    return FullMatrix(input, size, param_attr)


@layer_spec("projection", inputs={"input": "tensor"})
def trans_full_matrix_projection(input, size=0, param_attr=None):
    """input @ W^T, W stored [size, width] (op ``matmul_v2`` with trans_y)."""
    return TransFullMatrix(input, size, param_attr)


@layer_spec("projection", inputs={"input": "ids"}, types={"vocab_size": "int"})
def table_projection(input, size=0, param_attr=None, vocab_size=None):
    """W[ids], W [vocab_size, size] (op ``lookup_table_v2``). ids carry no vocabulary
    (v1 read it from the data layer's size), so give ``vocab_size`` or a param_attr
    naming an existing table."""
    return Table(input, size, param_attr, vocab_size)


@layer_spec("projection", inputs={"input": "tensor"}, types={"offset": "int", "size": "int"})
def identity_projection(input, offset=None, size=None):
    """input itself, or its columns [offset, offset + size) (op ``slice``; size
    defaults to the layer's)."""
    return Identity(input, offset, size)


@layer_spec("projection", inputs={"input": "tensor"})
def dot_mul_projection(input, param_attr=None):
    """input * w element-wise per row, w [width] (op ``elementwise_mul``)."""
    return DotMul(input, param_attr)


@layer_spec("projection", inputs={"input": "tensor"})
def scaling_projection(input, param_attr=None):
    """input * w with one learned scalar w [1] (op ``elementwise_mul``)."""
    return DotMul(input, param_attr, scalar=True)


@layer_spec("projection", inputs={"input": "sequence"},
            types={"context_len": "int", "context_start": "int"})
def context_projection(input, context_len, context_start=None, padding_attr=False):
    """Rows t+context_start .. t+context_start+context_len-1 of each sequence joined
    into [T, context_len*width] (op ``context_projection``). Rows outside a sequence
    are zeros, or learned rows when ``padding_attr`` is True/a ParamAttr (a
    [up_pad + down_pad, width] parameter, zero-initialised unless the attr says)."""
    return Context(input, context_len, context_start, padding_attr)


@layer_spec("operator", inputs={"a": "tensor", "b": "tensor"})
def dot_mul_operator(a, b, scale=1.0):
    """scale * a * b element-wise; a and b of the same width (no parameter)."""
    return DotMulOperator(a, b, scale)


@layer_spec("operator", inputs={"img": "tensor", "filter": "tensor"}, types=dict.fromkeys(
    ("filter_size", "num_filters", "num_channels", "filter_size_y", "stride_y", "padding_y"), "int"))
def conv_operator(img, filter, filter_size, num_filters, num_channels=None, stride=1,
                  padding=0, filter_size_y=None, stride_y=None, padding_y=None):
    """Convolve img with filters computed by another layer (semantics: ``mixed_inputs.ConvOperator``)."""
    return ConvOperator(img, filter, filter_size, num_filters, num_channels, stride, padding,
                         filter_size_y, stride_y, padding_y)
