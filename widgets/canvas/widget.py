"""``DesignCanvas``: compose a model with the mouse in JupyterLab, over a Python ``Design``.

    canvas = DesignCanvas(path="model.fsdesign.json")   # or DesignCanvas(design=d)
    canvas                      # the editor, with the views it opens below it
    canvas.add_node("fc", 300, 40, source="x")          # what a drop from the palette does
    canvas.design.set("fc_0", size=32); canvas.refresh()

The design lives in Python (``canvas.design`` is the same ``Design`` object a cell
edits); the front end (js/src/canvas/) draws ``view`` and sends one action per gesture
(widgets/canvas/PROTOCOL.md). Every action is a public method here: it edits the design
through its public edit methods, rebuilds (``design.build(optimize=False)``: shapes and
per-node errors) and publishes a new ``view``. Edit actions are in ``gestures.py`` and
``zone_actions.py``; the ones that open other views or write files in ``run_actions.py``.

**Edits made from Python.** ``Design`` has no observer hook, so the canvas compares the
design with what it last drew: ``refresh()`` does it on demand, and inside a Jupyter
kernel it is done after every cell (IPython's ``post_run_cell`` event), so a cell that
edits ``canvas.design`` shows on the canvas when it finishes.

**Display.** Showing ``canvas`` shows the editor and, below it, ``canvas.panel``: the
views ``show_graph`` / ``train`` / ``debug`` open (one of each kind, the newest).
"""
from __future__ import annotations

import contextlib

import os
import time

import ipywidgets
import traitlets

from fluidscope.designer import Design

from ..base import STATIC, FluidscopeWidget, action
from .collector import COLLECTOR
from .debug_link import DebugLinkActions
from .describe import inspector_view
from .find_fold import FindFoldActions
from .gestures import EditActions
from .layout import PANE
from .menu_actions import MenuActions
from .node_views import NodeViewCache
from .persistence import DesignFile
from .run_actions import RunActions
from .view import canvas_view, palette_view
from .view_patch import view_patch
from . import zone_state
from .zone_actions import ZoneActions

_PANEL_ORDER = ("graph", "training", "debugger")
LAYOUT_ENGINE = STATIC / "design_canvas_layout.js"


