"""Design files (``.fsdesign.json``): versioned JSON, written atomically, read with checks.

    {"format": "fluidscope-design", "version": 1,
     "nodes": [{"id": "fc_0", "layer": "fc", "attrs": {"size": 10},
                "inputs": {"input": ["x", 0]}}, ...],
     "loss": ["mean_0", 0], "optimizer": {"type": "Adam", "learning_rate": 0.001},
     "layout": {"fc_0": [120.0, 40.0]}, "counters": {"fc": 1}}

A canvas adds ``"view": {"collapsed": [zone ids], "entered": [zone ids], "unfolded":
[first ids of runs of identical layers shown one node each]}`` (how it shows its recurrent
zones and folds; absent when it has nothing to keep). A mixed_layer node adds ``"rows": [{"kind": ..., "inputs": {...}, "attrs": {...}}]``, a
recurrent_group node ``"body": {"nodes": [...], "outputs": [[id, index], ...]}``.
Reading never executes anything from the file: it is parsed as JSON data, every field
is type-checked, and the document is validated against the catalog (unknown layer or
attribute, wrong type, dangling reference, a cycle not through a memory, a version
from the future). Every problem is a LoadError naming the file, the node and the field.
"""
from __future__ import annotations

import json
import os
import tempfile

from fluidscope.engine import FluidscopeError, LoadError

from . import validate
from .document import Document, Graph, Node, Ref, Row

FORMAT = "fluidscope-design"
VERSION = 1
ZONE_VIEW_KEYS = ("collapsed", "entered")  # "view": {"collapsed": [ids], "entered": [ids]}


# ------------------------------------------------------------------- writing
def document_to_json(doc: Document) -> dict:
    data = {"format": FORMAT, "version": VERSION, **_graph_to_json(doc.graph)}
    data["loss"] = None if doc.loss is None else doc.loss.to_json()
    data["optimizer"] = doc.optimizer
    data["layout"] = doc.layout
    data["counters"] = doc.counters
    view = _view_to_json(doc)
    if view:
        data["view"] = view
    return data


def _view_to_json(doc):
    """The canvas's zone state, for the groups the design still has (a removed or
    renamed zone's entry is dropped, as its layout is)."""
    groups = {n.id for n, _, _ in doc.walk() if n.body is not None}
    view = {}
    for key in ZONE_VIEW_KEYS:
        ids = [g for g in doc.view.get(key, ()) if g in groups]
        if ids:
            view[key] = ids
    known = doc.ids()  # runs of identical layers the canvas shows unfolded, by first id
    unfolded = [i for i in doc.view.get("unfolded", ()) if i in known]
    if unfolded:
        view["unfolded"] = unfolded
    return view


def _graph_to_json(graph):
    return {"nodes": [node_to_json(n) for n in graph.nodes.values()],
            "outputs": [r.to_json() for r in graph.outputs]}


def node_to_json(node):
    out = {"id": node.id, "layer": node.layer, "attrs": node.attrs,
           "inputs": {s: [r.to_json() for r in v] if isinstance(v, list) else v.to_json()
                      for s, v in node.inputs.items()}}
    if node.rows is not None:
        out["rows"] = [{"kind": r.kind, "inputs": {s: v.to_json() for s, v in r.inputs.items()},
                        "attrs": r.attrs} for r in node.rows]
    if node.body is not None:
        out["body"] = _graph_to_json(node.body)
    return out


