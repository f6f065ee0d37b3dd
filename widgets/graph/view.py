"""``GraphView``: the program graph in a notebook, as a thin anywidget.

All logic is in Python: ``render.program_to_dot`` makes the DOT text, and Python decides
who lays it out (the ``renderer`` trait): the system ``dot`` ("python", the SVG is sent in
``svg``) or Graphviz compiled to WebAssembly in the browser ("browser", only ``dot`` is
sent). "auto" picks "python" when ``dot`` is installed and "browser" otherwise, so a
machine without Graphviz still shows the graph, with no network.

The front end (built from ``js/src/graph_view.js``) only shows the SVG, zooms and pans it
(a fit that keeps labels legible, a minimap, the highlighted op kept in view and tagged
after a re-render or a resize), reports the node the user clicked in ``selected``
(whose ``details`` Python fills), sends its search box to ``find``, and reports how the
graph got on screen in ``rendered_by`` / ``render_ms`` / ``error``. A large program
opens without its optimizer and with its layers as boxes (``sizing``); the view redraws
itself after a cell that edited its program (``sync``). Its toolbar's mode switch sets ``mode``; its "layers as boxes"
toggle and double-clicks ask Python to ``collapse`` / ``expand`` / ``toggle_group``
through messages (``folding.FoldsLayers``), so the notebook, the front end and tests drive one API (the layer state
logic is in ``graph.layers``). Two builds of the front end exist: ``graph_view.js``
(about 12 KB) and ``graph_view_viz.js`` (the same plus viz.js, about 630 KB); a view is
sent the large one only once it needs to lay a graph out in the browser.
"""
from __future__ import annotations

import inspect

import traitlets

from fluidscope.engine.errors import FluidscopeError

from ..base import STATIC, FluidscopeWidget, action
from ..keys import NodeKey
from ..render import MODE_LABELS, MODES, dot_to_svg, has_dot, normalize_highlight, render_program
from .after_cell import watch
from .details import node_details
from .layers import Layers, block_has_layer, initial_layers, known_layer
from .finding import FindsNodes
from .folding import FoldsLayers
from .sizing import LARGE_PROGRAM_OPS, default_view, drawn_op_count

VIZ_MODULE = STATIC / "graph_view_viz.js"
RENDERERS = ("auto", "python", "browser")
# program_to_dot arguments GraphView owns (as traits) rather than passes through
_OWN_ARGUMENTS = ("program", "mode", "highlight", "collapse", "expand")
_NO_DOT = ("renderer='python' needs Graphviz's `dot` program, which is not installed here; "
           "use renderer='auto' or 'browser' to lay the graph out in the browser, or install "
           "Graphviz (apt-get install graphviz, brew install graphviz, conda install graphviz)")


def render_option_names() -> tuple:
    """Keyword options of ``program_to_dot`` that GraphView passes through (read from the
    signature of ``render_program``, its twin, so options added there work here unchanged)."""
    params = inspect.signature(render_program).parameters
    return tuple(name for name, p in params.items()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
                 and name not in _OWN_ARGUMENTS)


def resolve_renderer(renderer: str) -> str:
    """``"auto"`` -> ``"python"`` when the system ``dot`` exists, else ``"browser"``."""
    if renderer not in RENDERERS:
        raise FluidscopeError(
            f"GraphView: renderer must be one of {list(RENDERERS)}, got {renderer!r}")
    if renderer == "auto":
        return "python" if has_dot() else "browser"
    return renderer


