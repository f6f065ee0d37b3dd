"""The canvas's picture of a design: pure functions from (design, build, ui) to JSON data.

``canvas_view`` is what the ``view`` trait holds and ``palette_view`` the ``palette``
trait (widgets/canvas/PROTOCOL.md describes both field by field). Nothing here changes
the design or keeps state of its own, so tests assert on the dicts directly and the widget
only decides when to call them. The one state is the optional ``cache`` a canvas passes
(node_views.py, view_memo.py): with it, a view after an attribute edit or an undo at
1,000 layers reuses everything the edit left alone, including the very dicts of the last
view's unchanged nodes and edges (so ``view_patch`` finds them equal by identity); never
change a returned view in place.
"""
from __future__ import annotations

import hashlib
import json

from fluidscope.designer import layer_specs
from fluidscope.designer.design.document import GROUP, MEMORY, MIXED, OP, STEP_INPUT

from . import folds, layout, ports
from .describe import node_detail, row_detail, short_shape
from .node_views import copy_view
from .view_memo import Structure

_TYPES = {MIXED: "mixed", GROUP: "group", STEP_INPUT: "step_input", MEMORY: "memory", OP: "op"}
_IN_STEP = {"sequence": "dense", "ids_sequence": "ids"}  # an in-link gives one step's row


def canvas_view(design, build, ui=None, cache=None) -> dict:
    """The ``view`` dict of ``design`` after ``build`` (``design.build(...)``).

    ui : {"collapsed": zone ids drawn as one box, "path": zone ids entered (the last is
        shown alone; [] the whole design), "unfolded": first ids of runs drawn open
        (folds.py), "pane": (width, height) a default layout fits, "revision": int}.
    cache : a ``NodeViewCache`` (node_views.py) to reuse the node views the last call
        drew and what it derived from the design's structure (view_memo.py); the result
        is the same with or without it."""
    ui = ui or {}
    doc = design.document
    path = [z for z in ui.get("path", ()) if doc.locate(z) is not None]
    shown = doc.graph if not path else doc.locate(path[-1])[0].body
    data, structure = cache.memo.scan(doc) if cache is not None else (None, Structure(doc))
    placed, visible = [], {}
    drawing = _Drawing(doc, build, set(ui.get("collapsed", ())), set(ui.get("unfolded", ())),
                       tuple(ui.get("pane", layout.PANE)), cache, structure, data)
    _graph_views(drawing, shown, None, placed, visible, path[-1] if path else None)
    wires_before = structure.edge_views
    edges = _edge_views(doc, build, visible, structure.parent_of, structure)
    # the same edges end at the same ports: every reused node keeps its counts
    same_wires = wires_before is not None and structure.edge_views is wires_before
    connected = structure.edge_views[2]
    nodes = []
    drawn_before, drawn_now = cache.finished() if cache is not None else ({}, {})
    for view, position, cached, kept in placed:
        nid = view["id"]
        last = drawn_before.get(nid) if cached and same_wires else None
        if last is not None and _same_place(last, position):
            view = last  # same key, same place, same counts: last view's node as it was
        else:
            if cached:
                view = copy_view(view)  # the cache's own: counts and position are per view
            view["position"] = position
            _count_and_sign(view, connected, cache)
        if kept:
            drawn_now[nid] = view
        nodes.append(view)
    if cache is not None:
        cache.finish()
    loss = doc.loss.node if doc.loss is not None else None
    return {"revision": int(ui.get("revision", 0)),
            "path": [{"id": z, "title": z} for z in path],
            "nodes": nodes, "edges": edges, "loss": loss, "optimizer": doc.optimizer,
            "summary": summary(doc, build), "pane": list(drawing.pane)}


def _same_place(view, position):
    """Whether ``view`` sits at the very ``position`` list drawn now: view_memo.py hands
    out the same lists while nothing moved, and new ones when anything did."""
    return view["position"] is position


