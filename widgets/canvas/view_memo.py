"""What ``canvas_view`` derives from a design's structure, kept while the structure holds.

At 1,000 layers a view walked every node five times after each gesture (build order,
fold runs, layout depths and positions, edges), though an attribute edit or its undo
changes no id, no wire and no layer (issue #16 item 4). ``ViewMemo.scan`` reads each
node once and returns:

* ``data``: node id -> the texts its own view is drawn from (layer, ``repr`` of its
  attributes, inputs and rows: ``repr`` tells ``1`` from ``True`` and ``1.0``, where
  ``==`` does not). The inputs' ``repr`` is reused while the node holds the very same
  ``Ref`` objects (frozen, so the same objects print the same) in the same slots;
* a ``Structure``: parents, edges, reader counts and per graph the build order, the fold
  chain links, the column depths and the positions. The same object comes back while
  every node's id, place, layer, inputs and rows (and a step input's attributes, which
  choose its edge's kind), the out-links and the loss are unchanged; otherwise a new
  one, computed from scratch as it is used.

What depends on more than the structure is checked again on every view: a graph's fold
runs (attributes decide which layers are "identical": their JSON text is kept per node
and remade when the node's attribute ``repr`` changes), its depths (kept for one
``alias``, the folded runs), its positions (kept for the same alias, node sizes, pane
and ``repr`` of the document's layout) and the edges (kept for the same ``visible`` map;
the shape labels are made afresh from the build each time).
"""
from __future__ import annotations

import operator

from fluidscope.designer.design.document import STEP_INPUT, Ref, order

from . import folds, layout
from .edges import design_edges

_REFS_ONLY = {Ref}


class ViewMemo:
    """One canvas's memo: the last ``Structure`` and the texts of each node's inputs."""

    def __init__(self):
        self.structure = None
        self._key = None
        self._inputs = {}  # node id -> (slots, the values, their repr, all frozen Refs)

    def scan(self, doc):
        """(data, structure) of ``doc``: see the module docstring."""
        data, key, seen, last_inputs = {}, [], {}, self._inputs
        is_, refs_only = operator.is_, _REFS_ONLY
        for node, _graph, owner in doc.walk():
            nid, layer, inputs = node.id, node.layer, node.inputs
            slots, refs = tuple(inputs), tuple(inputs.values())
            last = last_inputs.get(nid)
            # only frozen Refs are trusted by identity (a list slot may change in place);
            # the same objects as last time are of the types they were then
            if last is not None and last[3] and last[0] == slots \
                    and all(map(is_, refs, last[1])):
                seen[nid] = last
                text = last[2]
            else:
                text = repr(inputs)
                seen[nid] = (slots, refs, text, set(map(type, refs)) <= refs_only)
            rows = None if node.rows is None else repr(node.rows)
            attrs = repr(node.attrs)
            data[nid] = (layer, attrs, text, rows)
            key.append((nid, owner.id if owner is not None else None, layer, text, rows,
                        attrs if layer == STEP_INPUT else None,
                        None if node.body is None else repr(node.body.outputs)))
        key.append((repr(doc.graph.outputs), repr(doc.loss)))
        self._inputs = seen
        if key != self._key:
            self.structure, self._key = Structure(doc), key
        return data, self.structure


class Structure:
    """What the view derives from the structure alone (see the module docstring); each
    part is computed when first asked for."""

    def __init__(self, doc):
        self.parent_of = {n.id: (p.id if p is not None else None) for n, _, p in doc.walk()}
        self.edges = design_edges(doc)
        self.readers = folds.reader_counts(doc)
        self.edge_views = None  # (visible, [(edge, source, its handle, target, handle)])
        self._graphs = {}

    def graph(self, graph, key):
        """The ``GraphMemo`` of ``graph`` (``key``: the id of the group whose step it is,
        None for the design's own graph)."""
        memo = self._graphs.get(key)
        if memo is None:
            memo = self._graphs[key] = GraphMemo(graph, self.readers)
        return memo


class GraphMemo:
    """One graph's build order, fold links, configs, depths and positions. It keeps no
    graph: an undo brings back equal nodes as new objects, so each call passes the
    graph drawn now."""

    def __init__(self, graph, readers):
        self.ordered = order(graph)
        self.links = folds.chain_links(graph, self.ordered[0], readers)
        self._configs = {}    # node id -> (attrs repr, config text)
        self._depths = None   # (alias, depths)
        self._placed = None   # (alias, sizes, layout repr, pane, parent, positions)

    def runs(self, graph, data):
        """``folds.runs`` of ``graph``; ``data``: the scan's node texts (None: none kept)."""
        configs = self._configs
        if data is None:
            return folds.runs_from(self.ordered[0], self.links,
                                   lambda nid: folds.config_text(graph.nodes[nid]))

        def config(nid):
            attrs = data[nid][1]
            kept = configs.get(nid)
            if kept is None or kept[0] != attrs:
                kept = configs[nid] = (attrs, folds.config_text(graph.nodes[nid]))
            return kept[1]
        return folds.runs_from(self.ordered[0], self.links, config)

    def positions(self, graph, doc, layout_text, sizes, pane, alias, parent):
        """``layout.place`` (shifted into the zone when ``parent``), reused while the alias,
        the sizes, the pane and the document's layout (``layout_text``: its ``repr``) are
        the same."""
        placed = self._placed
        if (placed is not None and placed[0] == alias and placed[1] == sizes
                and placed[2] == layout_text and placed[3] == pane and placed[4] == parent):
            return placed[5]
        if self._depths is None or self._depths[0] != alias:
            self._depths = (dict(alias), layout.column_depths(graph, alias, self.ordered))
        positions = layout.place(graph, doc.layout, sizes, pane, alias, self.ordered,
                                 self._depths[1])
        if parent is not None:
            positions = layout.inner_offset(positions, doc.layout)
        self._placed = (dict(alias), dict(sizes), layout_text, pane, parent, positions)
        return positions
