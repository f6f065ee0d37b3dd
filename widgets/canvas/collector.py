"""Python's cyclic garbage collector kept out of a canvas gesture's way (issue #16 item 4).

A full collection walks every tracked object of the process: at 1,000 layers about 100 ms
of CPU in a bare process (the design, its builds, views and history, and everything
imported), more in a Jupyter kernel. Each gesture leaves a few thousand objects that
survive into the oldest generation (the new build, view and snapshot), so a full
collection came due every five or six gestures, inside one of them: one edit in six took
over 150 ms to reach the screen for that reason alone.

``gesture()`` wraps a gesture (``DesignCanvas.receive``): at its start every object that
exists is frozen (``gc.freeze``: moved to the permanent generation, which no collection
walks; constant time), at its end thawed (``gc.unfreeze``, constant time). The
collections the gesture's own allocations trigger walk only what it made (a millisecond
or two), so no full collection lands inside it.

The price: garbage cycles that die during a gesture (the build it replaces: a Program
and its blocks, ~9 MB at 1,000 layers) are frozen when they die, so no collection inside
a gesture frees them, and the ones between gestures rarely come due. They are freed by
one full collection (``thaw``) when the kernel has been idle ``IDLE_S`` seconds after
the last gesture, when nobody waits (the timer runs on the event loop the gesture runs
on: a Jupyter kernel's); after ``THAW_EVERY`` gestures without such a pause, ``SOON_S``
after the last one (its view sent and drawn by then); after twice as many, or without an
event loop (a script, a test) after ``THAW_EVERY``, at the end of the gesture. So the
garbage a burst of gestures holds stays bounded.

Left alone: a process whose collector is disabled (``gc.disable``), and objects something
else froze (a gesture that finds a freeze it did not make freezes nothing).
"""
from __future__ import annotations

import asyncio
import contextlib
import gc

IDLE_S = 2.0
SOON_S = 0.3
THAW_EVERY = 16


class GestureCollector:
    """The process's one policy (``COLLECTOR``): how many gestures left garbage since the
    last full collection, and the timer that collects."""

    def __init__(self, idle_s=IDLE_S, thaw_every=THAW_EVERY, soon_s=SOON_S):
        self.idle_s, self.thaw_every, self.soon_s = idle_s, thaw_every, soon_s
        self.gestures = 0       # gestures since this module last collected in full
        self._timer = None

    @contextlib.contextmanager
    def gesture(self):
        """Run the body with the objects that exist now frozen (see the module docstring)."""
        if not gc.isenabled() or gc.get_freeze_count():
            yield  # collection off, or someone else's freeze: not ours to touch
            return
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
            self._after_gesture()

    def _after_gesture(self):
        self.gestures += 1
        loop = _running_loop()
        if self.gestures >= (self.thaw_every if loop is None else 2 * self.thaw_every):
            self.thaw()
            return
        if loop is not None:
            if self._timer is not None:
                self._timer.cancel()
            delay = self.idle_s if self.gestures < self.thaw_every else self.soon_s
            self._timer = loop.call_later(delay, self.thaw)

    def thaw(self):
        """Collect in full now (what the idle moment does): the garbage the gestures since
        the last one froze as it died."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.gestures = 0
        gc.collect()


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # not called from a coroutine or a loop's callback
        return None


COLLECTOR = GestureCollector()
