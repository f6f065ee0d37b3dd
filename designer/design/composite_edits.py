"""Edits of composite nodes: a mixed_layer's rows, a recurrent_group's step.

Mixed-in to ``Design`` (edits.py); every method is one undo step like the others.
"""
from __future__ import annotations

from fluidscope.engine import DesignError

from . import validate
from .document import GROUP, LINK_SLOT, MEMORY, MIXED, STEP_INPUT, Node, Ref, Row
from .document import OUTER_SLOTS
from .document import Graph as _Graph
from .undoable import edit as _edit
from .undoable import edit_nodes as _edit_nodes
from .undoable import plain as _plain


class CompositeEdits:
    """Rows of mixed_layer nodes; step inputs, memories and out-links of recurrent groups."""

    # ------------------------------------------------------------ mixed rows
    @_edit_nodes
    def add_row(self, mixed, kind, inputs=None, index=None, **attrs):
        """Add a projection/operator row to a mixed_layer node; returns its index."""
        node, graph, _ = self._own(mixed)
        if node.layer != MIXED:
            raise DesignError(f"add_row: node '{mixed}' is a {node.layer}, not a mixed_layer")
        row = Row(kind, {s: self._ref_in(graph, v, f"node '{mixed}' row") for s, v in
                         (inputs or {}).items()}, {k: _plain(v) for k, v in attrs.items()})
        validate.check_row(f"node '{mixed}' (mixed_layer) row", kind, row)
        index = len(node.rows) if index is None else index
        node.rows.insert(index, row)
        return index

    @_edit_nodes
    def set_row(self, mixed, index, inputs=None, **attrs):
        """Change a row's attributes (None: back to the default) and inputs."""
        node, graph, _ = self._row_owner(mixed, index)
        row = node.rows[index]
        for key, value in attrs.items():
            if value is None:
                row.attrs.pop(key, None)
            else:
                row.attrs[key] = _plain(value)
        for slot, value in (inputs or {}).items():
            row.inputs[slot] = self._ref_in(graph, value, f"node '{mixed}' row {index}")
        validate.check_row(f"node '{mixed}' (mixed_layer) row {index}", row.kind, row)

    @_edit_nodes
    def move_row(self, mixed, index, to):
        """Reorder: the row at ``index`` goes to position ``to``."""
        node, _, _ = self._row_owner(mixed, index)
        row = node.rows.pop(index)
        node.rows.insert(to, row)

    @_edit_nodes
    def remove_row(self, mixed, index):
        node, _, _ = self._row_owner(mixed, index)
        del node.rows[index]

    def _row_owner(self, mixed, index):
        """The mixed node (owned: the row edits change it), its graph and group."""
        node, graph, parent = self._own(mixed)
        if node.layer != MIXED or not -len(node.rows) <= index < len(node.rows):
            raise DesignError(f"node '{mixed}' ({node.layer}) has no row {index}")
        return node, graph, parent

    # ------------------------------------------------------ recurrent groups
    @_edit
    def add_step_input(self, group, src, static=False, name=None):
        """An in-link of ``group``: the outer node ``src``, one time step per step (or, with
        ``static``, the same row every step: a StaticInput). Returns the inner node id."""
        node, graph, _ = self._group(group)
        inner = Node(self._new_id(STEP_INPUT, name), STEP_INPUT,
                     {"static": True} if static else {},
                     {"outer": self._ref_in(graph, src, f"group '{group}' input")})
        node.body.nodes[inner.id] = inner
        return inner.id

    @_edit
    def add_memory(self, group, size, link=None, boot=None, name=None):
        """A memory of ``group``: the previous step's value of the inner node ``link``
        (zeros, or the outer node ``boot``, at the first step). Returns its inner id."""
        node, graph, _ = self._group(group)
        mem = Node(self._new_id(MEMORY, name), MEMORY, {"size": size})
        validate.check_attrs(f"memory of group '{group}'", MEMORY, mem.attrs, complete=True)
        if boot is not None:
            mem.inputs["boot_layer"] = self._ref_in(graph, boot, f"memory of group '{group}'")
        node.body.nodes[mem.id] = mem
        if link is not None:
            mem.inputs[LINK_SLOT] = self._ref_in(node.body, link, f"memory '{mem.id}' link")
        return mem.id

    @_edit
    def link_memory(self, memory, target):
        """Make ``memory`` remember the inner node ``target`` (an edge through time)."""
        node, body, _ = self._find(memory)
        if node.layer != MEMORY:
            raise DesignError(f"link_memory: node '{memory}' is a {node.layer}, not a memory")
        node.inputs[LINK_SLOT] = self._ref_in(body, target, f"memory '{memory}' link")

    @_edit
    def boot_memory(self, memory, boot):
        """Start ``memory`` from the outer node ``boot`` (None: from zeros)."""
        node, body, owner = self._find(memory)
        if node.layer != MEMORY:
            raise DesignError(f"boot_memory: node '{memory}' is a {node.layer}, not a memory")
        if boot is None:
            node.inputs.pop("boot_layer", None)
            return
        outer = self._find(owner.id)[1]
        node.inputs["boot_layer"] = self._ref_in(outer, boot, f"memory '{memory}' boot")

    @_edit
    def set_step_input(self, step_input, src=None, static=None):
        """Change an in-link's outer node or whether it is static."""
        node, _, owner = self._find(step_input)
        if node.layer != STEP_INPUT:
            raise DesignError(f"node '{step_input}' is a {node.layer}, not a step input")
        if src is not None:
            outer = self._find(owner.id)[1]
            node.inputs["outer"] = self._ref_in(outer, src, f"step input '{step_input}'")
        if static is not None:
            node.attrs.pop("static", None)
            if static:
                node.attrs["static"] = True

    @_edit
    def set_outputs(self, group, outputs):
        """The out-links of ``group``: inner nodes (ids or (id, index)), in order."""
        node, _, _ = self._group(group)
        node.body.outputs = [self._ref_in(node.body, v, f"group '{group}' output")
                             for v in outputs]

    def _group(self, group):
        found = self._find(group)
        if found[0].layer != GROUP:
            raise DesignError(f"node '{group}' is a {found[0].layer}, not a recurrent_group")
        return found

    # ------------------------------------------------------------- grouping
    @_edit
    def group(self, node_ids, name=None):
        """Move top-level nodes into a new recurrent_group (one step per time step).

        Every edge from outside the selection becomes a step input (an in-link of the
        outer node's sequence), every output used outside becomes an out-link, and the
        outside users now read the group. Returns the group's id."""
        graph = self._doc.graph
        chosen = [n for n in graph.nodes if n in set(node_ids)]
        missing = set(node_ids) - set(chosen)
        if missing or not chosen:
            raise DesignError(f"group: {sorted(missing) or 'nothing'} is not a top-level node")
        for nid in chosen:
            if graph.nodes[nid].layer == "data":
                raise DesignError(f"group: '{nid}' is a data node; a step cannot declare inputs")
        group = Node(self._new_id(GROUP, name), GROUP, body=_Graph())
        order = list(graph.nodes)
        inputs = {}   # outer Ref -> step input id
        for nid in chosen:
            node = graph.nodes.pop(nid)
            group.body.nodes[nid] = node
            into_step = lambda r: r if r.node in chosen else self._step_input(  # noqa: E731
                group, inputs, r)
            _rewire(node, into_step)
            for inner in (node.body.nodes.values() if node.body else ()):
                _rewire_outer(inner, into_step)  # a nested group's refs out of its step
        outlinks = {}  # inner Ref -> out-link index

        def outside(ref):
            if ref.node not in chosen:
                return ref
            k = outlinks.setdefault(ref, len(outlinks))
            return Ref(group.id, k)
        for node in graph.nodes.values():
            _rewire(node, outside)
        if self._doc.loss is not None:
            self._doc.loss = outside(self._doc.loss)
        if not outlinks:
            raise DesignError("group: nothing outside the selection uses it; a group needs an "
                              "out-link")
        group.body.outputs = sorted(outlinks, key=outlinks.get)
        step_inputs = [n for n in group.body.nodes.values() if n.layer == STEP_INPUT]
        group.body.nodes = {**{n.id: n for n in step_inputs},
                            **{k: v for k, v in group.body.nodes.items()
                               if v.layer != STEP_INPUT}}
        graph.nodes[group.id] = group  # where the first chosen node stood:
        graph.nodes = {k: graph.nodes[k] for k in
                       [group.id if k == chosen[0] else k for k in order if k == chosen[0]
                        or k not in chosen]}
        return group.id

    def _step_input(self, group, inputs, outer):
        if outer not in inputs:
            node = Node(self._new_id(STEP_INPUT, None), STEP_INPUT, {}, {"outer": outer})
            group.body.nodes[node.id] = node
            inputs[outer] = node.id
        return Ref(inputs[outer])

    @_edit
    def ungroup(self, group_id):
        """Dissolve a recurrent_group without memories back into top-level nodes (the
        step's layers applied to whole sequences): the inverse of ``group``."""
        node, graph, owner = self._group(group_id)
        if owner is not None:
            raise DesignError(f"ungroup: '{group_id}' is inside another group")
        body = node.body
        if any(n.layer == MEMORY for n in body.nodes.values()):
            raise DesignError(f"ungroup: '{group_id}' has memories; its step depends on the "
                              "previous step and cannot be applied to whole sequences")
        if any(n.attrs.get("static") for n in body.nodes.values() if n.layer == STEP_INPUT):
            raise DesignError(f"ungroup: '{group_id}' has a static input")
        outer_of = {n.id: n.inputs["outer"] for n in body.nodes.values()
                    if n.layer == STEP_INPUT}
        nodes = {}
        to_outer = lambda r: outer_of.get(r.node, r)  # noqa: E731
        for nid, inner in graph.nodes.items():
            if nid != group_id:
                nodes[nid] = inner
                continue
            for k, v in body.nodes.items():
                if v.layer != STEP_INPUT:
                    _rewire(v, to_outer)
                    for nested in (v.body.nodes.values() if v.body else ()):
                        _rewire_outer(nested, to_outer)
                    nodes[k] = v
        graph.nodes = nodes

        def inside(ref):
            return body.outputs[ref.index] if ref.node == group_id else ref
        for other in graph.nodes.values():
            _rewire(other, inside)
        if self._doc.loss is not None:
            self._doc.loss = inside(self._doc.loss)
        self._doc.layout.pop(group_id, None)


def _rewire(node, fn):
    node.inputs = {s: [fn(r) for r in v] if isinstance(v, list) else fn(v)
                   for s, v in node.inputs.items()}
    for row in node.rows or ():
        row.inputs = {s: fn(r) for s, r in row.inputs.items()}


def _rewire_outer(inner, fn):
    """Map the refs of a step's node that point out of its step (in-links, boots)."""
    for slot in OUTER_SLOTS.get(inner.layer, ()):
        if slot in inner.inputs:
            inner.inputs[slot] = fn(inner.inputs[slot])
