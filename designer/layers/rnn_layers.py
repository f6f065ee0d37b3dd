"""Padded-batch recurrent layers over Paddle's fused ``rnn`` op: ``lstm`` and ``gru``.

These are what ``paddle.nn.LSTM`` / ``paddle.nn.GRU`` build in a static program, as
layer functions: the arguments of the constructor and of the call in one signature,
and the outputs flat, ``(out, last_h, last_c)`` / ``(out, last_h)``. Unlike
``dynamic_lstm`` (LoD sequences, a separate input projection) they take a dense
[N, T, input_size] batch (``time_major``: [T, N, input_size]) with an optional
``sequence_length`` [N] marking padding, and have their own input weights.

Lowering: ``transpose2`` to time-major (unless ``time_major``), zero initial states
(``fill_constant_batch_size_like``, so any batch size works) unless ``h_0``/``c_0``
are given, one ``rnn`` op, ``transpose2`` back. The weights are created in the rnn op's
WeightList order (engine/kernels/rnn_fused.py): W_ih [G*H, in], W_hh [G*H, H] for each
(layer, direction), then b_ih, b_hh [G*H] likewise (G = 4 gates i, f, g, o for the
LSTM, 3 r, z, c for the GRU), all Uniform(-1/sqrt(H), 1/sqrt(H)) as in Paddle. So
``<name>.w_0`` .. are the weights in that order and ``<name>.b_0`` .. the biases.
Paddle names the same tensors by cell (one per layer and direction, numbered on from
the first): ``lstm_cell_<k>.w_0`` (W_ih), ``.w_1`` (W_hh), ``.b_0``, ``.b_1``. Naming the
first cell (``param_attr="lstm_cell_0"``, ``bias_attr`` likewise) names them so, which is
how a model saved by Paddle reads back as this layer (design/lift.py). The dropout
state is ``<name>.dropout_state__non_persistable``, Paddle's name too.
"""
import math
import re

from fluidscope.engine.ir.dtypes import to_var_type

from ..initializer import Uniform
from ..layer_helper import LayerHelper
from ..layer_specs import layer_spec
from ..param_attr import ParamAttr

__all__ = ["lstm", "gru"]

_DIRECTIONS = ("forward", "bidirect", "bidirectional")


def _fused_rnn(helper, mode, input, hidden_size, num_layers, direction, time_major, dropout,
               sequence_length, states, param_attr, bias_attr, is_test):
    """Check, then lower to transpose2 + rnn + transpose2; returns (out, final states)."""
    if not isinstance(hidden_size, int) or isinstance(hidden_size, bool) or hidden_size <= 0:
        raise helper.error(f"hidden_size must be a positive int, got {hidden_size!r}")
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers <= 0:
        raise helper.error(f"num_layers must be a positive int, got {num_layers!r}")
    if direction not in _DIRECTIONS:
        raise helper.error(f"direction must be one of {list(_DIRECTIONS)}, got {direction!r}")
    if not 0.0 <= dropout <= 1.0:
        raise helper.error(f"dropout must be in [0, 1], got {dropout!r}")
    shape = list(input.shape)
    layout = "[T, N, input_size] (time_major)" if time_major else "[N, T, input_size]"
    if len(shape) != 3 or shape[2] < 0:
        raise helper.error(f"input '{input.name}' has shape {shape}; it must be 3-D {layout} "
                           "with a known input_size")
    dirs = 2 if direction != "forward" else 1
    gates = 4 if mode == "LSTM" else 3
    batch_axis = 1 if time_major else 0
    state_shape = [num_layers * dirs, shape[batch_axis], hidden_size]
    for slot, state in states.items():
        if state is not None and (len(state.shape) != 3 or not all(
                d < 0 or e < 0 or d == e for d, e in zip(state.shape, state_shape))):
            raise helper.error(
                f"{slot} '{state.name}' has shape {list(state.shape)}; it must be "
                f"[num_layers * directions, N, hidden_size] = {state_shape}")
    if sequence_length is not None and (len(sequence_length.shape) != 1
                                        or sequence_length.dtype not in ("int64", "int32")):
        raise helper.error(f"sequence_length '{sequence_length.name}' must be an int64 or int32 "
                           f"vector [N], got {sequence_length.dtype} {list(sequence_length.shape)}")
    weights, biases = _parameters(helper, input.dtype, shape[2], hidden_size, num_layers, dirs,
                                  gates, param_attr, bias_attr)
    dtype = input.dtype
    steps_first = input if time_major else _transpose(helper, input)
    pre_state = [s if s is not None else _zeros(helper, steps_first, state_shape, dtype)
                 for s in states.values()]
    out = helper.create_tmp(dtype)
    final = [helper.create_tmp(dtype) for _ in pre_state]
    helper.append_op(
        "rnn", {"Input": steps_first, "PreState": pre_state, "WeightList": weights + biases,
                "SequenceLength": sequence_length},
        {"Out": out, "State": final, "Reserve": helper.create_tmp(dtype, stop_gradient=True),
         "DropoutState": _dropout_state(helper)},
        {"dropout_prob": float(dropout), "is_bidirec": dirs == 2, "input_size": shape[2],
         "hidden_size": hidden_size, "num_layers": num_layers, "mode": mode, "seed": 0,
         "is_test": bool(is_test)})
    return (out if time_major else _transpose(helper, out)), final


