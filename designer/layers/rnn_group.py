"""LSTM and GRU as recurrent groups of ordinary ops (Paddle v1's ``lstmemory_group`` and
``gru_group``): the seed's way, every gate an op you can step through in the debugger.

They compute exactly what the fused ``dynamic_lstm`` / ``dynamic_gru`` compute (same
gate order, engine/kernels/rnn.py), only with the parameters split by role:

* LSTM: ``<name>.w_0`` [D, 4D] (= the fused Weight), ``<name>.b_0`` [4D] (= Bias[:4D]),
  and with peepholes ``<name>.b_1..3`` [D] (= Bias[4D:5D], [5D:6D], [6D:7D]: w_ic, w_fc, w_oc).
* GRU: ``<name>.w_0`` [D, 2D] and ``<name>.w_1`` [D, D] (= the fused Weight's first 2*D*D
  and last D*D values), ``<name>.b_0`` [3D] (= Bias).

The input is the x-projection of the gates, ``[T, 4D]`` / ``[T, 3D]``, as for the fused
layers. Memories link by layer name: ``<name>_h`` (and ``<name>_c`` for the LSTM cell).
"""
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper
from ..name_scopes import name_scope
from ..param_attr import ParamAttr
from . import math_ops
from .recurrent import memory, recurrent_group
from .tensor import split

__all__ = ["lstmemory_group", "gru_group"]

_ACTS = ("sigmoid", "tanh", "relu", "identity")


def _in_scope(name):
    """Build the step's ops under the group's name, so views can fold them into one box."""
    def wrap(step):
        def scoped(*args):
            with name_scope(name):
                return step(*args)
        return scoped
    return wrap


def _act(x, act):
    return x if act == "identity" else getattr(math_ops, act)(x)


