"""A collected ``Drawing`` -> graphviz statements: nodes, nested clusters, edges, legend.

Highlight: the op (or collapsed layer) at the debugger's position gets a thick red
border and the SVG class ``fs-current``; the ops it is inside (the recurrent op whose
step block it runs in) get a thin light red border and the class ``fs-enclosing``, as
do their clusters.
"""
from __future__ import annotations

import functools

from graphviz.quoting import ESCAPE_UNESCAPED_QUOTES, ID, KEYWORDS

from fluidscope.engine import registry
from fluidscope.engine.ir.names import GRAD_SUFFIX

from .groups import group_title, layer_name, type_lines
from ..keys import op_key
from .highlight import node_name
from .recurrent import is_recurrent
from .text import ROLE_STYLE, describe_var_type, non_default_attrs, text

_HIGHLIGHT = {
    "current": {"color": "#d62728", "penwidth": "3", "class": "fs-current"},
    # the op the position is at is not drawn in this mode: the op standing in for it
    "stand-in": {"color": "#d62728", "penwidth": "3", "class": "fs-current fs-stand-in"},
    "enclosing": {"color": "#f4a3a3", "penwidth": "2", "class": "fs-enclosing"},
}
_HIDDEN_SHOWN = 12  # names of hidden vars listed in a group's tooltip


# The graphviz package quotes every id and attribute through a few regular expressions,
# which is most of the time of a big program; these writers quote the same way (its
# own patterns), remember node names, and append the statements to the graph's body.
def _dot_id(value) -> str:
    if ID.match(value) and value.lower() not in KEYWORDS:
        return value
    if '"' not in value:  # nothing to escape (text() leaves no odd final backslash)
        return f'"{value}"'
    return f'"{ESCAPE_UNESCAPED_QUOTES(value)}"'


@functools.lru_cache(maxsize=1 << 16)
def _name(value) -> str:
    """A node name, quoted once however many edges it has."""
    return _dot_id(value)


def _attr_list(label, attrs) -> str:
    items = [f"label={_dot_id(label)}"] if label is not None else []
    items += [f"{k}={_dot_id(str(v))}" for k, v in sorted(attrs.items()) if v is not None]
    return " ".join(items)


def _node(g, name, label, **attrs):
    g.body.append(f"\t{_name(name)} [{_attr_list(label, attrs)}]\n")


def _edge(g, tail, head, attrs):
    listed = f" [{_attr_list(None, attrs)}]" if attrs else ""
    g.body.append(f"\t{_name(tail)} -> {_name(head)}{listed}\n")


def _highlighted(style, level, d=None):
    if level is not None:
        style.update(_HIGHLIGHT[level])
        if level in ("current", "stand-in"):
            style["style"] = style.get("style", "") + (",bold" if level == "current"
                                                       else ",bold,dashed")
        if level == "stand-in" and d is not None and d.current_note:
            style["tooltip"] = text(d.current_note) + "\\n" + style.get("tooltip", "")


def _op_node(d, g, b, i):
    info = d.infos[b][i]
    op, attrs, role = info.op, info.attrs, info.role
    d.roles_drawn.add(role)
    opdef = registry.get(op.type) if registry.has(op.type) else None
    doc = opdef.doc if opdef else "(not in the fluidscope registry)"
    tip = [f"{op.type}  (block {b}, op {i})", doc, f"role: {role}"]
    if (b, i) in d.grad_of:
        tip.append(d.grad_of[(b, i)])
    tip += [f"{n} = {t}" for n, t in non_default_attrs(op.type, attrs)]
    tip += [f"in  {v.parameter}: {', '.join(v.arguments)}" for v in op.inputs]
    tip += [f"out {v.parameter}: {', '.join(v.arguments)}" for v in op.outputs]
    style = {"id": text(op_key(b, i)), "tooltip": text(*tip),
             "fillcolor": ROLE_STYLE[role][0], "style": "rounded,filled"}
    label = text(op.type)
    if op.type in ("feed", "fetch"):
        col = attrs.get("col", (None, "?"))[1]
        label = text(f"{op.type} {col}")
        style.update(shape="invhouse" if op.type == "feed" else "house", style="filled",
                     fontsize="8", height="0.25")
    if opdef is None:
        style["style"] += ",dashed"
    _highlighted(style, d.highlight.get(op_key(b, i)), d)
    _node(g, f"op_{b}_{i}", label, **style)


