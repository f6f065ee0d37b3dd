"""Normalisation layers: ``batch_norm`` and ``layer_norm`` (``paddle.static.nn``'s).

Parameters are created as Paddle creates them, in the same order, so they get the same
names: batch_norm's scale ``<name>.w_0`` (ones), bias ``<name>.b_0`` (zeros), running
mean ``<name>.w_1`` (zeros) and running variance ``<name>.w_2`` (ones). The running
statistics are persistable, not trainable, and are both read and written by the op
(Mean and MeanOut are one variable), which is how they survive between runs and get
saved with the model.
"""
import math

from ..initializer import Constant
from ..layer_helper import LayerHelper
from ..layer_specs import layer_spec
from ..param_attr import ParamAttr

__all__ = ["batch_norm", "layer_norm"]

_LAYOUTS = ("NCHW", "NHWC")


@layer_spec("norm", inputs={"input": "tensor"}, types={"moving_mean_name": "str",
                                                      "moving_variance_name": "str"},
            choices={"data_layout": _LAYOUTS})
def batch_norm(input, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None,
               bias_attr=None, data_layout="NCHW", in_place=False, name=None,
               moving_mean_name=None, moving_variance_name=None,
               do_model_average_for_mean_and_var=True, use_global_stats=False):
    """Normalise each channel by the batch statistics (training) or running ones (``is_test``).

    Y = (X - mean) / sqrt(var + epsilon) * scale + bias per channel (axis 1 in NCHW, the
    last axis in NHWC; a 2-D [N, C] input works too). While training the batch mean and
    biased variance are used and the running ones updated:
    running = running * momentum + batch * (1 - momentum). ``is_test=True`` (the
    inference switch) or ``use_global_stats`` normalise with the running statistics.
    ``in_place`` writes Y into ``input``'s variable. ``do_model_average_for_mean_and_var``
    is accepted for Paddle's signature (model averaging is not implemented here).
    """
    helper = LayerHelper("batch_norm", name)
    if data_layout not in _LAYOUTS:
        raise helper.error(f"data_layout must be 'NCHW' or 'NHWC', got {data_layout!r}")
    shape = list(input.shape)
    if len(shape) < 2:
        raise helper.error(f"input '{input.name}' has shape {shape}; it needs a channel dim "
                           "([N, C], [N, C, L] or [N, C, H, W])")
    channels = shape[-1] if data_layout == "NHWC" else shape[1]
    if channels < 0:
        raise helper.error(f"input '{input.name}' has shape {shape}: its channel dim must be "
                           "known to size the scale and running statistics")
    if not 0.0 <= momentum <= 1.0:
        raise helper.error(f"momentum must be in [0, 1], got {momentum!r}")
    dtype = input.dtype
    scale = helper.create_parameter(param_attr, [channels], dtype,
                                    default_initializer=Constant(1.0))
    bias = helper.create_parameter(bias_attr, [channels], dtype, is_bias=True)
    mean = helper.create_parameter(
        ParamAttr(name=moving_mean_name, initializer=Constant(0.0), trainable=False),
        [channels], dtype)
    variance = helper.create_parameter(
        ParamAttr(name=moving_variance_name, initializer=Constant(1.0), trainable=False),
        [channels], dtype)
    saved_mean = helper.create_tmp(dtype, stop_gradient=True)
    saved_variance = helper.create_tmp(dtype, stop_gradient=True)
    out = input if in_place else helper.create_tmp(dtype)
    helper.append_op(
        "batch_norm",
        {"X": input, "Scale": scale, "Bias": bias, "Mean": mean, "Variance": variance},
        # slots in the order their variables were made (Paddle's order, which names Y
        # tmp_2): a program loaded as op nodes declares them in that order again
        {"SavedMean": saved_mean, "SavedVariance": saved_variance, "Y": out, "MeanOut": mean,
         "VarianceOut": variance},
        {"epsilon": float(epsilon), "is_test": bool(is_test), "data_layout": data_layout,
         "use_global_stats": bool(use_global_stats), "momentum": float(momentum)})
    return helper.append_activation(out, act)


@layer_spec("norm", inputs={"input": "tensor"})
def layer_norm(input, scale=True, shift=True, begin_norm_axis=1, epsilon=1e-05,
               param_attr=None, bias_attr=None, act=None, name=None):
    """Normalise each sample of ``input`` over the dims from ``begin_norm_axis`` on.

    Y = (X - mean) / sqrt(var + epsilon) * scale + shift, the statistics taken over
    dims ``begin_norm_axis..``; scale (ones) and shift (zeros) are vectors of
    prod(shape[begin_norm_axis:]) elements; ``scale=False`` / ``shift=False`` drop them.
    A transformer normalises its last dim: ``begin_norm_axis=len(shape) - 1``.
    """
    helper = LayerHelper("layer_norm", name)
    shape = list(input.shape)
    if not isinstance(begin_norm_axis, int) or not 0 < begin_norm_axis < max(len(shape), 1):
        raise helper.error(f"begin_norm_axis={begin_norm_axis!r} must be in [1, {len(shape)}) "
                           f"for input '{input.name}' of shape {shape}")
    normalised = shape[begin_norm_axis:]
    if min(normalised) < 0:
        raise helper.error(f"input '{input.name}' has shape {shape}: the dims from "
                           f"begin_norm_axis={begin_norm_axis} on must be known")
    size = [math.prod(normalised)]
    dtype = input.dtype
    inputs = {"X": input}
    if scale:
        inputs["Scale"] = helper.create_parameter(param_attr, size, dtype,
                                                  default_initializer=Constant(1.0))
    if shift:
        inputs["Bias"] = helper.create_parameter(bias_attr, size, dtype, is_bias=True)
    mean = helper.create_tmp(dtype, stop_gradient=True)
    variance = helper.create_tmp(dtype, stop_gradient=True)
    out = helper.create_tmp(dtype)
    helper.append_op("layer_norm", {k: v for k, v in inputs.items() if v is not None},
                     {"Mean": mean, "Variance": variance, "Y": out},  # as made (Paddle's)
                     {"epsilon": float(epsilon), "begin_norm_axis": begin_norm_axis})
    return helper.append_activation(out, act)
