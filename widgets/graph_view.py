"""``GraphView``: the program graph in a notebook, as a thin anywidget.

All logic is in Python: ``render.program_to_dot`` makes the DOT text and the system
``dot`` (when installed) makes the SVG; the front end (``static/graph_view.js``) only
shows the SVG, zooms and pans it, and reports the node the user clicked in
``selected``. Without system Graphviz ``svg`` stays empty and the front end shows the
DOT text instead.
"""
from __future__ import annotations

import pathlib

import anywidget
import traitlets

from fluidscope.engine.errors import FluidscopeError

from .render import (MODES, dot_to_svg, has_dot, normalize_highlight, op_key,
                     program_to_dot, var_key)

STATIC = pathlib.Path(__file__).parent / "static"


class GraphView(anywidget.AnyWidget):
    """Interactive graph of a Program (or ProgramDesc).

    Synced traits
    -------------
    dot : str
        The DOT source drawn (from ``program_to_dot``).
    svg : str
        The ``<svg>`` laid out by the system ``dot``; empty when Graphviz is missing.
    mode : {"forward", "backward", "all"}
        Which ops are drawn; changing it re-renders.
    highlight : None, int or [block, op index]
        The op drawn emphasised (e.g. the op a debugger stopped at); changing it
        re-renders.
    selected : str
        Key of the node the user clicked: ``"op:<block>:<idx>"`` or
        ``"var:<block>:<name>"`` (empty: nothing selected).
    error : str
        Why the SVG could not be made (empty when it was, or when Graphviz is
        simply not installed).
    """

    _esm = STATIC / "graph_view.js"
    _css = STATIC / "graph_view.css"

    dot = traitlets.Unicode("").tag(sync=True)
    svg = traitlets.Unicode("").tag(sync=True)
    mode = traitlets.Unicode("all").tag(sync=True)
    highlight = traitlets.Any(None, allow_none=True).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(480).tag(sync=True)

    def __init__(self, program, mode="all", highlight=None, *, block=0, show_shapes=True,
                 rankdir="TB", **kwargs):
        self._program = program
        self._options = {"block": block, "show_shapes": show_shapes, "rankdir": rankdir}
        self._rendering = True  # the observers wait until every trait is set
        super().__init__(mode=mode, highlight=highlight, **kwargs)
        self._rendering = False
        self.refresh()

    @property
    def program(self):
        """The Program (or ProgramDesc) drawn."""
        return self._program

    # ----------------------------------------------------------- validation
    @traitlets.validate("mode")
    def _check_mode(self, proposal):
        if proposal["value"] not in MODES:
            raise FluidscopeError(
                f"GraphView: mode must be one of {list(MODES)}, got {proposal['value']!r}")
        return proposal["value"]

    @traitlets.validate("highlight")
    def _check_highlight(self, proposal):
        value = normalize_highlight(proposal["value"], self._options["block"])
        # JSON-friendly: a plain op index in the drawn block, else [block, idx]
        if value is None or value[0] != self._options["block"]:
            return None if value is None else list(value)
        return value[1]

    @traitlets.observe("mode", "highlight")
    def _rerender(self, change):
        if not self._rendering:
            self.refresh()

    # ----------------------------------------------------------- Python API
    def refresh(self):
        """Re-render ``dot`` and ``svg`` from the program (call after editing it)."""
        dot = program_to_dot(self._program, mode=self.mode, highlight=self.highlight,
                             **self._options)
        svg, error = "", ""
        if has_dot():
            try:
                svg = dot_to_svg(dot)
            except FluidscopeError as exc:  # keep the DOT view usable; say why
                error = str(exc)
        with self.hold_sync():
            self.dot, self.svg, self.error = dot, svg, error

    def set_mode(self, mode):
        """Draw forward ops only (``"forward"``), forward and backward
        (``"backward"``) or everything (``"all"``)."""
        self.mode = mode

    def set_highlight(self, highlight):
        """Emphasise an op: its index in the drawn block, ``(block, idx)``, or None."""
        self.highlight = highlight

    def select(self, name):
        """Select a node as if it were clicked.

        ``name``: a key (``"op:0:3"``, ``"var:0:fc_0.w_0"``), an op index in the drawn
        block, or a variable name (looked up in the drawn block and its parents).
        ``None`` or ``""`` clears the selection. Raises FluidscopeError for a node the
        program does not have."""
        self.selected = self._resolve(name)
        return self.selected

    def _resolve(self, name):
        desc = getattr(self._program, "desc", self._program)
        root = self._options["block"]
        if name is None or name == "":
            return ""
        if isinstance(name, int) and not isinstance(name, bool):
            name = op_key(root, name)
        if isinstance(name, str) and name.startswith("op:"):
            b, _, i = name[3:].partition(":")
            if b.isdigit() and i.isdigit() and int(b) < len(desc.blocks) \
                    and int(i) < len(desc.blocks[int(b)].ops):
                return name
        elif isinstance(name, str) and name.startswith("var:"):
            b, _, var = name[4:].partition(":")
            if b.isdigit() and int(b) < len(desc.blocks) and _block_has_var(
                    desc.blocks[int(b)], var):
                return name
        elif isinstance(name, str):
            block = root
            while block >= 0:
                if any(v.name == name for v in desc.blocks[block].vars):
                    return var_key(block, name)
                block = desc.blocks[block].parent_idx
        raise FluidscopeError(f"GraphView.select: the program has no node {name!r}")


def _block_has_var(block, name):
    """Declared in ``block``, or used there undeclared (the graph still draws it)."""
    return any(v.name == name for v in block.vars) or any(
        name in v.arguments for op in block.ops for v in list(op.inputs) + list(op.outputs))


__all__ = ["GraphView"]
