"""fluidscope.widgets: views and controls for notebooks, thin over Python objects.

``render/`` is pure (program -> DOT text -> SVG); ``keys`` is the typed node key every
view shares; ``base`` is the one widget base and message convention; the views are
``canvas/`` (the design canvas), ``graph/``, ``debugger/``, ``tensor/``, ``training/`` and ``summary/``. Widgets hold a few synced traits
and point ``_esm``/``_css`` at bundles in ``static/`` built from ``js/src``; every UI action
is a Python method, so notebooks, the front end and tests drive the same API.
"""
from .canvas import DesignCanvas
from .debugger import DebuggerControls, DebuggerView
from .graph import GraphView
from .keys import NodeKey
from .render import dot_to_svg, has_dot, program_to_dot
from .summary import SummaryView
from .tensor import TensorInspector
from .training import TrainingMonitor, TrainingResult, TrainingRun, train

__all__ = ["DesignCanvas", "GraphView", "DebuggerView", "DebuggerControls", "TensorInspector", "SummaryView", "NodeKey",
           "program_to_dot", "dot_to_svg", "has_dot",
           "train", "TrainingRun", "TrainingResult", "TrainingMonitor"]
