"""Bring live views up to date after each notebook cell, however their objects changed.

A GraphView's program can be edited by any Python code (a layer added, an op removed)
and a DebuggerView's session driven by plain calls (``sess.step()``); neither tells the
widget. Views register a callback here; IPython's ``post_run_cell`` event runs every
live callback once per cell, when the kernel is about to go idle, so a loop of edits or
steps inside one cell costs nothing until it ends. Each callback checks cheaply whether
anything changed (a program's ``revision``, a session's position) and re-renders only
then. Views are held weakly: a view that is gone is never called.

Outside IPython (a script, a test) nothing runs by itself; ``run_all()`` does what the
end of a cell does.
"""
from __future__ import annotations

import weakref

_CALLBACKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_HOOKED = [None]  # the IPython shell whose post_run_cell event we listen to


def watch(owner, method_name: str) -> None:
    """Call ``owner.<method_name>()`` after every cell while ``owner`` lives."""
    _CALLBACKS[owner] = method_name
    _hook_ipython()


def unwatch(owner) -> None:
    _CALLBACKS.pop(owner, None)


def run_all(*_args) -> int:
    """Run every live callback now (what the end of a cell does); returns how many ran.
    A callback that fails is dropped from the page's point of view, never raised into
    the user's cell: the view keeps what it showed."""
    ran = 0
    for owner, name in list(_CALLBACKS.items()):
        try:
            getattr(owner, name)()
        except Exception:  # noqa: BLE001 - a view's refresh must not break the cell
            continue
        ran += 1
    return ran


def _hook_ipython():
    try:
        from IPython import get_ipython
    except ImportError:  # no IPython: run_all() by hand
        return
    shell = get_ipython()
    if shell is None or _HOOKED[0] is shell:
        return
    shell.events.register("post_run_cell", run_all)
    _HOOKED[0] = shell


__all__ = ["watch", "unwatch", "run_all"]
