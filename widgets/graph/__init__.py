"""The program graph in a notebook: ``GraphView`` (``view``) and the layer-box state its
toolbar and double-clicks change (``layers``)."""
from .view import RENDERERS, GraphView, render_option_names, resolve_renderer

__all__ = ["GraphView", "RENDERERS", "render_option_names", "resolve_renderer"]
