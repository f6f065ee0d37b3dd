"""Selection keys of the graph's nodes and the debugger position to highlight.

Every drawn node carries its key as its ``id`` (the SVG ``<g id=...>``), which the
widgets use for selection:

* ``op:<block>:<idx>``: one op;
* ``var:<block>:<name>``: a variable, in the block that declares it;
* ``group:<block>:<namescope>``: the forward ops of a collapsed layer (namescope as
  recorded in ``op_namescope``, e.g. ``group:0:/fc_0/``); its grad ops are
  ``group:<block>:<namescope>@GRAD`` and its optimizer ops (rare: optimizers record
  no layer) ``group:<block>:<namescope>@OPT``. A namescope always ends in ``/``, so
  the suffix cannot be part of it.

The DOT node name is the key with ``_`` for the first two colons and the rest spelled
by ``render_text.safe`` (``op_0_3``, ``var_0_x-40-GRAD``, ``group_0_-2f-fc_0-2f-``).
"""
from __future__ import annotations

import numbers
import re

from fluidscope.engine.errors import FluidscopeError

from .render_text import safe

PHASE_SUFFIX = {"forward": "", "backward": "@GRAD", "optimize": "@OPT"}
_GROUP_KEY = re.compile(r"group:(\d+):(/.*/)(@GRAD|@OPT)?")
_OP_KEY = re.compile(r"op:(\d+):(\d+)")


def op_key(block: int, idx: int) -> str:
    """Selection key of an op: ``op:<block>:<idx>``."""
    return f"op:{block}:{idx}"


def var_key(block: int, name: str) -> str:
    """Selection key of a variable: ``var:<declaring block>:<name>``."""
    return f"var:{block}:{name}"


def group_key(block: int, namescope: str, phase: str = "forward") -> str:
    """Selection key of a collapsed layer: ``group:<block>:<namescope>`` plus ``@GRAD``
    for its grad ops (phase "backward") or ``@OPT`` for its optimizer ops."""
    return f"group:{block}:{namescope}{PHASE_SUFFIX[phase]}"


def parse_group_key(key: str):
    """``'group:0:/fc_0/@GRAD'`` -> ``(0, '/fc_0/', 'backward')``; FluidscopeError when
    ``key`` is not a group key."""
    m = _GROUP_KEY.fullmatch(key) if isinstance(key, str) else None
    if not m:
        raise FluidscopeError(
            f"{key!r} is not a group key; expected 'group:<block>:/<namescope>/' with an "
            "optional '@GRAD' or '@OPT'")
    phase = {"": "forward", "@GRAD": "backward", "@OPT": "optimize"}[m.group(3) or ""]
    return int(m.group(1)), m.group(2), phase


def node_name(key: str) -> str:
    """DOT node name of a selection key (see the module docstring)."""
    kind, block, rest = key.split(":", 2)
    return f"{kind}_{block}_{rest if kind == 'op' else safe(rest)}"


def _index(value) -> bool:
    """An int (numpy's too), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _position(value, block):
    """One level: an op index in ``block``, ``(block, idx)`` or ``'op:<b>:<i>'``."""
    if isinstance(value, str):
        m = _OP_KEY.fullmatch(value)
        return (int(m.group(1)), int(m.group(2))) if m else None
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
