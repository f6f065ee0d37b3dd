"""The design canvas: drag-and-compose model design over a Python ``Design``.

widget.py       ``DesignCanvas``: traits, publishing, history, zones, display
gestures.py     the edit actions (add, connect, set, rows, remove, move, clipboard)
zone_actions.py the zone actions (group, in-links, memories, out-links)
run_actions.py  the actions that run or write the design (graph, train, debug, export)
view.py         pure (design, build, ui) -> the ``view`` dict; the palette
node_views.py   node views (and the finished views) reused across publishes, by key
view_memo.py    what the view derives from the design's structure, kept while it holds
ports.py        typed ports and the one rule for which outputs a slot accepts
edges.py        every edge of a design with a stable id
layout.py       default positions (layered, long designs wrapped into bands) and zone sizes
folds.py        runs of identical layers drawn as one "fc x 120" node
find_fold.py    the find / fold / unfold actions
describe.py     a node's detail line and the property panel
starters.py     starting values of required attributes for a dropped layer
persistence.py  the design file: load, atomic debounced autosave, never overwrite a bad file
collector.py    gestures run with the old objects frozen: no full garbage collection inside;
                the full one after a paused edit's view is drawn
PROTOCOL.md     the contract with the front end (js/src/canvas/)
"""
from .view import canvas_view, palette_view
from .widget import DesignCanvas

__all__ = ["DesignCanvas", "canvas_view", "palette_view"]