def save(doc: Document, path):
    """Write ``doc`` to ``path`` through a temporary file in the same folder and a rename,
    so a failure (disk full, a value JSON cannot hold) leaves the old file as it was."""
    path = os.fspath(path)
    text = json.dumps(document_to_json(doc), indent=1, allow_nan=False)
    folder = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(prefix=".fsdesign-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ------------------------------------------------------------------- reading
def load(path) -> Document:
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(f"{path}: not a readable design file: {exc}") from None
    return document_from_json(data, path)


def document_from_json(data, source="design") -> Document:
    try:
        doc = _parse(data)
        validate.check_document(doc)
    except FluidscopeError as exc:
        raise LoadError(f"{source}: {exc}") from None
    return doc


def _parse(data):
    _expect(isinstance(data, dict), "the file holds no JSON object")
    _expect(data.get("format") == FORMAT, f"format is {data.get('format')!r}, not {FORMAT!r}")
    version = data.get("version")
    _expect(isinstance(version, int) and not isinstance(version, bool), "version is not an int")
    _expect(version <= VERSION, f"version {version} is newer than this fluidscope reads "
                                f"({VERSION}); upgrade fluidscope")
    doc = Document(_parse_graph(data, "design"))
    if data.get("loss") is not None:
        doc.loss = _ref(data["loss"], "loss")
    optimizer = data.get("optimizer")
    _expect(optimizer is None or isinstance(optimizer, dict), "optimizer is not an object")
    doc.optimizer = optimizer
    layout = data.get("layout", {})
    _expect(isinstance(layout, dict), "layout is not an object")
    for nid, pos in layout.items():
        _expect(isinstance(pos, list) and len(pos) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in pos),
            f"layout of '{nid}' is not [x, y]")
        doc.layout[nid] = [float(v) for v in pos]
    view = data.get("view", {})
    _expect(isinstance(view, dict) and all(
        isinstance(view.get(k, []), list) and all(isinstance(i, str) for i in view.get(k, []))
        for k in ZONE_VIEW_KEYS + ("unfolded",)), "view is not an object of lists of zone ids")
    doc.view = {k: list(view[k]) for k in ZONE_VIEW_KEYS + ("unfolded",) if k in view}
    counters = data.get("counters", {})
    _expect(isinstance(counters, dict) and all(isinstance(v, int) for v in counters.values()),
            "counters is not an object of ints")
    doc.counters = dict(counters)
    known = doc.ids()
    dangling = [nid for nid in doc.layout if nid not in known]
    _expect(not dangling, f"layout names nodes {dangling} that the design does not have")
    return doc


def _parse_graph(data, where):
    nodes = data.get("nodes", [])
    _expect(isinstance(nodes, list), f"{where}: nodes is not a list")
    graph = Graph()
    for k, raw in enumerate(nodes):
        node = _parse_node(raw, f"{where} node #{k}")
        _expect(node.id not in graph.nodes, f"node '{node.id}': id is used twice")
        graph.nodes[node.id] = node
    outputs = data.get("outputs", [])
    _expect(isinstance(outputs, list), f"{where}: outputs is not a list")
    graph.outputs = [_ref(r, f"{where} outputs") for r in outputs]
    return graph


def _parse_node(raw, where):
    _expect(isinstance(raw, dict), f"{where} is not an object")
    nid, layer = raw.get("id"), raw.get("layer")
    _expect(isinstance(nid, str) and nid, f"{where}: id is missing or not a string")
    where = f"node '{nid}'"
    _expect(isinstance(layer, str), f"{where}: layer is missing or not a string")
    attrs, inputs = raw.get("attrs", {}), raw.get("inputs", {})
    _expect(isinstance(attrs, dict), f"{where}: attrs is not an object")
    _expect(isinstance(inputs, dict), f"{where}: inputs is not an object")
    node = Node(nid, layer, dict(attrs))
    for slot, value in inputs.items():
        field = f"{where} input '{slot}'"
        many = isinstance(value, list) and value and isinstance(value[0], list)
        node.inputs[slot] = [_ref(r, field) for r in value] if many or value == [] \
            else _ref(value, field)
    if "rows" in raw:
        _expect(isinstance(raw["rows"], list), f"{where}: rows is not a list")
        node.rows = [_parse_row(r, f"{where} row {k}") for k, r in enumerate(raw["rows"])]
    elif layer == "mixed_layer":
        node.rows = []
    if "body" in raw:
        _expect(isinstance(raw["body"], dict), f"{where}: body is not an object")
        node.body = _parse_graph(raw["body"], f"{where} body")
    return node


def _parse_row(raw, where):
    _expect(isinstance(raw, dict) and isinstance(raw.get("kind"), str),
            f"{where} is not an object with a kind")
    inputs, attrs = raw.get("inputs", {}), raw.get("attrs", {})
    _expect(isinstance(inputs, dict) and isinstance(attrs, dict),
            f"{where}: inputs and attrs must be objects")
    return Row(raw["kind"], {s: _ref(v, f"{where} input '{s}'") for s, v in inputs.items()},
               dict(attrs))


def _ref(value, where):
    ok = (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
          and isinstance(value[1], int) and not isinstance(value[1], bool) and value[1] >= 0)
    _expect(ok, f"{where}: {value!r} is not a reference [node id, output index]")
    return Ref(value[0], value[1])


def _expect(condition, message):
    if not condition:
        raise LoadError(message)
