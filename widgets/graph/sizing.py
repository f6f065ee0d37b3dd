"""How a GraphView opens when its caller leaves the choice to it: by the program's size.

Drawn whole, a program of a few hundred ops is hundreds of labels, each too small to
read at any fit; what a person wants first is its shape: the layers, not the optimizer's
bookkeeping.
"""
from __future__ import annotations

from ..render.text import MODE_ROLES, attr_values, role_of

# A program drawing more ops than this opens with its layers as boxes and, unless a mode
# is given, without the optimizer: drawn whole, hundreds of labels would be unreadable.
LARGE_PROGRAM_OPS = 40


def drawn_op_count(desc, mode: str) -> int:
    """How many ops of every block ``mode`` draws (its roles)."""
    roles = MODE_ROLES[mode]
    return sum(1 for b in desc.blocks for op in b.ops if role_of(attr_values(op)) in roles)


def default_view(desc, mode, collapse, expand):
    """(mode, collapse) a view opens with: what was given; for what was not, a large
    program (``LARGE_PROGRAM_OPS``) opens without its optimizer and with its layers as
    boxes, a small one whole."""
    if mode is None:
        mode = "backward" if drawn_op_count(desc, "all") > LARGE_PROGRAM_OPS else "all"
    if collapse is None and expand is None:
        collapse = drawn_op_count(desc, mode) > LARGE_PROGRAM_OPS
    return mode, collapse


__all__ = ["LARGE_PROGRAM_OPS", "default_view", "drawn_op_count"]
