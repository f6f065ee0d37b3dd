"""Python's cyclic garbage collector kept out of a canvas gesture's way (issue #16 item 4).

A full collection walks every tracked object of the process: at 1,000 layers about 100 ms
of CPU in a bare process (the design, its builds, views and history, and everything
imported), 100-330 ms in a Jupyter kernel (2-core machine, load 2.8-3.5). Each gesture
leaves a few thousand objects that survive into the oldest generation (the new build,
view and snapshot), so a full collection came due every five or six gestures, inside one
of them: one edit in six took over 150 ms to reach the screen for that reason alone.

``gesture()`` wraps a gesture (``DesignCanvas.receive``): at its start every object that
exists is frozen (``gc.freeze``: moved to the permanent generation, which no collection
walks; constant time), at its end thawed (``gc.unfreeze``, constant time). The
collections the gesture's own allocations trigger walk only what it made (a millisecond
or two), so no full collection lands inside it.

The price: garbage cycles that die during a gesture (the build it replaces: a Program
and its blocks, ~9 MB at 1,000 layers; ``replaced_build()`` says so) are frozen when they
die, so no collection inside a gesture frees them, and the ones between gestures rarely
come due. One full collection (``thaw``) frees them, on the event loop the gesture runs on
(a Jupyter kernel's), at a moment chosen so that no gesture is likely to wait behind it
(a gesture that arrives meanwhile waits until it ends):

* after a gesture that replaced the build and came after a pause of ``PAUSE_S`` or more,
  as soon as the page says it drew the gesture's view (``view_drawn``: the canvas's
  ``drawn`` message, a frame after the view arrived), or ``AFTER_VIEW_S`` after the
  gesture when no page says so: the person who paused before the gesture is reading the
  result, and their next gesture comes later than the collection ends; the page drew the
  view first, so the collection (one core) does not slow that drawing on a busy machine.
  (A collection 2 s after the last gesture, as before, landed where a person's next edit
  often comes: an edit 1.96-2.02 s after the previous one waited 120-190 ms behind it,
  benchmarks/canvas_browser.py ``--parts paced``.)
* ``IDLE_S`` after the last gesture of a burst (gestures less than ``PAUSE_S`` apart, or
  ones that did not rebuild), when the next paused edit did not come first;
* ``SOON_S`` after the last one when ``THAW_EVERY`` gestures passed without a collection;
  at the end of the gesture after twice as many, or without an event loop (a script, a
  test) after ``THAW_EVERY``. So the garbage a burst of gestures holds stays bounded.

A gesture that arrives before a pending collection cancels it (a burst has started): the
next chance is the idle one, or the next paused edit.

Left alone: a process whose collector is disabled (``gc.disable``), and objects something
else froze (a gesture that finds a freeze it did not make freezes nothing).
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import time

AFTER_VIEW_S = 0.5
PAUSE_S = 1.0
IDLE_S = 5.0
SOON_S = 0.3
THAW_EVERY = 16


class GestureCollector:
    """The process's one policy (``COLLECTOR``): how many gestures left garbage since the
    last full collection, and the timer that collects."""

    def __init__(self, idle_s=IDLE_S, thaw_every=THAW_EVERY, soon_s=SOON_S,
                 after_view_s=AFTER_VIEW_S, pause_s=PAUSE_S, clock=time.monotonic):
        self.idle_s, self.thaw_every, self.soon_s = idle_s, thaw_every, soon_s
        self.after_view_s, self.pause_s, self.clock = after_view_s, pause_s, clock
        self.gestures = 0       # gestures since this module last collected in full
        self._timer = None
        self._last_end = None   # clock() when the last gesture ended
        self._rebuilt = False   # the running gesture replaced a build (its garbage)
        self._after_view = False  # the pending collection waits for the page's drawing

    def replaced_build(self):
        """Say that the running gesture replaced the build (a cycle's worth of garbage)."""
        self._rebuilt = True

    def view_drawn(self):
        """The page drew the last view: the collection waiting for that runs now."""
        if self._after_view and self._timer is not None:
            self.thaw()

    @contextlib.contextmanager
    def gesture(self):
        """Run the body with the objects that exist now frozen (see the module docstring)."""
        if not gc.isenabled() or gc.get_freeze_count():
            yield  # collection off, or someone else's freeze: not ours to touch
            return
        paused = self._last_end is None or self.clock() - self._last_end >= self.pause_s
        self._rebuilt = False
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
            self._last_end = self.clock()
            self._after_gesture(after_view=paused and self._rebuilt)

    def _after_gesture(self, after_view):
        self.gestures += 1
        loop = _running_loop()
        if self.gestures >= (self.thaw_every if loop is None else 2 * self.thaw_every):
            self.thaw()
            return
        self._after_view = after_view and loop is not None
        if loop is not None:
            if self._timer is not None:
                self._timer.cancel()
            if self.gestures >= self.thaw_every:
                delay = min(self.soon_s, self.after_view_s) if after_view else self.soon_s
            else:
                delay = self.after_view_s if after_view else self.idle_s
            self._timer = loop.call_later(delay, self.thaw)

    def thaw(self):
        """Collect in full now (what the chosen moment does): the garbage the gestures
        since the last one froze as it died."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.gestures, self._after_view = 0, False
        gc.collect()


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # not called from a coroutine or a loop's callback
        return None


COLLECTOR = GestureCollector()