def _count_and_sign(view, connected, cache):
    """Set the connection counts of ``view``'s ports and rows, then its signature."""
    nid = view["id"]
    for port in view["inputs"]:
        port["connected"] = connected.get((nid, port["handle"]), 0)
    for row in view["rows"] or ():
        row["connected"] = connected.get((nid, row["handle"]), 0)
    if cache is None:
        view["sig"] = _signature(view)
    else:
        counts = (tuple(p["connected"] for p in view["inputs"]),
                  tuple(r["connected"] for r in view["rows"] or ()))
        view["sig"] = cache.signature(view, counts, _signature)


def summary(doc, build) -> str:
    count = sum(1 for n, _, _ in doc.walk() if n.layer not in (STEP_INPUT, MEMORY))
    parts = [f"{count} layer{'s' * (count != 1)}"]
    if build.errors:
        parts.append(f"{len(build.errors)} error{'s' * (len(build.errors) != 1)}")
    if build.waiting:
        parts.append(f"{len(build.waiting)} waiting")
    if getattr(build, "optimizer_error", None):
        parts.append("optimizer not added")
    return ", ".join(parts)


class _Drawing:
    """What every graph of one view is drawn with."""

    def __init__(self, doc, build, collapsed, unfolded, pane, cache, structure, data):
        self.doc, self.build = doc, build
        self.collapsed, self.unfolded, self.pane = collapsed, unfolded, pane
        self.cache, self.structure, self.data = cache, structure, data
        self.loss = doc.loss.node if doc.loss is not None else None
        self._layout_text = None

    def layout_text(self):
        """``repr`` of the document's layout, once per view (view_memo.py compares it)."""
        if self._layout_text is None:
            self._layout_text = repr(self.doc.layout) if self.doc.layout else ""
        return self._layout_text

    def node_view(self, node, parent, zone_size, is_collapsed):
        """(``_node_view``, whether it is the cache's own (reused: not to be changed), the
        cache entry's [box size] when the cache holds it (its finished view is kept for
        the next view), else None)."""
        if self.cache is None:
            view = _node_view(self.doc, node, parent, self.build, zone_size, is_collapsed)
            return view, False, None
        key, view, box = self.cache.lookup(node, self.build, (parent, zone_size, is_collapsed),
                                           self.loss, self.data.get(node.id))
        if view is not None:
            return view, True, box
        view = _node_view(self.doc, node, parent, self.build, zone_size, is_collapsed)
        return view, False, self.cache.store(node.id, key, view)


def _graph_views(drawing, graph, parent, out, visible, key):
    """Append (view, position, whether the view is the cache's own, whether the cache
    holds it) of ``graph``'s nodes
    (zones before their contents) to ``out``; returns ({id: (w, h)}, {id: [x, y]}) of this
    graph's drawn nodes. ``visible``: node id -> the id drawn for it (a collapsed zone
    stands for everything inside it, a folded run for its members); ``key``: the id of
    the group whose step ``graph`` is (None: the design's own graph)."""
    doc, build, collapsed = drawing.doc, drawing.build, drawing.collapsed
    memo = drawing.structure.graph(graph, key)
    runs = {run[0]: run for run in memo.runs(graph, drawing.data)
            if run[0] not in drawing.unfolded}
    alias = {member: first for first, run in runs.items() for member in run}
    children, zone_sizes = {}, {}
    for nid, node in graph.nodes.items():
        visible[nid] = folds.fold_id(alias[nid]) if nid in alias else nid
        if node.layer == GROUP and nid not in collapsed:
            children[nid] = []
            inner_sizes, inner_positions = _graph_views(drawing, node.body, nid,
                                                        children[nid], visible, nid)
            zone_sizes[nid] = layout.zone_size(inner_positions, inner_sizes)
        elif node.layer == GROUP:
            for inner, _, _ in doc.walk(node.body):
                visible[inner.id] = nid
    views, sizes = {}, {}
    for nid, node in graph.nodes.items():
        if alias.get(nid, nid) != nid:
            continue  # drawn by its run's fold
        view, cached, box = drawing.node_view(node, parent, zone_sizes.get(nid),
                                              nid in collapsed)
        if nid in runs:
            view = _fold_view(doc, graph, runs[nid], copy_view(view) if cached else view,
                              build)
            cached, box = False, None
        views[nid] = (view, cached, box is not None)
        if box is None:
            sizes[nid] = _box_size(node, view)
        else:  # kept with the cache entry: made from what its key holds
            if box[0] is None:
                box[0] = _box_size(node, view)
            sizes[nid] = box[0]
    positions = memo.positions(graph, doc, drawing.layout_text(), sizes, drawing.pane,
                               alias, parent)
    for nid, (view, cached, kept) in views.items():
        out.append((view, positions[nid], cached, kept))
        out.extend(children.get(nid, ()))
    return sizes, positions


