"""``TensorInspector``: one variable of a debugger session, its value beside its gradient.

The widget is thin over ``engine.debug.session.Session``: ``refresh()`` reads
``session.tensor(name)`` and ``session.tensor(name + "@GRAD")`` at the session's
position (inside a recurrent op, from the frame being viewed) and publishes
``summary.summarize`` of each. Only fixed-size summaries cross to the browser:
statistics are computed here over the whole tensor, the histogram counts, a binned
heatmap and the first values travel as binary buffers (``bytes`` fields inside the
``value`` / ``gradient`` dicts, which ipywidgets sends as buffers, not JSON).

Beyond one value: the variable list grouped (``groups``), a 4-D tensor's channels as an
image grid for one sample (``set_sample``), the change since the previous stop
(``difference``), the value written to a ``.npy`` file (``save_npy``) and a float64
check of a parameter's gradient (``check_gradient``). Each is a method the front end's
controls call.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import traitlets

from fluidscope.engine.ir.names import GRAD_SUFFIX
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.place import to_host

from ..base import STATIC, FluidscopeWidget, action
from . import summary as tensor_summary
from .feature_maps import feature_grid
from .gradient_check import SAMPLES, check_parameter_gradient
from .groups import group_variables

CHECK_ROWS_SHOWN = 12   # rows of a gradient check the front end lists



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
        ``session.variables()`` at the position (every name, ungrouped).
    groups : dict
        The same names split by ``groups.group_variables``: "activations",
        "parameters", "gradients", "optimizer state" (folded away unless
        ``show_optimizer_state``).
    selected : str
        The variable shown ("" for none); set it with ``select``.
    value, gradient : dict
        What the two panes show. ``{"name", "state", ...}`` where ``state`` is
        ``"value"`` (then also ``place``, ``feature_maps`` (``feature_grid`` of sample
        ``sample`` for a 4-D tensor, else None) and every key of ``summary.summarize``:
        shape, dtype, size, lod, note, stats, histogram, heatmap, preview, sequences),
        ``"unset"`` (nothing has written it yet), ``"missing"`` (the program has no
        such variable, e.g. no gradient), ``"holder"`` (not a tensor, e.g. step
        scopes; ``type`` names it), ``"error"`` (reading it failed; ``error`` says
        why) or ``"none"`` (nothing selected).
    difference : dict
        The selected value now less its value at the previous stop: ``{"state":
        "value", "since", "changed", ...summarize keys}``, or ``{"state": "none",
        "reason"}`` when there is nothing to compare (first stop, unset, a new shape).
    show_difference, show_optimizer_state : bool
        The front end's toggles (``set_show_difference``, ``set_show_optimizer_state``).
    sample : int
        The sample of a 4-D tensor drawn as feature maps (``set_sample``).
    gradient_check : dict
        The last ``check_gradient`` result (its first ``CHECK_ROWS_SHOWN`` rows), {}
        before one.
    saved : str
        The path the last ``save_npy`` wrote ("" before one).
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
    groups = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    value = traitlets.Dict().tag(sync=True)
    gradient = traitlets.Dict().tag(sync=True)
    difference = traitlets.Dict().tag(sync=True)
    show_difference = traitlets.Bool(False).tag(sync=True)
    show_optimizer_state = traitlets.Bool(False).tag(sync=True)
    sample = traitlets.Int(0).tag(sync=True)
    gradient_check = traitlets.Dict().tag(sync=True)
    saved = traitlets.Unicode("").tag(sync=True)
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
        # (position key, name, host array or None) of the last two stops read
        self._current = self._previous = None
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
        if name != self.selected:
            self.sample, self.gradient_check = 0, {}
        self.selected = name
        self.refresh()
        return self.selected

    @action()
    def refresh(self):
        """Read the selected variable again at the session's position (called by the
        DebuggerView after every step)."""
        session = self._session
        name = self.selected
        self._remember(name)
        value = self.summary(name) if name else {"name": "", "state": "none"}
        gradient = ({"name": "", "state": "none"} if not name
                    else self.summary(name + GRAD_SUFFIX))
        names = session.variables()
        with self.hold_sync():
            self.variables = names
            self.groups = group_variables(names, session.plan.var_descs)
            self.value, self.gradient = value, gradient
            self.difference = self._difference()
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
        sample = self.sample if array.ndim == 4 and self.sample < array.shape[0] else 0
        out.update(name=name, state="value", place=str(tensor.place),
                   feature_maps=feature_grid(array, sample))
        return out

    @action(sample=int)
    def set_sample(self, sample):
        """Draw sample ``sample`` of a 4-D (NCHW) value as its channels' images."""
        array = self.array()
        if array is None or array.ndim != 4:
            shape = None if array is None else list(array.shape)
            raise FluidscopeError(f"set_sample: '{self.selected}' is not a 4-D (NCHW) tensor "
                                  f"here (shape {shape})")
        feature_grid(array, sample)  # range check, with the message
        self.sample = int(sample)
        self.refresh()
        return self.sample

    @action(on=bool)
    def set_show_difference(self, on=True):
        """Show the change of the value since the previous stop (the "diff" box)."""
        self.show_difference = bool(on)

    @action(on=bool)
    def set_show_optimizer_state(self, on=True):
        """List the optimizer's state (moments, beta powers, learning rate) too."""
        self.show_optimizer_state = bool(on)

    def array(self, which="value"):
        """The selected variable's value (``which="gradient"``: its gradient) at the
        position as a numpy array, or None when it has none."""
        if which not in ("value", "gradient"):
            raise FluidscopeError(f"which must be 'value' or 'gradient', got {which!r}")
        if not self.selected:
            return None
        name = self.selected + (GRAD_SUFFIX if which == "gradient" else "")
        state, tensor = read_tensor(self._session, name)
        return np.array(to_host(tensor.value)) if state == "value" else None

    @action(path=(str, None), which=str)
    def save_npy(self, path=None, which="value"):
        """Write the selected value (or its gradient) with ``numpy.save`` (no pickles);
        returns the path. ``path`` defaults to the variable's name, made file-safe, with
        ".npy" in the working directory."""
        array = self.array(which)
        if array is None:
            raise FluidscopeError(f"save_npy: '{self.selected or '(none)'}' has no {which} "
                                  f"at {self._session.position.breadcrumb()}")
        if not path:
            stem = self.selected + ("@GRAD" if which == "gradient" else "")
            path = re.sub(r"[^A-Za-z0-9._-]+", "_", stem) + ".npy"
        target = pathlib.Path(path)
        np.save(target, array, allow_pickle=False)
        self.saved = str(target)
        return str(target)

    @action(samples=int)
    def check_gradient(self, samples=SAMPLES):
        """Check the selected parameter's gradient at this stop: float64 central
        differences against the generated backward (``gradient_check``), on at most
        ``samples`` elements. Returns the full result; FluidscopeError when the
        selection is no parameter."""
        if not self.selected:
            raise FluidscopeError("check_gradient: select a parameter first")
        result = check_parameter_gradient(self._session, self.selected, samples=samples)
        self.gradient_check = {**result, "rows": result["rows"][:CHECK_ROWS_SHOWN]}
        return result

    # ------------------------------------------------------------- internals
    def _remember(self, name):
        """Keep the value at this stop and the one at the stop before (same variable)."""
        key = (self._session.position.breadcrumb(), self._session.frame)
        array = self.array() if name else None
        entry = (key, name, None if array is None else array.copy())
        if self._current is None or self._current[1] != name:
            self._previous = None
        elif self._current[0] != key:
            self._previous = self._current
        self._current = entry

    def _difference(self) -> dict:
        current, previous = self._current, self._previous
        if current is None or not current[1]:
            return {"state": "none", "reason": "nothing selected"}
        if previous is None or previous[2] is None:
            return {"state": "none", "reason": "no value at a previous stop yet: step on"}
        now, before = current[2], previous[2]
        if now is None:
            return {"state": "none", "reason": "no value at this stop"}
        if now.shape != before.shape or now.dtype.kind not in "fiub":
            return {"state": "none", "reason": f"shape {list(before.shape)} then "
                                                 f"{list(now.shape)}: nothing to subtract"}
        with np.errstate(invalid="ignore", over="ignore"):
            delta = now.astype(np.float64) - before.astype(np.float64)
        out = tensor_summary.summarize(delta, None, **self._caps)
        out.update(state="value", name=f"{current[1]} − previous", since=previous[0][0],
                   changed=int(np.count_nonzero(delta)))
        return out


__all__ = ["TensorInspector", "read_tensor"]
