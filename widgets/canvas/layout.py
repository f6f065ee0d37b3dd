"""Where nodes sit before anyone moved them, and how big an expanded zone is.

A node with a ``layout`` entry (the user dragged it, or the front end's automatic
layout placed it) keeps it. The others get a simple layered placement: a node's
column is its dependency depth in its own graph (sources in column 0), and nodes of a
column are stacked in build order. So a design built in Python reads left to right
before any automatic layout. Positions are relative to the parent zone for nodes
inside an expanded zone (React Flow's ``parentId`` convention); an expanded zone is
sized to hold its contents.

Sizes are estimates (the front end measures the real boxes); they only need to keep
default placements from overlapping.
"""
from __future__ import annotations

from fluidscope.designer.design.document import GROUP, MIXED, OUTER_SLOTS, order

NODE_WIDTH = 220
HEADER = 44          # title line and detail line of a node
PORT_ROW = 22        # one input or output handle
COLUMN_GAP = 80
ROW_GAP = 40
ZONE_PADDING = 30    # inside an expanded zone, around its contents
ZONE_HEADER = 40     # the zone's own title bar
COLLAPSED_ZONE = (240, 90)


def node_size(node, inputs, outputs, expanded_size=None):
    """(width, height) of a node box: a zone's computed size when it is expanded."""
    if expanded_size is not None:
        return expanded_size
    if node.layer == GROUP:
        return COLLAPSED_ZONE
    rows = len(node.rows or ()) if node.layer == MIXED else 0
    ports = max(inputs, outputs, 1) + rows
    return (NODE_WIDTH, HEADER + PORT_ROW * ports)


def place(graph, layout, sizes):
    """Positions of ``graph``'s nodes: {id: [x, y]}, from ``layout`` where it has an
    entry, else layered (see the module docstring). ``sizes``: id -> (w, h)."""
    depth = _depths(graph)
    columns = {}
    for nid in depth:
        columns.setdefault(depth[nid], []).append(nid)
    x, positions = 0.0, {}
    for column in sorted(columns):
        y = 0.0
        for nid in columns[column]:
            positions[nid] = [x, y]
            y += sizes[nid][1] + ROW_GAP
        x += max(sizes[n][0] for n in columns[column]) + COLUMN_GAP
    for nid in graph.nodes:
        if nid in layout:
            positions[nid] = [float(v) for v in layout[nid]]
    return positions


def zone_size(positions, sizes):
    """(width, height) of an expanded zone holding nodes at ``positions`` (relative to
    the zone, already shifted past its header and padding)."""
    if not positions:
        return (NODE_WIDTH + 2 * ZONE_PADDING, ZONE_HEADER + 2 * ZONE_PADDING + 60)
    right = max(positions[n][0] + sizes[n][0] for n in positions)
    bottom = max(positions[n][1] + sizes[n][1] for n in positions)
    return (max(right + ZONE_PADDING, NODE_WIDTH), bottom + ZONE_PADDING)


def inner_offset(positions, layout):
    """Shift default positions of a zone's nodes past its header (moved ones stay)."""
    return {nid: pos if nid in layout else [pos[0] + ZONE_PADDING,
                                            pos[1] + ZONE_HEADER + ZONE_PADDING]
            for nid, pos in positions.items()}


def _depths(graph):
    """Dependency depth of each node within ``graph`` (refs out of it count as 0)."""
    ids, cyclic = order(graph)
    depth = {}
    for nid in ids + cyclic:
        node = graph.nodes[nid]
        outer = OUTER_SLOTS.get(node.layer, ())
        deps = [r.node for slot, r in node.refs(ordering=True)
                if slot not in outer and r.node in depth]
        if node.layer == GROUP:  # a zone comes after what its in-links and boots read
            deps += [r.node for inner in node.body.nodes.values()
                     for slot in OUTER_SLOTS.get(inner.layer, ())
                     for r in [inner.inputs.get(slot)] if r is not None and r.node in depth]
        depth[nid] = 1 + max((depth[d] for d in deps), default=-1)
    return depth
