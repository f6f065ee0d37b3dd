"""Image layers: ``conv2d``, ``conv2d_transpose``, ``pool2d``, ``adaptive_pool2d``, ``flatten``.

Names, arguments and lowering are Paddle's static graph ones (``paddle.static.nn.conv2d``
/ ``conv2d_transpose``, Fluid's ``pool2d`` / ``adaptive_pool2d``, ``paddle.flatten``),
checked against PaddlePaddle 3.3.1 (tests/designer/test_cnn_layers.py): the same ops,
attributes, parameter shapes, default initializers and variable names. The differences:
Paddle's cuDNN-only attributes (``use_cudnn``, ``use_mkldnn``, ...) are not written,
since the registry does not declare them; ``use_cudnn`` is kept as an argument because
Paddle uses it to choose the depthwise op.

Sizes given as one int or a pair (``filter_size=3`` or ``[3, 5]``) are (height, width);
``padding`` is one int, ``[h, w]``, ``[top, bottom, left, right]``, one pair per dim of
the layout, or ``'SAME'`` / ``'VALID'``. Errors name the layer and the user's line.
"""
import math

from ..initializer import Normal
from ..layer_helper import LayerHelper
from ..layer_specs import layer_spec

__all__ = ["conv2d", "conv2d_transpose", "pool2d", "adaptive_pool2d", "flatten"]

_FORMATS = ("NCHW", "NHWC")
_SIZES = {"filter_size": "int_or_ints", "stride": "int_or_ints", "padding": "padding",
          "dilation": "int_or_ints", "groups": "int", "num_filters": "int"}


def pair(helper, value, what):
    """[h, w] from one int or a list of two (Paddle's convert_to_list(value, 2))."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) == 1:
        values = values * 2
    if len(values) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                   for v in values):
        raise helper.error(f"{what} must be an int or a list of 2 ints (height, width), "
                           f"got {value!r}")
    return values


def resolve_padding(helper, padding, data_format, what="padding"):
    """(paddings attribute, padding_algorithm) as Paddle's layers compute them: symmetric
    padding is written [h, w], other padding [top, bottom, left, right]."""
    if isinstance(padding, str):
        algorithm = padding.upper()
        if algorithm not in ("SAME", "VALID"):
            raise helper.error(f"{what}={padding!r}: a string padding must be 'SAME' or 'VALID'")
        return [0, 0], algorithm
    if isinstance(padding, (list, tuple)) and len(padding) == 4:
        values = list(padding)
        if all(isinstance(p, (list, tuple)) for p in values):  # a pair per layout dim
            outer = (0, 1) if data_format == "NCHW" else (0, 3)
            if any(list(values[k]) != [0, 0] for k in outer):
                raise helper.error(f"{what} {padding!r}: padding the batch or channel dims "
                                   "is not supported")
            spatial = values[2:4] if data_format == "NCHW" else values[1:3]
            values = [v for p in spatial for v in p]
        if len(values) != 4 or not all(isinstance(v, int) for v in values):
            raise helper.error(f"{what} {padding!r} must hold 4 ints [top, bottom, left, right] "
                               "or 4 pairs, one per dim of the layout")
        if any(v < 0 for v in values):
            raise helper.error(f"{what} {padding!r} must be >= 0")
        if values[0] == values[1] and values[2] == values[3]:
            return [values[0], values[2]], "EXPLICIT"
        return values, "EXPLICIT"
    values = pair(helper, padding, what)
    if any(v < 0 for v in values):
        raise helper.error(f"{what} {padding!r} must be >= 0")
    return values, "EXPLICIT"


def _image(helper, input, data_format, slot="input"):
    """The channel count of a 4-D ``input`` (after checking it and the layout)."""
    if data_format not in _FORMATS:
        raise helper.error(f"data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    shape = list(input.shape)
    if len(shape) != 4:
        layout = "[N, C, H, W]" if data_format == "NCHW" else "[N, H, W, C] (data_format='NHWC')"
        raise helper.error(f"{slot} '{input.name}' has shape {shape}; it must be 4-D {layout}")
    channels = shape[3] if data_format == "NHWC" else shape[1]
    if channels < 0:
        raise helper.error(f"{slot} '{input.name}' has shape {shape}: its channel dim must be "
                           "known to size the filter")
    return channels


def _groups(helper, groups, channels, num_filters, input):
    if groups is None:
        return 1
    if not isinstance(groups, int) or groups <= 0:
        raise helper.error(f"groups must be a positive int, got {groups!r}")
    if channels % groups:
        raise helper.error(f"input '{input.name}' has {channels} channels (shape "
                           f"{list(input.shape)}), which groups={groups} does not divide")
    if num_filters % groups:
        raise helper.error(f"num_filters={num_filters} is not a multiple of groups={groups}")
    return groups


def _check_num_filters(helper, num_filters):
    if not isinstance(num_filters, int) or isinstance(num_filters, bool) or num_filters <= 0:
        raise helper.error(f"num_filters must be a positive int, got {num_filters!r}")


def _add_bias_and_act(helper, pre_bias, bias_attr, num_filters, data_format, act):
    """Paddle's append_bias_op: a [num_filters] bias added on the channel axis."""
    bias = helper.create_parameter(bias_attr, [num_filters], pre_bias.dtype, is_bias=True)
    pre_act = pre_bias
    if bias is not None:
        pre_act = helper.create_tmp(pre_bias.dtype)
        helper.append_op("elementwise_add", {"X": pre_bias, "Y": bias}, {"Out": pre_act},
                         {"axis": 3 if data_format == "NHWC" else 1})
    return helper.append_activation(pre_act, act)


