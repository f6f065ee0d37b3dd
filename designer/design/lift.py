"""A loaded inference program's op nodes read back as layer nodes where a layer builds them.

A file has no record of layer calls, so ``op_nodes.py`` gives one node per op. Layers
name what they make after themselves (``conv2d_0.tmp_0``, ``conv2d_0.w_0``), in Paddle
and here alike, so the ops of one layer call are a run of consecutive ops whose outputs
share that prefix: conv2d + elementwise_add (bias) + relu (act) for ``conv2d_0``. Each
run is *read* as a candidate call (the layer and its arguments, from the ops'
attributes and the parameters' shapes), and the candidate is kept only if building it
under that name makes the same ops: types, input and output variable names, and every
attribute the registry declares (a Paddle file's cuDNN/MKL-DNN-only attributes aside).
A run no reader knows, or whose rebuild differs, stays op nodes; so a lifted design
builds the program the file holds, layer by layer, and the file's parameters (named as
the layers name them) load into it.

Only forward (inference) programs are lifted: a training program's backward and
optimizer ops belong to no layer call and stay what ``op_nodes.py`` makes of them.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine import FluidscopeError, registry
from fluidscope.engine.ir.roles import is_training_role, role_of

from .. import framework, layers, layer_specs
from .build import design_guard
from .document import Document, Graph, Node, Ref

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "softmax", "gelu", "relu6", "leaky_relu",
                "hard_swish", "exp", "log", "square")
_UNARY_ATTRS = {"softmax": ("axis",), "gelu": ("approximate",), "leaky_relu": ("alpha",),
                "hard_swish": ("threshold", "scale", "offset")}
_ELEMENTWISE = ("elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div")


def lift_layers(doc: Document, program) -> Document:
    """``doc`` (op nodes of ``program``) with every verified run of ops as one layer node."""
    block = program.desc.blocks[0]
    if len(program.desc.blocks) > 1 or any(is_training_role(role_of(op)) for op in block.ops):
        return doc
    var_descs = {v.name: v for v in block.vars}
    nodes = list(doc.graph.nodes.values())
    names = {}  # Ref -> variable name
    for node in nodes:
        if node.layer == "variable":
            names[Ref(node.id)] = node.attrs["desc"]["name"]
        elif node.layer == "op":
            for k, name in enumerate(_output_names(node)):
                names[Ref(node.id, k)] = name
    producer = {name: ref for ref, name in names.items()}
    readers = {}  # Ref -> ids of the nodes that read it
    for node in nodes:
        for _, ref in node.refs():
            readers.setdefault(ref, set()).add(node.id)
    lifted = {}  # layer node id -> (run, node, its output names, parameter node ids)
    rewritten = {}  # layer node id -> every variable its rebuilt ops write
    for run in _runs(nodes):
        found = _lift_run(run, names, var_descs, producer, readers)
        if found is not None and found[0].id not in lifted:
            lifted[found[0].id] = (run, *found[:3])
            rewritten[found[0].id] = found[3]
    while True:  # a layer's id must not be the id of a node that stays
        absorbed = {n.id for run, *_ in lifted.values() for n in run} | \
            {p for *_, params in lifted.values() for p in params}
        staying = {n.id for n in nodes} - absorbed
        clashes = [node_id for node_id in lifted if node_id in staying]
        if not clashes:
            break
        for node_id in clashes:
            del lifted[node_id]
    replaced = {producer[name]: Ref(node_id, k) for node_id, (_, _, outputs, _) in lifted.items()
                for k, name in enumerate(outputs)}
    dropped = {p for *_, params in lifted.values() for p in params}
    if not lifted:
        return doc
    # A variable no op of the file writes and nothing reads, which a lifted layer writes
    # again (the XShape of a flatten that Paddle pruned from the op but left declared).
    written = set().union(*(rewritten[node_id] for node_id in lifted))
    dropped |= {n.id for n in nodes if n.layer == "variable" and not readers.get(Ref(n.id))
                and names[Ref(n.id)] in written and not var_descs[names[Ref(n.id)]].persistable}
    graph = Graph()
    first = {run[0].id: node for run, node, _, _ in lifted.values()}
    skip = {n.id for run, *_ in lifted.values() for n in run} | dropped
    for node in nodes:
        if node.id in first:
            new = first[node.id]
        elif node.id in skip:
            continue
        else:
            new = node
        new.inputs = {slot: [replaced.get(r, r) for r in value] if isinstance(value, list)
                      else replaced.get(value, value) for slot, value in new.inputs.items()}
        graph.nodes[new.id] = new
    graph.outputs = doc.graph.outputs
    doc.graph = graph
    return doc


def _output_names(node):
    return [d["name"] for descs in node.attrs["outputs"].values() for d in descs]


def _prefix(name):
    return name.split(".tmp_")[0] if ".tmp_" in name else None


def _runs(nodes):
    """Maximal runs of consecutive op nodes whose outputs share one layer-name prefix
    (variable nodes between them, a layer's parameters declared as it goes, are skipped)."""
    run, key = [], None
    for node in [n for n in nodes if n.layer != "variable"] + [None]:
        prefixes = {_prefix(n) for n in _output_names(node)} - {None} \
            if node is not None and node.layer == "op" else {None}
        mine = next(iter(prefixes)) if len(prefixes) == 1 else None
        if mine is not None and mine == key:
            run.append(node)
            continue
        if run:
            yield run
        run, key = ([node], mine) if mine is not None else ([], None)


def _lift_run(run, names, var_descs, producer, readers):
    """(layer node, its output variable names, parameter node ids it absorbs, every
    variable its rebuilt ops write), or None."""
    prefix = next(p for p in map(_prefix, _output_names(run[0])) if p)
    ops = [{"type": n.attrs["type"], "attrs": {**_defaults(n.attrs["type"]), **n.attrs["attrs"]}}
           for n in run]  # a desc holds only the attributes its writer set
    refs = [{slot: value for slot, value in n.inputs.items()} for n in run]
    try:
        candidate = (_read_rnn(ops, refs, names, prefix) if "rnn" in [o["type"] for o in ops]
                     else _read(ops, refs, names, var_descs))
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    if candidate is None:
        return None
    layer, inputs, attrs = candidate
    spec = layer_specs.get(layer)  # as a person writes it: 3 for [3, 3], no defaults
    attrs = {k: v[0] if isinstance(v, list) and len(v) == 2 and v[0] == v[1] else v
             for k, v in attrs.items()}
    attrs = {k: v for k, v in attrs.items() if spec.attr(k) is None or spec.attr(k).required
             or spec.attr(k).default != v}
    built = _build(layer, inputs, attrs, prefix, names, var_descs)
    if built is None or not _same_ops(built[0], run, names):
        return None
    outputs = built[1]
    run_ids = {n.id for n in run}
    made = {name for n in run for name in _output_names(n)}
    for name in made - set(outputs):  # what only the layer itself reads stays inside
        if readers.get(producer[name], set()) - run_ids:
            return None
    params = set()
    for value in (v for r in refs for v in r.values()):
        for ref in value if isinstance(value, list) else [value]:
            name = names.get(ref)
            desc = var_descs.get(name)
            if desc is not None and desc.persistable and ref.index == 0 and \
                    ref.node not in run_ids and not readers.get(ref, set()) - run_ids:
                params.add(ref.node)
    node = Node(prefix, layer, attrs, {slot: ref for slot, ref in inputs.items()})
    written = {name for desc in built[0] for slot in desc.outputs for name in slot.arguments}
    return node, outputs, params, written


def _defaults(op_type):
    if not registry.has(op_type):
        return {}
    return {a.name: a.default for a in registry.get(op_type).attrs
            if a.default is not registry.REQUIRED}


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


def _read(ops, refs, names, var_descs):
    """(layer, {slot: Ref}, attrs) the run of ``ops`` reads as, or None."""
    first, a = ops[0]["type"], ops[0]["attrs"]
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
        cell, _, own = name.rpartition(".")
        if cell != prefix:  # named by cell, as Paddle does
            attrs[arg] = cell
    inputs = {"input": slots["Input"][0] if time_major else refs[0]["X"][0]}
    for slot, ref in zip(("h_0", "c_0") if a["mode"] == "LSTM" else ("h_0",),
                         slots["PreState"]):
        if _prefix(names[ref]) != prefix:  # not the zeros the layer makes itself
            inputs[slot] = ref
    if slots.get("SequenceLength"):
        inputs["sequence_length"] = slots["SequenceLength"][0]
    return "lstm" if a["mode"] == "LSTM" else "gru", inputs, attrs


def _build(layer, inputs, attrs, prefix, names, var_descs):
    """(the built ops, the layer's output variable names), or None when it fails."""
    main, startup = framework.Program(), framework.Program()
    try:
        with design_guard(main, startup):
            block = main.global_block()
            args = {}
            for slot, ref in inputs.items():
                name = names[ref]
                if not block.has_var(name):
                    block.desc.vars.add().CopyFrom(var_descs[name])
                args[slot] = block.var(name)
            out = getattr(layers, layer)(**args, **attrs, name=prefix)
    except (FluidscopeError, KeyError, TypeError, ValueError):
        return None
    outs = out if isinstance(out, (list, tuple)) else [out]
    spec = layer_specs.get(layer)
    if len(outs) > len(spec.outputs):
        return None
    return main.global_block().desc.ops, [v.name for v in outs]


def _same_ops(built, run, names):
    """The built OpDescs are the run's ops: types, variable names by slot, and every
    attribute the registry declares (absent ones at their defaults)."""
    if len(built) != len(run):
        return False
    for desc, node in zip(built, run):
        op = node.attrs
        if desc.type != op["type"]:
            return False
        opdef = registry.get(desc.type)
        declared = {a.name for a in opdef.attrs} - registry.COMMON_ATTR_NAMES
        mine = {a.name: registry.attr_from_proto(a) for a in desc.attrs if a.name in declared}
        theirs = {k: v for k, v in op["attrs"].items() if k in declared}
        for name in declared:
            default = opdef.attr_by_name[name].default
            if mine.get(name, default) != theirs.get(name, default):
                return False
        given = {slot: [d["name"] for d in descs] for slot, descs in op["outputs"].items()
                 if descs}
        # an intermediate output a saved inference model dropped (Paddle prunes the
        # XShape a flatten keeps for its backward) may come back: it changes no result
        outputs = {s.parameter: list(s.arguments) for s in desc.outputs if s.arguments
                   and (s.parameter in given or not opdef.output_slot(s.parameter).intermediate)}
        inputs = {s.parameter: list(s.arguments) for s in desc.inputs if s.arguments}
        read = {slot: [names.get(r) for r in (refs if isinstance(refs, list) else [refs])]
                for slot, refs in node.inputs.items()}
        if outputs != given or inputs != {k: v for k, v in read.items() if v}:
            return False
    return True