class GraphView(FoldsLayers, FindsNodes, FluidscopeWidget):
    """Interactive graph of a Program (or ProgramDesc).

    ``GraphView(program, mode=None, highlight=None, renderer="auto", collapse=None,
    expand=None, **options)``: ``collapse``/``expand`` as in ``program_to_dot`` (True:
    every layer a box; namescopes: those; ``expand``: opened again), kept in the
    ``collapse_all`` / ``collapsed`` / ``expanded`` traits; ``options`` are
    ``program_to_dot``'s other keyword options (``block``, ``show_shapes``, ``rankdir``,
    ``show_internal``, ...) or widget traits such as ``height``. Left out, ``mode`` and
    ``collapse`` suit the program's size (``default_view``): a large program opens
    without its optimizer ops and with its layers as boxes.

    The view follows its program: after each notebook cell it re-renders when the
    program's ``revision`` moved (``sync``).

    Synced traits
    -------------
    dot : str
        The DOT source drawn (from ``program_to_dot``).
    svg : str
        The ``<svg>`` laid out by the system ``dot``; empty when the browser lays it out
        or Graphviz is missing.
    renderer : {"auto", "python", "browser"}
        Who lays the graph out; "auto" is "python" when ``dot`` is installed.
    resolved_renderer : {"python", "browser"}
        What "auto" resolved to (set by Python).
    rendered_by : {"", "python", "browser"}
        Set by the front end once an SVG is on screen: whose layout it shows ("" until
        then, or when only the DOT text could be shown).
    render_ms : float
        Set by the front end: milliseconds it took to put the graph on screen (in-browser
        layout plus insertion; insertion alone for a Python SVG). -1 until then.
    mode : {"forward", "backward", "all"}
        Which ops are drawn; changing it re-renders. The front end's switch sets it.
    mode_labels : dict
        mode -> what the switch says (``MODE_LABELS``: "forward only", "with
        gradients", "with optimizer").
    collapse_all : bool
        Every top-level layer (``op_namescope``) drawn as one box ("layers as boxes").
    collapsed : list of str
        Namescopes drawn as boxes besides (``/fc_0/``).
    expanded : list of str
        Namescopes opened inside the boxes (drill-down).
    highlight : None, int or [block, op index]
        The op drawn emphasised (e.g. the op a debugger stopped at); changing it
        re-renders.
    selected : str
        Key of the node the user clicked: ``"op:<block>:<idx>"``,
        ``"var:<block>:<name>"`` or ``"group:<block>:<namescope>"`` (empty: nothing).
    error : str
        Why no SVG could be made (by the system ``dot`` or, set by the front end, by
        viz.js); empty otherwise.
    message : str
        Why the front end's last request (a double-click, say) changed nothing; empty
        after one that worked. Python callers get a FluidscopeError instead.
    height : int
        Pixel height of the view.
    details : dict
        What the details panel shows for ``selected`` (``details.node_details``: an op's
        type, attributes, inputs and outputs with shape, dtype and LoD, parameters,
        layer and source line; a variable's type, writers and readers; a layer's ops).
    query, found : str, list of str
        The last ``find`` and the drawn nodes it matched (best first); the front end
        marks them and pans to ``selected``, the match in view.
    current_note : str
        Set when the highlighted op is not drawn in this mode and another op stands in
        for it (a grad op's forward op); the front end shows it next to the mark.
    revision : int
        The program's revision drawn (``sync`` re-renders when it moves).
    internal_shown : bool
        Outputs kept for backward only are drawn (``show_internal_outputs``).
    details_auto : bool
        The details panel opens for a selection made from Python too (``select``); when
        False, only for a click or a search in the page (a DebuggerView's graph: its
        inspector shows what the debugger selects).
    """

    _esm = STATIC / "graph_view.js"
    _css = STATIC / "graph_view.css"

    dot = traitlets.Unicode("").tag(sync=True)
    svg = traitlets.Unicode("").tag(sync=True)
    renderer = traitlets.Unicode("auto").tag(sync=True)
    resolved_renderer = traitlets.Unicode("python").tag(sync=True)
    rendered_by = traitlets.Unicode("").tag(sync=True)
    render_ms = traitlets.Float(-1.0).tag(sync=True)
    mode = traitlets.Unicode("all").tag(sync=True)
    highlight = traitlets.Any(None, allow_none=True).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(480).tag(sync=True)
    mode_labels = traitlets.Dict(dict(MODE_LABELS)).tag(sync=True)
    collapse_all = traitlets.Bool(False).tag(sync=True)
    collapsed = traitlets.List(traitlets.Unicode()).tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    found = traitlets.List(traitlets.Unicode()).tag(sync=True)
    current_note = traitlets.Unicode("").tag(sync=True)
    revision = traitlets.Int(-1).tag(sync=True)
    internal_shown = traitlets.Bool(False).tag(sync=True)
    details_auto = traitlets.Bool(True).tag(sync=True)

    def __init__(self, program, mode=None, highlight=None, *, renderer="auto", collapse=None,
                 expand=None, **kwargs):
        self._program = program
        self._rendered = None
        self._found_at = 0
        mode, collapse = default_view(self._desc, mode, collapse, expand)
        kwargs.update(initial_layers(collapse, expand))
        known = render_option_names()
        self._options = {k: kwargs.pop(k) for k in list(kwargs) if k in known}
        unknown = [k for k in kwargs if not self.has_trait(k)]
        if unknown:
            raise FluidscopeError(
                f"GraphView: unknown option(s) {unknown}; render options are {list(known)}, "
                f"and widget traits such as 'height' are accepted too")
        self._has_viz_module = resolve_renderer(renderer) == "browser"
        if self._has_viz_module:  # sent at once, instead of the small module then this one
            kwargs["_esm"] = VIZ_MODULE.read_text(encoding="utf-8")
        self._rendering = True  # the observers wait until every trait is set
        super().__init__(mode=mode, highlight=highlight, renderer=renderer, **kwargs)
        self._rendering = False
        try:
            self.refresh()
        except FluidscopeError:
            self.close()  # the front end already has a model; do not leave it orphaned
            raise
        watch(self, "sync")

    @property
    def program(self):
        """The Program (or ProgramDesc) drawn."""
        return self._program

    @property
    def options(self) -> dict:
        """The ``program_to_dot`` options given (a copy; change them with ``set_options``)."""
        return dict(self._options)

    @property
    def _block(self) -> int:
        return self._options.get("block", 0)

    @property
    def _desc(self):
        return getattr(self._program, "desc", self._program)

    @property
    def _layers(self) -> Layers:
        return Layers(self.collapse_all, tuple(self.collapsed), tuple(self.expanded))

    # ----------------------------------------------------------- validation
    @traitlets.validate("mode")
    def _check_mode(self, proposal):
        if proposal["value"] not in MODES:
            raise FluidscopeError(
                f"GraphView: mode must be one of {list(MODES)}, got {proposal['value']!r}")
        return proposal["value"]

    @traitlets.validate("renderer")
    def _check_renderer(self, proposal):
        resolve_renderer(proposal["value"])
        return proposal["value"]

    @traitlets.validate("highlight")
    def _check_highlight(self, proposal):
        value = normalize_highlight(proposal["value"], self._block)
        # JSON-friendly: a plain op index in the drawn block, else [block, idx]
        if value is None or value[0] != self._block:
            return None if value is None else list(value)
        return value[1]

    @traitlets.validate("collapsed", "expanded")
    def _check_namescopes(self, proposal):
        where = f"GraphView.{proposal['trait'].name}"
        scopes = [known_layer(self._desc, s, where) for s in proposal["value"]]
        return list(dict.fromkeys(scopes))  # each once, in order

    @traitlets.observe("mode", "highlight", "renderer", "collapse_all", "collapsed", "expanded")
    def _rerender(self, change):
        if not self._rendering:
            self.refresh()

    @traitlets.observe("selected")
    def _show_details(self, change):
        try:
            self.details = node_details(self._desc, change["new"])
        except FluidscopeError:  # a key of a node gone with an edit: nothing to show
            self.details = {}

    # ----------------------------------------------------------- Python API
    def refresh(self):
        """Re-render ``dot`` (and ``svg`` when Python lays it out) from the program; call
        after editing the program."""
        rendered = render_program(self._program, mode=self.mode, highlight=self.highlight,
                                  **self._layers.program_to_dot_args(), **self._options)
        self._rendered, dot = rendered, rendered.dot
        resolved = resolve_renderer(self.renderer)
        svg, error = "", ""
        if resolved == "python" and not has_dot():
            error = _NO_DOT
        elif resolved == "python":
            try:
                svg = dot_to_svg(dot)
            except FluidscopeError as exc:  # keep the DOT view usable; say why
                error = str(exc)
        with self.hold_sync():
            if resolved == "browser" and not self._has_viz_module:
                # anywidget swaps the module of live views; the viz build draws both kinds
                self._esm = VIZ_MODULE.read_text(encoding="utf-8")
                self._has_viz_module = True
            self.dot, self.svg, self.error, self.resolved_renderer = dot, svg, error, resolved
            self.current_note = rendered.current_note
            self.internal_shown = bool(self._options.get("show_internal"))
            self.revision = getattr(self._program, "revision", self.revision)
            if self.selected:  # the program may have changed under the selection
                self._show_details({"new": self.selected})

    def sync(self):
        """Re-render when the program changed since it was drawn (its ``revision``
        moved); returns True when it did. Runs by itself after every notebook cell."""
        revision = getattr(self._program, "revision", None)
        if revision is None or revision == self.revision:
            return False
        self.refresh()
        return True

    def set_options(self, **options):
        """Change ``program_to_dot`` options (``rankdir="LR"``, ``block=1``, ...) and
        re-render. ``None`` drops an option back to ``program_to_dot``'s default. Nothing
        changes if the new options are rejected."""
        known = render_option_names()
        unknown = [k for k in options if k not in known]
        if unknown:
            hint = ("; layers fold with collapse(namescope) and open with expand(namescope)"
                    if {"collapse", "expand"} & set(unknown) else "")
            raise FluidscopeError(f"GraphView.set_options: unknown option(s) {unknown}; "
                                  f"known: {list(known)}{hint}")
        highlight = normalize_highlight(self.highlight, self._block)  # absolute, across blocks
        before = self._options
        self._options = {**before, **options}
        self._options = {k: v for k, v in self._options.items() if v is not None}
        self._rendering = True
        try:
            self.highlight = None if highlight is None else list(highlight)
            self.refresh()
        except FluidscopeError:
            self._options = before
            self.highlight = None if highlight is None else list(highlight)
            self.refresh()
            raise
        finally:
            self._rendering = False

    def set_renderer(self, renderer):
        """Lay the graph out with ``"python"`` (system ``dot``), ``"browser"``
        (WebAssembly Graphviz) or ``"auto"``."""
        self.renderer = renderer

    def set_mode(self, mode):
        """Draw forward ops only (``"forward"``), forward and backward
        (``"backward"``) or everything (``"all"``)."""
        self.mode = mode

    def set_highlight(self, highlight):
        """Emphasise an op: its index in the drawn block, ``(block, idx)``, or None."""
        self.highlight = highlight

    @action(show=bool)
    def show_internal_outputs(self, show=True):
        """Draw (True) or hide (False) the outputs ops keep only for their backward
        (XShape, SavedMean, ...)."""
        self.set_options(show_internal=bool(show) or None)

    # ------------------------------------------------------------ selection
    def select(self, name):
        """Select a node as if it were clicked.

        ``name``: a key (``"op:0:3"``, ``"var:0:fc_0.w_0"``, ``"group:0:fc_0"``), an op
        index in the drawn block, or a variable name (looked up in the drawn block and its
        parents). ``None`` or ``""`` clears the selection. Raises FluidscopeError for a
        node the program does not have."""
        self.selected = self._resolve(name)
        return self.selected

    def _resolve(self, name):
        desc = getattr(self._program, "desc", self._program)
        if name is None or name == "":
            return ""
        if isinstance(name, int) and not isinstance(name, bool):
            name = str(NodeKey.op(self._block, name))
        if not isinstance(name, str):
            raise FluidscopeError(f"GraphView.select: the program has no node {name!r}")
        node = NodeKey.find(name)
        block = (desc.blocks[node.block] if node is not None and node.block < len(desc.blocks)
                 else None)
        if block is not None and (
                (node.kind == "op" and node.index < len(block.ops))
                or (node.kind == "var" and _block_has_var(block, node.name))
                or (node.kind == "group" and block_has_layer(block, node.name))):
            return name
        if node is None:
            b = self._block
            while b >= 0:
                if any(v.name == name for v in desc.blocks[b].vars):
                    return str(NodeKey.var(b, name))
                b = desc.blocks[b].parent_idx
        raise FluidscopeError(f"GraphView.select: the program has no node {name!r}")


def _block_has_var(block, name):
    """Declared in ``block``, or used there undeclared (the graph still draws it)."""
    return any(v.name == name for v in block.vars) or any(
        name in v.arguments for op in block.ops for v in list(op.inputs) + list(op.outputs))


__all__ = ["GraphView", "RENDERERS", "LARGE_PROGRAM_OPS", "default_view", "drawn_op_count",
           "render_option_names", "resolve_renderer"]
