"""``DebuggerView``: step through a debugger session with the graph and tensors in view.

A ``DebuggerView`` is an ipywidgets ``VBox`` of three widgets over one
``engine.debug.session.Session``:

- ``controls`` (``DebuggerControls``, an anywidget): the buttons, the breadcrumb of the
  position, the stop reason, the frame slider and the breakpoint list. Its synced
  traits are the view's state (mirrored read-only on the DebuggerView itself).
- ``graph`` (a ``GraphView`` of the session's program): the op just run highlighted;
  clicking a variable (or an op: its first output) selects it in the inspector.
- ``inspector`` (a ``TensorInspector``): the selected variable's value and gradient.

Every action is a Python method (``step``, ``step_into``, ``step_out``, ``continue_``,
``back``, ``restart``, ``run_to``, breakpoints, ``select_frame``, ``select``); the front
end only sends their names. An action never raises a ``FluidscopeError`` (stepping
back at the start, an op that fails): the view keeps the text in ``message`` and shows
it, and the session stays where it was.

The view follows the session however it is driven: its own buttons and methods show
the new state at once; plain calls on the session (``sess.step()`` in a loop) reach it
through ``Session.listeners``, throttled (at most one redraw per ``follow_interval``
seconds, and never more than a fifth of the time), and whatever the throttle skipped is
shown when the cell ends (``sync``, run after every cell), so a loop of a thousand steps
pays for a few redraws, not a thousand. The graph keeps the current op in view and marks it
in every mode: an op the mode does not draw (a grad op under "forward only") is shown
on the op standing in for it (its forward op), with a note saying so.
"""
from __future__ import annotations

import contextlib
import time

import ipywidgets
import traitlets

from fluidscope.engine.errors import FluidscopeError

from ..base import action
from ..graph import GraphView
from ..keys import NodeKey
from ..tensor import TensorInspector, read_tensor
from .controls import DebuggerControls
from .follow import FollowsSession

# what a form field may send: a number, its text, or nothing ("" or null)
FIELD = (int, str, None)


