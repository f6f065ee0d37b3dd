"""Sequence layers with Paddle's static names (``paddle.static.nn.sequence_*``).

Each lowers to one sequence op (engine/kernels/sequence.py, sequence_conv.py), plus a
bias add and an activation for ``sequence_conv``. Inputs that must be sequences are
checked here (lod_level >= 1) so a missing LoD is a design error, not a run failure;
the output's lod_level comes from the op's shape inference.
"""
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper
from ..views import Variable

__all__ = ["sequence_pool", "sequence_first_step", "sequence_last_step", "sequence_softmax",
           "sequence_expand", "sequence_conv", "sequence_reverse", "sequence_concat"]

POOL_TYPES = ("average", "sum", "sqrt", "max", "last", "first")


def _variable(helper, value, arg):
    if not isinstance(value, Variable):
        raise DesignError(f"{helper.layer_type} layer '{helper.name}': {arg} must be a Variable, "
                          f"got {type(value).__name__}")
    return value


def _sequence(helper, value, arg="input"):
    """``value`` must be a Variable holding sequences (lod_level >= 1)."""
    _variable(helper, value, arg)
    if value.lod_level < 1:
        raise DesignError(
            f"{helper.layer_type} layer '{helper.name}': {arg} '{value.name}' must be a sequence "
            f"(lod_level >= 1, e.g. data(..., lod_level=1)), it has lod_level {value.lod_level}")
    return value


@layer_spec("sequence", inputs={"input": "sequence"}, choices={"pool_type": tuple(
    t.lower() for t in POOL_TYPES)}, types={"pool_type": "str"})
def sequence_pool(input, pool_type, is_test=False, pad_value=0.0, name=None):
    """Pool each sequence of ``input`` [T, ...] (its last LoD level) to one row.

    pool_type: 'average', 'sum', 'sqrt' (sum / sqrt(length)), 'max', 'last' or 'first'
    (any case). An empty sequence gives ``pad_value``. The output has one row per
    sequence and one LoD level less than ``input``."""
    helper = LayerHelper("sequence_pool", name)
    _sequence(helper, input)
    if not isinstance(pool_type, str) or pool_type.lower() not in POOL_TYPES:
        raise DesignError(f"sequence_pool layer '{helper.name}': pool_type={pool_type!r} must be "
                          f"one of {list(POOL_TYPES)}")
    out = helper.create_tmp(input.dtype)
    max_index = helper.create_tmp("int32", stop_gradient=True)  # read by the MAX gradient
    helper.append_op("sequence_pool", {"X": input}, {"Out": out, "MaxIndex": max_index},
                     {"pooltype": pool_type.upper(), "is_test": bool(is_test),
                      "pad_value": float(pad_value)})
    return out


@layer_spec("sequence", inputs={"input": "sequence"})
def sequence_first_step(input, name=None):
    """The first row of each sequence (``sequence_pool(input, 'first')``)."""
    return sequence_pool(input, "first", name=name)


@layer_spec("sequence", inputs={"input": "sequence"})
def sequence_last_step(input, name=None):
    """The last row of each sequence (``sequence_pool(input, 'last')``)."""
    return sequence_pool(input, "last", name=name)


@layer_spec("sequence", inputs={"input": "sequence"})
def sequence_softmax(input, use_cudnn=False, name=None):
    """Softmax over the rows of each sequence of scores ``input`` [T, 1] or [T]."""
    helper = LayerHelper("sequence_softmax", name)
    _sequence(helper, input)
    out = helper.create_tmp(input.dtype, lod_level=input.lod_level)
    helper.append_op("sequence_softmax", {"X": input}, {"Out": out})
    return out


@layer_spec("sequence", inputs={"x": "tensor", "y": "sequence"})
def sequence_expand(x, y, ref_level=-1, name=None):
    """Repeat each sequence of ``x`` (each row, when ``x`` has no LoD) as many times as
    the sequences at level ``ref_level`` of ``y``'s LoD are long (-1: the last level).

    With a LoD ``x`` the output's LoD lists the repeated sequences; as in Paddle, an
    ``x`` without LoD gives an output without LoD."""
    helper = LayerHelper("sequence_expand", name)
    _variable(helper, x, "x")
    _sequence(helper, y, "y")
    if not isinstance(ref_level, int) or not -1 <= ref_level < y.lod_level:
        raise DesignError(f"sequence_expand layer '{helper.name}': ref_level={ref_level!r} is "
                          f"not -1 or a level of y '{y.name}' (lod_level {y.lod_level})")
    out = helper.create_tmp(x.dtype, lod_level=x.lod_level)
    helper.append_op("sequence_expand", {"X": x, "Y": y}, {"Out": out}, {"ref_level": ref_level})
    return out


