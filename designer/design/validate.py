"""Checks of a design against the catalog: what an edit may do, what a file may hold.

Every problem is a DesignError naming the node, its layer and the field (attribute,
slot, row), so an edit is refused before it changes anything and a bad file is
rejected with a message that says where.
"""
from __future__ import annotations

from fluidscope.engine import DesignError, registry
from fluidscope.engine.ir import paddle_ops

from .. import layer_specs as catalog
from . import document as doc_
from .document import EMPTY, GROUP, LINK_SLOT, MEMORY, MIXED, OUTER_SLOTS, STEP_INPUT, Ref

# The structural nodes of a recurrent body: their own small specs (memory's boot_layer
# and size come from the memory layer's spec, its link is the edge the design stores).
STRUCTURAL = {
    STEP_INPUT: ({"outer": "tensor"}, {"static": ("bool", False)}),
    MEMORY: ({"boot_layer": "tensor?", LINK_SLOT: "tensor"}, {"size": ("int", catalog.REQUIRED)}),
}
ROW_CATEGORIES = ("projection", "operator")
OP = doc_.OP


def spec_for(layer):
    """(input slots {name: SlotSpec}, attrs {name: AttrSpec}) of a node's layer."""
    if layer in STRUCTURAL:
        slots, attrs = STRUCTURAL[layer]
        return ({n: catalog.SlotSpec(n, k.rstrip("?"), k.endswith("?")) for n, k in slots.items()},
                {n: catalog.AttrSpec(n, t, d) for n, (t, d) in attrs.items()})
    spec = catalog.get(layer)
    return {s.name: s for s in spec.inputs}, {a.name: a for a in spec.attrs}


def check_attrs(where, layer, attrs, *, complete=False):
    """Each attribute is one the layer has, of its type and choices; ``complete``: the
    required ones are all given."""
    _, specs = spec_for(layer)
    for name, value in attrs.items():
        spec = specs.get(name)
        if spec is None:
            raise DesignError(f"{where}: layer {layer} has no attribute '{name}'; it has "
                              f"{sorted(specs)}")
        if layer == OP and name == "type" and not registry.has(str(value)) \
                and paddle_ops.is_paddle_op(str(value)):
            continue  # a loaded model's Paddle op fluidscope does not implement: kept as is
        problem = catalog.check_value(spec, value)
        if problem:
            raise DesignError(f"{where}: attribute '{name}' {problem}")
    if complete:
        missing = [n for n, s in specs.items() if s.required and n not in attrs]
        if missing:
            raise DesignError(f"{where}: layer {layer} needs attribute(s) {missing}")


def check_slot(where, layer, slot, value, attrs=None):
    """``slot`` is an input of ``layer``; a list slot holds a list, a single slot a Ref.
    An op node's slots are its op's (``attrs["type"]``), each a list."""
    if layer == OP:
        return _check_op_slot(where, (attrs or {}).get("type"), slot, value)
    slots, _ = spec_for(layer)
    spec = slots.get(slot)
    if spec is None or spec.kind in ("rows", "group"):
        raise DesignError(f"{where}: layer {layer} has no input slot '{slot}'; its slots are "
                          f"{[s for s, v in slots.items() if v.kind not in ('rows', 'group')]}")
    many = spec.many or spec.kind == "group"
    if isinstance(value, list) and not many:
        raise DesignError(f"{where}: slot '{slot}' takes one input, got {len(value)}")
    return spec


def _check_op_slot(where, op_type, slot, value):
    if registry.has(str(op_type)):
        slots = [s.name for s in registry.get(op_type).inputs]
    elif paddle_ops.is_paddle_op(str(op_type)):
        # A Paddle op fluidscope does not implement (a loaded model's op stays viewable
        # and editable): Paddle's slots where its data lists them (not for _grad ops).
        slots = paddle_ops.slot_names(op_type, "inputs")
        slots = slots if slots is not None else [slot]
    else:
        slots = []
    if slot not in slots:
        raise DesignError(f"{where}: op {op_type} has no input slot '{slot}'")
    if not isinstance(value, list):
        raise DesignError(f"{where}: op slot '{slot}' takes a list of inputs")
    return catalog.SlotSpec(slot, "list")