def _check(helper, input, blocks, size, acts):
    if input.lod_level < 1:
        raise DesignError(f"{helper.layer_type} '{helper.name}': input '{input.name}' must be a "
                          "sequence (lod_level=1)")
    width = input.shape[-1]
    size = size or (width // blocks if width > 0 else None)
    if not size or width != blocks * size:
        raise DesignError(
            f"{helper.layer_type} '{helper.name}': input '{input.name}' has shape "
            f"{list(input.shape)}; it must be [T, {blocks} * size] (the gates' x-projection, "
            f"e.g. fc(x, size={blocks} * size))")
    for arg, value in acts.items():
        if value not in _ACTS:
            raise DesignError(f"{helper.layer_type} '{helper.name}': {arg}={value!r} must be one "
                              f"of {list(_ACTS)}")
    return size


@layer_spec("recurrent", inputs={"input": "sequence", "memory_boot": "tensor?",
                                "state_boot": "tensor?"}, types={"size": "int"},
            choices=dict.fromkeys(("gate_act", "state_act", "act"), _ACTS))
def lstmemory_group(input, size=None, name=None, memory_boot=None, state_boot=None,
                    reverse=False, param_attr=None, bias_attr=None, use_peepholes=True,
                    gate_act="sigmoid", state_act="tanh", act="tanh"):
    """An LSTM over the sequences of ``input`` [T, 4*size] as a recurrent group.

    memory_boot / state_boot: initial hidden / cell, [num_sequences, size]. act is the
    candidate activation, state_act the cell output activation, gate_act the gates'.
    Returns the hidden sequence [T, size]."""
    helper = LayerHelper("lstmemory_group", name)
    size = _check(helper, input, 4, size, dict(gate_act=gate_act, state_act=state_act, act=act))
    name = helper.name
    w = helper.create_parameter(param_attr, [size, 4 * size], input.dtype)
    b = helper.create_parameter(bias_attr, [4 * size], input.dtype, is_bias=True)
    peep = [helper.create_parameter(ParamAttr.to_attr(None), [size], input.dtype, is_bias=True)
            for _ in range(3)] if use_peepholes else None

    @_in_scope(name)
    def step(x_t):
        h_pre = memory(f"{name}_h", size, boot_layer=memory_boot)
        c_pre = memory(f"{name}_c", size, boot_layer=state_boot)
        if b is not None:
            # The bias first: x_t + b reads no memory, so a run adds it to every frame's
            # rows at once (engine/recurrent/hoist.py), as gru_group's does.
            x_t = math_ops.elementwise_add(x_t, b)
        gates = math_ops.elementwise_add(x_t, math_ops.matmul(h_pre, w))
        cand, i, f, o = split(gates, 4, dim=1)
        if peep is not None:
            i = math_ops.elementwise_add(i, math_ops.elementwise_mul(c_pre, peep[0]))
            f = math_ops.elementwise_add(f, math_ops.elementwise_mul(c_pre, peep[1]))
        i, f, cand = _act(i, gate_act), _act(f, gate_act), _act(cand, act)
        c = math_ops.elementwise_add(math_ops.elementwise_mul(f, c_pre),
                                     math_ops.elementwise_mul(i, cand), name=f"{name}_c")
        if peep is not None:
            o = math_ops.elementwise_add(o, math_ops.elementwise_mul(c, peep[2]))
        return math_ops.elementwise_mul(_act(o, gate_act), _act(c, state_act), name=f"{name}_h")

    return recurrent_group(step, input, reverse=reverse, name=name)


@layer_spec("recurrent", inputs={"input": "sequence", "memory_boot": "tensor?"},
            types={"size": "int"}, choices=dict.fromkeys(("act", "gate_act"), _ACTS))
def gru_group(input, size=None, name=None, memory_boot=None, reverse=False, param_attr=None,
              bias_attr=None, act="tanh", gate_act="sigmoid", origin_mode=False):
    """A GRU over the sequences of ``input`` [T, 3*size] as a recurrent group.

    memory_boot: initial hidden [num_sequences, size]. origin_mode as ``dynamic_gru``.
    Returns the hidden sequence [T, size]."""
    helper = LayerHelper("gru_group", name)
    size = _check(helper, input, 3, size, dict(gate_act=gate_act, act=act))
    name = helper.name
    attrs = param_attr if isinstance(param_attr, (list, tuple)) else [param_attr, param_attr]
    if attrs[0] is not None and attrs[0] is attrs[1] and getattr(attrs[0], "name", None):
        raise DesignError(f"gru_group '{name}': give two ParamAttrs (W_ur and W_c), not one name")
    w_ur = helper.create_parameter(attrs[0], [size, 2 * size], input.dtype)
    w_c = helper.create_parameter(attrs[1], [size, size], input.dtype)
    b = helper.create_parameter(bias_attr, [3 * size], input.dtype, is_bias=True)

    @_in_scope(name)
    def step(x_t):
        h_pre = memory(f"{name}_h", size, boot_layer=memory_boot)
        if b is not None:
            x_t = math_ops.elementwise_add(x_t, b)
        x_ur, x_c = split(x_t, [2 * size, size], dim=1)
        u, r = split(_act(math_ops.elementwise_add(x_ur, math_ops.matmul(h_pre, w_ur)),
                          gate_act), 2, dim=1)
        c = _act(math_ops.elementwise_add(
            x_c, math_ops.matmul(math_ops.elementwise_mul(r, h_pre), w_c)), act)
        if origin_mode:  # h = u * h_pre + (1 - u) * c = c + u * (h_pre - c)
            delta = math_ops.elementwise_mul(u, math_ops.elementwise_sub(h_pre, c))
            return math_ops.elementwise_add(c, delta, name=f"{name}_h")
        delta = math_ops.elementwise_mul(u, math_ops.elementwise_sub(c, h_pre))
        return math_ops.elementwise_add(h_pre, delta, name=f"{name}_h")

    return recurrent_group(step, input, reverse=reverse, name=name)
