"""Where nodes sit before anyone moved them, and how big an expanded zone is.

A node with a ``layout`` entry (the user dragged it, or the front end's automatic
layout placed it) keeps it. The others get a layered placement: a node's column is its
dependency depth in its own graph, a source (a data layer, a zone's boot) sits in the
column just before its first reader (so the label of a loss is not drawn at the far left
with its wire running under every layer), and nodes of a column are stacked in build
order. A design whose single row of columns would have to be shown below the canvas's
semantic-zoom threshold wraps into bands (the columns of a long chain continue on the
next band, like lines of text), so the first view, which fits the whole design, stays
legible: a 200-layer chain becomes a block of about 14 x 14 nodes instead of a strip
28,000 px wide. Positions are relative to the parent zone for nodes inside an expanded
zone (React Flow's ``parentId`` convention); an expanded zone is sized to hold them.

Sizes are estimates (the front end measures the real boxes); they only need to keep
default placements from overlapping. Every box is at least ``COMPACT`` tall: the
compact block a node draws when zoomed out (js/src/canvas/nodes.jsx) has that size.
"""
from __future__ import annotations

import functools

from fluidscope.designer.design.document import GROUP, MIXED, OUTER_SLOTS, order

NODE_WIDTH = 220
COMPACT = (220, 116)  # the zoomed-out block: layer kind and name on two large lines
HEADER = 44          # title line and detail line of a node
PORT_ROW = 22        # one input or output handle
COLUMN_GAP = 44
ROW_GAP = 28
BAND_GAP = 48        # between two bands of a wrapped design (a wire turns there)
ZONE_PADDING = 30    # inside an expanded zone, around its contents
ZONE_HEADER = 40     # the zone's own title bar
COLLAPSED_ZONE = (240, 116)
PANE = (950, 510)    # the pane of a 600 px canvas in a JupyterLab notebook (width, height)
READABLE_FIT = 0.35  # a single row that fits only below this zoom wraps into bands


def node_size(node, inputs, outputs, expanded_size=None):
    """(width, height) of a node box: a zone's computed size when it is expanded."""
    if expanded_size is not None:
        return expanded_size
    if node.layer == GROUP:
        return COLLAPSED_ZONE
    rows = len(node.rows or ()) if node.layer == MIXED else 0
    ports = max(inputs, outputs, 1) + rows
    return (NODE_WIDTH, max(COMPACT[1], HEADER + PORT_ROW * ports))


def place(graph, layout, sizes, pane=PANE, alias=None, ordered=None, depths=None):
    """Positions of ``graph``'s nodes: {id: [x, y]}, from ``layout`` where it has an
    entry, else layered and wrapped (see the module docstring). ``sizes``: id -> (w, h);
    ``pane``: the (width, height) the whole default layout should fit; ``alias``: node id
    -> the id drawn for it (a folded run is drawn as its first node: folds.py); only
    drawn ids get a position. ``ordered``: ``order(graph)``, when the caller has it;
    ``depths``: ``column_depths(graph, alias, ordered)``, when the caller kept it."""
    alias = alias or {}
    depth, deps_of = depths or _depths(graph, alias, ordered or order(graph))
    columns = {}
    for nid in depth:
        if alias.get(nid, nid) == nid:
            columns.setdefault(depth[nid], []).append(nid)
    columns = [columns[c] for c in sorted(columns)]
    widths = [max(sizes[n][0] for n in col) for col in columns]
    heights = [sum(sizes[n][1] for n in col) + ROW_GAP * (len(col) - 1) for col in columns]
    per_band = _columns_per_band(tuple(widths), tuple(heights), tuple(pane))
    positions, top = {}, 0.0
    for start in range(0, len(columns), per_band):
        x = 0.0
        for col, width in zip(columns[start:start + per_band], widths[start:start + per_band]):
            y = top
            for nid in sorted(col, key=lambda n: _row_key(n, deps_of, positions)):
                positions[nid] = [x, y]
                y += sizes[nid][1] + ROW_GAP
            x += width + COLUMN_GAP
        top += max(heights[start:start + per_band]) + BAND_GAP
    for nid in positions:
        if nid in layout:
            positions[nid] = [float(v) for v in layout[nid]]
    return positions


