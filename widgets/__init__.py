"""fluidscope.widgets: views and controls for notebooks, thin over Python objects.

Rendering functions are pure (program -> DOT text -> SVG); widgets hold a few synced
traits and point ``_esm``/``_css`` at files in ``static/``.
"""
from .graph_view import GraphView
from .render import dot_to_svg, has_dot, program_to_dot

__all__ = ["GraphView", "program_to_dot", "dot_to_svg", "has_dot"]
