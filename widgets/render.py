"""Program -> Graphviz DOT: the graph view of a ProgramDesc, as a pure function.

``program_to_dot`` reads a ProgramDesc (or anything with ``.desc``, such as a designer
Program) and returns DOT source built with the ``graphviz`` package; it writes no file
and displays nothing, so tests assert on the text and a system Graphviz is optional.
``dot_to_svg`` lays the source out with the system ``dot`` when there is one.

Drawing conventions:

* ops are boxes filled by their ``op_role`` attribute (forward 0, backward 1,
  optimize 2, the loss bit 256); a legend lists the roles drawn;
* variables are ellipses labelled ``name`` and ``[dims] dtype`` (``-1`` shown as
  ``?``); parameters and other persistable vars are cylinders, gradients
  (``@GRAD``) dashed and red;
* an op owning sub-blocks (a BLOCK/BLOCKS attribute such as ``sub_block``) sits in a
  dashed cluster together with one nested cluster per sub-block;
* ``feed``/``fetch`` ops are small house shapes and their holder vars are not drawn.

Node names are ``op_<block>_<idx>`` and ``var_<block>_<escaped name>`` (the block
that declares the var); each node's ``id`` attribute is the selection key the
widgets use: ``op:<block>:<idx>`` or ``var:<block>:<name>``.
"""
from __future__ import annotations

import re
import shutil

import graphviz

from fluidscope.engine import registry
from fluidscope.engine.dtypes import dtype_name
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.proto import framework_pb2 as pb
from fluidscope.engine.registry import EMPTY_VAR, GRAD_SUFFIX, REQUIRED, AttrType

