"""Stepping through a debugger session: ``DebuggerView`` (controls, graph and inspector)
and its control bar ``DebuggerControls``."""
from .controls import DebuggerControls
from .view import DebuggerView

__all__ = ["DebuggerView", "DebuggerControls"]