def _box_size(node, view):
    return tuple(view["size"] or layout.node_size(node, len(view["inputs"]),
                                                  len(view["outputs"])))


def _fold_view(doc, graph, run, first_view, build):
    """A run of identical layers as one node: the first's inputs, the last's outputs."""
    last = graph.nodes[run[-1]]
    errors = [f"{m}: {build.errors[m]}" for m in run if m in build.errors]
    return {**first_view, "id": folds.fold_id(run[0]), "type": "fold",
            "title": f"{first_view['layer']} \u00d7 {len(run)}", "members": list(run),
            "detail": f"{run[0]} \u2026 {run[-1]} \u00b7 {first_view['detail']}".rstrip(" \u00b7"),
            "outputs": _output_views(doc, last, build),
            "error": errors[0] if errors else None,
            "waiting_on": next((build.waiting[m] for m in run if m in build.waiting), None),
            "is_loss": doc.loss is not None and doc.loss.node in run}


def _node_view(doc, node, parent, build, zone_size, is_collapsed):
    nid = node.id
    outputs = _output_views(doc, node, build)
    inputs = [_input_view(s) for s in ports.input_slots(node)]
    if node.layer == GROUP:  # where in-links and boots attach while the zone is collapsed
        inputs += [{"handle": f"in:{inner.id}", "slot": inner.id, "kind": "tensor",
                    "many": False, "optional": False, "accepts": ports.accepts("tensor")}
                   for inner in node.body.nodes.values()
                   if inner.layer == STEP_INPUT or "boot_layer" in inner.inputs]
    error = build.errors.get(nid)
    return {
        "id": nid, "layer": node.layer, "category": _category(node),
        "type": _TYPES.get(node.layer, "layer"), "parent": parent,
        "position": [0.0, 0.0], "size": list(zone_size) if zone_size else None,
        "title": nid, "detail": node_detail(node),
        "inputs": inputs, "outputs": outputs, "error": error,
        "waiting_on": build.waiting.get(nid),
        "rows": _row_views(doc, node, build, error) if node.layer == MIXED else None,
        "collapsed": is_collapsed if node.layer == GROUP else False,
        "reverse": bool(node.attrs.get("reverse")) if node.layer == GROUP else False,
        "static": bool(node.attrs.get("static")) if node.layer == STEP_INPUT else False,
        "is_loss": doc.loss is not None and doc.loss.node == nid,
        "members": None,
    }


def _category(node):
    if node.layer in (STEP_INPUT, MEMORY):
        return "recurrent"
    return layer_specs.get(node.layer).category


def _input_view(spec):
    return {"handle": f"in:{spec.name}", "slot": spec.name, "kind": spec.kind,
            "many": spec.many, "optional": spec.optional, "accepts": ports.accepts(spec.kind)}


def _output_views(doc, node, build):
    built = build.outputs.get(node.id)
    if node.layer == STEP_INPUT and node.id in build.shapes:
        built = None
        outer = node.inputs.get("outer")
        outer_var = (build.outputs.get(outer.node) or [None] * (outer.index + 1))[outer.index] \
            if outer is not None else None
        facts = ports.variable_facts(outer_var)
        kind = ports.kind_of(facts)
        if not node.attrs.get("static"):
            kind = _IN_STEP.get(kind, kind)
        return [{"handle": "out:0", "index": 0, "kind": kind,
                 "shape": short_shape(build.shapes[node.id][0]),
                 "dtype": facts[0] if facts else None}]
    views = []
    for k in range(ports.output_count(node, built)):
        facts = ports.variable_facts(built[k] if built is not None else None)
        views.append({"handle": f"out:{k}", "index": k, "kind": ports.kind_of(facts),
                      "shape": short_shape(facts[2]) if facts else None,
                      "dtype": facts[0] if facts else None})
    return views


