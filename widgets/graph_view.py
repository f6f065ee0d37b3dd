"""``GraphView``: the program graph in a notebook, as a thin anywidget.

All logic is in Python: ``render.program_to_dot`` makes the DOT text, and Python decides
who lays it out (the ``renderer`` trait): the system ``dot`` ("python", the SVG is sent in
``svg``) or Graphviz compiled to WebAssembly in the browser ("browser", only ``dot`` is
sent). "auto" picks "python" when ``dot`` is installed and "browser" otherwise, so a
machine without Graphviz still shows the graph, with no network.

The front end (built from ``js/src/graph_view.js``) only shows the SVG, zooms and pans it,
reports the node the user clicked in ``selected``, and reports how the graph got on screen
in ``rendered_by`` / ``render_ms`` / ``error``. Two builds of it exist: ``graph_view.js``
(9 KB) and ``graph_view_viz.js`` (the same plus viz.js, about 630 KB); a view is sent the
large one only once it needs to lay a graph out in the browser.
"""
from __future__ import annotations

import inspect
import pathlib

import anywidget
import traitlets

from fluidscope.engine.errors import FluidscopeError

from .render import (MODES, dot_to_svg, has_dot, normalize_highlight, op_key,
                     program_to_dot, var_key)

STATIC = pathlib.Path(__file__).parent / "static"
VIZ_MODULE = STATIC / "graph_view_viz.js"
RENDERERS = ("auto", "python", "browser")
_OWN_ARGUMENTS = ("program", "mode", "highlight")  # program_to_dot arguments GraphView owns
_NO_DOT = ("renderer='python' needs Graphviz's `dot` program, which is not installed here; "
           "use renderer='auto' or 'browser' to lay the graph out in the browser, or install "
           "Graphviz (apt-get install graphviz, brew install graphviz, conda install graphviz)")


def render_option_names() -> tuple:
    """Keyword options of ``program_to_dot`` that GraphView passes through (read from its
    signature, so options added there work here unchanged)."""
    params = inspect.signature(program_to_dot).parameters
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


class GraphView(anywidget.AnyWidget):
    """Interactive graph of a Program (or ProgramDesc).

    ``GraphView(program, mode="all", highlight=None, renderer="auto", **options)``:
    ``options`` are ``program_to_dot``'s keyword options (``block``, ``show_shapes``,
    ``rankdir``, ...) or widget traits such as ``height``.

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
        Which ops are drawn; changing it re-renders.
    highlight : None, int or [block, op index]
        The op drawn emphasised (e.g. the op a debugger stopped at); changing it
        re-renders.
    selected : str
        Key of the node the user clicked: ``"op:<block>:<idx>"``,
        ``"var:<block>:<name>"`` or ``"group:<block>:<namescope>"`` (empty: nothing).
    error : str
        Why no SVG could be made (by the system ``dot`` or, set by the front end, by
        viz.js); empty otherwise.
    height : int
        Pixel height of the view.
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

    def __init__(self, program, mode="all", highlight=None, *, renderer="auto", **kwargs):
        self._program = program
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

    @traitlets.observe("mode", "highlight", "renderer")
    def _rerender(self, change):
        if not self._rendering:
            self.refresh()

    # ----------------------------------------------------------- Python API
    def refresh(self):
        """Re-render ``dot`` (and ``svg`` when Python lays it out) from the program; call
        after editing the program."""
        dot = program_to_dot(self._program, mode=self.mode, highlight=self.highlight,
                             **self._options)
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

    def set_options(self, **options):
        """Change ``program_to_dot`` options (``rankdir="LR"``, ``block=1``, ...) and
        re-render. ``None`` drops an option back to ``program_to_dot``'s default. Nothing
        changes if the new options are rejected."""
        known = render_option_names()
        unknown = [k for k in options if k not in known]
        if unknown:
            raise FluidscopeError(
                f"GraphView.set_options: unknown option(s) {unknown}; known: {list(known)}")
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
            name = op_key(self._block, name)
        if not isinstance(name, str):
            raise FluidscopeError(f"GraphView.select: the program has no node {name!r}")
        kind, _, rest = name.partition(":")
        b, _, item = rest.partition(":")
        block = desc.blocks[int(b)] if b.isdigit() and int(b) < len(desc.blocks) else None
        if kind == "op" and block is not None and item.isdigit() and int(item) < len(block.ops):
            return name
        if kind == "var" and block is not None and _block_has_var(block, item):
            return name
        if kind == "group" and block is not None and _block_has_namescope(block, item):
            return name
        if kind not in ("op", "var", "group"):
            b = self._block
            while b >= 0:
                if any(v.name == name for v in desc.blocks[b].vars):
                    return var_key(b, name)
                b = desc.blocks[b].parent_idx
        raise FluidscopeError(f"GraphView.select: the program has no node {name!r}")


def _block_has_var(block, name):
    """Declared in ``block``, or used there undeclared (the graph still draws it)."""
    return any(v.name == name for v in block.vars) or any(
        name in v.arguments for op in block.ops for v in list(op.inputs) + list(op.outputs))


def _block_has_namescope(block, namescope):
    """Some op of ``block`` was made inside layer ``namescope``: ``op_namescope`` is a path
    such as ``/fc_0/`` or ``/head/fc_1/``, and a group key names it or a leading part of
    it (``head``), with or without the slashes, optionally followed by ``@GRAD`` or
    ``@OPT`` (the group of that layer's grad or optimizer ops)."""
    for phase in ("@GRAD", "@OPT"):
        if namescope.endswith(phase):
            namescope = namescope[:-len(phase)]
            break
    wanted = namescope.strip("/")
    if not wanted:
        return False
    for op in block.ops:
        for attr in op.attrs:
            if attr.name == "op_namescope":
                path = attr.s.strip("/")
                if path == wanted or path.startswith(wanted + "/"):
                    return True
    return False


__all__ = ["GraphView", "RENDERERS", "render_option_names", "resolve_renderer"]