def _group_node(d, g, group):
    infos = [d.infos[group.block][i] for i in group.members]
    roles = {info.role for info in infos}
    d.roles_drawn.update(roles)
    fill_role = next((r for r in ("loss", "loss_grad") if r in roles),
                     {"forward": "forward", "backward": "backward",
                      "optimize": "optimize"}[group.phase])
    title = group_title(group.namescope, group.phase)
    hidden = sorted(d.internal.get(d.layer_of(group), []))
    tip = [f"layer {layer_name(group.namescope)}: {len(infos)} {group.phase} op(s) collapsed "
           f"(namescope {group.namescope}, block {group.block})"]
    tip += [f"#{i} {info.op.type}" for i, info in zip(group.members, infos)]
    if hidden:
        more = f" and {len(hidden) - _HIDDEN_SHOWN} more" if len(hidden) > _HIDDEN_SHOWN else ""
        tip.append("hidden inside: " + ", ".join(hidden[:_HIDDEN_SHOWN]) + more)
    style = {"id": text(group.key), "tooltip": text(*tip), "shape": "box3d",
             "fillcolor": ROLE_STYLE[fill_role][0], "style": "filled"}
    _highlighted(style, d.highlight.get(group.key), d)
    _node(g, node_name(group.key), text(title, *type_lines(info.op.type for info in infos)),
          **style)


def _var_node(d, g, key):
    node = d.var_nodes[key]
    vd, name = node.desc, node.name
    lines = [name]
    if vd is not None and d.opts.show_shapes:
        lines.append(describe_var_type(vd))
    if vd is None:
        tip = [name, f"not declared in block {node.block} or the blocks it sees"]
        style = {"shape": "ellipse", "style": "dashed", "color": "#999999"}
    else:
        tip = [name, describe_var_type(vd)]
        tip += [f for f in ("persistable", "is_parameter", "stop_gradient") if getattr(vd, f)]
        style = {"shape": "ellipse"}
        if vd.is_parameter or vd.persistable:
            style = {"shape": "cylinder", "style": "filled",
                     "fillcolor": "#fff2cc" if vd.is_parameter else "#eeeeee"}
    shape = d.shape_of(key)
    if shape is not None and shape.runtime:
        tip.append(shape.describe())
    if node.copies:
        tip.append(f"read by {node.copies + 1} ops: drawn beside each of them")
    if GRAD_SUFFIX in name:
        style.update(style="dashed", color="#b03a2e", fontcolor="#b03a2e")
    name_in_dot = node_name(key)
    for k in range(node.copies + 1):
        _node(g, name_in_dot if k == 0 else f"{name_in_dot}@{k}", text(*lines), id=text(key),
              tooltip=text(*tip), **style)


def _block_label(d, owner, s):
    forward = d.desc.blocks[s].forward_block_idx
    if forward >= 0:
        return f"block {s} (grad of block {forward})"
    if is_recurrent(d.infos[owner[0]][owner[1]].attrs):
        return f"block {s} (step)"
    return f"block {s}"


def _emit_block(d, g, b):
    for key in d.vars_by_block.get(b, []):
        _var_node(d, g, key)
    owners = d.children.get(b, {})
    drawn_groups = set()
    for i in d.visible(b):
        rep = d.rep[(b, i)]
        if rep in d.groups:
            if rep not in drawn_groups:
                drawn_groups.add(rep)
                _group_node(d, g, d.groups[rep])
        elif i not in owners:
            _op_node(d, g, b, i)
        else:
            _emit_owner(d, g, b, i, owners[i])


def _emit_owner(d, g, b, i, subs):
    with g.subgraph(name=f"cluster_op_{b}_{i}") as c:
        style = {"label": "", "style": "dashed", "color": "#888888"}
        if (b, i) in d.enclosing_clusters:
            style.update(_HIGHLIGHT["enclosing"])
        c.attr(**style)
        _op_node(d, c, b, i)
        for s in subs:
            with c.subgraph(name=f"cluster_block_{s}") as sub:
                sub.attr(label=text(_block_label(d, (b, i), s)), style="rounded,filled",
                         fillcolor="#f7f7f7", color="#aaaaaa", id=f"block:{s}")
                _emit_block(d, sub, s)