MODES = ("forward", "backward", "all")
# role kind -> (fill colour, legend text); Paddle's OpRole bits decide the kind.
ROLE_STYLE = {
    "forward": ("#dae8fc", "forward"),
    "loss": ("#f8cecc", "loss"),
    "backward": ("#ffe6cc", "backward"),
    "loss_grad": ("#ffc285", "loss gradient seed"),
    "optimize": ("#d5e8d4", "optimize"),
}
_MODE_ROLES = {
    "forward": {"forward", "loss"},
    "backward": {"forward", "loss", "backward", "loss_grad"},
    "all": set(ROLE_STYLE),
}
_HOLDER_TYPES = (pb.VarType.FEED_MINIBATCH, pb.VarType.FETCH_LIST)
_HIDDEN_ATTRS = {"op_role", "op_callstack"}  # role is the colour; call stacks are long
_HIGHLIGHT = {"color": "#d62728", "penwidth": "3"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


# ---------------------------------------------------------------- small pieces
def role_kind(role: int) -> str:
    """Paddle OpRole bits -> one of ``ROLE_STYLE``'s keys.

    Optimize (2) and LRSched (16) are ``optimize``; Backward (1) is ``backward``,
    ``loss_grad`` with the Loss bit (257); Loss alone (256) is ``loss``; anything
    else, including NotSpecified (4096), is ``forward``."""
    if role & 2 or role & 16:
        return "optimize"
    if role & 1:
        return "loss_grad" if role & 256 else "backward"
    return "loss" if role & 256 else "forward"


def op_key(block: int, idx: int) -> str:
    """Selection key of an op: ``op:<block>:<idx>``."""
    return f"op:{block}:{idx}"


def var_key(block: int, name: str) -> str:
    """Selection key of a variable: ``var:<declaring block>:<name>``."""
    return f"var:{block}:{name}"


def _safe(name: str) -> str:
    """Reversible DOT-safe spelling: keeps ``[A-Za-z0-9_.]``, writes others as -hex-."""
    return _UNSAFE.sub(lambda m: f"-{ord(m.group()):x}-", name)


def _text(*lines) -> str:
    """An escString of literal ``lines``: backslashes doubled (so ``\\N`` or ``\\l``
    in a name stay text), lines joined by DOT's ``\\n``, never read as HTML."""
    return graphviz.nohtml("\\n".join(str(s).replace("\\", "\\\\") for s in lines))


def _attr_values(op) -> dict:
    out = {}
    for a in op.attrs:
        try:
            out[a.name] = (a.type, registry.attr_from_proto(a))
        except FluidscopeError:
            out[a.name] = (a.type, "?")  # SCALAR and friends: shown, not decoded
    return out


def _role_of(attrs: dict) -> str:
    value = attrs.get("op_role", (AttrType.INT, 0))[1]
    return role_kind(value if isinstance(value, int) else 0)


def _sub_blocks(attrs: dict) -> list:
    return [b for attr_type, value in attrs.values()
            for b in ([value] if attr_type == AttrType.BLOCK else
                      value if attr_type == AttrType.BLOCKS else [])]


def _dtype_text(data_type) -> str:
    try:
        return dtype_name(data_type)
    except FluidscopeError:  # bf16, complex...: no numpy dtype, still has a name
        if data_type in pb.VarType.Type.values():
            return pb.VarType.Type.Name(data_type).lower()
        return str(data_type)


def describe_var_type(var) -> str:
    """``'[?, 10] float32'`` for a dense tensor VarDesc (-1 shown as ``?``); other
    kinds get a short phrase (``'rows [?, 8] float32'``, ``'step_scopes'``)."""
    kind = var.type.type
    if kind == pb.VarType.DENSE_TENSOR:
        tensor, lod, prefix = var.type.dense_tensor.tensor, var.type.dense_tensor.legacy_lod_level, ""
    elif kind == pb.VarType.SELECTED_ROWS:
        tensor, lod, prefix = var.type.selected_rows, 0, "rows "
    elif kind == pb.VarType.DENSE_TENSOR_ARRAY:
        tensor, lod, prefix = var.type.tensor_array.tensor, var.type.tensor_array.legacy_lod_level, \
            "array of "
    else:
        return pb.VarType.Type.Name(kind).lower()
    dims = ", ".join("?" if d < 0 else str(d) for d in tensor.dims)
    text = f"{prefix}[{dims}] {_dtype_text(tensor.data_type)}"
    return text + (f" lod={lod}" if lod else "")


def _format_value(name, attr_type, value) -> str:
    if attr_type == AttrType.INT and name.endswith("dtype"):
        return _dtype_text(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        items = [f"{v:g}" if isinstance(v, float) else repr(v) if isinstance(v, str) else str(v)
                 for v in value[:8]]
        return "[" + ", ".join(items) + (", ..." if len(value) > 8 else "") + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _same(value, default) -> bool:
    """Equality that forgives float32 rounding (proto stores FLOAT as float32)."""
    if isinstance(value, list) and isinstance(default, list):
        return len(value) == len(default) and all(_same(a, b) for a, b in zip(value, default))
    if isinstance(value, float) and isinstance(default, (int, float)):
        return abs(value - default) <= 1e-6 * max(1.0, abs(default))
    return value == default


def non_default_attrs(op_type: str, attrs: dict) -> list:
    """``[(name, text)]`` of the attributes of an op that differ from the registry's
    defaults (all of them for an op the registry does not know)."""
    opdef = registry.get(op_type) if registry.has(op_type) else None
    out = []
    for name, (attr_type, value) in sorted(attrs.items()):
        if name in _HIDDEN_ATTRS:
            continue
        spec = opdef.attr_by_name.get(name) if opdef else None
        if spec is not None and spec.default is not REQUIRED and _same(value, spec.default):
            continue
        out.append((name, _format_value(name, attr_type, value)))
    return out


# ------------------------------------------------------------------ the graph
class _Drawing:
    """One rendering: decides what is visible, then emits nodes, clusters, edges."""

    def __init__(self, desc, root, mode, highlight, show_shapes):
        self.desc, self.root, self.highlight, self.show_shapes = desc, root, highlight, show_shapes
        self.roles = _MODE_ROLES[mode]
        self.forward_only = mode == "forward"
        self.declared = [{v.name: v for v in b.vars} for b in desc.blocks]
        self.ops = [[(op, _attr_values(op)) for op in b.ops] for b in desc.blocks]
        self.referenced = {n for b in desc.blocks for op in b.ops
                           for v in list(op.inputs) + list(op.outputs) for n in v.arguments}
        self.children = {}    # block -> [(op idx, [sub-block idx])] of visible owners
        self.rendered = []    # blocks drawn, in claim order
        self.var_nodes = {}   # (declaring block | None, name) -> (node, VarDesc | None, block)
        self.vars_by_block = {}
        self.edges = []
        self.roles_drawn = set()

    def owner_block(self, block, name):
        """Index of the block declaring ``name`` seen from ``block`` (None: undeclared)."""
        while block >= 0:
            if name in self.declared[block]:
                return block
            block = self.desc.blocks[block].parent_idx
        return None

    def visible_ops(self, block):
        return [(i, op, attrs) for i, (op, attrs) in enumerate(self.ops[block])
                if _role_of(attrs) in self.roles]

    def claim(self, block, claimed):
        """Walk the blocks reachable from ``block`` through visible owner ops."""
        self.rendered.append(block)
        claimed.add(block)
        for i, op, attrs in self.visible_ops(block):
            subs = [s for s in _sub_blocks(attrs)
                    if 0 <= s < len(self.desc.blocks) and s not in claimed]
            if subs:
                self.children.setdefault(block, []).append((i, subs))
            for s in subs:
                if s not in claimed:  # a block listed twice is drawn once
                    self.claim(s, claimed)

    def is_holder(self, block, name, op_type):
        owner = self.owner_block(block, name)
        if owner is not None:
            return self.declared[owner][name].type.type in _HOLDER_TYPES
        return op_type in ("feed", "fetch") and name in ("feed", "fetch")

    def add_var(self, block, name, home):
        owner = self.owner_block(block, name)
        key = (owner, name)
        if key not in self.var_nodes:
            b = owner if owner is not None else home
            vd = self.declared[owner][name] if owner is not None else None
            self.var_nodes[key] = (f"var_{b}_{_safe(name)}", vd, b)
            self.vars_by_block.setdefault(b if b in self.rendered else None, []).append(key)
        return self.var_nodes[key][0]

    def collect(self):
        claimed = set()
        self.claim(self.root, claimed)
        if self.root == 0:  # blocks no op refers to would otherwise vanish from view
            owned = {s for ops in self.ops for _, a in ops for s in _sub_blocks(a)}
            for b in range(1, len(self.desc.blocks)):
                if b not in owned and b not in claimed:
                    self.claim(b, claimed)
        for b in self.rendered:
            for i, op, attrs in self.visible_ops(b):
                self.collect_edges(b, i, op)
            for name, vd in self.declared[b].items():
                if name in self.referenced or vd.type.type in _HOLDER_TYPES:
                    continue
                if not (self.forward_only and GRAD_SUFFIX in name):
                    self.add_var(b, name, b)

    def collect_edges(self, b, i, op):
        """var -> op for inputs, op -> var for outputs; slot names label the ends of
        the edges only where an op has several slots on that side."""
        node = f"op_{b}_{i}"
        inputs = [(v.parameter, n) for v in op.inputs for n in v.arguments]
        outputs = [(v.parameter, n) for v in op.outputs for n in v.arguments]
        in_names = {n for _, n in inputs}
        for args, is_input in ((inputs, True), (outputs, False)):
            several = len({s for s, n in args if n != EMPTY_VAR}) > 1
            for slot, name in args:
                if name == EMPTY_VAR or self.is_holder(b, name, op.type):
                    continue
                var, label = self.add_var(b, name, b), slot if several else None
                self.edges.append((var, node, "head", label, False) if is_input
                                  else (node, var, "tail", label, name in in_names))

    # ------------------------------------------------------------- emission
    def op_node(self, g, b, i):
        op, attrs = self.ops[b][i]
        role = _role_of(attrs)
        self.roles_drawn.add(role)
        opdef = registry.get(op.type) if registry.has(op.type) else None
        doc = opdef.doc if opdef else "(not in the fluidscope registry)"
        tip = [f"{op.type}  (block {b}, op {i})", doc, f"role: {role}"]
        tip += [f"{n} = {t}" for n, t in non_default_attrs(op.type, attrs)]
        tip += [f"in  {v.parameter}: {', '.join(v.arguments)}" for v in op.inputs]
        tip += [f"out {v.parameter}: {', '.join(v.arguments)}" for v in op.outputs]
        style = {"id": _text(op_key(b, i)), "tooltip": _text(*tip),
                 "fillcolor": ROLE_STYLE[role][0], "style": "rounded,filled"}
        label = _text(op.type)
        if op.type in ("feed", "fetch"):
            col = attrs.get("col", (None, "?"))[1]
            label = _text(f"{op.type} {col}")
            style.update(shape="invhouse" if op.type == "feed" else "house", style="filled",
                         fontsize="8", height="0.25")
        if opdef is None:
            style["style"] += ",dashed"
        if self.highlight == (b, i):
            style.update(_HIGHLIGHT, style=style["style"] + ",bold")
        g.node(f"op_{b}_{i}", label, **style)

    def var_node(self, g, key):
        node, vd, b = self.var_nodes[key]
        name = key[1]
        lines = [name]
        if vd is not None and self.show_shapes:
            lines.append(describe_var_type(vd))
        if vd is None:
            tip = [name, f"not declared in block {b} or its parents"]
            style = {"shape": "ellipse", "style": "dashed", "color": "#999999"}
        else:
            tip = [name, describe_var_type(vd)]
            tip += [f for f in ("persistable", "is_parameter", "stop_gradient") if getattr(vd, f)]
            style = {"shape": "ellipse"}
            if vd.is_parameter or vd.persistable:
                style = {"shape": "cylinder", "style": "filled",
                         "fillcolor": "#fff2cc" if vd.is_parameter else "#eeeeee"}
        if GRAD_SUFFIX in name:
            style.update(style="dashed", color="#b03a2e", fontcolor="#b03a2e")
        g.node(node, _text(*lines), id=_text(var_key(b, name)), tooltip=_text(*tip), **style)

    def emit_block(self, g, b):
        for key in self.vars_by_block.get(b, []):
            self.var_node(g, key)
        owners = dict(self.children.get(b, []))
        for i, _, _ in self.visible_ops(b):
            if i not in owners:
                self.op_node(g, b, i)
                continue
            with g.subgraph(name=f"cluster_op_{b}_{i}") as c:
                c.attr(label="", style="dashed", color="#888888")
                self.op_node(c, b, i)
                for s in owners[i]:
                    with c.subgraph(name=f"cluster_block_{s}") as sub:
                        sub.attr(label=_text(f"block {s}"), style="rounded,filled",
                                 fillcolor="#f7f7f7", color="#aaaaaa")
                        self.emit_block(sub, s)

    def emit(self, g):
        for key in self.vars_by_block.get(None, []):  # declared above the root block
            self.var_node(g, key)
        self.emit_block(g, self.root)
        owned = {s for subs in self.children.values() for _, ss in subs for s in ss}
        for b in self.rendered[1:]:
            if b not in owned:  # a block no op owns: its own top-level cluster
                with g.subgraph(name=f"cluster_block_{b}") as sub:
                    sub.attr(label=_text(f"block {b} (no owner op)"), style="rounded,dashed")
                    self.emit_block(sub, b)
        for tail, head, end, label, in_place in self.edges:
            attrs = {f"{end}label": _text(label)} if label else {}
            if in_place:  # Param -> sgd -> ParamOut (same var): an update, not a new rank
                attrs.update(constraint="false", style="dashed")
            g.edge(tail, head, **attrs)


def _legend(g, roles):
    rows = "".join(
        f'<TR><TD BGCOLOR="{ROLE_STYLE[r][0]}" WIDTH="14"> </TD>'
        f'<TD BORDER="0" ALIGN="LEFT">{ROLE_STYLE[r][1]}</TD></TR>'
        for r in ROLE_STYLE if r in roles)
    g.node("legend", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="2">'
                     f'{rows}</TABLE>>', shape="plaintext", fontsize="8", id="legend")


def normalize_highlight(highlight, block=0):
    """``None``, an op index in ``block``, ``(block, idx)`` or ``'op:<b>:<i>'`` ->
    ``(block, idx)`` or None."""
    if highlight is None:
        return None
    if isinstance(highlight, str):
        m = re.fullmatch(r"op:(\d+):(\d+)", highlight)
        if m:
            return int(m.group(1)), int(m.group(2))
    elif isinstance(highlight, int) and not isinstance(highlight, bool):
        return block, highlight
    elif isinstance(highlight, (tuple, list)) and len(highlight) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in highlight):
        return int(highlight[0]), int(highlight[1])
    raise FluidscopeError(
        f"highlight must be None, an op index, (block, op index) or 'op:<block>:<index>'; "
        f"got {highlight!r}")


def program_to_dot(program, *, block=0, mode="all", highlight=None, show_shapes=True,
                   rankdir="TB", legend=True) -> str:
    """DOT source of ``program`` (a Program or a ProgramDesc).

    Parameters
    ----------
    block : int
        The block drawn at top level; blocks reachable through sub-block attributes
        are nested inside their owner op's cluster.
    mode : {"forward", "backward", "all"}
        Forward ops only; forward and backward; or everything incl. optimizer ops.
        Only the variables the drawn ops touch (and vars no op uses) are drawn.
    highlight : None, int, (block, int) or "op:<block>:<idx>"
        An op drawn with a thick red border (an int is an index into ``block``).
    show_shapes : bool
        Put ``[dims] dtype`` under each variable's name.
    rankdir : {"TB", "LR", "BT", "RL"}
        Graphviz layout direction.
    legend : bool
        Add a small legend of the op roles drawn.
    """
    desc = getattr(program, "desc", program)
    if not hasattr(desc, "blocks"):
        raise FluidscopeError(
            f"program_to_dot: expected a Program or a ProgramDesc, got {type(program).__name__}")
    if mode not in MODES:
        raise FluidscopeError(f"program_to_dot: mode must be one of {list(MODES)}, got {mode!r}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise FluidscopeError(f"program_to_dot: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    if not 0 <= block < len(desc.blocks):
        raise FluidscopeError(
            f"program_to_dot: block {block} does not exist (the program has "
            f"{len(desc.blocks)} block(s))")
    drawing = _Drawing(desc, block, mode, normalize_highlight(highlight, block), show_shapes)
    drawing.collect()
    g = graphviz.Digraph(
        name="program",
        graph_attr={"rankdir": rankdir, "fontname": "Helvetica", "fontsize": "10",
                    "nodesep": "0.25", "ranksep": "0.3", "id": "program"},
        node_attr={"shape": "box", "fontname": "Helvetica", "fontsize": "10",
                   "height": "0.3", "margin": "0.08,0.03"},
        edge_attr={"arrowsize": "0.6", "color": "#555555", "fontname": "Helvetica",
                   "fontsize": "7"})
    drawing.emit(g)
    if legend and drawing.roles_drawn:
        _legend(g, drawing.roles_drawn)
    return g.source


def has_dot() -> bool:
    """True when Graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def dot_to_svg(dot_source: str, engine: str = "dot") -> str:
    """Lay ``dot_source`` out with the system Graphviz; returns the ``<svg ...>`` element
    (the XML prolog and doctype are dropped so it can be put into a page as is).

    Raises FluidscopeError when Graphviz is not installed or rejects the source."""
    try:
        out = graphviz.Source(dot_source, engine=engine).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise FluidscopeError(
            "Graphviz's `dot` program is not installed, so the graph cannot be laid out "
            "here: install it (apt-get install graphviz, brew install graphviz or conda "
            "install graphviz), or use the DOT text from program_to_dot") from None
    except graphviz.CalledProcessError as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        raise FluidscopeError(f"Graphviz could not lay out the graph: {stderr or exc}") from None
    start = out.find("<svg")
    return out[start:] if start >= 0 else out


__all__ = ["program_to_dot", "dot_to_svg", "has_dot", "describe_var_type", "role_kind",
           "non_default_attrs", "normalize_highlight", "op_key", "var_key", "MODES",
           "ROLE_STYLE"]
