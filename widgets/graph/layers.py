"""Which layers a GraphView draws as boxes: its collapse/expand state, as plain data.

A GraphView keeps three traits, ``collapse_all``, ``collapsed`` and ``expanded``; this
module turns them into ``program_to_dot``'s ``collapse``/``expand`` arguments and works
out what one UI action changes: ``collapse``/``expand`` of a layer or of all of them, a
double-click on a layer's box (open it) or on an op of an open layer (close it again).
It also reads the keys those actions name (``group:<block>:<namescope>``,
``op:<block>:<idx>``) against the program, with errors that say what is wrong.

Namescopes are spelled as ``op_namescope`` records them: ``/fc_0/``,
``/encoder/fc_0/`` (a layer built inside ``name_scope("encoder")``); callers may write
``fc_0`` or ``encoder/fc_0``.
"""
from __future__ import annotations

from dataclasses import dataclass

from fluidscope.engine.errors import FluidscopeError

from ..keys import NodeKey
from ..render.groups import Folding, normalize_namescope
from ..render.text import PHASE_OF_ROLE, attr_values, role_kind, sub_blocks

_LAYERS_LISTED = 12  # layers named in the error for an unknown one


def prefixes(namescope: str) -> list:
    """``'/a/b/'`` -> ``['/a/', '/a/b/']``: the layer and every layer around it."""
    parts = [p for p in namescope.split("/") if p]
    return ["/" + "/".join(parts[:k]) + "/" for k in range(1, len(parts) + 1)]


def _scope_and_phase(op):
    """(op_namescope, phase) read straight from the OpDesc (no attribute decoding: this
    runs over every op of a block on a double-click)."""
    scope, role = "/", 0
    for attr in op.attrs:
        if attr.name == "op_namescope":
            scope = attr.s or "/"
        elif attr.name == "op_role":
            role = attr.i
    return scope, PHASE_OF_ROLE[role_kind(role)]


def block_layers(block) -> set:
    """Every namescope an op of ``block`` was made in, and the ones around those."""
    return {p for op in block.ops for p in prefixes(_scope_and_phase(op)[0])}


def program_layers(desc) -> set:
    """``block_layers`` of every block of the ProgramDesc."""
    return set().union(*(block_layers(b) for b in desc.blocks))


def known_layer(desc, namescope, where: str) -> str:
    """``namescope`` normalised (``'fc_0'`` -> ``'/fc_0/'``); FluidscopeError, naming
    ``where`` and the layers there are, when the program has no such layer."""
    if not isinstance(namescope, str) or not namescope.strip("/"):
        raise FluidscopeError(
            f"{where}: a layer is named by its namescope, such as 'fc_0' or "
            f"'/encoder/fc_0/'; got {namescope!r}")
    scope = normalize_namescope(namescope)
    layers = program_layers(desc)
    if scope not in layers:
        names = sorted(s.strip("/") for s in layers)
        shown = ", ".join(names[:_LAYERS_LISTED]) or "none"
        more = f" and {len(names) - _LAYERS_LISTED} more" if len(names) > _LAYERS_LISTED else ""
        raise FluidscopeError(
            f"{where}: the program has no layer {namescope!r}; its layers are {shown}{more}")
    return scope


