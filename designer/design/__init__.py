"""The design: a network at the level of layers, shared by the canvas and the Python API.

document.py   the data: nodes, edges, mixed rows, recurrent bodies, loss, optimizer, layout
edits.py      ``Design``: the edit methods (every canvas gesture is one), undo/redo
composite_edits.py  rows of mixed layers, steps of recurrent groups, grouping
undoable.py   the snapshot undo step every edit is
validate.py   checks against the catalog, shared by edits and file loading
build.py      replay through the layer functions: per-node errors, waiting, shapes
replay_cache.py  unchanged nodes reuse what they built last time (fast rebuilds)
replay_runs.py   stretches of unchanged nodes replayed in one step
weights.py    what a rebuild must (re)initialise; the rest of the scope is kept
files.py      versioned JSON, atomic save, validated load
from_program.py  a program's recorded layer calls back as nodes
op_nodes.py   a program without that record (a file) as op and variable nodes
"""
from .build import Build, design_guard
from .document import Document, Graph, Node, Ref, Row
from .edits import Design

__all__ = ["Design", "Build", "design_guard", "Document", "Graph", "Node", "Ref", "Row"]