def _row_views(doc, node, build, error):
    rows = []
    for k, row in enumerate(node.rows):
        spec = layer_specs.get(row.kind)
        slots = [{"handle": f"row:{k}:{s.name}", "slot": s.name, "kind": s.kind,
                  "accepts": ports.accepts(s.kind),
                  "source": row.inputs[s.name].node if s.name in row.inputs else None}
                 for s in spec.inputs]
        first = slots[0] if slots else {"handle": f"row:{k}:input", "source": None}
        rows.append({"index": k, "kind": row.kind, "handle": first["handle"],
                     "source": first["source"], "inputs": slots, "detail": row_detail(row),
                     "error": error if error and f"(row {k}," in error else None})
    return rows


def _edge_views(doc, build, visible, parent_of, structure):
    """The edge views, and ``structure.edge_views`` = (``visible``, each drawn edge's ends,
    {(target, handle): edges ending there}, the views made) kept while ``visible`` holds;
    only the shape labels are read from ``build`` again (a view is reused while its label
    text is the same)."""
    kept = structure.edge_views
    if kept is None or kept[0] != visible:
        ends = _edge_ends(structure.edges, visible, parent_of)
        connected = {}
        for end in ends:
            key = (end[5], end[6])
            connected[key] = connected.get(key, 0) + 1
        kept = structure.edge_views = (visible, ends, connected, [None] * len(ends))
    views, last = [], kept[3]
    for k, (edge_id, src, index, source, source_handle, target, handle, kind) in enumerate(
            kept[1]):
        shapes = build.shapes.get(src) or ()
        shape = shapes[index] if index < len(shapes) else None
        label = short_shape(shape) if shape is not None else None
        view = last[k]
        if view is None or view["label"] != label:
            view = last[k] = {"id": edge_id, "source": source, "sourceHandle": source_handle,
                              "target": target, "targetHandle": handle, "kind": kind,
                              "label": label}
        views.append(view)
    return views


def _edge_ends(edges, visible, parent_of):
    """(id, source node, its output, drawn source, its handle, drawn target, its handle,
    kind) of each edge drawn, in order."""
    ends = []
    for edge in edges:
        # unpacked once: this loop runs for every edge of every view
        src, k, dst, handle, kind = edge[:5]
        source, target = visible.get(src), visible.get(dst)
        if source is None or target is None or source == target:
            continue  # outside the zone shown, or inside one collapsed zone
        if target != dst and folds.first_of(target) is None:  # into a collapsed zone: its in-link / boot handle
            handle = f"in:{_top_inside(dst, target, parent_of)}"
        kept = source == src or folds.first_of(source) is not None
        ends.append((edge.id, src, k, source, f"out:{k}" if kept else "out:0", target,
                     handle, kind))
    return ends


def _top_inside(node_id, zone_id, parent_of):
    """The ancestor of ``node_id`` directly inside ``zone_id`` (the node itself if it is)."""
    while parent_of.get(node_id) not in (zone_id, None):
        node_id = parent_of[node_id]
    return node_id


def _signature(view) -> str:
    """Changes iff what the node draws changed (its position is React Flow's business)."""
    drawn = {k: v for k, v in view.items() if k not in ("position", "sig")}
    text = json.dumps(drawn, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def palette_view(catalog=None) -> list:
    """The ``palette`` list: one entry per catalog layer, grouped by category in the
    order categories first appear in the catalog."""
    specs = list(catalog if catalog is not None else layer_specs.catalog())
    categories = list(dict.fromkeys(s.category for s in specs))
    entries = []
    for category in categories:
        for spec in (s for s in specs if s.category == category):
            entries.append({
                "name": spec.name, "category": spec.category, "doc": spec.doc,
                "inputs": [{"slot": s.name, "kind": s.kind, "many": s.many,
                            "optional": s.optional, "accepts": ports.accepts(s.kind)}
                           for s in spec.inputs],
                "outputs": [{"name": o.rstrip("?*"), "many": o.endswith("*"),
                             "optional": o.endswith("?")} for o in spec.outputs],
                "attrs": spec.attr_names})
    return entries