class _Mirror:
    """A read-only attribute of the DebuggerView reading the same-named control trait."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, view, owner=None):
        return self if view is None else getattr(view.controls, self.name)


class DebuggerView(FollowsSession, ipywidgets.VBox):
    """Controls, graph and tensor inspector over a debugger ``session``.

    ``graph_options``: keyword arguments of the ``GraphView`` of ``session.program``
    (``renderer``, ``rankdir``, ``height``, ...); ``graph`` / ``inspector``: widgets to
    use instead of that GraphView and of ``TensorInspector(session)``.
    The state attributes (``position_text``, ``op_index``, ``frame``, ``frames``,
    ``breakpoints``, ``finished``, ``message``, ...) read the control bar's traits.
    """

    position_text, phase, block, op_index, op_type = (_Mirror() for _ in range(5))
    path, inside, frame, frames, frame_numbers = (_Mirror() for _ in range(5))
    upcoming_text, stop_reason, stop_var, finished = (_Mirror() for _ in range(4))
    history_depth, breakpoints, message, version = (_Mirror() for _ in range(4))

    def __init__(self, session, *, graph=None, inspector=None, graph_options=None, **kwargs):
        super().__init__(**kwargs)
        self._session = session
        desc = getattr(session.program, "desc", session.program)
        self._desc = desc
        self._op_types = sorted({op.type for b in desc.blocks for op in b.ops})
        self._var_names = sorted(
            {v.name for b in desc.blocks for v in b.vars}
            | {n for b in desc.blocks for op in b.ops
               for v in list(op.inputs) + list(op.outputs) for n in v.arguments})
        self.controls = DebuggerControls(op_types=self._op_types, var_names=self._var_names,
                                         handler=self)
        self.graph = (graph if graph is not None
                      else GraphView(session.program, **(graph_options or {})))
        if graph is None:  # the inspector shows what the view selects; clicks still open it
            self.graph.details_auto = False
        self.inspector = inspector if inspector is not None else TensorInspector(session)
        self.add_class("fs-dbg-view")
        self.children = [self.controls, self.graph, self.inspector]
        self._selecting = False
        self._init_following()
        self.graph.observe(self._on_graph_selected, names="selected")
        self.refresh()
        self._follow_session(session)

    @property
    def session(self):
        """The debugger session driven."""
        return self._session

    # ------------------------------------------------------------- stepping
    @action()
    def step(self):
        """Run the next op at the current level (a recurrent op whole)."""
        return self._act("step", self._session.step)

    @action()
    def step_into(self):
        """Run the next op, into a recurrent op's frames."""
        return self._act("step_into", self._session.step_into)

    @action()
    def step_out(self):
        """Run the rest of the recurrent op the session is in."""
        return self._act("step_out", self._session.step_out)

    @action()
    def continue_(self):
        """Run to the next breakpoint or the end."""
        return self._act("continue", self._session.continue_)

    @action()
    def back(self):
        """Undo the last op (time travel)."""
        return self._act("back", self._session.back)

    @action()
    def restart(self):
        """Back to the start of the run."""
        return self._act("restart", self._session.restart)

    def run_to(self, op_index=None, op_type=None, frame=None, block=None):
        """Run until an op matching every criterion given has run (see Session.run_to)."""
        return self._act("run_to", self._session.run_to, op_index=op_index, op_type=op_type,
                         frame=frame, block=block)

    # ---------------------------------------------------------- breakpoints
    @action(op_type=(str, None), op_index=FIELD, var=(str, None), frame=FIELD, nan_inf=bool,
            block=FIELD)
    def add_breakpoint(self, op_type=None, op_index=None, var=None, frame=None,
                       nan_inf=False, block=None):
        """Stop after an op matching every criterion given (form fields: "" = any).
        Returns the Breakpoint, or None when the criteria are wrong (see ``message``)."""
        return self._act("add_breakpoint", self._add_breakpoint, op_type, op_index, var, frame,
                         nan_inf, block)

    @action(id=(int, str))
    def remove_breakpoint(self, id):
        """Remove breakpoint ``id``."""
        return self._act("remove_breakpoint",
                         lambda: self._session.remove_breakpoint(_as_int(id, "id")))

    @action(id=(int, str))
    def toggle_breakpoint(self, id):
        """Enable a disabled breakpoint, disable an enabled one; returns it."""
        return self._act("toggle_breakpoint", self._toggle_breakpoint, id)

    @action()
    def clear_breakpoints(self):
        """Remove every breakpoint."""
        return self._act("clear_breakpoints", self._session.clear_breakpoints)

    @action()
    def toggle_breakpoint_here(self):
        """Add a breakpoint on the op ``step_into`` runs next, or remove the one there."""
        return self._act("toggle_breakpoint_here", self._toggle_here)

    # ------------------------------------------------------------- viewing
    @action(t=FIELD)
    def select_frame(self, t):
        """Read frame ``t`` of the recurrent op in view (the inspector follows); None:
        the current frame, or the whole sequences just after the op."""
        return self._act("select_frame", lambda: self._session.view_frame(_as_int(t, "frame")))

    @action(name=(str, None))
    def select(self, name):
        """Inspect variable ``name`` (and select its node in the graph when drawn)."""
        if self._selecting:
            return self.inspector.selected
        self._selecting = True
        try:
            chosen = self.inspector.select(name)
            if self.inspector.message:
                self._say(self.inspector.message)
            else:
                self._select_in_graph(chosen)
            return chosen
        finally:
            self._selecting = False

    def refresh(self):
        """Show the session's state again (after driving it directly from Python)."""
        self._show(message="")

    # ------------------------------------------------------------ internals
    def _act(self, what, call, *args, **kwargs):
        self._acting = True
        try:
            result = call(*args, **kwargs)
        except FluidscopeError as exc:
            text = str(exc)
            self._show(message=text if text.startswith(what) else f"{what}: {text}")
            return None
        finally:
            self._acting = False
        self._show(message="")
        return result

    def _add_breakpoint(self, op_type, op_index, var, frame, nan_inf, block):
        op_type, var = _blank_to_none(op_type), _blank_to_none(var)
        op_index, frame = _as_int(op_index, "op index"), _as_int(frame, "frame")
        block = _as_int(block, "block")
        if op_type is not None and op_type not in self._op_types:
            raise FluidscopeError(f"no op of type '{op_type}' in the program; its op types: "
                                  f"{', '.join(self._op_types)}")
        if var is not None and var not in self._var_names:
            raise FluidscopeError(f"the program has no variable '{var}'")
        if op_index is not None:
            b = block or 0
            if not 0 <= b < len(self._desc.blocks):
                raise FluidscopeError(f"no block {b}; the program has {len(self._desc.blocks)}")
            count = len(self._desc.blocks[b].ops)
            if not 0 <= op_index < count:
                raise FluidscopeError(f"block {b} has ops #0..#{count - 1}, not #{op_index}")
        return self._session.break_on(op_type=op_type, op_index=op_index, var=var, frame=frame,
                                      nan_inf=bool(nan_inf), block=block)

    def _find_breakpoint(self, id):
        bp_id = _as_int(id, "id")
        found = next((b for b in self._session.breakpoints if b.id == bp_id), None)
        if found is None:
            raise FluidscopeError(f"no breakpoint {bp_id}; there are "
                                  f"{[b.id for b in self._session.breakpoints]}")
        return found

    def _toggle_breakpoint(self, id):
        bp = self._find_breakpoint(id)
        bp.enabled = not bp.enabled
        return bp

    def _toggle_here(self):
        up = self._session.upcoming
        if up is None:
            raise FluidscopeError("the run is finished: there is no next op")
        for bp in self._session.breakpoints:
            if (bp.op_index, bp.block) == (up.op_index, up.block) and not (
                    bp.op_type or bp.var or bp.frame is not None or bp.condition or bp.nan_inf):
                self._session.remove_breakpoint(bp)
                return None
        return self._session.break_on(op_index=up.op_index, block=up.block)

    def _show(self, message):
        started = time.perf_counter()
        session = self._session
        pos = session.position
        frames = session.frames
        upcoming = session.upcoming
        with self.controls.hold_sync():
            c = self.controls
            c.position_text, c.phase = pos.breadcrumb(), pos.phase
            c.block, c.op_index, c.op_type = pos.block, pos.op_index, pos.op_type or ""
            c.path, c.inside = [list(p) for p in pos.path], pos.parent is not None
            c.frame, c.frames = session.frame, len(frames)
            c.frame_numbers = [f.t for f in frames]
            c.upcoming_text = upcoming.breadcrumb() if upcoming is not None else ""
            c.stop_reason, c.stop_var = session.stop_reason or "", _stop_var(session)
            c.finished, c.history_depth = session.finished, session.history_depth
            c.breakpoints = [_breakpoint_dict(bp) for bp in session.breakpoints]
            c.message = message
            c.version += 1
        self._highlight(pos.path)
        self._follow(pos, _stop_var(session))
        self._shown_now(started)

    def _say(self, message):
        """Show ``message`` alone (the version bump also ends the front end's busy state)."""
        self.controls.report(message)

    def _highlight(self, path):
        """The full path when the GraphView takes one, else the innermost op."""
        candidates = [[tuple(p) for p in path], tuple(path[-1])] if path else [None]
        for candidate in candidates:
            try:
                self.graph.highlight = candidate
                return
            except (FluidscopeError, traitlets.TraitError):
                continue

    def _follow(self, pos, stop_var):
        """Inspect what a NaN/Inf breakpoint named, or the op's output when nothing is
        selected yet; else read the selected variable again."""
        wanted = stop_var or (None if self.inspector.selected else self._first_output(pos))
        if wanted and wanted != self.inspector.selected:
            self.select(wanted)
        else:
            self.inspector.refresh()

    def _first_output(self, pos):
        if pos.op_index is None:
            return None
        op = self._desc.blocks[pos.block].ops[pos.op_index]
        return next((n for v in op.outputs for n in v.arguments
                     if read_tensor(self._session, n)[0] == "value"), None)

    def _select_in_graph(self, name):
        # A variable of a block the graph does not draw by name: keep the inspector's choice.
        with contextlib.suppress(FluidscopeError):
            self.graph.select(name)

    def _on_graph_selected(self, change):
        node = NodeKey.find(change["new"])
        if node is not None and node.kind == "var":
            self.select(node.name)
        elif node is not None and node.kind == "op":
            op = self._desc.blocks[node.block].ops[node.index]
            outputs = [n for v in op.outputs for n in v.arguments]
            if outputs:
                self.select(outputs[0])


def _blank_to_none(value):
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value.strip() if isinstance(value, str) else value


def _as_int(value, what):
    """An int from a form field (None / "" stay None); a clear error otherwise."""
    value = _blank_to_none(value)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    raise FluidscopeError(f"{what} must be a whole number, got {value!r}")


def _stop_var(session):
    """The variable a NaN/Inf breakpoint named, if that is why the session stopped last
    (the session keeps ``stop_var`` across later plain steps)."""
    if session.stop_var and (session.stop_reason or "").startswith("breakpoint"):
        return session.stop_var
    return ""


def _breakpoint_dict(bp):
    return {"id": bp.id, "enabled": bool(bp.enabled), "hits": int(bp.hits),
            "description": bp.describe(), "op_type": bp.op_type, "op_index": bp.op_index,
            "block": bp.block, "var": bp.var, "frame": bp.frame, "nan_inf": bool(bp.nan_inf),
            "condition": None if bp.condition is None
            else getattr(bp.condition, "__name__", "condition")}


__all__ = ["DebuggerView"]
