"""Short texts a node shows (its key attributes, a shape), and the property panel.

``node_detail`` is the one line under a node's title ("size 128 · relu");
``inspector_view`` is the ``inspector`` trait: every attribute of the selected node with
its type, value, default and choices, as the property panel edits them.
"""
from __future__ import annotations

from fluidscope.designer import layer_specs
from fluidscope.designer.design.document import GROUP, MEMORY, OP, STEP_INPUT
from fluidscope.designer.design.validate import spec_for

DETAIL_ITEMS = 3          # attributes shown under a title, at most
_NOT_SHOWN = ("param_attr", "var_desc", "op_outputs", "op_attrs")


def short_shape(shape) -> str:
    """``[-1, 128]``: a shape as the canvas labels it."""
    return "[" + ", ".join(map(str, shape)) + "]"


def _short_value(value):
    if isinstance(value, list):
        return "[" + ", ".join("-1" if v is None else str(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _attr_items(layer, attrs):
    _, specs = spec_for(layer)
    items = []
    for name, value in attrs.items():
        spec = specs.get(name)
        if spec is None or spec.type in _NOT_SHOWN or value is None:
            continue
        items.append(_short_value(value) if spec.type == "act" else
                     f"{name} {_short_value(value)}")
    return items


def node_detail(node) -> str:
    """The node's key attributes, short (the first few it was given)."""
    if node.layer == STEP_INPUT:
        outer = node.inputs.get("outer")
        return ("static " if node.attrs.get("static") else "") + \
            (f"from {outer.node}" if outer is not None else "no source")
    if node.layer == GROUP:
        body = node.body
        steps = sum(1 for n in body.nodes.values() if n.layer == STEP_INPUT)
        memories = sum(1 for n in body.nodes.values() if n.layer == MEMORY)
        text = f"{steps} in · {memories} memory · {len(body.outputs)} out"
        return text + (" · reverse" if node.attrs.get("reverse") else "")
    if node.layer == OP:
        return str(node.attrs.get("type", ""))
    return " · ".join(_attr_items(node.layer, node.attrs)[:DETAIL_ITEMS])


def row_detail(row) -> str:
    return " · ".join(_attr_items(row.kind, row.attrs)[:DETAIL_ITEMS])


def _attr_entries(layer, attrs):
    _, specs = spec_for(layer)
    entries = []
    for name, spec in specs.items():
        required = spec.required
        entries.append({"name": name, "type": spec.type,
                        "value": attrs.get(name, None if required else spec.default),
                        "default": None if required else spec.default,
                        "choices": list(spec.choices), "required": required})
    return entries


def inspector_view(design, node_id) -> dict:
    """The property panel of one node: ``{"id", "layer", "doc", "attrs", "rows"}``
    (``{}`` for no node)."""
    found = design.document.locate(node_id) if node_id else None
    if found is None:
        return {}
    node = found[0]
    doc = (layer_specs.get(node.layer).doc if node.layer not in (STEP_INPUT, MEMORY)
           else {STEP_INPUT: "an in-link of the zone: one time step of the outer sequence",
                 MEMORY: "the previous step's value of the node it remembers"}[node.layer])
    rows = None
    if node.rows is not None:
        rows = [{"index": k, "kind": row.kind, "doc": layer_specs.get(row.kind).doc,
                 "inputs": {s: [r.node, r.index] for s, r in row.inputs.items()},
                 "attrs": _attr_entries(row.kind, row.attrs)}
                for k, row in enumerate(node.rows)]
    return {"id": node.id, "layer": node.layer, "doc": doc,
            "attrs": _attr_entries(node.layer, node.attrs), "rows": rows}