@layer_spec("sequence", inputs={"input": "sequence"}, types={"num_filters": "int",
                                                          "padding_start": "int"})
def sequence_conv(input, num_filters, filter_size=3, filter_stride=1, padding=True,
                  padding_start=None, bias_attr=None, param_attr=None, act=None, name=None):
    """1-D convolution along each sequence of ``input`` [T, D]: out [T, num_filters].

    Row t sees rows t + padding_start ... t + padding_start + filter_size - 1 of its own
    sequence (default padding_start = -(filter_size // 2), a centred window); rows past
    a sequence's ends read zeros. The filter is [filter_size * D, num_filters]; the bias
    [num_filters] is added with ``elementwise_add`` (none when ``bias_attr`` is False).
    ``padding`` is accepted for Paddle's signature and, as in Paddle, has no effect:
    the padding is always zeros (the op's trainable PaddingData is not created)."""
    helper = LayerHelper("sequence_conv", name)
    _sequence(helper, input)
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise DesignError(f"sequence_conv layer '{helper.name}': input '{input.name}' has shape "
                          f"{list(input.shape)}; it must be [T, D] with D known")
    for arg, value in (("num_filters", num_filters), ("filter_size", filter_size)):
        if not isinstance(value, int) or value <= 0:
            raise DesignError(f"sequence_conv layer '{helper.name}': {arg} must be a positive "
                              f"int, got {value!r}")
    if filter_stride != 1:
        raise DesignError(f"sequence_conv layer '{helper.name}': filter_stride={filter_stride!r};"
                          " only 1 is supported (as in Paddle)")
    start = -(filter_size // 2) if padding_start is None else padding_start
    filt = helper.create_parameter(param_attr, [filter_size * input.shape[1], num_filters],
                                   input.dtype)
    pre_bias = helper.create_tmp(input.dtype, lod_level=input.lod_level)
    helper.append_op("sequence_conv", {"X": input, "Filter": filt}, {"Out": pre_bias},
                     {"contextLength": filter_size, "contextStart": start,
                      "contextStride": filter_stride})
    bias = helper.create_parameter(bias_attr, [num_filters], input.dtype, is_bias=True)
    pre_act = pre_bias
    if bias is not None:
        pre_act = helper.create_tmp(input.dtype, lod_level=input.lod_level)
        helper.append_op("elementwise_add", {"X": pre_bias, "Y": bias}, {"Out": pre_act},
                         {"axis": 1})
    return helper.append_activation(pre_act, act)


@layer_spec("sequence", inputs={"x": "sequence"})
def sequence_reverse(x, name=None):
    """Each sequence of ``x`` with its rows in reverse order (the LoD is kept)."""
    helper = LayerHelper("sequence_reverse", name)
    _sequence(helper, x, "x")
    out = helper.create_tmp(x.dtype, lod_level=x.lod_level)
    helper.append_op("sequence_reverse", {"X": x}, {"Y": out})
    return out


@layer_spec("sequence", inputs={"input": "list"})
def sequence_concat(input, name=None):
    """Join the i-th sequences of every Variable in ``input`` (all with the same number
    of sequences, 1-level LoD) into the output's i-th sequence."""
    helper = LayerHelper("sequence_concat", name)
    if not isinstance(input, (list, tuple)) or not input:
        raise DesignError(f"sequence_concat layer '{helper.name}': input must be a non-empty "
                          f"list of sequence Variables, got {input!r}")
    for k, x in enumerate(input):
        _sequence(helper, x, f"input[{k}]")
    out = helper.create_tmp(input[0].dtype, lod_level=1)
    helper.append_op("sequence_concat", {"X": list(input)}, {"Out": out})
    return out