def emit(d, g):
    """Write the collected drawing ``d`` into the graphviz graph ``g``."""
    for key in d.vars_by_block.get(None, []):  # declared above the root block
        _var_node(d, g, key)
    _emit_block(d, g, d.root)
    owned = {s for owners in d.children.values() for subs in owners.values() for s in subs}
    for b in d.rendered[1:]:
        if b not in owned:  # a block no op owns: its own top-level cluster
            with g.subgraph(name=f"cluster_block_{b}") as sub:
                sub.attr(label=text(f"block {b} (no owner op)"), style="rounded,dashed",
                         id=f"block:{b}")
                _emit_block(d, sub, b)
    label = "xlabel" if d.large else "label"
    for e in d.edges:
        _edge(g, e.tail, e.head, {label if k == "label" else k:
                                  text(v) if k.endswith("label") or k == "tooltip" else v
                                  for k, v in e.attrs.items()})


# (kind, glyph, colour, words) of the node shapes and edge styles the legend explains
_SHAPE_ROWS = (
    ("op", "&#9634;", "#555555", "op (box; dashed: not in the registry)"),
    ("group", "&#9635;", "#555555", "layer drawn as one box (double-click opens it)"),
    ("var", "&#9711;", "#555555", "variable [dims] dtype lod"),
    ("parameter", "&#9707;", "#b8860b", "parameter (cylinder)"),
    ("persistable", "&#9707;", "#9a9a9a", "persistable: optimizer state, counters"),
    ("gradient", "&#9711;", "#b03a2e", "gradient @GRAD (dashed)"),
    ("feed", "&#8962;", "#555555", "feed / fetch"),
)
_EDGE_ROWS = (
    ("data", "&#8212;&#8212;&#9654;", "#555555", "data flow (label: shape, LoD)"),
    ("parameter", "&#8212;&#8212;&#9654;", "#b8860b", "a parameter read"),
    ("persistable", "- - &#9654;", "#9a9a9a", "persistable state read / updated"),
    ("gradient", "&#8212;&#8212;&#9654;", "#b03a2e", "gradient flow (mirrors the forward)"),
    ("pair", "&#183; &#183; &#183; &#183;", "#c0504d", "grad op &#8596; its forward op"),
    ("memory", "- - &#9654;", "#1f77b4", "memory: frame t &#8594; t + 1"),
    ("boot", "&#8212;&#8212;&#9654;", "#1f77b4", "boot / static input of a recurrent step"),
)


def legend_rows(roles, shapes=None, edges=None):
    """The legend as data: ``[(section, colour or glyph, colour, words)]``; roles drawn,
    then every node shape and edge style (all of them unless ``shapes``/``edges`` name
    the kinds drawn)."""
    rows = [("role", ROLE_STYLE[r][0], ROLE_STYLE[r][0], ROLE_STYLE[r][1])
            for r in ROLE_STYLE if r in roles]
    rows += [("shape", glyph, colour, words) for kind, glyph, colour, words in _SHAPE_ROWS
             if shapes is None or kind in shapes]
    rows += [("edge", glyph, colour, words) for kind, glyph, colour, words in _EDGE_ROWS
             if edges is None or kind in edges]
    return rows


def legend(g, roles, shapes=None, edges=None):
    """A legend node: op colours by role, node shapes and edge styles."""
    cells = []
    for section, glyph, colour, words in legend_rows(roles, shapes, edges):
        if section == "role":
            left = f'<TD BGCOLOR="{colour}" WIDTH="14"> </TD>'
        else:
            left = f'<TD BORDER="0"><FONT COLOR="{colour}">{glyph}</FONT></TD>'
        cells.append(f'<TR>{left}<TD BORDER="0" ALIGN="LEFT">{words}</TD></TR>')
    g.node("legend", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
                     f'{"".join(cells)}</TABLE>>', shape="plaintext", fontsize="10", id="legend")
