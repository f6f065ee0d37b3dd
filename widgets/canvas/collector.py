"""Python's cyclic garbage collector kept out of a canvas gesture's way (issue #16 item 4).

A full collection walks every tracked object of the process: at 1,000 layers about 100 ms
of CPU in a bare process (the design, its builds, views and history, and everything
imported), more in a Jupyter kernel. Each gesture leaves a few thousand objects that
survive into the oldest generation (the new build, view and snapshot), so a full
collection came due every five or six gestures, inside one of them: one edit in six took
over 150 ms to reach the screen for that reason alone.

``gesture()`` wraps a gesture (``DesignCanvas.receive``): at its start every object that
exists is frozen (``gc.freeze``: moved to the permanent generation, which no collection
walks; constant time), so the collections the gesture's own allocations trigger walk only
what the gesture made (about a millisecond). The old objects stay frozen while gestures
follow one another and are thawed (``gc.unfreeze``, constant time) with one full
collection when the kernel has been idle ``IDLE_S`` seconds after the last gesture: the
garbage cycles that died while frozen (a replaced build's Program and Block) are freed
then, when nobody waits. The timer needs the event loop the gesture runs on (a Jupyter
kernel's); without one (a script, a test) the freeze is thawed at the end of each gesture
and the interpreter collects as it always does. Every ``THAW_EVERY`` gestures without an
idle moment (or without a loop that runs its timers) the thaw and a full collection come
at the end of the gesture, after its view was sent, so the garbage stays bounded.

Left alone: a process whose collector is disabled (``gc.disable``), and objects something
else froze (a gesture that finds a freeze it did not make freezes nothing).
"""
from __future__ import annotations

import asyncio
import contextlib
import gc

IDLE_S = 2.0
THAW_EVERY = 64


class GestureCollector:
    """The process's one policy (``COLLECTOR``): whether this module's freeze holds, how
    many gestures ran under it, and the idle timer that thaws it."""

    def __init__(self, idle_s=IDLE_S, thaw_every=THAW_EVERY):
        self.idle_s, self.thaw_every = idle_s, thaw_every
        self.frozen = False     # the permanent generation holds this module's freeze
        self.gestures = 0       # gestures since this module last collected in full
        self._timer = None

    @contextlib.contextmanager
    def gesture(self):
        """Run the body with the objects that exist now frozen (see the module docstring)."""
        froze = self._freeze()
        try:
            yield
        finally:
            if froze:
                self._after_gesture()

    def _freeze(self):
        if not gc.isenabled() or (gc.get_freeze_count() and not self.frozen):
            return False  # collection off, or someone else's freeze: not ours to touch
        gc.freeze()
        self.frozen = True
        return True

    def _after_gesture(self):
        self.gestures += 1
        loop = _running_loop()
        if self.gestures >= self.thaw_every:
            self.thaw()
        elif loop is None:
            # no timer to wait for: thawed now, collected by the interpreter as usual
            # (and in full here every ``thaw_every`` gestures)
            self.frozen = False
            gc.unfreeze()
        else:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_later(self.idle_s, self.thaw)

    def thaw(self):
        """Unfreeze what this module froze and collect in full (the idle moment's work)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
        self.gestures = 0
        gc.collect()


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # not called from a coroutine or a loop's callback
        return None


COLLECTOR = GestureCollector()
