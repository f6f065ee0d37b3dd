"""The design document as plain data: nodes, edges, composites, loss, optimizer, layout.

A ``Graph`` is an ordered set of ``Node``s. A node's inputs are ``Ref``s (a node id and
an output index) by slot; a list slot holds a list of them. Two composites are first
class:

* a **mixed_layer** node holds ``rows``: one ``Row`` per projection or operator (its
  kind, inputs and attributes), in order;
* a **recurrent_group** node holds its step as a nested ``Graph`` (``body``). Inside it,
  a ``step_input`` node is one in-link (``static``: a StaticInput, the same row every
  step) whose ``outer`` input names the outer node; a ``memory`` node remembers the
  inner node its ``link`` input points at (an edge, not a name), may be booted by an
  outer node (``boot_layer``), and ``body.outputs`` are the out-links. ``outer`` and
  ``boot_layer`` are the only refs that point out of a body; ``link`` is the only edge
  that may close a cycle (through time).

Every class compares by value, so "undo restores the exact document" is ``==``. Node
ids are unique across the whole design (bodies included): they become layer names.
"""
from __future__ import annotations

import dataclasses
import heapq

from fluidscope.engine.ir.names import EMPTY_VAR

STEP_INPUT = "step_input"
MEMORY = "memory"
MIXED = "mixed_layer"
GROUP = "recurrent_group"
OUTER_SLOTS = {STEP_INPUT: ("outer",), MEMORY: ("boot_layer",)}  # refs into the parent graph
LINK_SLOT = "link"
OP = "op"
# An op node's input position left empty on purpose: the IR's own @EMPTY@ name.
EMPTY = EMPTY_VAR


@dataclasses.dataclass(frozen=True)
class Ref:
    """Output ``index`` of node ``node``."""
    node: str
    index: int = 0

    def to_json(self):
        return [self.node, self.index]


@dataclasses.dataclass
class Row:
    """One projection or operator of a mixed_layer node."""
    kind: str
    inputs: dict = dataclasses.field(default_factory=dict)   # slot -> Ref
    attrs: dict = dataclasses.field(default_factory=dict)

    def clone(self):
        return Row(self.kind, dict(self.inputs), _copy(self.attrs))


@dataclasses.dataclass
class Node:
    """One layer: its id (the layer's name), the layer, the attributes given (defaults are
    the function's), its inputs, and for composites its rows or its step body."""
    id: str
    layer: str
    attrs: dict = dataclasses.field(default_factory=dict)
    inputs: dict = dataclasses.field(default_factory=dict)   # slot -> Ref | [Ref]
    rows: list | None = None
    body: Graph | None = None

    def clone(self):
        # a design's undo step copies every node: plain values are shared (Refs are
        # frozen), only containers are new
        attrs = self.attrs
        if any(isinstance(v, _CONTAINERS) for v in attrs.values()):
            attrs = _copy(attrs)
        else:
            attrs = attrs.copy()
        inputs = self.inputs
        if any(isinstance(v, list) for v in inputs.values()):
            inputs = {k: list(v) if isinstance(v, list) else v for k, v in inputs.items()}
        else:
            inputs = inputs.copy()
        return Node(self.id, self.layer, attrs, inputs,
                    None if self.rows is None else [r.clone() for r in self.rows],
                    None if self.body is None else self.body.clone())

    def refs(self, *, ordering=False):
        """(slot, Ref) pairs of this node's inputs (rows included). ``ordering``: only the
        edges that order the build (a memory's link closes a cycle through time)."""
        out = []
        skip_link = ordering and self.layer == MEMORY
        for slot, value in self.inputs.items():
            if skip_link and slot == LINK_SLOT:
                continue
            if isinstance(value, list):
                out.extend([(slot, r) for r in value])
            else:
                out.append((slot, value))  # the common case: a build asks per node, thrice
        for k, row in enumerate(self.rows or ()):
            out.extend((f"rows[{k}].{slot}", r) for slot, r in row.inputs.items())
        return out


@dataclasses.dataclass
class Graph:
    """Nodes in document order; ``outputs`` are a step body's out-links."""
    nodes: dict = dataclasses.field(default_factory=dict)     # id -> Node
    outputs: list = dataclasses.field(default_factory=list)   # [Ref]

    def clone(self):
        return Graph({k: n.clone() for k, n in self.nodes.items()}, list(self.outputs))


