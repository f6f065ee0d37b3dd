"""One rendering, first as data: which blocks, ops, groups, vars and edges are drawn.

``Drawing.collect`` decides everything; ``emit`` turns the result into DOT.
Layout choices that keep big programs fast and readable:

* gradient edges (a grad op reading or writing an ``@GRAD`` var) are given to Graphviz
  reversed, with ``dir=back`` so the arrow still points the way the data flows: the
  backward is laid out as the mirror of the forward, each grad op next to its forward
  op, instead of a second chain below the first joined to it by long edges;
* a var many ops read and none writes (the learning rate read by every optimizer op) is
  drawn once beside each reader (``<node>@1``, ``<node>@2``... with the same ``id``)
  rather than with edges across the whole graph.
"""
from __future__ import annotations

from fluidscope.engine import registry
from fluidscope.engine.ir.lookup import owner_block
from fluidscope.engine.ir.names import EMPTY_VAR, GRAD_SUFFIX

from ..keys import group_key, op_key, var_key
from .highlight import node_name
from .model import Edge, Group, OpInfo, Options, Ref, VarNode
from .pairs import pair_grad_ops
from .recurrent import MEMORY_KINDS, is_recurrent, recurrent_links
from .shapes import declared_shape
from .standin import MEMORY_COLOUR, PAIR_COLOUR, legend_kinds, mark_highlight
from .text import (HOLDER_TYPES, MODE_ROLES, PHASE_OF_ROLE, attr_values, namescope_of,
                          role_of, sub_blocks)

HUB_READERS = 6  # readers from which an unwritten var is drawn beside each of them
# From this many nodes a drawing is "large": Graphviz gets its faster settings (see
# LARGE_GRAPH_ATTRS) and edge labels become xlabels, placed after the layout instead of
# taking a rank of their own (dot doubles every rank once one edge has a label).
LARGE_NODES = 1000
LARGE_GRAPH_ATTRS = {"newrank": "true", "nslimit": "0.02"}
_GRAD_ROLES = ("backward", "loss_grad")
_LINK_STYLE = {  # kind -> (colour, style)
    "memory": (MEMORY_COLOUR, "dashed"), "boot": (MEMORY_COLOUR, "solid"),
    "static": (MEMORY_COLOUR, "solid"), "in-link": ("#999999", "solid"),
    "out-link": ("#999999", "solid"), "memory grad": ("#b03a2e", "dashed"),
    "boot grad": ("#b03a2e", "solid"), "in-link grad": ("#999999", "solid"),
}
RUNTIME_COLOUR = "#1a5fb4"
# var <-> op edges by what the var is (the legend shows them; emit.legend)
EDGE_STYLE = {
    "parameter": {"color": "#b8860b", "penwidth": "1.4"},
    "persistable": {"color": "#9a9a9a", "style": "dashed"},
    "gradient": {"color": "#b03a2e"},
}


