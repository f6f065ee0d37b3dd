"""The debugger position to highlight, and the DOT node name of a node key.

Every drawn node carries its key (``keys.NodeKey``) as its ``id``. The DOT node name is
the key with ``_`` for the first two colons and the rest spelled by ``text.safe``
(``op_0_3``, ``var_0_x-40-GRAD``, ``group_0_-2f-fc_0-2f-``).
"""
from __future__ import annotations

import numbers

from fluidscope.engine.errors import FluidscopeError

from ..keys import NodeKey
from .text import safe

def parse_group_key(key: str):
    """``'group:0:/fc_0/@GRAD'`` -> ``(0, '/fc_0/', 'backward')``; FluidscopeError when
    ``key`` is not a group key of a namescope (``/.../``)."""
    found = NodeKey.find(key)
    if found is None or found.kind != "group" or not (
            found.name.startswith("/") and found.name.endswith("/")):
        raise FluidscopeError(
            f"{key!r} is not a group key; expected 'group:<block>:/<namescope>/' with an "
            "optional '@GRAD' or '@OPT'")
    return found.block, found.name, found.phase


def node_name(key: str) -> str:
    """DOT node name of a selection key (see the module docstring)."""
    node = key if isinstance(key, NodeKey) else NodeKey.parse(key)
    return f"{node.kind}_{node.block}_{node.tail if node.kind == 'op' else safe(node.tail)}"


def _index(value) -> bool:
    """An int (numpy's too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _position(value, block):
    """One level: an op index in ``block``, ``(block, idx)`` or ``'op:<b>:<i>'``."""
    if isinstance(value, str):
        key = NodeKey.find(value)
        return (key.block, key.index) if key is not None and key.kind == "op" else None
    if _index(value):
        return (block, value) if value >= 0 else None
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(map(_index, value)):
        return (int(value[0]), int(value[1])) if min(value) >= 0 else None
    return None


def highlight_path(highlight, block=0) -> tuple:
    """Any form ``normalize_highlight`` takes -> a tuple of ``(block, idx)`` levels,
    outermost first (empty for None)."""
    if highlight is None:
        return ()
    single = _position(highlight, block)
    if single is not None:
        return (single,)
    if isinstance(highlight, (tuple, list)) and not any(map(_index, highlight)):
        levels = tuple(_position(level, block) for level in highlight)
        if None not in levels:
            return levels
    raise FluidscopeError(
        "highlight must be None, an op index, (block, op index), 'op:<block>:<index>', or "
        "a path of (block, op index) pairs from the outermost op inwards, such as "
        f"[(0, 5), (1, 2)] (op 2 of the step block of op 5); indices are >= 0; got "
        f"{highlight!r}")


def normalize_highlight(highlight, block=0):
    """``None``, an op index in ``block``, ``(block, idx)``, ``'op:<b>:<i>'``, or a path
    ``[(0, 5), (1, 2)]`` (op 2 of block 1, the step block of recurrent op 5 of block 0)
    -> ``None``, ``(block, idx)`` (one level), or a tuple of ``(block, idx)`` pairs (a
    path of two levels or more; an empty path is None).

    Raises FluidscopeError for anything else."""
    path = highlight_path(highlight, block)
    if not path:
        return None
    return path[0] if len(path) == 1 else path