@dataclasses.dataclass
class Document:
    """The whole design. ``counters`` make fresh ids (never reusing one, so a new layer
    never inherits a removed layer's parameter names and trained values)."""
    graph: Graph = dataclasses.field(default_factory=Graph)
    loss: Ref | None = None
    optimizer: dict | None = None      # {"type": "Adam", "learning_rate": 1e-3, ...}
    layout: dict = dataclasses.field(default_factory=dict)    # id -> [x, y]
    counters: dict = dataclasses.field(default_factory=dict)
    # how a canvas shows the zones, kept with the layout (not part of the model, so not
    # compared): {"collapsed": [group ids drawn as one box], "entered": [group ids, the
    # outermost first, of the zone shown alone]}
    view: dict = dataclasses.field(default_factory=dict, compare=False)

    def clone(self):
        return Document(self.graph.clone(), self.loss, _copy(self.optimizer),
                        {k: list(v) for k, v in self.layout.items()}, dict(self.counters),
                        _copy(self.view))

    def fork(self):
        """A new document holding this one's very node objects and layout places (new
        dicts over them): what a copy-on-write edit changes (undoable.edit_nodes), which
        replaces a node by its own clone before changing it. Neither document's shared
        objects may then be changed in place."""
        graph = self.graph
        return Document(Graph(dict(graph.nodes), list(graph.outputs)), self.loss,
                        _copy(self.optimizer), dict(self.layout), dict(self.counters),
                        _copy(self.view))

    # ------------------------------------------------------------ lookups
    def walk(self, graph=None, parent=None):
        """(node, its graph, the group node owning that graph or None), depth first."""
        graph = graph or self.graph
        for node in graph.nodes.values():
            yield node, graph, parent
            if node.body is not None:
                yield from self.walk(node.body, node)

    def locate(self, node_id):
        """(node, graph, owning group) of ``node_id``, or None."""
        return next(((n, g, p) for n, g, p in self.walk() if n.id == node_id), None)

    def ids(self):
        return {n.id for n, _, _ in self.walk()}

    def fresh_id(self, prefix):
        taken, n = self.ids(), self.counters.get(prefix, 0)
        while f"{prefix}_{n}" in taken:
            n += 1
        self.counters[prefix] = n + 1
        return f"{prefix}_{n}"


_CONTAINERS = (dict, list)


def _copy(value):
    """A deep copy of JSON-like data (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def order(graph):
    """Node ids of ``graph`` in build order: dependencies first, otherwise document order
    (so a design replays in the order its layers were added). Returns (order, cyclic ids)."""
    local = graph.nodes
    position = {nid: k for k, nid in enumerate(local)}
    if _in_document_order(local, position):
        # every node comes after what it reads (a design built by adding layers): the
        # earliest-ready-first walk below would give exactly the document order
        return list(local), []
    waiting_on = {nid: 0 for nid in local}
    users = {nid: [] for nid in local}
    for nid, node in local.items():
        outer = OUTER_SLOTS.get(node.layer, ())
        refs = [r for slot, r in node.refs(ordering=True) if slot not in outer]
        if node.layer == OP and node.body is not None:
            refs += body_refs(node.body)  # what its sub-block reads from here orders it
        for dep in {r.node for r in refs if r.node in local and r.node != nid}:
            waiting_on[nid] += 1
            users[dep].append(nid)
    ready = [position[n] for n, count in waiting_on.items() if count == 0]
    heapq.heapify(ready)
    ids, result = list(local), []
    while ready:  # the earliest ready node first keeps document order among equals
        nid = ids[heapq.heappop(ready)]
        result.append(nid)
        for user in users[nid]:
            waiting_on[user] -= 1
            if waiting_on[user] == 0:
                heapq.heappush(ready, position[user])
    return result, [n for n in local if waiting_on[n] > 0]


def _in_document_order(local, position):
    """Whether every node of ``local`` reads only nodes before it (or outside, or
    itself): ``order``'s quick answer, one pass over the plain inputs."""
    for here, node in enumerate(local.values()):
        if node.rows or node.body is not None or node.layer in OUTER_SLOTS:
            refs = [r for slot, r in node.refs(ordering=True)
                    if slot not in OUTER_SLOTS.get(node.layer, ())]
            if node.layer == OP and node.body is not None:
                refs += body_refs(node.body)
        else:
            refs = node.inputs.values()
        for ref in refs:
            if isinstance(ref, list):
                if any(position.get(r.node, -1) > here for r in ref):
                    return False
            elif position.get(ref.node, -1) > here:
                return False
    return True


def body_refs(graph):
    """Every ref of the nodes of an op node's sub-block (nested ones included)."""
    refs = []
    for node in graph.nodes.values():
        refs += [r for _, r in node.refs()]
        if node.body is not None:
            refs += body_refs(node.body)
    return refs
