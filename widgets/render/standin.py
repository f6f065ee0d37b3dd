"""Which drawn node shows the debugger's position, and what the legend must explain.

``mark_highlight``: the op at the position (the innermost level of its path) is marked
current, the ops it runs inside enclosing. An op the mode does not draw is marked on the
op standing in for it, with a note saying why: a grad op on its forward op (the one
``pairs`` finds, else the one that wrote the var whose gradient it makes), an optimizer
op on the first op reading the parameter it updates. ``legend_kinds``: the node shapes
and edge styles a drawing holds. Both read a collected ``Drawing`` (``d``).
"""
from __future__ import annotations

from fluidscope.engine.ir.names import GRAD_SUFFIX, forward_name

_GRAD_ROLES = ("backward", "loss_grad")
PAIR_COLOUR = "#c0504d"    # the dotted line from a grad op to its forward op
MEMORY_COLOUR = "#1f77b4"  # recurrent links: memory (dashed), boot and static (solid)


def mark_highlight(d):
    """Fill ``d.highlight`` (node key -> current / stand-in / enclosing), ``d.current``,
    ``d.current_note`` and ``d.enclosing_clusters`` from the position ``d.opts.highlight``."""
    path = list(d.opts.highlight)
    if not path:
        return
    while path[0][0] in d.owner_op and len(path) <= len(d.desc.blocks):
        path.insert(0, d.owner_op[path[0][0]])  # the ops the position is inside
    strong = False
    for level in reversed(path):
        rep, drawn_level, note = drawn_for(d, level)
        if rep is None:
            continue
        if not strong:
            d.highlight[rep], strong = ("stand-in" if note else "current"), True
            d.current, d.current_note = rep, note
            continue
        d.highlight.setdefault(rep, "enclosing")
        if drawn_level[1] in d.children.get(drawn_level[0], {}):
            d.enclosing_clusters.add(drawn_level)


def drawn_for(d, level):
    """(drawn node key, its (block, idx), note) of an op of the position: the op's
    own node or box; else, for an op this mode does not draw, the op that stands in
    for it: a grad op's forward op (the one it is the gradient of, or the one that
    wrote the var whose gradient it makes), an optimizer op's parameter's first
    reader. (None, None, "") when nothing drawn stands in."""
    rep = d.rep.get(level)
    if rep is not None:
        return rep, level, ""
    b, i = level
    if not (0 <= b < len(d.infos) and 0 <= i < len(d.infos[b])):
        return None, None, ""
    info = d.infos[b][i]
    what = f"#{i} {info.op.type}" + (f" (block {b})" if b else "")
    if info.role in _GRAD_ROLES:
        candidates = []
        paired = d.pairs_of(b).get(i)
        if paired is not None:
            candidates.append(paired)
        grads = [n for v in list(info.op.outputs) + list(info.op.inputs)
                 for n in v.arguments if GRAD_SUFFIX in n]
        candidates += _writers(d, {forward_name(n) for n in grads})
        why = f"{what}, the gradient of this op"
    elif info.role == "optimize":
        params = {n for v in info.op.inputs if v.parameter == "Param" for n in v.arguments}
        candidates = _readers(d, params)
        why = f"{what}, which updates a parameter this op reads"
    else:
        return None, None, ""
    for found in candidates:
        rep = d.rep.get(found)
        if rep is not None:
            return rep, found, f"now at {why}"
    return None, None, ""


def _writers(d, names):
    return [(b, i) for b in d.rendered for i in d.visible(b)
            if d.infos[b][i].role in ("forward", "loss")
            and names & {n for v in d.infos[b][i].op.outputs for n in v.arguments}]


def _readers(d, names):
    return [(b, i) for b in d.rendered for i in d.visible(b)
            if d.infos[b][i].role in ("forward", "loss")
            and names & {n for v in d.infos[b][i].op.inputs for n in v.arguments}]


def legend_kinds(d):
    """(node shape kinds, edge style kinds) drawn: what the legend explains."""
    shapes = {"var"} if d.var_nodes else set()
    if any(rep.startswith("op:") for rep in d.rep.values()):
        shapes.add("op")
    if d.groups:
        shapes.add("group")
    for node in d.var_nodes.values():
        desc = node.desc
        if desc is not None and desc.is_parameter:
            shapes.add("parameter")
        elif desc is not None and desc.persistable:
            shapes.add("persistable")
        if GRAD_SUFFIX in node.name:
            shapes.add("gradient")
    if any(d.infos[b][i].op.type in ("feed", "fetch")
           for (b, i), rep in d.rep.items() if rep.startswith("op:")):
        shapes.add("feed")
    edges = {"data"} | d.edge_kinds
    for e in d.edges:
        colour = e.attrs.get("color")
        if colour == PAIR_COLOUR:
            edges.add("pair")
        elif colour == MEMORY_COLOUR:
            edges.add("memory" if "dashed" in e.attrs.get("style", "") else "boot")
    return shapes, edges