def _parameters(helper, dtype, input_size, hidden, layers, dirs, gates, param_attr, bias_attr):
    """The WeightList parameters: weights per (layer, direction), then biases likewise."""
    weight_attrs = _per_parameter(helper, "param_attr", param_attr, layers * dirs, "w")
    bias_attrs = _per_parameter(helper, "bias_attr", bias_attr, layers * dirs, "b")
    bound = 1.0 / math.sqrt(hidden)
    weights, biases = [], []
    for layer in range(layers):
        width = input_size if layer == 0 else dirs * hidden
        for _ in range(dirs):
            for cols in (width, hidden):
                weights.append(helper.create_parameter(
                    weight_attrs[len(weights)], [gates * hidden, cols], dtype,
                    default_initializer=Uniform(-bound, bound)))
    for attr in bias_attrs:
        biases.append(helper.create_parameter(attr, [gates * hidden], dtype, is_bias=True,
                                              default_initializer=Uniform(-bound, bound)))
    return weights, biases


def _per_parameter(helper, arg, attr, cells, kind):
    """The attributes of the 2 * ``cells`` weights (``kind`` "w") or biases ("b"), in
    WeightList order: ``attr`` for each, or, when it names the first of Paddle's cells
    (``lstm_cell_4``), the names Paddle gives them (``lstm_cell_4.w_0``, ``.w_1``,
    ``lstm_cell_5.w_0``, ...)."""
    attr = ParamAttr.to_attr(attr)
    if attr is False:
        raise helper.error(f"{arg} cannot be False: the rnn op needs every weight and bias")
    if not attr.name:
        return [attr] * (2 * cells)
    first = re.fullmatch(r"(.+)_(\d+)", attr.name)
    if first is None:
        raise helper.error(f"{arg} names a parameter ({attr.name!r}), but this layer has "
                           f"{2 * cells} of that kind; name the first cell as Paddle does "
                           f"('lstm_cell_0': its {kind}_0 and {kind}_1, then cell 1's, ...), "
                           "or pass an initializer or learning rate instead")
    stem, start = first.group(1), int(first.group(2))
    return [ParamAttr(f"{stem}_{start + cell}.{kind}_{k}", attr.initializer, attr.learning_rate,
                      attr.regularizer, attr.trainable)
            for cell in range(cells) for k in range(2)]


def _dropout_state(helper):
    """The rnn op's dropout mask holder, under the name paddle.nn.LSTM/GRU give it."""
    name = f"{helper.name}.dropout_state__non_persistable"
    return helper.block.create_var(name=name, dtype="uint8", stop_gradient=True)


def _transpose(helper, x):
    """Swap the batch and time axes ([N, T, C] <-> [T, N, C])."""
    out = helper.create_tmp(x.dtype)
    helper.append_op("transpose2", {"X": x}, {"Out": out,
                                              "XShape": helper.create_tmp(x.dtype, True)},
                     {"axis": [1, 0, 2]})
    return out


def _zeros(helper, steps_first, shape, dtype):
    """A zero initial state [L*D, N, H], N read from the time-major input at run time."""
    out = helper.create_tmp(dtype, stop_gradient=True)
    helper.append_op("fill_constant_batch_size_like", {"Input": steps_first}, {"Out": out},
                     {"shape": [shape[0], -1, shape[2]], "input_dim_idx": 1,
                      "output_dim_idx": 1, "dtype": to_var_type(dtype), "value": 0.0})
    return out


_SPEC = dict(types={"hidden_size": "int", "num_layers": "int"},
             choices={"direction": _DIRECTIONS})


@layer_spec("recurrent", inputs={"input": "tensor", "sequence_length": "tensor?",
                                 "h_0": "tensor?", "c_0": "tensor?"},
            outputs=("out", "last_h", "last_c"), **_SPEC)
def lstm(input, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
         sequence_length=None, h_0=None, c_0=None, param_attr=None, bias_attr=None,
         is_test=False, name=None):
    """Multi-layer (bidirectional) LSTM over a padded batch [N, T, I]: (out, last_h, last_c).

    out [N, T, D*H] (D = 2 with ``direction='bidirect'``: forward | backward halves),
    last_h / last_c [num_layers*D, N, H] (row ``layer*D + direction``), each sample's
    state at its last valid step when ``sequence_length`` [N] is given (padding steps
    output 0). ``dropout`` applies between layers while training (not ``is_test``).
    ``h_0`` / ``c_0``: initial states of that shape (zeros when None). paddle.nn.LSTM.
    """
    helper = LayerHelper("lstm", name)
    out, (last_h, last_c) = _fused_rnn(
        helper, "LSTM", input, hidden_size, num_layers, direction, time_major, dropout,
        sequence_length, {"h_0": h_0, "c_0": c_0}, param_attr, bias_attr, is_test)
    return out, last_h, last_c


@layer_spec("recurrent", inputs={"input": "tensor", "sequence_length": "tensor?",
                                 "h_0": "tensor?"},
            outputs=("out", "last_h"), **_SPEC)
def gru(input, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
        sequence_length=None, h_0=None, param_attr=None, bias_attr=None, is_test=False,
        name=None):
    """Multi-layer (bidirectional) GRU over a padded batch [N, T, I]; returns (out, last_h).

    Shapes and arguments as ``lstm``; the cell is Paddle's (cuDNN's): the reset gate
    multiplies the hidden projection, h' = z * h + (1 - z) * c~. paddle.nn.GRU.
    """
    helper = LayerHelper("gru", name)
    out, (last_h,) = _fused_rnn(
        helper, "GRU", input, hidden_size, num_layers, direction, time_major, dropout,
        sequence_length, {"h_0": h_0}, param_attr, bias_attr, is_test)
    return out, last_h
