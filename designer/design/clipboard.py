"""Copy and paste of nodes, over the Design's public edit methods.

    clip = copy(design, ["fc_0", "fc_1"])       # a snapshot: later edits do not change it
    new_ids = paste(design, clip, x=400, y=80)  # {"fc_0": "fc_2", "fc_1": "fc_3"}

A paste adds fresh nodes (new ids, so no pasted layer shares a parameter name with the
original) through ``Design.add`` / ``add_row`` / ``add_step_input`` / ``add_memory`` /
``link_memory`` / ``set_outputs`` inside one ``transaction()``: it is one undo step and
is checked like any edit. Edges among the copied nodes are kept; edges from nodes that
were not copied are dropped, except the in-links and boots of a copied recurrent group,
which keep reading their outer node when it exists where the copy lands (a step input
cannot exist without one). Nodes keep their layout relative to each other.
"""
from __future__ import annotations

import dataclasses

from fluidscope.engine import DesignError

from .document import GROUP, LINK_SLOT, MEMORY, MIXED, OP, STEP_INPUT, Graph, Ref, order


@dataclasses.dataclass(frozen=True)
class Clip:
    """Copied nodes (clones, in build order) and their layout entries."""
    nodes: tuple
    layout: dict

    @property
    def ids(self):
        return [n.id for n in self.nodes]


def copy(design, node_ids) -> Clip:
    """A snapshot of ``node_ids`` (all in one graph: the top level or one zone's step)."""
    doc = design.document
    found = []
    for nid in dict.fromkeys(node_ids):
        located = doc.locate(nid)
        if located is None:
            raise DesignError(f"copy: no node '{nid}' in the design")
        found.append(located)
    if not found:
        raise DesignError("copy: nothing selected")
    graphs = {id(g) for _, g, _ in found}
    if len(graphs) > 1:
        raise DesignError(f"copy: {[n.id for n, _, _ in found]} are not all in one graph (the "
                          "top level or one zone's step)")
    for node, _, _ in found:
        if node.layer in (STEP_INPUT, MEMORY):
            raise DesignError(f"copy: '{node.id}' is a {node.layer} of its zone; copy the zone")
        if node.layer == OP and node.body is not None:
            raise DesignError(f"copy: op node '{node.id}' holds a sub-block, which cannot be "
                              "copied")
    chosen = Graph({n.id: n.clone() for n, _, _ in found})
    ids, cyclic = order(chosen)
    inner = {i.id for n in chosen.nodes.values() for i, _, _ in doc.walk(n.body)} \
        if any(n.body for n in chosen.nodes.values()) else set()
    layout = {k: list(v) for k, v in doc.layout.items() if k in chosen.nodes or k in inner}
    return Clip(tuple(chosen.nodes[i] for i in ids + cyclic), layout)


def paste(design, clip, x=None, y=None, group=None) -> dict:
    """Add a copy of ``clip`` (top level, or inside the zone ``group``) with its top-left
    node at (x, y) (default: 40 px right of and below the originals). Returns
    {copied id: new id}, inner nodes of copied zones included."""
    renamed = {}
    with design.transaction():
        for node in clip.nodes:
            _paste_node(design, node, group, renamed)
        _place(design, clip, renamed, x, y)
    return renamed


def _map(ref, renamed):
    return Ref(renamed[ref.node], ref.index) if ref.node in renamed else None


def _exists_in(design, ref, group):
    """``ref`` (an outer node of a copied zone) if it is a node of the graph the copy lands
    in, else None."""
    found = design.document.locate(ref.node)
    if found is None:
        return None
    owner = found[2]
    return ref if (owner.id if owner is not None else None) == group else None


def _inputs(node, renamed):
    """The node's inputs that point at copied nodes, renamed."""
    kept = {}
    for slot, value in node.inputs.items():
        if isinstance(value, list):
            refs = [r for r in (_map(v, renamed) for v in value) if r is not None]
            if refs:
                kept[slot] = refs
        elif (ref := _map(value, renamed)) is not None:
            kept[slot] = ref
    return kept


def _paste_node(design, node, group, renamed):
    if node.layer == GROUP:
        return _paste_group(design, node, group, renamed)
    new = design.add(node.layer, inputs=_inputs(node, renamed), group=group, **node.attrs)
    renamed[node.id] = new
    for row in node.rows if node.layer == MIXED else ():
        inputs = {s: r for s, r in ((s, _map(v, renamed)) for s, v in row.inputs.items())
                  if r is not None}
        design.add_row(new, row.kind, inputs=inputs, **row.attrs)
    return new


def _paste_group(design, node, group, renamed):
    new = design.add(GROUP, group=group, **node.attrs)
    renamed[node.id] = new
    body = node.body
    links = []
    for inner_id in order(body)[0] + order(body)[1]:
        inner = body.nodes[inner_id]
        if inner.layer == STEP_INPUT:
            outer = _map(inner.inputs["outer"], renamed) or _exists_in(
                design, inner.inputs["outer"], group)
            if outer is not None:
                renamed[inner.id] = design.add_step_input(
                    new, outer, static=bool(inner.attrs.get("static")))
        elif inner.layer == MEMORY:
            boot = inner.inputs.get("boot_layer")
            boot = boot and (_map(boot, renamed) or _exists_in(design, boot, group))
            renamed[inner.id] = design.add_memory(new, inner.attrs["size"],
                                                  boot=boot or None)
            if LINK_SLOT in inner.inputs:
                links.append((inner.id, inner.inputs[LINK_SLOT]))
        else:
            _paste_node(design, inner, new, renamed)
    for memory, link in links:
        if (target := _map(link, renamed)) is not None:
            design.link_memory(renamed[memory], target)
    outputs = [r for r in (_map(ref, renamed) for ref in body.outputs) if r is not None]
    if outputs:
        design.set_outputs(new, outputs)
    return new


def _place(design, clip, renamed, x, y):
    """Layout: copied positions shifted so the top-left copied node lands at (x, y);
    nodes inside copied zones keep their positions (they are relative to the zone)."""
    top = [n.id for n in clip.nodes if n.id in clip.layout]
    if top:
        left = min(clip.layout[n][0] for n in top)
        upper = min(clip.layout[n][1] for n in top)
    else:
        left = upper = 0.0
    dx = (x - left) if x is not None else 40.0
    dy = (y - upper) if y is not None else 40.0
    tops = {n.id for n in clip.nodes}
    for old, new in renamed.items():
        if old in clip.layout:
            px, py = clip.layout[old]
            if old in tops:
                px, py = px + dx, py + dy
            design.move(new, px, py)
        elif old in tops and x is not None:
            design.move(new, x, y)