@layer_spec("conv", inputs={"input": "tensor"}, types=dict(_SIZES),
            choices={"data_format": _FORMATS})
def conv2d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None,
           param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
           data_format="NCHW"):
    """2-D convolution of ``input`` [N, C, H, W] with ``num_filters`` filters, plus bias and act.

    Filter [num_filters, C / groups, kh, kw] (He normal by default: std sqrt(2 / (kh*kw*C))),
    bias [num_filters] on the channel axis (``bias_attr=False``: none). Output
    [N, num_filters, Ho, Wo] with Ho = (H + pads - (dilation * (kh - 1) + 1)) // stride + 1;
    ``padding='SAME'`` gives Ho = ceil(H / stride). As in Paddle, groups == C with
    num_filters a multiple of C and ``use_cudnn=False`` lowers to ``depthwise_conv2d``
    (the same arithmetic), anything else to ``conv2d``.
    """
    channels_last = data_format == "NHWC"
    channels = input.shape[3 if channels_last else 1] if len(input.shape) == 4 else -1
    depthwise = (groups is not None and channels == groups and channels > 0
                 and isinstance(num_filters, int) and num_filters % channels == 0
                 and not use_cudnn)
    helper = LayerHelper("depthwise_conv2d" if depthwise else "conv2d", name)
    _check_num_filters(helper, num_filters)
    channels = _image(helper, input, data_format)
    if param_attr is False:
        raise helper.error("param_attr cannot be False: a convolution needs its filter")
    group_count = _groups(helper, groups, channels, num_filters, input)
    kernel = pair(helper, filter_size, "filter_size")
    strides = pair(helper, stride, "stride")
    dilations = pair(helper, dilation, "dilation")
    if min(kernel) < 1 or min(strides) < 1 or min(dilations) < 1:
        raise helper.error(f"filter_size {kernel}, stride {strides} and dilation {dilations} "
                           "must be >= 1")
    paddings, algorithm = resolve_padding(helper, padding, data_format)
    weight = helper.create_parameter(
        param_attr, [num_filters, channels // group_count] + kernel, input.dtype,
        default_initializer=Normal(0.0, math.sqrt(2.0 / (kernel[0] * kernel[1] * channels))))
    pre_bias = helper.create_tmp(input.dtype)
    helper.append_op(helper.layer_type, {"Input": input, "Filter": weight}, {"Output": pre_bias},
                     {"strides": strides, "paddings": paddings, "dilations": dilations,
                      "groups": group_count, "padding_algorithm": algorithm,
                      "data_format": data_format})
    return _add_bias_and_act(helper, pre_bias, bias_attr, num_filters, data_format, act)


@layer_spec("conv", inputs={"input": "tensor"},
            types=dict(_SIZES, output_size="int_or_ints", filter_size="int_or_ints"),
            choices={"data_format": _FORMATS})
def conv2d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0, stride=1,
                     dilation=1, groups=None, param_attr=None, bias_attr=None, use_cudnn=True,
                     act=None, name=None, data_format="NCHW"):
    """Transposed 2-D convolution (deconvolution) of ``input`` [N, C, H, W], plus bias and act.

    Filter [C, num_filters / groups, kh, kw] (Xavier by default), bias [num_filters].
    Output [N, num_filters, Ho, Wo], Ho = (H - 1) * stride - pads + dilation * (kh - 1) + 1;
    ``output_size`` picks among the sizes that stride allows, and when ``filter_size``
    is None it sizes the filter instead (then H and W must be known). groups == C ==
    num_filters with ``use_cudnn=False`` lowers to ``depthwise_conv2d_transpose``.
    """
    channels_last = data_format == "NHWC"
    channels = input.shape[3 if channels_last else 1] if len(input.shape) == 4 else -1
    depthwise = (groups is not None and channels == groups == num_filters and channels > 0
                 and not use_cudnn)
    helper = LayerHelper("depthwise_conv2d_transpose" if depthwise else "conv2d_transpose", name)
    _check_num_filters(helper, num_filters)
    channels = _image(helper, input, data_format)
    if param_attr is False:
        raise helper.error("param_attr cannot be False: a convolution needs its filter")
    group_count = _groups(helper, groups, channels, num_filters, input)
    strides = pair(helper, stride, "stride")
    dilations = pair(helper, dilation, "dilation")
    paddings, algorithm = resolve_padding(helper, padding, data_format)
    sizes = [] if output_size is None else pair(helper, output_size, "output_size")
    if filter_size is None:
        if not sizes:
            raise helper.error("give filter_size, or output_size to size the filter from")
        spatial = input.shape[1:3] if channels_last else input.shape[2:4]
        if min(spatial) < 0:
            raise helper.error(f"input '{input.name}' has shape {list(input.shape)}: sizing the "
                               "filter from output_size needs known H and W")
        four = paddings if len(paddings) == 4 else [paddings[0], paddings[0],
                                                    paddings[1], paddings[1]]
        kernel = [(sizes[k] - (spatial[k] - 1) * strides[k] + four[2 * k] + four[2 * k + 1] - 1)
                  // dilations[k] + 1 for k in range(2)]
    else:
        kernel = pair(helper, filter_size, "filter_size")
    if min(kernel) < 1 or min(strides) < 1 or min(dilations) < 1:
        raise helper.error(f"filter_size {kernel}, stride {strides} and dilation {dilations} "
                           "must be >= 1")
    weight = helper.create_parameter(
        param_attr, [channels, num_filters // group_count] + kernel, input.dtype)
    pre_bias = helper.create_tmp(input.dtype)
    helper.append_op(helper.layer_type, {"Input": input, "Filter": weight}, {"Output": pre_bias},
                     {"output_size": sizes, "strides": strides, "paddings": paddings,
                      "padding_algorithm": algorithm, "dilations": dilations,
                      "groups": group_count, "data_format": data_format})
    return _add_bias_and_act(helper, pre_bias, bias_attr, num_filters, data_format, act)


@layer_spec("pool", inputs={"input": "tensor"},
            types={"pool_size": "int_or_ints", "pool_stride": "int_or_ints",
                   "pool_padding": "padding"},
            choices={"pool_type": ("max", "avg"), "data_format": _FORMATS})
def pool2d(input, pool_size=-1, pool_type="max", pool_stride=1, pool_padding=0,
           global_pooling=False, use_cudnn=True, ceil_mode=False, name=None, exclusive=True,
           data_format="NCHW"):
    """Max or average pooling of ``input`` [N, C, H, W] over ``pool_size`` windows (Fluid's pool2d).

    Output [N, C, Ho, Wo], Ho = (H + pads - pool_h) // stride + 1 (rounded up with
    ``ceil_mode``). ``global_pooling``: one value per channel (pool_size is ignored).
    ``exclusive``: an average divides by the input elements in the window, not the padding.
    """
    helper = LayerHelper("pool2d", name)
    if pool_type not in ("max", "avg"):
        raise helper.error(f"pool_type must be 'max' or 'avg', got {pool_type!r}")
    _image(helper, input, data_format)
    if not global_pooling and pool_size == -1:
        raise helper.error("pool_size must be given unless global_pooling is True")
    ksize = pair(helper, pool_size, "pool_size")
    strides = pair(helper, pool_stride, "pool_stride")
    paddings, algorithm = resolve_padding(helper, pool_padding, data_format, "pool_padding")
    if algorithm == "VALID" and ceil_mode:
        raise helper.error("pool_padding 'VALID' cannot be used with ceil_mode=True")
    if not global_pooling and (min(ksize) < 1 or min(strides) < 1):
        raise helper.error(f"pool_size {ksize} and pool_stride {strides} must be >= 1")
    out = helper.create_tmp(input.dtype)
    helper.append_op("pool2d", {"X": input}, {"Out": out},
                     {"pooling_type": pool_type, "ksize": ksize, "global_pooling": global_pooling,
                      "strides": strides, "paddings": paddings, "padding_algorithm": algorithm,
                      "ceil_mode": ceil_mode, "exclusive": exclusive, "data_format": data_format})
    return out


@layer_spec("pool", inputs={"input": "tensor"}, types={"pool_size": "int_or_ints"},
            choices={"pool_type": ("max", "avg")})
def adaptive_pool2d(input, pool_size, pool_type="max", name=None):
    """Pool ``input`` [N, C, H, W] to a fixed ``pool_size`` output [N, C, ph, pw] (any H, W).

    Output cell i covers rows floor(i * H / ph) .. ceil((i + 1) * H / ph), so any H works;
    ``pool_size=1`` is a global pool (what ResNet's head does). Fluid's adaptive_pool2d. Average lowers to
    ``pool2d`` (adaptive), max to ``max_pool2d_with_index`` (its index output unused).
    """
    helper = LayerHelper("pool2d", name)
    if pool_type not in ("max", "avg"):
        raise helper.error(f"pool_type must be 'max' or 'avg', got {pool_type!r}")
    _image(helper, input, "NCHW")
    ksize = pair(helper, pool_size, "pool_size")
    if min(ksize) < 1:
        raise helper.error(f"pool_size {ksize} must be >= 1")
    out = helper.create_tmp(input.dtype)
    if pool_type == "avg":
        helper.append_op("pool2d", {"X": input}, {"Out": out},
                         {"pooling_type": "avg", "ksize": ksize, "adaptive": True})
        return out
    # Paddle's CPU pool2d max kernel ignores ``adaptive`` (it reads plain windows), so
    # adaptive max goes to max_pool2d_with_index, as paddle.nn.functional's does.
    mask = helper.create_tmp("int32", stop_gradient=True)
    helper.append_op("max_pool2d_with_index", {"X": input}, {"Out": out, "Mask": mask},
                     {"ksize": ksize, "adaptive": True})
    return out


@layer_spec("tensor", inputs={"x": "tensor"})
def flatten(x, start_axis=0, stop_axis=-1, name=None):
    """Merge dims ``start_axis`` .. ``stop_axis`` of ``x`` into one (``paddle.flatten``).

    ``flatten(x, start_axis=1)`` turns [N, C, H, W] into [N, C*H*W] for an ``fc``.
    Lowers to ``flatten_contiguous_range`` (axes written non-negative, as Paddle does).
    """
    helper = LayerHelper("flatten", name)
    rank = len(x.shape)
    for arg, axis in (("start_axis", start_axis), ("stop_axis", stop_axis)):
        if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < max(rank, 1):
            raise helper.error(f"{arg}={axis!r} must be an int in [-{rank}, {rank}) for "
                               f"'{x.name}' of shape {list(x.shape)}")
    start, stop = start_axis % max(rank, 1), stop_axis % max(rank, 1)
    if start > stop:
        raise helper.error(f"start_axis={start_axis} comes after stop_axis={stop_axis} for "
                           f"'{x.name}' of shape {list(x.shape)}")
    out = helper.create_tmp(x.dtype)
    xshape = helper.create_tmp(x.dtype, stop_gradient=True)
    helper.append_op("flatten_contiguous_range", {"X": x}, {"Out": out, "XShape": xshape},
                     {"start_axis": start, "stop_axis": stop})
    return out
