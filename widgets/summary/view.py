"""``SummaryView``: the widget form of ``fd.summary(program)``.

Thin over ``fluidscope.designer.summary``: Python makes the ``ModelSummary`` and copies its
cells into synced traits (``columns``, ``rows``, ``totals``, ``uncounted``); the front end
(built from ``js/src/summary_view.js``) only draws the table and sends two actions, each a
public method here: ``group_by("layer" | "op")`` and ``set_batch_size(n)``. ``refresh()``
reads the program again after it changed.
"""
from __future__ import annotations

import traitlets

from fluidscope.designer.summary import ModelSummary, summary

from ..base import STATIC, FluidscopeWidget, action


class SummaryView(FluidscopeWidget):
    """A model summary table: one row per layer (or op), totals at the bottom.

    Synced traits: ``columns`` (header cells), ``rows`` (cells, strings, one list per
    row), ``totals`` (label -> text), ``uncounted`` (op types counted as 0 MACs by the
    default rule), ``by`` ("layer" or "op"), ``batch_size`` (what a -1 dim counts as in
    MACs). ``summary``: the ModelSummary shown, for code."""
    _esm = STATIC / "summary_view.js"
    _css = STATIC / "summary_view.css"

    columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    rows = traitlets.List(traitlets.List(traitlets.Unicode())).tag(sync=True)
    totals = traitlets.Dict().tag(sync=True)
    uncounted = traitlets.List(traitlets.Unicode()).tag(sync=True)
    by = traitlets.Unicode("layer").tag(sync=True)
    batch_size = traitlets.Int(1).tag(sync=True)

    def __init__(self, program, batch_size=1, by="layer", **kwargs):
        super().__init__(**kwargs)
        self.program = program
        self.summary: ModelSummary = summary(program, batch_size, by)
        self._show(self.summary)

    @action(by=str)
    def group_by(self, by):
        """One row per layer (``"layer"``) or per forward op (``"op"``)."""
        self._show(summary(self.program, self.batch_size, by))

    @action(batch_size=int)
    def set_batch_size(self, batch_size):
        """Count MACs for ``batch_size`` rows where a dim is unknown (-1)."""
        self._show(summary(self.program, batch_size, self.by))

    @action()
    def refresh(self):
        """Read the program again (after layers were added or changed)."""
        self._show(summary(self.program, self.batch_size, self.by))

    def _show(self, made: ModelSummary):
        self.summary = made
        data = made.to_dict()
        with self.hold_sync():
            self.columns, self.rows, self.totals = data["columns"], data["rows"], data["totals"]
            self.uncounted, self.by, self.batch_size = data["uncounted"], made.by, made.batch_size

    def __repr__(self):
        return f"SummaryView({self.summary!r})"


__all__ = ["SummaryView"]
