"""Find nodes of a program by name, variable or op type, and where each is drawn.

``find_nodes(desc, query)`` lists the program's ops (by type), variables (by name) and
layers (by namescope) that match ``query`` (case-insensitive; exact matches first, then
those that contain it). ``drawn_key(rendering, key, desc)`` says which node on screen
shows a match: the op's own node, or the layer box it is folded into; a variable's node,
or, for a variable hidden inside a box, the node of an op that writes (else reads) it. Pure: the
GraphView turns the result into a selection and a pan.
"""
from __future__ import annotations

from fluidscope.engine.errors import FluidscopeError

from ..keys import NodeKey
from ..render.text import attr_values, sub_blocks

_MAX_MATCHES = 200  # a one-letter query need not list a whole program


def _rank(text, query):
    """0 exact, 1 prefix, 2 contains, None no match (case-insensitive)."""
    text = text.lower()
    if text == query:
        return 0
    if text.startswith(query):
        return 1
    return 2 if query in text else None


def find_nodes(desc, query: str) -> list:
    """Keys (``op:``, ``var:``, ``group:``) of the nodes matching ``query``, best first.
    FluidscopeError for an empty query."""
    if not isinstance(query, str) or not query.strip():
        raise FluidscopeError("find: type part of an op type, a variable name or a layer "
                              "name, such as 'mul', 'fc_0.w_0' or 'lstm'")
    q = query.strip().lower()
    found = []  # (rank, order, key)
    seen_vars, seen_layers = set(), set()
    for b, block in enumerate(desc.blocks):
        for i, op in enumerate(block.ops):
            rank = _rank(op.type, q)
            if rank is not None:
                found.append((rank, len(found), str(NodeKey.op(b, i))))
            scope = next((a.s for a in op.attrs if a.name == "op_namescope"), "") or "/"
            parts = [p for p in scope.split("/") if p]
            for k in range(1, len(parts) + 1):
                layer = "/" + "/".join(parts[:k]) + "/"
                rank = _rank(parts[k - 1], q)
                if rank is not None and (b, layer) not in seen_layers:
                    seen_layers.add((b, layer))
                    found.append((rank, len(found), str(NodeKey.group(b, layer))))
        for var in block.vars:
            rank = _rank(var.name, q)
            if rank is not None and var.name not in seen_vars:
                seen_vars.add(var.name)
                found.append((rank, len(found), str(NodeKey.var(b, var.name))))
    found.sort()
    return [key for _, _, key in found[:_MAX_MATCHES]]


def _users(desc, block, name):
    """(block, op index) of the ops writing ``name``, then of those reading it; its own
    block first."""
    order = [block] + [i for i in range(len(desc.blocks)) if i != block]
    for side in ("outputs", "inputs"):
        for b in order:
            for i, op in enumerate(desc.blocks[b].ops):
                if any(name in v.arguments for v in getattr(op, side)):
                    yield b, i


def _owners(desc):
    """sub-block -> (block, op index) of the op owning it (a recurrent op's step)."""
    found = {}
    for b, block in enumerate(desc.blocks):
        for i, op in enumerate(block.ops):
            for s in sub_blocks(attr_values(op)):
                found.setdefault(s, (b, i))
    return found


def drawn_key(rendering, key: str, desc):
    """The key of the node on screen that shows ``key``, or None when this rendering
    does not show it (another mode would)."""
    node = NodeKey.parse(key)
    if node.kind == "op":
        return rendering.ops.get((node.block, node.index))
    if node.kind == "var":
        if key in rendering.vars:
            return key
        if node.name in rendering.internal:
            return None
        owners = _owners(desc)
        for b, i in _users(desc, node.block, node.name):
            while (b, i) not in rendering.ops and b in owners:  # a box holds its block
                b, i = owners[b]
            if (b, i) in rendering.ops:
                return rendering.ops[(b, i)]
        return None
    for (b, i), rep in rendering.ops.items():  # a layer: its box, or its first op drawn
        if rep == key:
            return rep
    for (b, i), rep in sorted(rendering.ops.items()):
        op = desc.blocks[b].ops[i]
        scope = next((a.s for a in op.attrs if a.name == "op_namescope"), "")
        if b == node.block and scope.startswith(node.name):
            return rep
    return None


__all__ = ["find_nodes", "drawn_key"]
