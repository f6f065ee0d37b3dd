"""A canvas's design file: opened at start, saved after changes, never lost.

``DesignFile(path)`` decides what the canvas starts from and when it writes:

* the file exists and loads: the canvas shows it (``design=`` is then ignored);
* the file does not exist: the canvas starts from ``design=`` (or empty) and writes it;
* the file exists but does not load (bad JSON, a version from the future, an unknown
  layer): the problem is reported and the file is **never written**, so nothing the user
  had is overwritten by an empty design; the canvas still works, unsaved.

Writes use ``Design.save`` (temporary file + rename: a failure leaves the old file).
A change of the model (an undo step) is written at once; a layout-only change (a drag)
at most every ``DEBOUNCE_S`` seconds, the last one always written: later when an event
loop is running (a kernel), else at once.
"""
from __future__ import annotations

import asyncio
import os
import time

from fluidscope.designer import Design
from fluidscope.engine import FluidscopeError

DEBOUNCE_S = 0.5


class DesignFile:
    """The file behind a canvas (see the module docstring). ``problem``: why it did not
    load (then nothing is written), or ""."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.problem = ""
        self._last_write = 0.0
        self._pending = None      # the design whose layout waits for its write
        self._timer = None

    def open(self, design=None):
        """The design to show: the file's, else ``design``, else an empty one."""
        if os.path.exists(self.path):
            try:
                return Design.load(self.path)
            except (FluidscopeError, OSError, ValueError) as exc:
                self.problem = (f"{self.path} did not load, so the canvas will not save over "
                                f"it: {exc}")
        return design if design is not None else Design()

    @property
    def writable(self):
        return not self.problem

    def save_now(self, design):
        """Write ``design`` (unless the file is one that did not load)."""
        self._pending = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.writable:
            return False
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        design.save(self.path)
        self._last_write = time.monotonic()
        return True

    def save_soon(self, design):
        """Write a layout change, at most every DEBOUNCE_S seconds (see the module
        docstring)."""
        if not self.writable:
            return
        wait = DEBOUNCE_S - (time.monotonic() - self._last_write)
        loop = _running_loop()
        if wait <= 0 or loop is None:
            self.save_now(design)
            return
        self._pending = design
        if self._timer is None:
            self._timer = loop.call_later(wait, self.flush)

    def flush(self):
        """Write a pending layout change now (e.g. before the kernel stops)."""
        self._timer = None
        if self._pending is not None:
            self.save_now(self._pending)


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: scripts and tests write at once
        return None
