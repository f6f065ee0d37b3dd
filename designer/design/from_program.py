"""A program back as a design.

A program built with the Python API carries the record of its layer calls
(``Program.layer_calls``, see recording.py): each call becomes a node with the
arguments the user gave, its Variables becoming edges to the nodes that made them; a
mixed_layer's projections become its rows; a recurrent group's step calls become its
body, its sequence and StaticInput arguments step inputs, its ``memory`` calls memory
nodes linked to the inner node they name. Node ids are the names the layers got, so
the design rebuilds the same parameter and variable names.

A program without that record (loaded from a file) becomes one op node per op
(``op_nodes.py``).
"""
from __future__ import annotations

import inspect

from fluidscope.engine import DesignError

from .. import layer_specs
from ..layers.mixed import MixedLayer
from ..layers.mixed_inputs import MixedInput
from ..layers.recurrent import StaticInput
from ..param_attr import ParamAttr
from ..views import Variable
from . import validate
from .document import GROUP, LINK_SLOT, MEMORY, MIXED, STEP_INPUT, Document, Graph, Node, Ref, Row


def document_from_program(program, layers=False) -> Document:
    if not program.layer_calls:
        from .op_nodes import document_from_ops
        doc = document_from_ops(program)
        if layers:  # read the ops of each layer call back as that layer where it can
            from .lift import lift_layers
            doc = lift_layers(doc, program)
            _bump_counters(doc)
            validate.check_document(doc)
        return doc
    doc = Document()
    calls = [c for c in program.layer_calls if c.layer != "minimize"]
    produced = {}
    _Converter(doc).graph(calls, doc.graph, produced, {})
    for call in program.layer_calls:
        if call.layer == "minimize":
            _minimize(doc, call, produced)
    _bump_counters(doc)
    validate.check_document(doc)
    return doc


class _Converter:
    def __init__(self, doc):
        self.doc = doc

    def graph(self, calls, graph, produced, outer_produced):
        """Add ``calls`` to ``graph``; ``produced``: var name -> Ref in this graph."""
        rows = {id(c.output): c for c in calls if isinstance(c.output, MixedInput)}
        mixed = []  # rows may use layers made later, inside the layer's with block
        for call in calls:
            if isinstance(call.output, MixedInput):
                continue  # a row of the mixed layer that takes it
            node_id = call.arguments["name"] if call.layer == "data" else call.helper_name
            if call.layer == "memory":
                node = self.memory(call, produced, outer_produced)
            elif call.layer == GROUP:
                node = self.group(call, node_id, produced)
            else:
                node = Node(node_id, call.layer)
                self.fill(node, call, produced)
                if call.layer == MIXED:
                    mixed.append((node, call))
            graph.nodes[node.id] = node
            for k, var in enumerate(_outputs(call.output)):
                produced[var.name] = Ref(node.id, k)
        for node, call in mixed:
            node.rows = self.rows(call, rows, produced)
        return graph

    def fill(self, node, call, produced):
        spec = layer_specs.get(call.layer)
        for slot in spec.inputs:
            value = call.arguments.get(slot.name)
            if value is None or slot.kind in ("rows", "group"):
                continue
            node.inputs[slot.name] = ([_ref(v, produced, node.id, slot.name) for v in value]
                                      if isinstance(value, (list, tuple))
                                      else _ref(value, produced, node.id, slot.name))
        for attr in spec.attrs:
            if attr.name in call.arguments:
                node.attrs[attr.name] = _attr_value(call.arguments[attr.name], node.id, attr.name)

    def rows(self, call, rows, produced):
        items = call.output.items if isinstance(call.output, MixedLayer) else \
            _as_list(call.arguments.get("input"))
        result = []
        for item in items:
            record = rows.get(id(item))
            if record is None:
                raise DesignError(f"mixed_layer '{call.helper_name}': a row was not made by a "
                                  "projection or operator function")
            row = Node("", record.layer)
            self.fill(row, record, produced)
            result.append(Row(record.layer, row.inputs, row.attrs))
        return result

    def memory(self, call, produced, outer_produced):
        node = Node(self.doc.fresh_id(MEMORY), MEMORY, {"size": call.arguments["size"]})
        boot = call.arguments.get("boot_layer")
        if boot is not None:
            node.inputs["boot_layer"] = _ref(boot, outer_produced, node.id, "boot_layer")
        node.inputs[LINK_SLOT] = call.arguments["name"]  # a layer name: resolved by group()
        return node

    def group(self, call, node_id, produced):
        node = Node(node_id, GROUP, body=Graph())
        if "reverse" in call.arguments:
            node.attrs["reverse"] = _attr_value(call.arguments["reverse"], node_id, "reverse")
        inner = {}
        for outer, arg in zip(_as_list(call.arguments["input"]), call.step_args):
            static = isinstance(outer, StaticInput)
            source = outer.input if static else outer
            step_input = Node(self.doc.fresh_id(STEP_INPUT), STEP_INPUT,
                              {"static": True} if static else {},
                              {"outer": _ref(source, produced, node_id, "input")})
            node.body.nodes[step_input.id] = step_input
            inner[arg.name] = Ref(step_input.id)
        self.graph(call.body, node.body, inner, produced)
        for mem in (n for n in node.body.nodes.values() if n.layer == MEMORY):
            target = mem.inputs[LINK_SLOT]
            if target in node.body.nodes:
                mem.inputs[LINK_SLOT] = Ref(target)
            elif target in inner:
                mem.inputs[LINK_SLOT] = inner[target]
            else:
                raise DesignError(f"recurrent_group '{node_id}': memory('{target}') names no "
                                  "layer of its step")
        node.body.outputs = [_ref(v, inner, node_id, "outputs") for v in _outputs(call.output)]
        return node


