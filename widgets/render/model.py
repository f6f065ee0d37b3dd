"""The data a ``Drawing`` collects: options, ops, collapsed layers, var nodes, edges."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Options:
    """program_to_dot's options, checked and normalised."""
    mode: str = "all"
    highlight: tuple = ()          # path of (block, idx), outermost first
    show_shapes: bool = True
    edge_labels: bool = True
    shapes: dict = field(default_factory=dict)   # key or name -> shapes.Shape
    folding: object = None         # groups.Folding
    pair_grads: bool = True
    show_internal: bool = False    # draw outputs kept for backward only (XShape, ...)


@dataclass
class OpInfo:
    """An OpDesc with its decoded attributes, role kind and namescope."""
    op: object
    attrs: dict
    role: str
    namescope: str


@dataclass
class Group:
    """One box for the ops of a collapsed namescope in one block and phase."""
    key: str
    block: int
    namescope: str
    phase: str
    members: list = field(default_factory=list)   # op indices in ``block``


@dataclass
class VarNode:
    """A var drawn: its key, name, the block it is drawn in and its VarDesc."""
    key: str
    name: str
    block: int
    desc: object            # VarDesc, or None for a var no block declares
    copies: int = 0         # extra copies drawn beside readers (hub vars)


@dataclass
class Edge:
    """A DOT edge between node names, with its attributes."""
    tail: str
    head: str
    attrs: dict
    var: str | None = None  # var key of a var <-> op edge
    reads: bool = False     # the op reads the var
    reversed: bool = False  # given to Graphviz head first (dir=back)


@dataclass
class Ref:
    """One op slot argument: the drawn op or group (``rep``) reads or writes a var."""
    rep: str
    var: str
    is_input: bool
    slot: str | None        # the slot name, where the op has several slots on that side
    role: str
    in_place: bool          # an output the op also reads (Param -> sgd -> ParamOut)
