"""``Design``: the editable layer-level model; every canvas gesture is one of its methods.

    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 784])
    h = d.add("fc", inputs={"input": x}, size=256, act="relu")
    d.set(h, size=128); d.undo(); d.redo()

An edit is checked against the catalog before it changes anything (a refused edit
raises DesignError and leaves the document as it was). Undo is by snapshot: every edit
saves a copy of the document, so undo restores the exact previous document whatever
the edit did (composite edits, removals that cut several edges); ``transaction()``
makes several edits one step. Moving a node changes only the layout and is not an
undo step. Building, files, code and program conversion live in the sibling modules.
"""
from __future__ import annotations

import contextlib

from fluidscope.engine import DesignError

from . import validate
from .composite_edits import CompositeEdits
from .replay_cache import NodeCache
from .document import GROUP, LINK_SLOT, MEMORY, MIXED, STEP_INPUT, Document, Graph, Node, Ref
from .undoable import as_ref, plain as _plain, share_unchanged
from .undoable import edit as _edit
from .undoable import edit_nodes as _edit_nodes

HISTORY_LIMIT = 200


class Design(CompositeEdits):
    """A network at the level of layers (see the module docstring)."""

    def __init__(self, document: Document | None = None):
        self._doc = document or Document()
        self._undo, self._redo = [], []
        self._transaction_depth = 0
        self._fork_base = None  # during an edit_nodes edit: its snapshot (see _own)
        self.history_limit = HISTORY_LIMIT
        self._cache = NodeCache()

    # ---------------------------------------------------------------- reading
    @property
    def document(self) -> Document:
        """The document (read it; change it only through the edit methods)."""
        return self._doc

    @property
    def nodes(self):
        """Top-level nodes by id, in document order."""
        return self._doc.graph.nodes

    def node(self, node_id) -> Node:
        return self._find(node_id)[0]

    @property
    def loss(self):
        return self._doc.loss

    @property
    def layout(self):
        return self._doc.layout

    def __eq__(self, other):
        return isinstance(other, Design) and other._doc == self._doc

    def __repr__(self):
        return f"Design({len(list(self._doc.walk()))} nodes, loss={self._doc.loss})"

    def _find(self, node_id):
        found = self._doc.locate(node_id)
        if found is None:
            raise DesignError(f"no node '{node_id}' in the design")
        return found

    def _own(self, node_id):
        """``_find``, for a node the edit is about to change: inside an ``edit_nodes`` edit
        a node still shared with the snapshot (the node's top-level group, step and all,
        for a node inside a step) is replaced by its clone first."""
        found = self._find(node_id)
        base = self._fork_base
        if base is None:
            return found  # a plain edit's live document is a clone: all its own
        top = found
        while top[2] is not None:
            top = self._find(top[2].id)
        node = top[0]
        if base.graph.nodes.get(node.id) is node:
            self._doc.graph.nodes[node.id] = node.clone()  # same key: same place in order
            found = self._find(node_id)
        return found

    # ------------------------------------------------------------------ nodes
    @_edit
    def add(self, layer, inputs=None, name=None, group=None, **attrs):
        """Add a ``layer`` node; returns its id. ``inputs``: slot -> node id, (id, output
        index) or a list of them; ``name``: the node id (for ``data``, the variable
        name; default ``<layer>_<n>``); ``group``: add it inside that recurrent_group's
        step. A mixed_layer starts with no rows, a recurrent_group with an empty step."""
        if layer in (STEP_INPUT, MEMORY):
            raise DesignError(f"add: use add_step_input / add_memory for a {layer} node")
        graph = self._graph_of(group)
        node_id = self._new_id(layer, name)
        node = Node(node_id, layer, rows=[] if layer == MIXED else None,
                    body=Graph() if layer == GROUP else None)
        where = f"node '{node_id}' ({layer})"
        attrs = {k: _plain(v) for k, v in attrs.items()}
        validate.check_attrs(where, layer, attrs, complete=True)
        node.attrs = attrs
        graph.nodes[node_id] = node
        for slot, value in (inputs or {}).items():
            self._set_input(node, graph, slot, value)
        return node_id

    @_edit_nodes
    def set(self, node_id, **attrs):
        """Change attributes of a node (``None`` for an attribute whose default is not
        None restores the default)."""
        node, _, _ = self._own(node_id)
        where = f"node '{node_id}' ({node.layer})"
        _, specs = validate.spec_for(node.layer)
        for key, value in attrs.items():
            value = _plain(value)
            spec = specs.get(key)
            if value is None and spec is not None and spec.default is not None:
                node.attrs.pop(key, None)
                continue
            validate.check_attrs(where, node.layer, {key: value})
            node.attrs[key] = value
        validate.check_attrs(where, node.layer, node.attrs, complete=True)

    @_edit_nodes
    def connect(self, src, dst, slot, index=None):
        """Feed ``src`` (node id or (id, output index)) into ``dst``'s ``slot``. On a
        list slot it is appended, or put at ``index``."""
        node, graph, _ = self._own(dst)
        self._set_input(node, graph, slot, src, index=index, append=True)

    @_edit_nodes
    def disconnect(self, dst, slot, index=None):
        """Empty ``dst``'s ``slot`` (on a list slot: the entry at ``index``, or all)."""
        node, _, _ = self._own(dst)
        if slot not in node.inputs:
            raise DesignError(f"node '{dst}' ({node.layer}): slot '{slot}' is not connected")
        if index is not None and isinstance(node.inputs[slot], list):
            del node.inputs[slot][index]
        else:
            del node.inputs[slot]

    @_edit
    def remove(self, node_id):
        """Remove a node (and its step, for a group) with every edge to it."""
        node, graph, _ = self._find(node_id)
        gone = {n.id for n, _, _ in self._doc.walk(node.body)} | {node_id} if node.body \
            else {node_id}
        del graph.nodes[node_id]
        for other, g, _ in list(self._doc.walk()):
            _cut(other, gone)
            if other.body is not None:
                other.body.outputs = [r for r in other.body.outputs if r.node not in gone]
        if self._doc.loss is not None and self._doc.loss.node in gone:
            self._doc.loss = None
        for nid in gone:
            self._doc.layout.pop(nid, None)

    @_edit
    def rename(self, node_id, new_id):
        """Give a node a new id (its layer name); every edge follows."""
        node, graph, _ = self._find(node_id)
        if new_id in self._doc.ids():
            raise DesignError(f"rename: a node '{new_id}' already exists")
        _check_id(new_id)
        graph.nodes = {(new_id if k == node_id else k): v for k, v in graph.nodes.items()}
        node.id = new_id
        swap = lambda r: Ref(new_id, r.index) if r.node == node_id else r  # noqa: E731
        for other, _, _ in self._doc.walk():
            _map_refs(other, swap)
            if other.body is not None:
                other.body.outputs = [swap(r) for r in other.body.outputs]
        if self._doc.loss is not None:
            self._doc.loss = swap(self._doc.loss)
        if node_id in self._doc.layout:
            self._doc.layout[new_id] = self._doc.layout.pop(node_id)

    # ------------------------------------------------------- loss, optimizer
    @_edit_nodes  # the top-level fields only
    def set_loss(self, node_id, index=0):
        """The scalar the optimizer minimises (a top-level node), or None."""
        if node_id is None:
            self._doc.loss = None
            return
        ref = as_ref(node_id if index == 0 else (node_id, index), "set_loss")
        if ref.node not in self._doc.graph.nodes:
            raise DesignError(f"set_loss: '{ref.node}' is not a top-level node")
        self._doc.loss = ref

    @_edit_nodes  # the top-level fields only
    def set_optimizer(self, kind, **settings):
        """``kind``: an optimizer of ``fd.optimizer`` (SGD, Momentum, Adam) with its
        keyword settings (learning_rate, ...); None removes it."""
        if kind is None:
            self._doc.optimizer = None
            return
        validate.check_optimizer("set_optimizer", kind)
        for key, value in settings.items():
            if not isinstance(value, (int, float, bool)):
                raise DesignError(f"set_optimizer: {key}={value!r} must be a number or bool")
        self._doc.optimizer = {"type": kind, **settings}

    # ---------------------------------------------------------------- layout
    def move(self, node_id, x, y):
        """Place a node on the canvas (layout only: not a model change, not undoable)."""
        self._find(node_id)
        self._doc.layout[node_id] = [float(x), float(y)]

    # ------------------------------------------------ build, code, files, programs
    def build(self, scope=None, optimize=True):
        """Build the programs (see ``build.Build``: main, startup, errors, waiting, shapes,
        var(node), reinitialised against ``scope``, default the global scope).
        ``optimize`` False: forward only, the quick rebuild a canvas makes per gesture.
        Nodes an edit did not reach reuse what they built last time (same bytes)."""
        from .build import build
        return build(self._doc, scope, optimize, self._cache)

    def to_python(self):
        """A readable script that rebuilds this design's programs byte for byte."""
        from ..codegen import design_to_python
        return design_to_python(self._doc)

    def to_json(self):
        """The document as JSON-ready data (what ``save`` writes)."""
        from .files import document_to_json
        return document_to_json(self._doc)

    @classmethod
    def from_json(cls, data, source="design"):
        """A design from ``to_json`` data, validated (FluidscopeError names node and field)."""
        from .files import document_from_json
        return cls(document_from_json(data, source))

    def save(self, path):
        """Write the design as versioned JSON, atomically (the old file survives a failure)."""
        from .files import save
        save(self._doc, path)

    @classmethod
    def load(cls, path):
        """Read a design file; every problem is a FluidscopeError naming node and field."""
        from .files import load
        return cls(load(path))

    @classmethod
    def from_program(cls, program, layers=False):
        """A program built with the Python API back as a design (its recorded layer calls),
        or, for a program without that record (a loaded file), one op node per op;
        ``layers``: an inference program's ops read back as the layers that make them
        where a layer rebuilds them exactly (conv2d + batch_norm + relu as three layer
        nodes, see design/lift.py), op nodes elsewhere."""
        from .from_program import document_from_program
        return cls(document_from_program(program, layers))

    # -------------------------------------------------------------- history
    @contextlib.contextmanager
    def transaction(self):
        """Edits inside are one undo step; an error inside undoes them all."""
        before = self._doc
        self._doc = before.clone()  # the snapshot is never changed (undoable.py)
        self._transaction_depth += 1
        try:
            yield self
        except BaseException:
            self._doc = before
            raise
        finally:
            self._transaction_depth -= 1
        if self._transaction_depth == 0 and self._doc != before:
            self._push(before)

    def _push(self, before):
        if self._undo:
            share_unchanged(before, self._undo[-1])
        self._undo.append(before)
        del self._undo[:-self.history_limit]
        self._redo.clear()

    @property
    def can_undo(self):
        return bool(self._undo)

    @property
    def can_redo(self):
        return bool(self._redo)

    def undo(self):
        """Restore the document before the last edit (or transaction)."""
        if not self._undo:
            raise DesignError("nothing to undo")
        self._redo.append(self._doc)
        self._doc = self._undo.pop()

    def redo(self):
        if not self._redo:
            raise DesignError("nothing to redo")
        self._undo.append(self._doc)
        self._doc = self._redo.pop()

    # --------------------------------------------------------------- helpers
    def _graph_of(self, group):
        return self._doc.graph if group is None else self._group(group)[0].body

    def _new_id(self, layer, name):
        if name is None:
            return self._doc.fresh_id(layer)
        _check_id(name)
        if name in self._doc.ids():
            raise DesignError(f"a node '{name}' already exists; node ids are layer names and "
                              "must be unique")
        return name

    def _ref_in(self, graph, value, where):
        ref = as_ref(value, where)
        if ref.node not in graph.nodes:
            raise DesignError(f"{where}: '{ref.node}' is not a node of the same graph")
        return ref

    def _set_input(self, node, graph, slot, value, index=None, append=False):
        where = f"node '{node.id}' ({node.layer})"
        outer = slot in ("outer", "boot_layer") and node.layer in (STEP_INPUT, MEMORY)
        scope = graph
        if outer or node.layer == MEMORY and slot == LINK_SLOT:
            raise DesignError(f"{where}: set a memory or in-link through add_memory / "
                              "add_step_input")
        spec = validate.check_slot(where, node.layer, slot, value, node.attrs)
        if isinstance(value, list):
            node.inputs[slot] = [self._ref_in(scope, v, where) for v in value]
            return
        ref = self._ref_in(scope, value, where)
        present = node.inputs.get(slot)
        if spec.many and append and present is not None:
            # A second wire into a slot that takes several inputs adds one (fc([a, b])).
            refs = present if isinstance(present, list) else [present]
            node.inputs[slot] = refs[:]
            node.inputs[slot].insert(len(refs) if index is None else index, ref)
        elif spec.kind == "list":
            node.inputs[slot] = [ref]
        else:
            node.inputs[slot] = ref


def _check_id(name):
    if not isinstance(name, str) or not name or any(c in name for c in "/@ \t\n\"'\\"):
        raise DesignError(f"node id {name!r} must be a non-empty name without /, @, quotes "
                          "or spaces (it becomes the layer's name)")


def _cut(node, gone):
    """Drop ``node``'s edges to the removed ids."""
    for slot, value in list(node.inputs.items()):
        if isinstance(value, list):
            kept = [r for r in value if r.node not in gone]
            if kept:
                node.inputs[slot] = kept
            else:
                del node.inputs[slot]
        elif value.node in gone:
            del node.inputs[slot]
    for row in node.rows or ():
        row.inputs = {s: r for s, r in row.inputs.items() if r.node not in gone}


def _map_refs(node, fn):
    node.inputs = {s: [fn(r) for r in v] if isinstance(v, list) else fn(v)
                   for s, v in node.inputs.items()}
    for row in node.rows or ():
        row.inputs = {s: fn(r) for s, r in row.inputs.items()}