class Drawing:
    """Decides what one rendering of ``desc`` from block ``root`` shows."""

    def __init__(self, desc, root, options: Options):
        self.desc, self.root, self.opts = desc, root, options
        self.roles = MODE_ROLES[options.mode]
        self.declared = [{v.name: v for v in b.vars} for b in desc.blocks]
        self.infos = []
        for b in desc.blocks:
            row = []
            for op in b.ops:
                attrs = attr_values(op)
                row.append(OpInfo(op, attrs, role_of(attrs), namescope_of(attrs)))
            self.infos.append(row)
        self.owner_op = {}  # sub-block -> (block, op idx) of the op that owns it
        for b, row in enumerate(self.infos):
            for i, info in enumerate(row):
                for s in sub_blocks(info.attrs):
                    self.owner_op.setdefault(s, (b, i))
        self.referenced = {n for b in desc.blocks for op in b.ops
                           for v in list(op.inputs) + list(op.outputs) for n in v.arguments}
        self._owner = {}
        self.rendered, self.children, self.rep = [], {}, {}
        self.groups = {}
        self.var_nodes, self.vars_by_block = {}, {}
        self._var_meta = {}     # var key -> (name, home block, VarDesc | None)
        self.internal = {}      # layer_of(group) -> names hidden inside
        self.edges = []
        self.grad_of = {}       # (block, idx) of a grad op -> "grad of #3 mul"
        self.highlight = {}     # node key -> "current" | "stand-in" | "enclosing"
        self.current = None     # the node key marked current (the op or what stands in)
        self.current_note = ""  # why a stand-in is marked: the op itself is not drawn
        self.internal_outputs = set()  # names of outputs kept for backward only, hidden
        self.edge_kinds = set()  # EDGE_STYLE kinds drawn, for the legend
        self._pairs = {}
        self.enclosing_clusters = set()
        self.large = False
        self.roles_drawn = set()  # filled while emitting, for the legend
        self._shape_memo = {}

    # ------------------------------------------------------------ lookups
    def owner_block(self, block, name):
        """The block declaring ``name`` as seen from ``block`` (None: undeclared),
        searched as the engine searches (``ir.lookup.owner_block``)."""
        cache_key = (block, name)
        if cache_key not in self._owner:
            self._owner[cache_key] = owner_block(self.desc, block, name)
        return self._owner[cache_key]

    def var_for(self, block, name):
        """Key of the var ``name`` seen from ``block`` (remembering what it is)."""
        owner = self.owner_block(block, name)
        home = owner if owner is not None else block
        key = var_key(home, name)
        if key not in self._var_meta:
            desc = self.declared[owner][name] if owner is not None else None
            self._var_meta[key] = (name, home, desc)
        return key

    def visible(self, block):
        return [i for i, info in enumerate(self.infos[block]) if info.role in self.roles]

    def is_holder(self, block, name, op_type):
        owner = self.owner_block(block, name)
        if owner is not None:
            return self.declared[owner][name].type.type in HOLDER_TYPES
        return op_type in ("feed", "fetch") and name in ("feed", "fetch")

    def shape_of(self, key):
        """The Shape an edge of var ``key`` shows: the run's, else the declared one."""
        if key not in self._shape_memo:
            name, _, desc = self._var_meta[key]
            shapes = self.opts.shapes
            self._shape_memo[key] = shapes.get(key) or shapes.get(name) or declared_shape(desc)
        return self._shape_memo[key]

    def add_var(self, key):
        if key not in self.var_nodes:
            name, home, desc = self._var_meta[key]
            self.var_nodes[key] = VarNode(key, name, home, desc)
            self.vars_by_block.setdefault(home if home in self.rendered else None, []).append(key)
        return node_name(key)

    # ------------------------------------------------------------ collect
    def collect(self):
        claimed = set()
        self._claim(self.root, claimed)
        if self.root == 0:  # blocks no op refers to would otherwise vanish from view
            for b in range(1, len(self.desc.blocks)):
                if b not in self.owner_op and b not in claimed:
                    self._claim(b, claimed)
        if not self.opts.show_internal:
            self.internal_outputs = self._internal_outputs()
        refs = self._references()
        links = self._recurrent_links()
        linked = {key for _, tail, head in links for key in (tail, head)}
        internal = self._internal_vars(refs, linked)
        self._op_edges(refs, internal)
        for link, tail, head in links:
            self._link_edge(link, tail, head)
        forward_only = self.opts.mode == "forward"
        for b in self.rendered:
            for name, vd in self.declared[b].items():
                if name in self.referenced or vd.type.type in HOLDER_TYPES:
                    continue
                if not (forward_only and GRAD_SUFFIX in name):
                    self.add_var(self.var_for(b, name))
        if self.opts.pair_grads and self.opts.mode != "forward":
            self._grad_pairs()
        self._split_hubs()
        self._mark_highlight()
        nodes = len(self.groups) + sum(1 + v.copies for v in self.var_nodes.values())
        nodes += sum(1 for rep in self.rep.values() if rep.startswith("op:"))
        self.large = nodes >= LARGE_NODES

    def _claim(self, block, claimed):
        """Walk the blocks reachable from ``block`` through visible, unfolded owner ops."""
        self.rendered.append(block)
        claimed.add(block)
        folded = self._folded(block)
        for i in self.visible(block):
            info = self.infos[block][i]
            if i in folded:  # a folded op's sub-blocks are inside its layer's box
                key, scope, phase = folded[i]
                self.groups.setdefault(key, Group(key, block, scope, phase)).members.append(i)
                self.rep[(block, i)] = key
                continue
            self.rep[(block, i)] = op_key(block, i)
            subs = [s for s in sub_blocks(info.attrs)
                    if 0 <= s < len(self.desc.blocks) and s not in claimed]
            if subs:
                self.children.setdefault(block, {})[i] = subs
            for s in subs:
                if s not in claimed:  # a block listed twice is drawn once
                    self._claim(s, claimed)

    def _folded(self, block):
        """op idx -> (group key, namescope, phase) of the visible ops of ``block`` drawn
        in a collapsed layer's box. A box of one op without sub-blocks would only hide
        that op's name, so such an op stays itself."""
        folding = self.opts.folding
        if folding is None or not folding.active:
            return {}
        found = {}
        for i in self.visible(block):
            info = self.infos[block][i]
            scope = folding.group_of(info.namescope)
            if scope is not None:
                phase = PHASE_OF_ROLE[info.role]
                found[i] = (group_key(block, scope, phase), scope, phase)
        members = {}
        for key, _, _ in found.values():
            members[key] = members.get(key, 0) + 1
        return {i: g for i, g in found.items()
                if members[g[0]] > 1 or sub_blocks(self.infos[block][i].attrs)}

    def _references(self):
        refs = []
        for b in self.rendered:
            for i in self.visible(b):
                info = self.infos[b][i]
                op, rep = info.op, self.rep[(b, i)]
                inputs = [(v.parameter, n) for v in op.inputs for n in v.arguments]
                outputs = [(v.parameter, n) for v in op.outputs for n in v.arguments]
                in_names = {n for _, n in inputs}
                for args, is_input in ((inputs, True), (outputs, False)):
                    # slot names label edge ends only where an op has several slots there
                    # (once per slot: five "parameters" labels at one node overlap)
                    several = len({s for s, n in args if n != EMPTY_VAR
                                   and n not in self.internal_outputs}) > 1
                    labelled = set()
                    for slot, name in args:
                        if name == EMPTY_VAR or self.is_holder(b, name, op.type) \
                                or name in self.internal_outputs:
                            continue
                        label = slot if several and rep.startswith("op:") \
                            and slot not in labelled else None
                        labelled.add(slot)
                        refs.append(Ref(rep, self.var_for(b, name), is_input, label,
                                         info.role, not is_input and name in in_names))
        return refs

    def _internal_outputs(self):
        """Names written by an output slot the registry marks ``intermediate`` (XShape,
        SavedMean, ...: kept for the backward only) that no forward op reads: hidden
        unless ``show_internal``."""
        found, read_forward = set(), set()
        for b in self.rendered:
            for info in self.infos[b]:
                op = info.op
                if info.role in ("forward", "loss"):
                    read_forward.update(n for v in op.inputs for n in v.arguments)
                opdef = registry.get(op.type) if registry.has(op.type) else None
                if opdef is None:
                    continue
                for v in op.outputs:
                    slot = opdef.output_slot(v.parameter)
                    if slot is not None and slot.intermediate:
                        found.update(n for n in v.arguments if n != EMPTY_VAR)
        return found - read_forward

    def _internal_vars(self, refs, linked):
        """Vars written and read only inside one collapsed layer (its forward and grad
        boxes together, in the block and its grad block): hidden. A var read outside,
        written but never read (a parameter's gradient, the last output), or linked
        (memories, boot values, in/out-links: ``linked``) stays."""
        if not self.groups:
            return set()
        seen = {}  # var key -> [layers, written inside, read inside, used outside]
        for r in refs:
            group = self.groups.get(r.rep)
            state = seen.setdefault(r.var, [set(), False, False, False])
            if group is None:
                state[3] = True
            else:
                state[0].add(self.layer_of(group))
                state[2 if r.is_input else 1] = True
        hidden = set()
        for key, (layers, written, read, outside) in seen.items():
            if written and read and not outside and len(layers) == 1 and key not in linked:
                hidden.add(key)
                self.internal.setdefault(next(iter(layers)), []).append(self._var_meta[key][0])
        return hidden

    def layer_of(self, group):
        """(block, namescope) of a group's layer; a grad block's groups belong to the
        layer of their forward block (the step's ``/h/`` and its gradient are one)."""
        forward = self.desc.blocks[group.block].forward_block_idx
        return (forward if forward >= 0 else group.block), group.namescope

    def _op_edges(self, refs, internal):
        done = set()
        for r in refs:
            if r.var in internal:
                continue
            if not r.rep.startswith("op:"):  # a group draws each var on each side once
                if (r.rep, r.var, r.is_input) in done:
                    continue
                done.add((r.rep, r.var, r.is_input))
            var, op = self.add_var(r.var), node_name(r.rep)
            reverse = r.role in _GRAD_ROLES and GRAD_SUFFIX in self._var_meta[r.var][0]
            attrs = {}
            if r.slot:
                attrs[("head" if r.is_input != reverse else "tail") + "label"] = r.slot
            if r.in_place:  # Param -> sgd -> ParamOut (same var): an update, not a new rank
                attrs.update(constraint="false", style="dashed")
            self._shape_label(r.var, attrs)
            kind = self._edge_kind(r.var)
            if kind is not None:
                self.edge_kinds.add(kind)
                for k, v in EDGE_STYLE[kind].items():
                    attrs[k] = f"{attrs[k]},{v}" if k == "style" and k in attrs else v
            if reverse:
                attrs["dir"] = "back"
            tail, head = (var, op) if r.is_input != reverse else (op, var)
            self.edges.append(Edge(tail, head, attrs, r.var, r.is_input, reverse))

    def _edge_kind(self, key):
        """"parameter", "persistable", "gradient" or None (a plain activation)."""
        name, _, desc = self._var_meta[key]
        if desc is not None and desc.is_parameter:
            return "parameter"
        if desc is not None and desc.persistable:
            return "persistable"
        return "gradient" if GRAD_SUFFIX in name else None

    def _shape_label(self, key, attrs):
        shape = self.shape_of(key) if self.opts.edge_labels else None
        if shape is not None:
            attrs["label"] = shape.label()
            if shape.runtime:
                attrs.update(fontcolor=RUNTIME_COLOUR, labelfontcolor="#555555")

    def _link_end(self, block, name):
        if name == EMPTY_VAR or not 0 <= block < len(self.desc.blocks):
            return None
        if self.owner_block(block, name) is None and name not in self.referenced:
            return None  # neither declared nor used: nothing to point at
        return self.var_for(block, name)

    def _recurrent_links(self):
        """[(Link, tail var key, head var key)] of the recurrent ops drawn open."""
        found = []
        for b, owners in self.children.items():
            for i, subs in owners.items():
                info = self.infos[b][i]
                if not is_recurrent(info.attrs):
                    continue
                for s in subs:
                    is_grad = self.desc.blocks[s].forward_block_idx >= 0
                    for link in recurrent_links(info.op, info.attrs, b, s, is_grad):
                        tail, head = self._link_end(*link.tail), self._link_end(*link.head)
                        if tail is not None and head is not None and tail != head:
                            found.append((link, tail, head))
        return found

    def _link_edge(self, link, tail, head):
        colour, style = _LINK_STYLE[link.kind]
        attrs = {"style": style, "color": colour, "fontcolor": colour,
                 "tooltip": f"{link.kind}: {self._var_meta[tail][0]} -> {self._var_meta[head][0]}"}
        if link.kind not in ("in-link", "out-link", "in-link grad"):
            attrs["label"] = link.kind
        if link.kind in MEMORY_KINDS:  # frame t to frame t + 1: not a rank in one frame
            attrs["constraint"] = "false"
        tail_node, head_node = self.add_var(tail), self.add_var(head)
        if link.gradient:  # mirrored like the other gradient edges
            attrs["dir"] = "back"
            tail_node, head_node = head_node, tail_node
        self.edges.append(Edge(tail_node, head_node, attrs))

    def pairs_of(self, b):
        """``pair_grad_ops`` of block ``b`` (grad op idx -> forward (block, idx)), once."""
        if b not in self._pairs:
            roles = [[info.role for info in row] for row in self.infos]
            self._pairs[b] = pair_grad_ops(self.desc, b, roles)
        return self._pairs[b]

    def _grad_pairs(self):
        done = set()
        for b in self.rendered:
            if not any(self.infos[b][i].role == "backward" for i in self.visible(b)):
                continue
            for g, (fb, fi) in self.pairs_of(b).items():
                grad_rep, fwd_rep = self.rep.get((b, g)), self.rep.get((fb, fi))
                if grad_rep is None or fwd_rep is None:
                    continue
                where = f" in block {fb}" if fb != b else ""
                self.grad_of[(b, g)] = f"grad of #{fi} {self.infos[fb][fi].op.type}{where}"
                if (fwd_rep, grad_rep) in done:
                    continue
                done.add((fwd_rep, grad_rep))
                tip = self.grad_of[(b, g)]
                if fwd_rep in self.groups:
                    tip = f"grad of layer {self.groups[fwd_rep].namescope.strip('/')}"
                self.edges.append(Edge(node_name(fwd_rep), node_name(grad_rep), {
                    "style": "dotted", "constraint": "false", "color": PAIR_COLOUR,
                    "arrowhead": "none", "tooltip": tip}))

    def _split_hubs(self):
        readers, written = {}, set()
        for e in self.edges:
            if e.var is not None:
                if e.reads:
                    readers.setdefault(e.var, []).append(e)
                else:
                    written.add(e.var)
        for key, edges in readers.items():
            if key in written or len(edges) < HUB_READERS:
                continue
            node = self.var_nodes[key]
            node.copies = len(edges) - 1
            for k, e in enumerate(edges[1:], 1):
                copy = f"{node_name(key)}@{k}"
                if e.reversed:
                    e.head = copy
                else:
                    e.tail = copy

    def _mark_highlight(self):
        mark_highlight(self)

    def legend_kinds(self):
        """(node shape kinds, edge style kinds) drawn: what the legend explains."""
        return legend_kinds(self)
