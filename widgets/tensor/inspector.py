"""``TensorInspector``: one variable of a debugger session, its value beside its gradient.

The widget is thin over ``engine.debug.session.Session``: ``refresh()`` reads
``session.tensor(name)`` and ``session.tensor(name + "@GRAD")`` at the session's
position (inside a recurrent op, from the frame being viewed) and publishes
``summary.summarize`` of each. Only fixed-size summaries cross to the browser:
statistics are computed here over the whole tensor, the histogram counts, a binned
heatmap and the first values travel as binary buffers (``bytes`` fields inside the
``value`` / ``gradient`` dicts, which ipywidgets sends as buffers, not JSON).
"""
from __future__ import annotations

import traitlets

from fluidscope.engine.ir.names import GRAD_SUFFIX
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.place import to_host

from ..base import STATIC, FluidscopeWidget, action
from . import summary as tensor_summary



def read_tensor(session, name):
    """(state, what) for ``session.tensor(name)``: ("value", LoDTensor), ("unset",
    None), ("holder", the object), ("missing", the session's message: the program
    has no such variable) or ("error", why reading it failed)."""
    try:
        tensor = session.tensor(name)
    except FluidscopeError as exc:
        return "missing", str(exc)
    except Exception as exc:  # a value the session cannot hand out: say so, keep stepping
        return "error", f"{type(exc).__name__}: {exc}"
    if tensor is None or getattr(tensor, "value", True) is None:
        return "unset", None
    if not hasattr(tensor, "lod"):
        return "holder", tensor
    return "value", tensor


class TensorInspector(FluidscopeWidget):
    """The selected variable of ``session``: value and gradient side by side.

    Synced traits
    -------------
    variables : list of str
        ``session.variables()`` at the position (the front end's list to pick from).
    selected : str
        The variable shown ("" for none); set it with ``select``.
    value, gradient : dict
        What the two panes show. ``{"name", "state", ...}`` where ``state`` is
        ``"value"`` (then also ``place`` and every key of ``summary.summarize``:
        shape, dtype, size, lod, note, stats, histogram, heatmap, preview, sequences),
        ``"unset"`` (nothing has written it yet), ``"missing"`` (the program has no
        such variable, e.g. no gradient), ``"holder"`` (not a tensor, e.g. step
        scopes; ``type`` names it), ``"error"`` (reading it failed; ``error`` says
        why) or ``"none"`` (nothing selected).
    where : str
        The position the values were read at (the session's breadcrumb).
    frame : int or None
        The recurrent frame the values come from (``session.frame``: None outside a
        recurrent op, and just after one unless a frame was picked).
    message : str
        Why the last action failed ("" when it did not).
    version : int
        Counts refreshes; a front end or a browser test can wait on it.
    """

    _esm = STATIC / "tensor_inspector.js"
    _css = STATIC / "tensor_inspector.css"

    variables = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    value = traitlets.Dict().tag(sync=True)
    gradient = traitlets.Dict().tag(sync=True)
    where = traitlets.Unicode("").tag(sync=True)
    frame = traitlets.Int(None, allow_none=True).tag(sync=True)
    version = traitlets.Int(0).tag(sync=True)

    def __init__(self, session, selected="", *, bins=tensor_summary.HISTOGRAM_BINS,
                 cells=tensor_summary.HEATMAP_CELLS,
                 preview_values=tensor_summary.PREVIEW_VALUES,
                 sequence_limit=tensor_summary.SEQUENCE_ROWS, **kwargs):
        super().__init__(**kwargs)
        self._session = session
        self._caps = {"bins": int(bins), "cells": tuple(int(c) for c in cells),
                      "preview_values": int(preview_values),
                      "sequence_limit": int(sequence_limit)}
        if selected:
            self.select(selected)
        else:
            self.refresh()

    @property
    def session(self):
        """The debugger session read."""
        return self._session

    # ----------------------------------------------------------- Python API
    @action(name=(str, None))
    def select(self, name):
        """Show variable ``name`` ("" or None: nothing). An unknown name leaves the
        selection as it was and says why in ``message``; returns the selection."""
        name = name or ""
        if name:
            state, found = read_tensor(self._session, name)
            if state == "missing":
                self.message = f"select: {found}"
                return self.selected
        self.selected = name
        self.refresh()
        return self.selected

    @action()
    def refresh(self):
        """Read the selected variable again at the session's position (called by the
        DebuggerView after every step)."""
        session = self._session
        name = self.selected
        value = self.summary(name) if name else {"name": "", "state": "none"}
        gradient = ({"name": "", "state": "none"} if not name
                    else self.summary(name + GRAD_SUFFIX))
        with self.hold_sync():
            self.variables = session.variables()
            self.value, self.gradient = value, gradient
            self.where = session.position.breadcrumb()
            self.frame = session.frame
            self.message = ""
            self.version += 1

    def summary(self, name) -> dict:
        """The pane dict of ``name`` at the position (see the ``value`` trait)."""
        state, found = read_tensor(self._session, name)
        if state == "holder":
            return {"name": name, "state": state, "type": type(found).__name__}
        if state == "error":
            return {"name": name, "state": state, "error": found}
        if state != "value":
            return {"name": name, "state": state}
        tensor = found
        array = to_host(tensor.value)
        out = tensor_summary.summarize(array, tensor.lod(), **self._caps)
        out.update(name=name, state="value", place=str(tensor.place))
        return out


__all__ = ["TensorInspector", "read_tensor"]
