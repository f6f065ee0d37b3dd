"""What a run of ops reads as: the layer call (layer, inputs, attributes) that may have made it.

``lift.py`` groups a loaded program's ops into runs (consecutive ops whose outputs share
a layer-name prefix) and asks ``read_run`` what each is; it keeps the answer only if
rebuilding that call makes the same ops. A reader therefore only proposes: it reads the
layer's arguments from the ops' attributes and the parameters' shapes, and may be
wrong (the rebuild says so). ``ops`` are ``{"type", "attrs", "outputs"}`` dicts (every
attribute the registry declares, at its default when the file left it out), ``refs``
each op's inputs by slot (lists of Refs), ``names`` Ref -> variable name.
"""
from __future__ import annotations

import numpy as np

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "softmax", "gelu", "relu6", "leaky_relu",
                "hard_swish", "exp", "log", "square")
_UNARY_ATTRS = {"softmax": ("axis",), "gelu": ("approximate",), "leaky_relu": ("alpha",),
                "hard_swish": ("threshold", "scale", "offset")}
_ELEMENTWISE = ("elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div")


def layer_prefix(name):
    """The layer name a temporary carries (``conv2d_0`` of ``conv2d_0.tmp_1``), or None."""
    return name.split(".tmp_")[0] if ".tmp_" in name else None


def _f32(value):
    """A float32 attribute as the number a person wrote (0.9, not 0.8999999761581421);
    it rounds to the same float32."""
    return float(str(np.float32(value)))


def _param(ref, names, var_descs):
    """The parameter a ref names (its VarDesc), or None when it is not persistable."""
    desc = var_descs[names[ref]]
    return desc if desc.persistable else None


def _dims(desc):
    return list(desc.type.dense_tensor.tensor.dims)


def _act(ops, k):
    """The activation op at ``ops[k]`` (its type), None past the end; ValueError else."""
    if k >= len(ops):
        return None
    if ops[k]["type"] not in _ACTIVATIONS or ops[k]["attrs"].get("axis", -1) != -1:
        raise ValueError("not an activation")
    return ops[k]["type"]


# (op type, input slot) of a layer's parameter -> (the layer's argument naming it, the
# name the layer gives it by default after the layer's own name)
_PARAMETER_SLOTS = {
    **{(conv, "Filter"): ("param_attr", "w_0")
       for conv in ("conv2d", "depthwise_conv2d", "conv2d_transpose")},
    ("mul", "Y"): ("param_attr", "w_0"), ("matmul_v2", "Y"): ("param_attr", "w_0"),
    ("elementwise_add", "Y"): ("bias_attr", "b_0"),
    ("batch_norm", "Scale"): ("param_attr", "w_0"), ("batch_norm", "Bias"): ("bias_attr", "b_0"),
    ("batch_norm", "Mean"): ("moving_mean_name", "w_1"),
    ("batch_norm", "Variance"): ("moving_variance_name", "w_2"),
    ("layer_norm", "Scale"): ("param_attr", "w_0"), ("layer_norm", "Bias"): ("bias_attr", "b_0"),
}
_NAMES_PARAMETERS = ("conv2d", "conv2d_transpose", "fc", "linear", "batch_norm", "layer_norm")


def read_run(ops, refs, names, var_descs, prefix, outside):
    """(layer, {slot: Ref}, attrs) the run of ``ops`` reads as, or None. ``prefix``: the
    layer name the run's outputs carry; ``outside``: those of its outputs read by
    other nodes.

    Parameters named otherwise than the layer names them are passed by name, all of the
    layer's at once (``param_attr="conv2d_6.w_0"``): Paddle's ``nn`` layers name their
    parameters when they are made (``nn.Conv2D`` in ``__init__``, ``batch_norm2d_0.w_0``)
    and their outputs when called, so in a model the two prefixes often differ.
    """
    found = _read_layer(ops, refs, names, var_descs, prefix, outside)
    if found is None or found[0] not in _NAMES_PARAMETERS:
        return found
    layer, inputs, attrs = found
    given = [(*_PARAMETER_SLOTS[op["type"], slot], names[ref])
             for op, slots in zip(ops, refs) for slot, value in slots.items()
             if (op["type"], slot) in _PARAMETER_SLOTS
             for ref in (value if isinstance(value, list) else [value])
             if _param(ref, names, var_descs) is not None]
    if any(name != f"{prefix}.{suffix}" for _, suffix, name in given):
        attrs.update({arg: name for arg, _, name in given})
    return layer, inputs, attrs


