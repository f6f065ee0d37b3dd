"""fluidscope.widgets: views and controls for notebooks, thin over Python objects.

Rendering functions are pure (program -> DOT text -> SVG); widgets hold a few synced
traits and point ``_esm``/``_css`` at files in ``static/``; every UI action is a Python
method, so notebooks, the front end and tests drive the same API.
"""
from .debugger_view import DebuggerControls, DebuggerView
from .graph_view import GraphView
from .render import dot_to_svg, has_dot, program_to_dot
from .tensor_inspector import TensorInspector
from .training import TrainingResult, TrainingRun, train
from .training_monitor import TrainingMonitor

__all__ = ["GraphView", "DebuggerView", "DebuggerControls", "TensorInspector",
           "program_to_dot", "dot_to_svg", "has_dot",
           "train", "TrainingRun", "TrainingResult", "TrainingMonitor"]
