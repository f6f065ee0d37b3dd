"""``NodeKey``: the one typed key of a drawn graph node, with the one parser.

Every node the renderer draws carries its key as its ``id`` (the SVG ``<g id=...>``);
the graph view reports a click as that text, the debugger view reads it back, and the
layer toggles send it to Python. The text forms are:

* ``op:<block>:<index>``: one op;
* ``var:<block>:<name>``: a variable, in the block that declares it;
* ``group:<block>:<namescope>``: the forward ops of a collapsed layer (namescope as
  recorded in ``op_namescope``, e.g. ``group:0:/fc_0/``); its grad ops are
  ``group:<block>:<namescope>@GRAD`` and its optimizer ops ``...@OPT``. A namescope
  always ends in ``/``, so the suffix cannot be part of it.

Only this module splits a key; everything else builds and reads ``NodeKey`` objects.
Pure: no widget or rendering import, so render/ and the views share it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fluidscope.engine.errors import FluidscopeError

KINDS = ("op", "var", "group")
PHASE_SUFFIX = {"forward": "", "backward": "@GRAD", "optimize": "@OPT"}
_PHASE_OF_SUFFIX = {suffix: phase for phase, suffix in PHASE_SUFFIX.items()}
_KEY = re.compile(r"(op|var|group):(\d+):(.+)", re.S)


@dataclass(frozen=True)
class NodeKey:
    """A node of the drawn graph.

    kind : "op", "var" or "group"
    block : index of the block drawn in
    name : the op index as text (op), the variable name (var), or the namescope without
        its phase suffix (group)
    phase : "forward", "backward" or "optimize" (a group's part; "forward" otherwise)
    """

    kind: str
    block: int
    name: str
    phase: str = "forward"

    # --------------------------------------------------------------- making
    @classmethod
    def op(cls, block: int, index: int) -> NodeKey:
        return cls("op", int(block), str(int(index)))

    @classmethod
    def var(cls, block: int, name: str) -> NodeKey:
        return cls("var", int(block), name)

    @classmethod
    def group(cls, block: int, namescope: str, phase: str = "forward") -> NodeKey:
        if phase not in PHASE_SUFFIX:
            raise FluidscopeError(f"group key: phase must be one of {list(PHASE_SUFFIX)}, "
                                  f"got {phase!r}")
        return cls("group", int(block), namescope, phase)

    @classmethod
    def parse(cls, text) -> NodeKey:
        """``'op:0:3'`` -> ``NodeKey('op', 0, '3')``; FluidscopeError for anything that is
        not a key (the message lists the accepted forms)."""
        found = cls.find(text)
        if found is None:
            raise FluidscopeError(
                f"{text!r} is not a node key; expected 'op:<block>:<index>', "
                f"'var:<block>:<name>' or 'group:<block>:<namescope>' (optionally ending "
                f"in '@GRAD' or '@OPT')")
        return found

    @classmethod
    def find(cls, text):
        """Like ``parse``, but None for text that is not a key (a plain variable name)."""
        match = _KEY.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            return None
        kind, block, name = match.group(1), int(match.group(2)), match.group(3)
        if kind == "op":
            return cls.op(block, int(name)) if name.isdigit() else None
        if kind == "group":
            for suffix in ("@GRAD", "@OPT"):
                if name.endswith(suffix) and len(name) > len(suffix):
                    return cls(kind, block, name[:-len(suffix)], _PHASE_OF_SUFFIX[suffix])
        return cls(kind, block, name)

    # -------------------------------------------------------------- reading
    @property
    def index(self) -> int:
        """The op index of an op key; FluidscopeError for another kind."""
        if self.kind != "op":
            raise FluidscopeError(f"{self} is a {self.kind} key, not an op key")
        return int(self.name)

    @property
    def tail(self) -> str:
        """The text after ``<kind>:<block>:`` (a group's name with its phase suffix)."""
        return self.name + (PHASE_SUFFIX[self.phase] if self.kind == "group" else "")

    def __str__(self) -> str:
        return f"{self.kind}:{self.block}:{self.tail}"


def op_key(block: int, index: int) -> str:
    """Text of an op's key: ``op:<block>:<index>``."""
    return str(NodeKey.op(block, index))


def var_key(block: int, name: str) -> str:
    """Text of a variable's key: ``var:<declaring block>:<name>``."""
    return str(NodeKey.var(block, name))


def group_key(block: int, namescope: str, phase: str = "forward") -> str:
    """Text of a collapsed layer's key, with ``@GRAD`` / ``@OPT`` for its other phases."""
    return str(NodeKey.group(block, namescope, phase))


__all__ = ["NodeKey", "KINDS", "PHASE_SUFFIX", "op_key", "var_key", "group_key"]