def _read_layer(ops, refs, names, var_descs, prefix, outside):
    """``read_run`` before parameter names."""
    first, a = ops[0]["type"], ops[0]["attrs"]
    types = [op["type"] for op in ops]
    if "rnn" in types:
        return _read_rnn(ops, refs, names, prefix)
    if first == "matmul_v2" and "softmax" in types:
        return _read_attention(ops, refs, names, var_descs, outside)
    if first in ("conv2d", "depthwise_conv2d", "conv2d_transpose"):
        weight = _dims(_param(refs[0]["Filter"][0], names, var_descs))
        biased = len(ops) > 1 and ops[1]["type"] == "elementwise_add" and \
            _param(refs[1]["Y"][0], names, var_descs) is not None
        attrs = {"num_filters": weight[0], "filter_size": weight[2:]}
        if first == "conv2d_transpose":
            attrs["num_filters"] = weight[1] * a["groups"]
            if a["output_size"]:
                attrs["output_size"] = list(a["output_size"])
        attrs.update(stride=list(a["strides"]), dilation=list(a["dilations"]),
                     padding=a["padding_algorithm"] if a["padding_algorithm"] != "EXPLICIT"
                     else list(a["paddings"]), data_format=a["data_format"])
        if a["groups"] != 1:
            attrs["groups"] = a["groups"]
        if first == "depthwise_conv2d":
            attrs["use_cudnn"] = False
        if not biased:
            attrs["bias_attr"] = False
        act = _act(ops, 2 if biased else 1)
        if act:
            attrs["act"] = act
        layer = "conv2d_transpose" if first == "conv2d_transpose" else "conv2d"
        return layer, {"input": refs[0]["Input"][0]}, attrs
    if first == "pool2d" and len(ops) == 1:
        if a["adaptive"]:
            return "adaptive_pool2d", {"input": refs[0]["X"][0]}, {
                "pool_size": list(a["ksize"]), "pool_type": a["pooling_type"]}
        algorithm = a["padding_algorithm"]
        return "pool2d", {"input": refs[0]["X"][0]}, {
            "pool_size": list(a["ksize"]), "pool_type": a["pooling_type"],
            "pool_stride": list(a["strides"]),
            "pool_padding": algorithm if algorithm != "EXPLICIT" else list(a["paddings"]),
            "global_pooling": a["global_pooling"], "ceil_mode": a["ceil_mode"],
            "exclusive": a["exclusive"], "data_format": a["data_format"]}
    if first == "max_pool2d_with_index" and len(ops) == 1 and a["adaptive"]:
        return "adaptive_pool2d", {"input": refs[0]["X"][0]}, {
            "pool_size": list(a["ksize"]), "pool_type": "max"}
    if first == "batch_norm":
        attrs = {"is_test": a["is_test"], "momentum": _f32(a["momentum"]),
                 "epsilon": _f32(a["epsilon"]),
                 "data_layout": a["data_layout"], "use_global_stats": a["use_global_stats"]}
        act = _act(ops, 1)
        if act:
            attrs["act"] = act
        return "batch_norm", {"input": refs[0]["X"][0]}, attrs
    if first == "layer_norm":
        attrs = {"begin_norm_axis": a["begin_norm_axis"], "epsilon": _f32(a["epsilon"]),
                 "scale": bool(refs[0].get("Scale")), "shift": bool(refs[0].get("Bias"))}
        act = _act(ops, 1)
        if act:
            attrs["act"] = act
        return "layer_norm", {"input": refs[0]["X"][0]}, attrs
    if first == "flatten_contiguous_range" and len(ops) == 1:
        return "flatten", {"x": refs[0]["X"][0]}, {"start_axis": a["start_axis"],
                                                    "stop_axis": a["stop_axis"]}
    if first in ("transpose2", "reshape2") and len(ops) == 1:  # paddle.transpose / reshape
        layer, attr, key = (("transpose", "perm", "axis") if first == "transpose2"
                            else ("reshape", "shape", "shape"))
        return layer, {"x": refs[0]["X"][0]}, {attr: list(a[key])}
    if first == "mul":
        weight = _dims(_param(refs[0]["Y"][0], names, var_descs))
        biased = len(ops) > 1 and ops[1]["type"] == "elementwise_add"
        attrs = {"size": weight[1], "num_flatten_dims": a["x_num_col_dims"]}
        if not biased:
            attrs["bias_attr"] = False
        act = _act(ops, 2 if biased else 1)
        if act:
            attrs["act"] = act
        return "fc", {"input": refs[0]["X"][0]}, attrs
    if first == "matmul_v2" and not a["trans_x"] and not a["trans_y"]:  # paddle.nn.Linear
        weight = _param(refs[0]["Y"][0], names, var_descs)
        biased = len(ops) > 1 and ops[1]["type"] == "elementwise_add"
        if weight is None or len(_dims(weight)) != 2 or len(ops) > (2 if biased else 1):
            return None
        attrs = {"size": _dims(weight)[1]}
        if not biased:
            attrs["bias_attr"] = False
        return "linear", {"x": refs[0]["X"][0]}, attrs
    if first in _ACTIVATIONS and len(ops) == 1:
        return first, {"x": refs[0]["X"][0]}, {
            k: _f32(a[k]) if isinstance(a[k], float) else a[k] for k in _UNARY_ATTRS.get(first, ())}
    if first in _ELEMENTWISE and len(ops) <= 2:
        attrs = {"axis": a["axis"]}
        act = _act(ops, 1)
        if act:
            attrs["act"] = act
        return first, {"x": refs[0]["X"][0], "y": refs[0]["Y"][0]}, attrs
    return None


