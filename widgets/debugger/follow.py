"""How a DebuggerView follows a session it did not drive (a mixin of the view).

Its own buttons and methods show their result at once. A plain call on the session
(``sess.step()`` in a loop) reaches the view through ``Session.listeners``: redrawn at
most once per ``follow_interval`` seconds and never more than a fifth of the time, so a
loop of steps stays fast; what the throttle skipped is drawn when the notebook cell
ends (``sync``, which ``graph.after_cell`` runs after every cell). The listener holds
the view weakly and never raises into the user's step.
"""
from __future__ import annotations

import contextlib
import time
import weakref

from ..graph.after_cell import watch

FOLLOW_INTERVAL_S = 0.25  # plain session calls redraw the view at most this often
_FOLLOW_SHARE = 5  # ... and wait at least this many times the last redraw's cost


def _follower(view):
    """A ``Session.listeners`` entry that holds ``view`` weakly (a view dropped from the
    page does not live on in its session) and never raises into the user's step."""
    ref = weakref.ref(view)

    def on_stop(session):
        target = ref()
        if target is None:
            with contextlib.suppress(ValueError):
                session.listeners.remove(on_stop)
            return
        with contextlib.suppress(Exception):  # a redraw must not break the user's step
            target._on_session_stop()

    return on_stop


class FollowsSession:
    """The following half of a DebuggerView: it calls ``_init_following()`` before its
    first ``refresh`` and ``_follow_session(session)`` after it; its ``_show`` calls
    ``_shown_now(started)`` when done and its actions run inside ``_acting``."""

    def _init_following(self):
        self._shown = None  # the session state last shown (see _state)
        self._acting = False  # one of the view's own actions runs (it shows its result)
        self._shown_at, self._show_cost = float("-inf"), 0.0
        self.follow_interval = FOLLOW_INTERVAL_S

    def _follow_session(self, session):
        watch(self, "sync")
        if hasattr(session, "listeners"):
            session.listeners.append(_follower(self))

    def _shown_now(self, started):
        self._shown = self._state()
        self._shown_at = time.perf_counter()
        self._show_cost = self._shown_at - started

    def sync(self):
        """Show the session again when it moved since it was last shown (a plain
        ``sess.step()``, a breakpoint added on the session); True when it did. Runs by
        itself after every notebook cell."""
        if self._state() == self._shown:
            return False
        self.refresh()
        return True

    def _on_session_stop(self):
        """A stop made by a plain session call: redraw unless one was drawn a moment ago
        (the end of the cell draws what this skips)."""
        if self._acting:
            return
        wait = (max(self.follow_interval, _FOLLOW_SHARE * self._show_cost)
                if self.follow_interval > 0 else 0)  # 0: every stop, unthrottled
        if time.perf_counter() - self._shown_at >= wait:
            self.refresh()

    def _state(self):
        """What the view shows of the session, cheaply compared."""
        s = self._session
        return (s.position, s.history_depth, s.stop_reason, s.stop_var, s.frame, s.finished,
                tuple((b.id, b.enabled, b.hits) for b in s.breakpoints))


__all__ = ["FollowsSession", "FOLLOW_INTERVAL_S"]
