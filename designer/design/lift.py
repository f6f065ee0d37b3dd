"""A loaded inference program's op nodes read back as layer nodes where a layer builds them.

A file has no record of layer calls, so ``op_nodes.py`` gives one node per op. Layers
name what they make after themselves (``conv2d_0.tmp_0``, ``conv2d_0.w_0``), in Paddle
and here alike, so the ops of one layer call are a run of consecutive ops whose outputs
share that prefix: conv2d + elementwise_add (bias) + relu (act) for ``conv2d_0``. Each
run is *read* as a candidate call (``lift_read.py``: the layer and its arguments, from
the ops' attributes and the parameters' shapes), and the candidate is kept only if building it
under that name makes the same ops: types, input and output variable names, and every
attribute the registry declares (a Paddle file's cuDNN/MKL-DNN-only attributes aside).
A run no reader knows, or whose rebuild differs, stays op nodes; so a lifted design
builds the program the file holds, layer by layer, and the file's parameters (named as
the layers name them, or passed to them by name) load into it.

Read this way: conv2d / conv2d_transpose (+ bias, + act), pool2d and adaptive pooling,
batch_norm and layer_norm (+ act), flatten, fc, linear (paddle.nn.Linear), activations,
elementwise ops, transpose / reshape, lstm / gru over the fused rnn op (paddle.nn.LSTM /
GRU: time-major, Paddle's zero-state ops stay op nodes) and multi_head_attention. An op
whose outputs carry no layer name (``tmp_3``: Paddle's ``x + y`` operators) stays an op
node: no layer names its output so.

Only forward (inference) programs are lifted: a training program's backward and
optimizer ops belong to no layer call and stay what ``op_nodes.py`` makes of them.
"""
from __future__ import annotations

from fluidscope.engine import FluidscopeError, registry
from fluidscope.engine.ir.roles import is_training_role, role_of

from .. import framework, layers, layer_specs
from .build import design_guard
from .document import Document, Graph, Node, Ref
from .lift_read import layer_prefix, read_run
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

def _runs(nodes):
    """Maximal runs of consecutive op nodes whose outputs share one layer-name prefix
    (variable nodes between them, a layer's parameters declared as it goes, are skipped)."""
    run, key = [], None
    for node in [n for n in nodes if n.layer != "variable"] + [None]:
        prefixes = {layer_prefix(n) for n in _output_names(node)} - {None} \
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
    prefix = next(p for p in map(layer_prefix, _output_names(run[0])) if p)
    ops = [{"type": n.attrs["type"], "attrs": {**_defaults(n.attrs["type"]), **n.attrs["attrs"]},
            "outputs": n.attrs["outputs"]}
           for n in run]  # a desc holds only the attributes its writer set
    refs = [{slot: value for slot, value in n.inputs.items()} for n in run]
    run_ids = {n.id for n in run}
    made = {name for n in run for name in _output_names(n)}
    outside = {name for name in made if readers.get(producer[name], set()) - run_ids}
    try:
        candidate = read_run(ops, refs, names, var_descs, prefix, outside)
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
    if outside - set(outputs):  # what only the layer itself reads stays inside
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
