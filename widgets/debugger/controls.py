"""``DebuggerControls``: the control bar of a ``DebuggerView`` (an anywidget holding the
view's state as synced traits; the view does the work)."""
from __future__ import annotations

import traitlets

from ..base import STATIC, FluidscopeWidget


class DebuggerControls(FluidscopeWidget):
    """The control bar of a ``DebuggerView`` (state only; the view does the work).

    Synced traits
    -------------
    position_text : str      the breadcrumb, e.g. 'block 0 › #0 recurrent › frame 2 ›
                             block 1 › #3 elementwise_add' ('block 0 › start' at first)
    phase : str              'forward', 'backward' or 'optimize'
    block, op_index, op_type the op just run (op_index None at the start)
    path : list              [[block, op index], ...] outermost first (Position.path)
    inside : bool            inside a recurrent op (``step_out`` possible)
    frame : int or None      the frame the inspector reads (``session.frame``; None just
                             after a recurrent op: its outputs read as whole sequences)
    frames : int             how many frames the recurrent op in view has run
    frame_numbers : list     those frames' numbers, in the order they ran
    upcoming_text : str      breadcrumb of the op ``step_into`` runs next ("" at the end)
    stop_reason, stop_var    why the session stopped, the var a NaN/Inf breakpoint named
    finished : bool          the run is complete
    history_depth : int      how many ``back`` steps are possible
    breakpoints : list       one dict per breakpoint: id, enabled, hits, description,
                             op_type, op_index, block, var, frame, nan_inf, condition
    op_types, var_names      the program's op types and variable names (form hints)
    message : str            why the last action failed ("" when it did not)
    version : int            counts updates; a browser test can wait on it
    """

    _esm = STATIC / "debugger_view.js"
    _css = STATIC / "debugger_view.css"

    position_text = traitlets.Unicode("").tag(sync=True)
    phase = traitlets.Unicode("forward").tag(sync=True)
    block = traitlets.Int(0).tag(sync=True)
    op_index = traitlets.Int(None, allow_none=True).tag(sync=True)
    op_type = traitlets.Unicode("").tag(sync=True)
    path = traitlets.List().tag(sync=True)
    inside = traitlets.Bool(False).tag(sync=True)
    frame = traitlets.Int(None, allow_none=True).tag(sync=True)
    frames = traitlets.Int(0).tag(sync=True)
    frame_numbers = traitlets.List(traitlets.Int()).tag(sync=True)
    upcoming_text = traitlets.Unicode("").tag(sync=True)
    stop_reason = traitlets.Unicode("").tag(sync=True)
    stop_var = traitlets.Unicode("").tag(sync=True)
    finished = traitlets.Bool(False).tag(sync=True)
    history_depth = traitlets.Int(0).tag(sync=True)
    breakpoints = traitlets.List(traitlets.Dict()).tag(sync=True)
    op_types = traitlets.List(traitlets.Unicode()).tag(sync=True)
    var_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    version = traitlets.Int(0).tag(sync=True)

    def report(self, text):
        """Show ``text``; the version bump also ends the front end's busy state."""
        with self.hold_sync():
            super().report(text)
            self.version += 1


__all__ = ["DebuggerControls"]
