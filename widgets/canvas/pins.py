"""Layers stay where they are drawn when a gesture cuts their graph (remove, disconnect).

A layer nobody moved is placed by ``layout.place``: its column is its dependency depth,
and a long chain wraps into bands. Removing a layer in the middle of a 1,000-layer chain
(or cutting a wire there) starts the layers after it at depth 0 again, so they took the
first columns beside the layers before it: every node under the camera changed, the
canvas showed other layers than a moment before (and undo moved them all back). Node
editors keep what is on the screen where it is; so before such a gesture the canvas gives
every layer of the graphs it cuts that has no layout entry the position it is drawn at
(``Design.move``: layout only, not an undo step). Auto-layout places them anew.
"""
from __future__ import annotations

from .folds import first_of


def pin_drawn(canvas, node_ids):
    """Give the drawn layers of the graphs holding ``node_ids`` (the top level, a zone's
    step) that have no layout entry the positions of the view on the screen (the
    removed ones too: ``Design.remove`` drops their entries)."""
    view, layout = canvas.view or {}, canvas.design.document.layout
    drawn = {node["id"]: node for node in view.get("nodes", ())}
    graphs = {drawn[nid]["parent"] for nid in node_ids if nid in drawn}
    if not graphs:
        return
    design = canvas.design
    for node in drawn.values():
        position = node.get("position")
        if node["parent"] not in graphs or position is None:
            continue
        node_id = first_of(node["id"]) or node["id"]  # a fold: its first layer
        if node_id not in layout:
            design.move(node_id, *position)


__all__ = ["pin_drawn"]
