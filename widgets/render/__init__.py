"""Pure rendering: program -> Graphviz DOT text (and SVG through the system ``dot``).

No widget, no file writes, no ``display()``: tests assert on the DOT text. ``dot`` is the
entry point (``program_to_dot``); ``drawing`` decides what is drawn, ``emit`` writes it;
``groups`` collapses layers, ``pairs`` joins grad ops to their forward ops,
``recurrent`` draws memories, ``shapes`` the run's shapes, ``text`` labels and roles,
``highlight`` the debugger position and DOT node names, ``model`` the drawing's records.
"""
from ..keys import group_key, op_key, var_key
from .dot import Rendering, dot_to_svg, has_dot, program_to_dot, render_program
from .highlight import normalize_highlight, parse_group_key
from .pairs import pair_grad_ops
from .text import MODE_LABELS, MODES, ROLE_STYLE, describe_var_type, non_default_attrs, role_kind

__all__ = ["program_to_dot", "render_program", "Rendering", "dot_to_svg", "has_dot", "describe_var_type", "role_kind",
           "non_default_attrs", "normalize_highlight", "op_key", "var_key", "group_key",
           "parse_group_key", "pair_grad_ops", "MODES", "MODE_LABELS", "ROLE_STYLE"]
