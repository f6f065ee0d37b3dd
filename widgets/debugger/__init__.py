"""Stepping through a debugger session: ``DebuggerView`` (controls, graph and inspector)
and its control bar ``DebuggerControls``."""
from .view import DebuggerControls, DebuggerView

__all__ = ["DebuggerView", "DebuggerControls"]
