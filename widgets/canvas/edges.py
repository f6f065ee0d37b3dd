"""Every edge of a design, with a stable id, as the canvas draws and removes it.

Edge ids are built from what the edge connects, so the same edge keeps its id across
rebuilds (the front end keys React Flow edges by it) and ``disconnect`` can name one:

    data     e:<src>:<k>><dst>:in:<slot>:<i>        (i: position in a list slot)
             e:<src>:<k>><dst>:row:<r>:<slot>:0     (a mixed_layer row's input)
    inlink   e:<outer>:<k>><step_input>:in:outer:0  (kind "static" for a StaticInput)
    boot     e:<outer>:<k>><memory>:in:boot_layer:0
    memory   e:<inner>:<k>><memory>:in:link:0       (drawn dashed: through time)
    outlink  e:<inner>:<k>><group>:out:<j>:0        (to the zone's own output handle)
"""
from __future__ import annotations

from typing import NamedTuple

from fluidscope.designer.design.document import GROUP, LINK_SLOT, MEMORY, STEP_INPUT


class Edge(NamedTuple):
    """One edge. ``slot``/``position``/``row`` say where it enters its target (what
    ``disconnect`` removes); ``group``: the zone it belongs to (in/out-links). A named
    tuple, not a frozen dataclass: every view makes one per edge (1,000 at 1,000 layers),
    and a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``."""
    source: str
    source_index: int
    target: str
    target_handle: str
    kind: str
    slot: str = ""
    position: int | None = None
    row: int | None = None
    group: str | None = None

    @property
    def id(self):
        return (f"e:{self.source}:{self.source_index}>{self.target}:{self.target_handle}:"
                f"{self.position or 0}")


def design_edges(doc) -> list:
    """Every edge of the document (bodies included), in document order."""
    edges = []
    for node, _graph, owner in doc.walk():
        edges.extend(_node_edges(node, owner))
        if node.layer == GROUP:
            for j, ref in enumerate(node.body.outputs):
                edges.append(Edge(ref.node, ref.index, node.id, f"out:{j}", "outlink",
                                  group=node.id))
    return edges


def _node_edges(node, owner):
    group = owner.id if owner is not None else None
    out = []
    for slot, value in node.inputs.items():
        if node.layer == STEP_INPUT:
            kind = "static" if node.attrs.get("static") else "inlink"
            out.append(Edge(value.node, value.index, node.id, "in:outer", kind, slot,
                            group=group))
        elif node.layer == MEMORY:
            kind = "memory" if slot == LINK_SLOT else "boot"
            out.append(Edge(value.node, value.index, node.id, f"in:{slot}", kind, slot,
                            group=group))
        elif isinstance(value, list):
            out.extend(Edge(r.node, r.index, node.id, f"in:{slot}", "data", slot, i)
                       for i, r in enumerate(value))
        else:
            out.append(Edge(value.node, value.index, node.id, f"in:{slot}", "data", slot))
    for r, row in enumerate(node.rows or ()):
        out.extend(Edge(ref.node, ref.index, node.id, f"row:{r}:{slot}", "data", slot, row=r)
                   for slot, ref in row.inputs.items())
    return out