def check_row(where, kind, row):
    try:
        spec = catalog.get(kind)
    except DesignError as exc:
        raise DesignError(f"{where}: {exc}") from None
    if spec.category not in ROW_CATEGORIES:
        raise DesignError(f"{where}: '{kind}' is a {spec.category} layer, not a projection or "
                          "operator of a mixed_layer")
    for slot in row.inputs:
        if spec.input(slot) is None:
            raise DesignError(f"{where}: {kind} has no input slot '{slot}'; its slots are "
                              f"{spec.input_names}")
    check_attrs(where, kind, row.attrs)


def check_document(doc):
    """The whole document: layers, attributes, slots, references, cycles, loss."""
    seen = set()
    _check_graph(doc, doc.graph, None, seen, [doc.graph])
    if doc.loss is not None and doc.loss.node not in doc.graph.nodes:
        raise DesignError(f"loss: node '{doc.loss.node}' is not a top-level node of the design")
    if doc.optimizer is not None:
        check_optimizer("optimizer", doc.optimizer.get("type"))
        for key, value in doc.optimizer.items():
            if key != "type" and (not isinstance(value, (int, float, bool))):
                raise DesignError(f"optimizer: {key}={value!r} must be a number or bool")


def check_optimizer(where, kind):
    from .. import optimizer
    found = getattr(optimizer, str(kind), None)
    if not (isinstance(found, type) and issubclass(found, optimizer.Optimizer)) \
            or found is optimizer.Optimizer:
        raise DesignError(f"{where}: unknown optimizer {kind!r}; use SGD, Momentum or Adam")


def _check_graph(doc, graph, owner, seen, scopes):
    """``scopes``: this graph and the graphs around it (an op node's sub-block reads
    the enclosing blocks' variables, as a block reads its parent's)."""
    for nid, node in graph.nodes.items():
        where = f"node '{nid}' ({node.layer})"
        if not isinstance(nid, str) or not nid or nid != node.id:
            raise DesignError(f"{where}: its id must be a non-empty string equal to its key")
        if nid in seen:
            raise DesignError(f"{where}: id '{nid}' is used twice")
        seen.add(nid)
        if node.layer in STRUCTURAL and owner is None:
            raise DesignError(f"{where}: a {node.layer} node belongs inside a recurrent_group")
        if node.layer not in STRUCTURAL:
            try:
                catalog.get(node.layer)
            except DesignError as exc:
                raise DesignError(f"{where}: {exc}") from None
        check_attrs(where, node.layer, node.attrs, complete=True)
        for slot, value in node.inputs.items():
            check_slot(where, node.layer, slot, value, node.attrs)
        outer_slots = OUTER_SLOTS.get(node.layer, ())
        in_op_body = owner is not None and owner.layer == OP
        for slot, ref in node.refs():
            if node.layer == OP and isinstance(ref, Ref) and ref.node == EMPTY:
                continue
            scope = _parent_graph(doc, owner) if slot in outer_slots else graph
            if in_op_body and isinstance(ref, Ref) and ref.node in doc.ids():
                continue  # a sub-block reads its parents' (a gradient block: its forward's)
            if not isinstance(ref, Ref) or scope is None or ref.node not in scope.nodes:
                raise DesignError(f"{where}: input '{slot}' refers to "
                                  f"'{getattr(ref, 'node', ref)}', which is not a node "
                                  f"{'outside' if slot in outer_slots else 'of'} its graph")
        if node.layer == MIXED:
            for k, row in enumerate(node.rows or ()):
                check_row(f"{where} row {k}", row.kind, row)
        if node.layer == OP and node.body is not None:
            _check_graph(doc, node.body, node, seen, [node.body] + scopes)
        if node.layer == GROUP:
            if node.body is None:
                raise DesignError(f"{where}: a recurrent_group needs its step body")
            _check_graph(doc, node.body, node, seen, [node.body])
            for k, ref in enumerate(node.body.outputs):
                if ref.node not in node.body.nodes:
                    raise DesignError(f"{where}: out-link {k} refers to '{ref.node}', which is "
                                      "not a node of its step")
    _, cyclic = doc_.order(graph)
    if cyclic:
        raise DesignError(f"nodes {cyclic} form a cycle that is not through a recurrent memory")


def _parent_graph(doc, owner):
    if owner is None:
        return None
    found = doc.locate(owner.id)
    return found[1] if found else None
