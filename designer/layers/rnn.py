"""Fused recurrent layers over LoD sequences: ``dynamic_lstm`` and ``dynamic_gru``.

As in Paddle 1.x, the layer takes the input already projected to the gates (an ``fc``
of width 4*D for the LSTM, 3*D for the GRU) and lowers to one ``lstm`` / ``gru`` op;
the recurrence runs without padding (engine/kernels/rnn.py has the gate layouts).
"""
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper
from ..views import Variable

__all__ = ["dynamic_lstm", "dynamic_gru"]

_ACTIVATIONS = ("sigmoid", "tanh", "relu", "identity")


def _check_input(helper, input, width, what):
    if not isinstance(input, Variable):
        raise DesignError(f"{helper.layer_type} layer '{helper.name}': input must be a Variable, "
                          f"got {type(input).__name__}")
    if input.lod_level < 1:
        raise DesignError(
            f"{helper.layer_type} layer '{helper.name}': input '{input.name}' must be a sequence "
            f"(lod_level >= 1, e.g. data(..., lod_level=1)), it has lod_level {input.lod_level}")
    if len(input.shape) != 2 or input.shape[1] not in (-1, width):
        raise DesignError(
            f"{helper.layer_type} layer '{helper.name}': input '{input.name}' has shape "
            f"{list(input.shape)}; it must be [T, {width}] ({what}), e.g. the output of "
            f"fc(x, size={width})")


def _check_state(helper, state, slot, d):
    if state is not None and (len(state.shape) != 2 or state.shape[1] not in (-1, d)):
        raise DesignError(
            f"{helper.layer_type} layer '{helper.name}': {slot} '{state.name}' has shape "
            f"{list(state.shape)}; it must be [num_sequences, {d}]")


def _check_activations(helper, **given):
    for arg, value in given.items():
        if value not in _ACTIVATIONS:
            raise DesignError(f"{helper.layer_type} layer '{helper.name}': {arg}={value!r} must "
                              f"be one of {list(_ACTIVATIONS)}")


def _intermediate(helper, dtype):
    return helper.create_tmp(dtype, stop_gradient=True)


@layer_spec("recurrent", inputs={"input": "sequence", "h_0": "tensor?", "c_0": "tensor?"},
            types={"size": "int"}, outputs=("hidden", "cell"), choices=dict.fromkeys(
                ("gate_activation", "cell_activation", "candidate_activation"), _ACTIVATIONS))
def dynamic_lstm(input, size, h_0=None, c_0=None, param_attr=None, bias_attr=None,
                 use_peepholes=True, is_reverse=False, gate_activation="sigmoid",
                 cell_activation="tanh", candidate_activation="tanh", dtype="float32",
                 name=None):
    """LSTM over the sequences of ``input`` [T, size]; returns (hidden, cell), each [T, D].

    ``size`` is 4*D (D = hidden size) and ``input`` holds the x-projections of the four
    gate blocks (candidate, input, forget, output): usually ``fc(x, size=4 * D)`` with
    ``bias_attr=False``, since this layer has the gate bias. Parameters: weight [D, 4D],
    bias [1, 4D], or [1, 7D] with ``use_peepholes`` (the last 3*D are the peephole
    weights of the input, forget and output gates). ``h_0``/``c_0``: [num_sequences, D]
    initial states, one row per sequence (zeros when None).
    """
    helper = LayerHelper("lstm", name)
    if not isinstance(size, int) or size <= 0 or size % 4:
        raise DesignError(f"lstm layer '{helper.name}': size must be 4 * hidden_size (a positive "
                          f"multiple of 4), got {size!r}")
    if bias_attr is False:
        raise DesignError(f"lstm layer '{helper.name}': the lstm op needs its bias; bias_attr "
                          "cannot be False")
    d = size // 4
    _check_input(helper, input, size, "4 * hidden_size gate projections")
    _check_state(helper, h_0, "h_0", d)
    _check_state(helper, c_0, "c_0", d)
    _check_activations(helper, gate_activation=gate_activation, cell_activation=cell_activation,
                       candidate_activation=candidate_activation)
    weight = helper.create_parameter(param_attr, [d, 4 * d], dtype)
    bias = helper.create_parameter(bias_attr, [1, (7 if use_peepholes else 4) * d], dtype,
                                   is_bias=True)
    hidden = helper.create_tmp(dtype, lod_level=input.lod_level)
    cell = helper.create_tmp(dtype, lod_level=input.lod_level)
    # An absent (None) H0/C0/Bias leaves its dispensable slot empty.
    helper.append_op(
        "lstm", {"Input": input, "Weight": weight, "Bias": bias, "H0": h_0, "C0": c_0},
        {"Hidden": hidden, "Cell": cell, "BatchGate": _intermediate(helper, dtype),
         "BatchCellPreAct": _intermediate(helper, dtype)},
        {"use_peepholes": bool(use_peepholes), "is_reverse": bool(is_reverse),
         "gate_activation": gate_activation, "cell_activation": cell_activation,
         "candidate_activation": candidate_activation})
    return hidden, cell


@layer_spec("recurrent", inputs={"input": "sequence", "h_0": "tensor?"}, types={"size": "int"},
            choices=dict.fromkeys(("gate_activation", "candidate_activation"), _ACTIVATIONS))
def dynamic_gru(input, size, param_attr=None, bias_attr=None, is_reverse=False,
                gate_activation="sigmoid", candidate_activation="tanh", h_0=None,
                origin_mode=False, name=None):
    """GRU over the sequences of ``input`` [T, 3 * size]; returns hidden [T, size].

    ``size`` is the hidden size D; ``input`` holds the x-projections of the update, reset
    and candidate blocks (``fc(x, size=3 * D)``). Parameters: weight [D, 3D], whose first
    2*D*D values are the update/reset weights [D, 2D] and last D*D the candidate weights
    [D, D] (Paddle's memory layout), and bias [1, 3D] unless ``bias_attr`` is False.
    ``origin_mode``: h = u*h_prev + (1-u)*c (Cho et al.) instead of (1-u)*h_prev + u*c.
    """
    helper = LayerHelper("gru", name)
    if not isinstance(size, int) or size <= 0:
        raise DesignError(f"gru layer '{helper.name}': size (the hidden size) must be a positive "
                          f"int, got {size!r}")
    _check_input(helper, input, 3 * size, "3 * size gate projections")
    _check_state(helper, h_0, "h_0", size)
    _check_activations(helper, gate_activation=gate_activation,
                       candidate_activation=candidate_activation)
    dtype = input.dtype
    weight = helper.create_parameter(param_attr, [size, 3 * size], dtype)
    bias = helper.create_parameter(bias_attr, [1, 3 * size], dtype, is_bias=True)
    hidden = helper.create_tmp(dtype, lod_level=input.lod_level)
    helper.append_op(
        "gru", {"Input": input, "Weight": weight, "Bias": bias, "H0": h_0},
        {"Hidden": hidden, "BatchGate": _intermediate(helper, dtype),
         "BatchResetHiddenPrev": _intermediate(helper, dtype),
         "BatchHidden": _intermediate(helper, dtype)},
        {"is_reverse": bool(is_reverse), "gate_activation": gate_activation,
         "activation": candidate_activation, "origin_mode": bool(origin_mode)})
    return hidden