def _read_rnn(ops, refs, names, prefix):
    """The fused ``rnn`` op as an ``lstm``/``gru`` layer: alone (paddle.nn.LSTM/GRU in a
    Paddle file: its transposes and zero states are ops of their own, so the layer is
    time-major and takes the states as inputs), or with the transposes and zero states
    the designer's layer makes itself (they share its name). Weights Paddle names by cell
    (``lstm_cell_0.w_0``) are named through ``param_attr``/``bias_attr``."""
    k = [op["type"] for op in ops].index("rnn")
    a, slots = ops[k]["attrs"], refs[k]
    if a["mode"] not in ("LSTM", "GRU"):
        return None
    time_major = k == 0
    attrs = {"hidden_size": a["hidden_size"], "num_layers": a["num_layers"],
             "direction": "bidirect" if a["is_bidirec"] else "forward",
             "time_major": time_major, "dropout": _f32(a["dropout_prob"]),
             "is_test": a["is_test"]}
    weights = [names[ref] for ref in slots["WeightList"]]
    for arg, name in (("param_attr", weights[0]), ("bias_attr", weights[len(weights) // 2])):
        cell = name.rpartition(".")[0]
        if cell != prefix:  # named by cell, as Paddle does
            attrs[arg] = cell
    inputs = {"input": slots["Input"][0] if time_major else refs[0]["X"][0]}
    for slot, ref in zip(("h_0", "c_0") if a["mode"] == "LSTM" else ("h_0",),
                         slots["PreState"]):
        if layer_prefix(names[ref]) != prefix:  # not the zeros the layer makes itself
            inputs[slot] = ref
    if slots.get("SequenceLength"):
        inputs["sequence_length"] = slots["SequenceLength"][0]
    return "lstm" if a["mode"] == "LSTM" else "gru", inputs, attrs


def _read_attention(ops, refs, names, var_descs, outside):
    """``multi_head_attention``'s ops (a composite: all under its name) as that layer: the
    four projections are the matmul_v2 ops that read a parameter (q, k, v, out), the
    head count is in the first reshape2, a mask comes in through a cast (bool/int) or as
    the non-parameter addend of the scores, and the weights are an output when
    something outside reads the softmax."""
    types = [op["type"] for op in ops]
    projections = [k for k, t in enumerate(types) if t == "matmul_v2"
                   and _param(refs[k]["Y"][0], names, var_descs) is not None]
    if len(projections) != 4 or "reshape2" not in types:
        return None
    query, key, value = (refs[k]["X"][0] for k in projections[:3])
    inputs = {"query": query}
    if key != query:
        inputs["key"] = key
    if value != query:
        inputs["value"] = value
    addends = [refs[k]["Y"][0] for k, t in enumerate(types) if t == "elementwise_add"
               and _param(refs[k]["Y"][0], names, var_descs) is None]
    if "cast" in types:
        inputs["attn_mask"] = refs[types.index("cast")]["X"][0]
    elif addends:
        inputs["attn_mask"] = addends[0]
    attrs = {"num_heads": ops[types.index("reshape2")]["attrs"]["shape"][2]}
    if "dropout" in types:
        dropout = ops[types.index("dropout")]["attrs"]
        attrs.update(dropout=_f32(dropout["dropout_prob"]), is_test=dropout["is_test"])
    if types[projections[0] + 1] != "elementwise_add":
        attrs["bias_attr"] = False
    if ops[types.index("softmax")]["outputs"]["Out"][0]["name"] in outside:
        attrs["need_weights"] = True
    return "multi_head_attention", inputs, attrs
