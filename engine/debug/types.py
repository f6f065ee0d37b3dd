"""What a debugger session reports: positions, breakpoints and frames (see ``session``).

A ``Position`` names the op that has just run: its block, its index in that block, its
type, the phase of the program it belongs to (forward / backward / optimize, from the
op's ``op_role``), and, inside a recurrent op, the frame (time step) and the recurrent
op itself (``parent``). Positions are immutable and compare equal when they name the
same place, so tests and front ends can compare them directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..errors import FluidscopeError
from ..runtime.scope import Scope
from ..runtime.tensor import LoDTensor


@dataclass(frozen=True)
class Position:
    """Where a session stands: just after op ``op_index`` of ``block`` ran.

    ``op_index`` is None before the first op (the start). Inside a recurrent op,
    ``frame`` is the time step and ``parent`` the position of the recurrent op."""
    block: int
    op_index: Optional[int]
    op_type: Optional[str]
    phase: str
    frame: Optional[int] = None
    parent: Optional["Position"] = None

    @property
    def at_start(self) -> bool:
        return self.op_index is None

    @property
    def path(self) -> list:
        """[(block, op index), ...] from the outermost op in: what a graph highlights."""
        outer = self.parent.path if self.parent is not None else []
        return outer + ([(self.block, self.op_index)] if self.op_index is not None else [])

    def breadcrumb(self) -> str:
        """'block 0 › #5 recurrent › frame 3 › block 1 › #2 mul'."""
        if self.op_index is None:
            return f"block {self.block} › start"
        here = f"block {self.block} › #{self.op_index} {self.op_type}"
        if self.parent is None:
            return here
        return f"{self.parent.breadcrumb()} › frame {self.frame} › {here}"

    def __str__(self):
        return f"{self.breadcrumb()} ({self.phase})"


@dataclass
class Breakpoint:
    """Stop after an op that matches every criterion given (None: any).

    op_type / op_index (in ``block``, block 0 unless given) / var (the op writes it) /
    frame (inside a recurrent op) / condition (``condition(session)`` is true) /
    nan_inf (an output holds a NaN or an Inf)."""
    id: int
    op_type: Optional[str] = None
    op_index: Optional[int] = None
    block: Optional[int] = None
    var: Optional[str] = None
    frame: Optional[int] = None
    condition: Optional[Callable] = None
    nan_inf: bool = False
    enabled: bool = True
    hits: int = field(default=0)

    def __post_init__(self):
        if self.op_index is not None and self.block is None:
            self.block = 0
        if self.condition is not None and not callable(self.condition):
            raise FluidscopeError(
                f"break_on: condition must be callable(session) -> bool, got "
                f"{type(self.condition).__name__}")
        if not (self.op_type or self.op_index is not None or self.var or self.frame is not None
                or self.condition or self.nan_inf):
            raise FluidscopeError("break_on needs at least one of op_type, op_index, var, "
                                  "frame, condition or nan_inf=True")

    def describe(self) -> str:
        parts = []
        if self.op_type:
            parts.append(f"op_type={self.op_type}")
        if self.op_index is not None:
            parts.append(f"op #{self.op_index} of block {self.block}")
        if self.var:
            parts.append(f"writes {self.var}")
        if self.frame is not None:
            parts.append(f"frame {self.frame}")
        if self.condition is not None:
            parts.append(f"condition {getattr(self.condition, '__name__', 'callable')}")
        if self.nan_inf:
            parts.append("NaN/Inf")
        return f"breakpoint {self.id}: " + ", ".join(parts)

    def matches_place(self, pos: Position, written) -> bool:
        """The criteria that need no values: type, index, var, frame."""
        if self.op_type is not None and pos.op_type != self.op_type:
            return False
        if self.op_index is not None and (pos.op_index != self.op_index or pos.block != self.block):
            return False
        if self.frame is not None and pos.frame != self.frame:
            return False
        return self.var is None or self.var in written


class FrameInfo:
    """One frame of the recurrent op at (or just run at) the session's position."""
    __slots__ = ("t", "batch_size", "sequences", "_values")

    def __init__(self, t, batch_size, sequences, values):
        self.t, self.batch_size, self.sequences = t, batch_size, sequences
        self._values = values  # callable: () -> {name: array} of the frame

    @property
    def names(self) -> list:
        return sorted(self._values())

    def tensor(self, name):
        """The frame's value of ``name`` (read-only), or None if the frame has none."""
        return self._values().get(name)

    @property
    def scope(self):
        """The frame as a read-only Scope (Paddle's step scope)."""
        scope = Scope()
        for name, value in self._values().items():
            scope.var(name).set_value(LoDTensor.wrap(value))
        return scope

    def __repr__(self):
        return f"FrameInfo(t={self.t}, batch_size={self.batch_size})"


def read_only(value):
    """A view of a numpy array that cannot be written (cupy arrays are returned as they are;
    a numpy scalar, which some kernels return, becomes a 0-d array)."""
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        view = value.view()
        view.flags.writeable = False
        return view
    return value