class DesignCanvas(EditActions, ZoneActions, RunActions, MenuActions, DebugLinkActions,
                   FindFoldActions, FluidscopeWidget):
    """The design canvas (see the module docstring and PROTOCOL.md).

    Parameters
    ----------
    design : Design, optional
        The design to edit (default: a new empty one; ignored when ``path`` loads).
    path : str or Path, optional
        The design file: loaded when it exists, saved after every change (atomically;
        a file that does not load is reported and never overwritten).
    height : int
        Pixel height of the editor.

    Synced traits: ``view``, ``palette``, ``selected``, ``inspector``, ``code``,
    ``code_visible``, ``can_undo``, ``can_redo``, ``height``, ``message``, ``status``,
    ``layout_request`` (PROTOCOL.md). Python side: ``design``, ``build`` (the last
    forward build), ``panel``, ``reader`` / ``feed_names`` / ``feeder`` (what ``train``
    and ``debug`` feed), ``scope`` and ``executor`` (where weights live), ``file``,
    ``last_publish_ms`` (edit to new view, milliseconds).
    """

    _esm = STATIC / "design_canvas.js"
    _css = STATIC / "design_canvas.css"

    view = traitlets.Dict().tag(sync=True)
    palette = traitlets.List().tag(sync=True)
    selected = traitlets.List(traitlets.Unicode()).tag(sync=True)
    inspector = traitlets.Dict().tag(sync=True)
    code = traitlets.Unicode("").tag(sync=True)
    code_visible = traitlets.Bool(False).tag(sync=True)
    can_undo = traitlets.Bool(False).tag(sync=True)
    can_redo = traitlets.Bool(False).tag(sync=True)
    height = traitlets.Int(600).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    layout_request = traitlets.Int(0).tag(sync=True)
    found = traitlets.Dict().tag(sync=True)

    def __init__(self, design=None, path=None, height=600, **kwargs):
        self.file = DesignFile(path) if path is not None else None
        if design is not None and not isinstance(design, Design):
            raise TypeError(f"DesignCanvas: design must be a fluidscope Design, got "
                            f"{type(design).__name__}")
        self._design = self.file.open(design) if self.file else (design or Design())
        self._collapsed, self._path, self._unfolded = set(), [], set()
        self._collapsed, self._path = zone_state.restore(self._design)  # as saved
        self._unfolded = self._saved_unfolded()
        self._revision, self._drawn, self._pane = 0, None, None
        self._node_views = NodeViewCache()  # what the last view drew, reused per node
        self.build = None
        self.last_publish_ms = 0.0
        self.panel = ipywidgets.VBox()
        self._opened = {}
        self._init_run_state()
        super().__init__(height=height, palette=palette_view(), **kwargs)
        self._init_link()
        self._publish(saved="load")
        if self.file is not None and self.file.problem:
            self.report(self.file.problem)
        self._watch_cells()

    # ------------------------------------------------------------ the design
    @property
    def design(self) -> Design:
        """The Design this canvas edits (the same object a Python cell edits)."""
        return self._design

    @design.setter
    def design(self, design):
        if not isinstance(design, Design):
            raise TypeError(f"DesignCanvas.design must be a Design, got {type(design).__name__}")
        self._design = design
        self._collapsed, self._path, self._unfolded = set(), [], set()
        self._collapsed, self._path = zone_state.restore(self._design)  # as saved
        self._unfolded = self._saved_unfolded()
        self._publish()

    def refresh(self):
        """Redraw after edits made to ``design`` from Python (rebuilds and saves when the
        design changed since the canvas last drew it; cheap otherwise)."""
        if self._drawn is None or self._design.document != self._drawn:
            self._publish()

    def receive(self, content) -> bool:
        """A front-end gesture (see ``FluidscopeWidget.receive``), run with the objects that
        existed before it frozen: no full garbage collection lands inside it (collector.py)."""
        if isinstance(content, dict) and content.get("action") == "drawn":
            self.drawn()  # not a gesture: nothing changes, nor the message line
            return True
        with COLLECTOR.gesture():
            return super().receive(content)

    @action()
    def drawn(self):
        """The page drew the last view (sent a frame after each view arrives): the full
        garbage collection a paused edit left for that moment runs now (collector.py)."""
        COLLECTOR.view_drawn()

    # --------------------------------------------------- history and zones
    @action()
    def undo(self):
        self._design.undo()
        self._publish()

    @action()
    def redo(self):
        self._design.redo()
        self._publish()

    @action(ids=list)
    def select(self, ids):
        """The selection; the property panel shows the one selected node."""
        known = self._design.document.ids()
        self.selected = [i for i in ids if isinstance(i, str) and i in known]
        self.inspector = (inspector_view(self._design, self.selected[0])
                          if len(self.selected) == 1 else {})

    @action(group=str)
    def toggle_zone(self, group):
        """Collapse an expanded zone to one box, or expand a collapsed one."""
        self._group_node(group)
        self._collapsed ^= {group}
        self._publish(rebuild=False)

    @action(group=str)
    def enter(self, group):
        """Show the step of ``group`` alone (the breadcrumb leads back)."""
        self._group_node(group)
        chain, doc = [group], self._design.document
        while (owner := doc.locate(chain[0])[2]) is not None:
            chain.insert(0, owner.id)
        self._path = chain
        self._publish(rebuild=False)

    @action(depth=int)
    def leave(self, depth=0):
        """Back to breadcrumb level ``depth`` (0: the whole design)."""
        self._path = self._path[:max(0, depth)]
        self._publish(rebuild=False)

    @action()
    def auto_layout(self):
        """Ask the front end to lay the view out (it answers with ``move(layout=True)``)."""
        self.layout_request += 1

    def _should_send_property(self, key, value):
        # the view a patch carries is not sent whole (the front end applies the patch)
        if key == "view" and getattr(self, "_patching", False):
            return False
        return super()._should_send_property(key, value)

    @action()
    def resync(self):
        """Send the whole view (a front end that missed a patch asks for it)."""
        self.send_state("view")
        self._patched = False

    @action()
    def layout_engine(self):
        """Send the automatic layout's engine (elkjs, widgets/static/design_canvas_layout.js)
        to the front end, which asks for it once, at its first layout: the canvas's bundle
        and first paint do without its 1.4 MB. A binary message, never a trait, so a saved
        notebook does not carry it."""
        self.send({"kind": "layout_engine"}, [LAYOUT_ENGINE.read_bytes()])

    @action(visible=bool)
    def show_code(self, visible=True):
        """Show (and keep current) the generated Python, or hide it."""
        self.code_visible = visible
        self.code = self._design.to_python() if visible else ""

    # ------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs):
        # a VBox's front end draws its children's own views: the editor, then the panel
        return ipywidgets.VBox([self, self.panel])._repr_mimebundle_(**kwargs)

    def open_view(self, kind, widget):
        """Put ``widget`` in the panel below the canvas (replacing the last of ``kind``)."""
        self._opened[kind] = widget
        self.panel.children = tuple(self._opened[k] for k in _PANEL_ORDER if k in self._opened)
        return widget

    def close(self):
        self._unwatch_cells()
        if getattr(self, "debug_link", None) is not None:
            self.unlink_debugger()  # the session stops telling this canvas its stops
        if getattr(self, "file", None) is not None:  # close() also runs on a half-made one
            self.file.flush()
        super().close()

    # ------------------------------------------------------------ publishing
    @property
    def pane(self):
        """(width, height) px the default layout fits: the front end's (``set_pane``), else
        a JupyterLab notebook's for this ``height``."""
        return self._pane or (PANE[0], max(160, self.height - (600 - PANE[1])))

    def _publish(self, rebuild=True, saved="edit"):
        """Rebuild (unless only the layout or the ui changed), draw, save."""
        started = time.perf_counter()
        if rebuild or self.build is None:
            self.build = self._design.build(optimize=False)
            COLLECTOR.replaced_build()  # the old build's cycles: collected after the view
        self._revision += 1
        zone_state.store(self._design, self._collapsed, self._path)  # saved with it
        self._store_unfolded()
        ui = {"collapsed": sorted(self._collapsed), "path": self._path,
              "unfolded": sorted(self._unfolded), "revision": self._revision,
              "pane": self.pane}
        view = canvas_view(self._design, self.build, ui, self._node_views)
        known = self._design.document.ids()
        selected = [i for i in self.selected if i in known]
        # with a front end, a view that changed a little goes as a patch (view_patch.py)
        patch = view_patch(self.view, view) if self.comm is not None else None
        self._patching = patch is not None
        try:
            with self.hold_sync():
                if self._last_report and self.message == self._last_report:
                    self.message = ""  # a refused edit's message is old news now
                self._last_report = ""
                self.view = view
                self.can_undo, self.can_redo = self._design.can_undo, self._design.can_redo
                self.selected = selected
                self.inspector = (inspector_view(self._design, selected[0])
                                  if len(selected) == 1 else {})
                if self.code_visible:
                    self.code = self._design.to_python()
        finally:
            self._patching = False
        self._patched = patch is not None
        if patch is not None:
            self.send({"kind": "view_patch", **patch})
        self.last_publish_ms = (time.perf_counter() - started) * 1000
        # what refresh() compares with: a fork (new dicts over the same nodes, which no edit
        # changes in place: edits clone what they change) tells every later edit apart as
        # a full clone did, and compares in C by identity where nothing changed
        self._drawn = self._design.document.fork()
        if self.file is not None and saved != "load":
            if rebuild:
                self.file.save_now(self._design)
            else:
                self.file.save_soon(self._design)
        elif self.file is not None and self.file.writable and not os.path.exists(self.file.path):
            self.file.save_now(self._design)  # a new file: the starting design, at once

    # -------------------------------------------- edits made in notebook cells
    def _watch_cells(self):
        self._shell = None
        try:
            from IPython import get_ipython
        except ImportError:  # no IPython: scripts call refresh() themselves
            return
        shell = get_ipython()
        if shell is not None and getattr(shell, "kernel", None) is not None:
            shell.events.register("post_run_cell", self._after_cell)
            self._shell = shell

    def _unwatch_cells(self):
        if getattr(self, "_shell", None) is not None:
            # IPython raises ValueError when the hook is gone already (a reset shell):
            # there is then nothing left to unregister.
            with contextlib.suppress(ValueError):
                self._shell.events.unregister("post_run_cell", self._after_cell)
            self._shell = None

    def _after_cell(self, *_result):
        try:
            self.refresh()
            if getattr(self, "_patched", False):
                # once per cell, the whole view: what a notebook executed without a page
                # (nbclient) saves as the widget's state is never a view patches left behind
                self.resync()
        except Exception as exc:  # noqa: BLE001 - a cell's hook must not break the kernel
            self.report(f"refresh: {type(exc).__name__}: {exc}")