@dataclass(frozen=True)
class Layers:
    """The collapse/expand state: every top-level layer a box (``collapse_all``) or the
    ``collapsed`` ones, with ``expanded`` opened again inside them (drill-down)."""

    collapse_all: bool = False
    collapsed: tuple = ()
    expanded: tuple = ()

    def program_to_dot_args(self) -> dict:
        """``collapse``/``expand`` for ``program_to_dot``."""
        collapse = True if self.collapse_all else (list(self.collapsed) or False)
        return {"collapse": collapse, "expand": list(self.expanded) or None}

    def folded_into(self, namescope: str):
        """The layer whose box holds the ops of ``namescope`` (itself or a layer around
        it), or None when they are drawn one by one. A box of a single op is drawn as
        that op, so a layer can be folded and still show its one op."""
        return Folding(**self.program_to_dot_args()).group_of(namescope)

    def collapse(self, namescope=None) -> "Layers":
        """Fold ``namescope`` (normalised) into one box; None: every top-level layer."""
        if namescope is None:
            return Layers(collapse_all=True)
        if self.collapse_all:  # folded unless opened: close it, remember what was inside
            return Layers(True, self.collapsed, tuple(s for s in self.expanded if s != namescope))
        collapsed = self.collapsed + (() if namescope in self.collapsed else (namescope,))
        return Layers(False, collapsed, self.expanded)

    def expand(self, namescope=None) -> "Layers":
        """Draw the ops of ``namescope`` (normalised) one by one, opening the layers
        around it too; layers nested in it stay boxes under ``collapse_all``. None:
        no box at all."""
        if namescope is None:
            return Layers()
        scopes = prefixes(namescope)
        collapsed = tuple(s for s in self.collapsed if s not in scopes)
        expanded = self.expanded
        if self.collapse_all:
            expanded += tuple(s for s in scopes if s not in expanded)
        return Layers(self.collapse_all, collapsed, expanded)

    def toggle(self, namescope: str) -> "Layers":
        """Open the layer when it is (inside) a box, else fold it."""
        if self.folded_into(namescope) is not None:
            return self.expand(namescope)
        return self.collapse(namescope)

    def layer_to_fold(self, block, idx: int):
        """The layer a double-click on op ``idx`` of ``block`` closes: the innermost
        open layer around the op that would make a box (more than one op of the op's
        phase in the block, or an op owning sub-blocks such as a recurrent group).
        None when there is none: the op belongs to no layer, or only to layers of one
        op."""
        ops = block.ops
        scopes = [_scope_and_phase(op) for op in ops]
        scope, phase = scopes[idx]
        owns_blocks = bool(sub_blocks(attr_values(ops[idx])))
        candidates = prefixes(scope)
        folded = self.folded_into(scope)  # a one-op box drawn as the op: close around it
        if folded is not None:
            candidates = [s for s in candidates if len(s) < len(folded)]
        for candidate in reversed(candidates):
            members = sum(1 for s, p in scopes if p == phase and s.startswith(candidate))
            if owns_blocks or members > 1:
                return candidate
        return None


def block_has_layer(block, namescope):
    """Some op of ``block`` was made inside layer ``namescope`` (a path such as
    ``/fc_0/`` or ``/head/fc_1/`` or a leading part of it, ``head``, with or without the
    slashes), optionally followed by ``@GRAD`` or ``@OPT`` (the render helper's box of
    that layer's grad or optimizer ops)."""
    for phase in ("@GRAD", "@OPT"):
        if namescope.endswith(phase):
            namescope = namescope[:-len(phase)]
            break
    parts = [p for p in namescope.split("/") if p]
    return bool(parts) and "/" + "/".join(parts) + "/" in block_layers(block)


def initial_layers(collapse, expand) -> dict:
    """The constructor's ``collapse``/``expand`` (``program_to_dot``'s meaning) as layer
    traits; only the ones that differ from the defaults, so traits given too survive."""
    def scopes(value, name):
        if isinstance(value, str):
            return [value]
        try:
            return list(value)
        except TypeError:
            raise FluidscopeError(
                f"GraphView: {name} must be True, False, None or namescopes such as "
                f"['fc_0'], got {value!r}") from None

    traits = {}
    if expand is not None and scopes(expand, "expand"):
        traits["expanded"] = scopes(expand, "expand")
    if collapse is None:
        collapse = bool(traits)
    if isinstance(collapse, bool):
        if collapse:
            traits["collapse_all"] = True
    elif scopes(collapse, "collapse"):
        traits["collapsed"] = scopes(collapse, "collapse")
    return traits


def group_layer(desc, key, where: str) -> str:
    """The layer (normalised namescope) of a box key (a group ``NodeKey`` or its text
    ``group:<block>:<namescope>``, with or without ``@GRAD``/``@OPT`` and the slashes);
    FluidscopeError when that block has no such layer."""
    node = key if isinstance(key, NodeKey) else NodeKey.parse(key)
    if node.kind != "group":
        raise FluidscopeError(f"{where}: {str(node)!r} is not a layer's box key")
    key, block, scope = str(node), node.block, node.name  # a grad/optimizer box: its layer
    if block >= len(desc.blocks):
        raise FluidscopeError(f"{where}: {key!r}: the program has no block {block} "
                              f"({len(desc.blocks)} block(s))")
    layers = block_layers(desc.blocks[block])
    wanted = "/" + "/".join(p for p in scope.split("/") if p) + "/"
    if wanted not in layers:
        names = ", ".join(sorted(s.strip("/") for s in layers)) or "none"
        raise FluidscopeError(f"{where}: {key!r}: block {block} has no layer {scope!r} "
                              f"(its layers: {names})")
    return wanted


def op_position(desc, key, where: str) -> tuple:
    """An op ``NodeKey`` (or its text ``'op:<block>:<idx>'``) -> ``(block, idx)``;
    FluidscopeError when there is no such op."""
    node = key if isinstance(key, NodeKey) else NodeKey.find(key)
    if not (node is not None and node.kind == "op" and node.block < len(desc.blocks)
            and node.index < len(desc.blocks[node.block].ops)):
        raise FluidscopeError(f"{where}: the program has no op {str(key)!r}")
    return node.block, node.index