def _outputs(output):
    if isinstance(output, MixedLayer):
        return [output.output]
    if isinstance(output, Variable):
        return [output]
    return [v for v in output if isinstance(v, Variable)] if isinstance(output, (list, tuple)) \
        else []


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _ref(value, produced, node_id, slot):
    var = value.output if isinstance(value, MixedLayer) else value
    if not isinstance(var, Variable) or var.name not in produced:
        raise DesignError(f"node '{node_id}': input '{slot}' is "
                          f"'{getattr(var, 'name', var)}', which no recorded layer made")
    return produced[var.name]


def _attr_value(value, node_id, name):
    """An argument as design data: a ParamAttr that only names a parameter is its name."""
    if isinstance(value, ParamAttr):
        if value.initializer is None and value.learning_rate == 1.0 and value.trainable:
            return value.name if value.name else None
        raise DesignError(f"node '{node_id}': {name}={value!r} (an initializer, learning rate "
                          "or frozen parameter) has no design form yet")
    if isinstance(value, tuple):
        return [_attr_value(v, node_id, name) for v in value]
    if isinstance(value, list):
        return [_attr_value(v, node_id, name) for v in value]
    if value is not None and not isinstance(value, (bool, int, float, str)):
        raise DesignError(f"node '{node_id}': {name}={value!r} has no design form")
    return value


def _minimize(doc, call, produced):
    """The loss and the optimizer of a recorded ``minimize``."""
    opt, loss = call.arguments["optimizer"], call.arguments["loss"]
    if doc.optimizer is not None:
        raise DesignError("the program has two minimize calls; a design has one optimizer")
    if call.arguments.get("parameter_list") or call.arguments.get("no_grad_set") or \
            opt.parameter_list:
        raise DesignError(f"{type(opt).__name__}.minimize: a parameter_list or no_grad_set has "
                          "no design form yet")
    doc.loss = _ref(loss, produced, "loss", "loss")
    settings = {"type": type(opt).__name__, "learning_rate": opt.learning_rate}
    for name, param in inspect.signature(type(opt).__init__).parameters.items():
        if name in ("self", "learning_rate", "parameter_list", "name"):
            continue
        value = getattr(opt, name)
        if value != param.default:
            settings[name] = value
    doc.optimizer = settings


def _bump_counters(doc):
    """Fresh ids after a conversion skip past every ``<layer>_<n>`` id it produced."""
    for node_id in doc.ids():
        prefix, _, number = node_id.rpartition("_")
        if prefix and number.isdigit():
            doc.counters[prefix] = max(doc.counters.get(prefix, 0), int(number) + 1)