def _row_key(nid, deps_of, placed):
    """Stacking order in a column: nodes level with what they read (a chain stays on one
    row), sources (data layers beside their reader) below them."""
    ys = [placed[d][1] for d in deps_of.get(nid, ()) if d in placed]
    return (0, sum(ys) / len(ys)) if ys else (1, 0.0)


def _extent(widths, heights, per_band):
    """(width, height) of the columns laid out ``per_band`` to a band."""
    bands = range(0, len(widths), per_band)
    width = max(sum(widths[s:s + per_band]) + COLUMN_GAP * (len(widths[s:s + per_band]) - 1)
                for s in bands)
    height = sum(max(heights[s:s + per_band]) for s in bands) + BAND_GAP * (len(bands) - 1)
    return width, height


@functools.lru_cache(maxsize=16)
def _columns_per_band(widths, heights, pane):
    """All columns on one band when that fits ``pane`` at a readable zoom; else the band
    length whose whole fits the pane at the largest zoom. Remembered: a gesture that
    changes no column's size (most of them) asks again with the same columns, and the
    search is a few milliseconds at 1,000 layers."""
    if not widths:
        return 1
    fit = lambda extent: min(pane[0] / extent[0], pane[1] / extent[1])  # noqa: E731
    count = len(widths)
    if fit(_extent(widths, heights, count)) >= READABLE_FIT:
        return count
    # the band length a grid of average cells would take, and the lengths around it (each
    # try costs O(columns): 1,000 layers stay a few milliseconds)
    cell_w = sum(widths) / count + COLUMN_GAP
    cell_h = max(heights) + BAND_GAP
    guess = max(1, round((count * cell_h * pane[0] / pane[1] / cell_w) ** 0.5))
    tries = range(max(1, guess // 2), min(count, 2 * guess + 2) + 1)
    return max(tries, key=lambda k: (fit(_extent(widths, heights, k)), k))


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


def column_depths(graph, alias, ordered):
    """(column of each node, what each drawn node reads here): what ``place`` lays out
    from, for a caller that keeps it while the graph's structure and ``alias`` hold."""
    return _depths(graph, alias, ordered)


def _depths(graph, alias, ordered):
    """Column of each node within ``graph`` (refs out of it count as 0): its dependency
    depth, except that a node reading nothing here sits just before its first reader.
    A node drawn as another (``alias``) shares that one's column. Returns (column of each
    node, what each drawn node reads here)."""
    ids, cyclic = ordered
    depth, deps_of = {}, {}
    for nid in ids + cyclic:
        if alias.get(nid, nid) != nid:
            depth[nid] = depth[alias[nid]]
            continue
        node = graph.nodes[nid]
        outer = OUTER_SLOTS.get(node.layer, ())
        deps = [r.node for slot, r in node.refs(ordering=True)
                if slot not in outer and r.node in depth]
        if node.layer == GROUP:  # a zone comes after what its in-links and boots read
            deps += [r.node for inner in node.body.nodes.values()
                     for slot in OUTER_SLOTS.get(inner.layer, ())
                     for r in [inner.inputs.get(slot)] if r is not None and r.node in depth]
        deps = [alias.get(d, d) for d in deps]
        deps_of[nid] = deps
        depth[nid] = 1 + max((depth[d] for d in deps), default=-1)
    readers = {}
    for nid, deps in deps_of.items():
        for d in deps:
            readers.setdefault(d, []).append(nid)
    for nid, deps in deps_of.items():
        if not deps and readers.get(nid):
            depth[nid] = max(0, min(depth[r] for r in readers[nid]) - 1)
    return depth, deps_of
