"""Designs and programs as readable Python (the ``.py`` export).

``design_to_python(doc)`` writes one line per layer with keyword arguments, in the
order ``Design.build`` replays them, a recurrent group's step as a nested ``def``, and
the optimizer's ``minimize``, all inside ``fd.design_guard`` (names from 0, no source
lines): executed, the script builds a ProgramDesc byte-identical to ``build()``'s.
``program_to_python(program)`` goes through ``Design.from_program``.
"""
from __future__ import annotations

import keyword
import re

from . import layer_specs
from .design.document import EMPTY, GROUP, LINK_SLOT, MEMORY, MIXED, STEP_INPUT, order

INDENT = "    "


def design_to_python(doc, main="main_program", startup="startup_program") -> str:
    names = _Names()
    lines = ['"""Built by fluidscope from a design: run it to rebuild the same programs."""',
             "import fluidscope.designer as fd", "",
             f"{main}, {startup} = fd.Program(), fd.Program()",
             f"with fd.design_guard({main}, {startup}):"]
    every = {n.id: n for n, _, _ in doc.walk()}  # ids are unique: a sub-block may read any
    body = _graph_lines(doc.graph, names, every, INDENT)
    lines += body or [INDENT + "pass"]
    if doc.loss is not None:
        loss = _ref(doc.loss, doc.graph.nodes[doc.loss.node], names)
        lines.append(f"{INDENT}loss = {loss}")
        if doc.optimizer is not None:
            settings = {k: v for k, v in doc.optimizer.items() if k != "type"}
            lines.append(f"{INDENT}fd.optimizer.{doc.optimizer['type']}({_kwargs(settings)})"
                         ".minimize(loss)")
    return "\n".join(lines) + "\n"


def program_to_python(program) -> str:
    """A script that rebuilds ``program`` (built with the Python API, or loaded: then one
    op per line), by way of ``Design.from_program``."""
    from .design import Design
    return Design.from_program(program).to_python()


# ------------------------------------------------------------------ graphs
def _graph_lines(graph, names, outer_nodes, indent):
    ids, _ = order(graph)
    lines = []
    nodes = {**outer_nodes, **graph.nodes}
    for nid in ids:
        node = graph.nodes[nid]
        if node.layer == STEP_INPUT:
            continue
        if node.layer == GROUP:
            lines += _group_lines(node, names, nodes, indent)
            continue
        if node.layer == "op" and node.body is not None:
            block = names.fresh(f"{node.id}_block")
            lines.append(f"{indent}with fd.op_block() as {block}:")
            lines += _graph_lines(node.body, names, nodes, indent + INDENT)
            lines.append(f"{indent}{names[nid]} = {_call(node, names, nodes, outer_nodes, block)}")
            continue
        lines.append(f"{indent}{names[nid]} = {_call(node, names, nodes, outer_nodes)}")
    return lines


def _group_lines(node, names, nodes, indent):
    body = node.body
    step_inputs = [n for n in body.nodes.values() if n.layer == STEP_INPUT]
    step = names.fresh(f"{node.id}_step")
    params = ", ".join(names[p.id] for p in step_inputs)
    lines = [f"{indent}def {step}({params}):"]
    lines += _graph_lines(body, names, nodes, indent + INDENT)
    outs = [_ref(r, body.nodes[r.node], names) for r in body.outputs]
    lines.append(f"{indent}{INDENT}return {outs[0] if len(outs) == 1 else '[' + ', '.join(outs) + ']'}")
    inputs = []
    for p in step_inputs:
        outer = _ref(p.inputs["outer"], nodes[p.inputs["outer"].node], names)
        inputs.append(f"fd.StaticInput({outer})" if p.attrs.get("static") else outer)
    extra = _kwargs({**node.attrs, "name": node.id})
    lines.append(f"{indent}{names[node.id]} = fd.recurrent_group({step}, [{', '.join(inputs)}], "
                 f"{extra})")
    return lines


def _call(node, names, nodes, outer_nodes, body=None):
    if node.layer == MEMORY:
        link = node.inputs[LINK_SLOT].node
        args = [repr(link)]
        if "boot_layer" in node.inputs:
            boot = node.inputs["boot_layer"]
            args.append(f"boot_layer={_ref(boot, outer_nodes[boot.node], names)}")
        return f"fd.memory({', '.join(a for a in args + [_kwargs(node.attrs)] if a)})"
    spec = layer_specs.get(node.layer)
    if node.layer == "op":  # an op node's inputs are by the op's own slots
        slots = ", ".join(f"{s!r}: [{', '.join(_op_input(r, nodes, names) for r in refs)}]"
                          for s, refs in node.inputs.items())
        parts = [f"inputs={{{slots}}}"] + ([f"block={body}"] if body else [])
    else:
        parts = [_inputs(node.inputs, spec, names, nodes)]
    if node.layer == MIXED:
        rows = [f"fd.{row.kind}({_row_args(row, names, nodes)})" for row in node.rows]
        parts.append(f"input=[{', '.join(rows)}]")
    parts.append(_kwargs(node.attrs))
    parts.append(f"name={node.id!r}")
    return f"fd.{node.layer}({', '.join(p for p in parts if p)})"


def _op_input(ref, nodes, names):
    return repr(EMPTY) if ref.node == EMPTY else _ref(ref, nodes[ref.node], names)


def _row_args(row, names, nodes):
    spec = layer_specs.get(row.kind)
    return ", ".join(p for p in (_inputs(row.inputs, spec, names, nodes), _kwargs(row.attrs)) if p)


def _inputs(inputs, spec, names, nodes):
    parts = []
    for slot in spec.input_names:
        if slot not in inputs:
            continue
        value = inputs[slot]
        if isinstance(value, list):
            text = "[" + ", ".join(_ref(r, nodes[r.node], names) for r in value) + "]"
        else:
            text = _ref(value, nodes[value.node], names)
        parts.append(f"{slot}={text}")
    return ", ".join(parts)


def _kwargs(values):
    return ", ".join(f"{k}={_literal(v)}" for k, v in values.items())


def _literal(value):
    """Python source for an attribute value; repr, except that non-finite floats (a
    fill_constant of NaN or Inf) are written as float('nan') / float('inf')."""
    if isinstance(value, float) and value != value:
        return "float('nan')"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "float('inf')" if value > 0 else "-float('inf')"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def returns_several(node):
    """Whether the node's layer returns a tuple/list (then outputs are indexed)."""
    if node.layer == GROUP:
        return len(node.body.outputs) > 1
    if node.layer == "softmax_with_cross_entropy":
        return bool(node.attrs.get("return_softmax"))
    if node.layer in (STEP_INPUT, MEMORY):
        return False
    if node.layer == "op":
        return True
    outputs = layer_specs.get(node.layer).outputs
    return len(outputs) > 1 or outputs[0].endswith("*")


def _ref(ref, node, names):
    return f"{names[ref.node]}[{ref.index}]" if returns_several(node) else names[ref.node]


class _Names:
    """Python identifiers for node ids (``fc_0``; ``n_1x`` for an id that is not one)."""

    def __init__(self):
        self.by_id, self.taken = {}, {"fd", "main_program", "startup_program", "loss"}

    def __getitem__(self, node_id):
        if node_id not in self.by_id:
            self.by_id[node_id] = self.fresh(node_id)
        return self.by_id[node_id]

    def fresh(self, wanted):
        base = re.sub(r"\W", "_", wanted)
        if not base or base[0].isdigit() or keyword.iskeyword(base):
            base = f"n_{base}"
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name
