"""A program without a layer record (a loaded file) as a design of op nodes.

One ``variable`` node per variable no op writes (feeds, parameters) and one ``op`` node
per op (``layers/op_node.py``), in an order that declares the variables in the order
the program did: walking the block's variables, a variable no op writes is emitted
where it stands, and a variable an op writes first brings that op (and the ops before
it) in. Edges follow the data: an input is the node that last wrote that variable.
"""
from __future__ import annotations

import re

from google.protobuf import json_format

from fluidscope.engine import DesignError, registry

from . import validate
from .document import Document, Node, Ref


def document_from_ops(program) -> Document:
    desc = program.desc
    if len(desc.blocks) != 1:
        raise DesignError(f"the program has {len(desc.blocks)} blocks and no layer record; op "
                          "nodes of sub-blocks (a recurrent op's step) are not supported yet")
    block = desc.blocks[0]
    first_writer, first_reader = {}, {}
    for k, op in enumerate(block.ops):
        for slot in op.inputs:
            for name in slot.arguments:
                first_reader.setdefault(name, k)
        for slot in op.outputs:
            for name in slot.arguments:
                first_writer.setdefault(name, k)
    # A variable read before any op writes it (a parameter an optimizer updates) is a
    # variable node; the op that writes it later only updates it.
    first_writer = {n: k for n, k in first_writer.items() if first_reader.get(n, k + 1) > k}
    doc = Document()
    ids = {}
    emitted_ops = 0
    plan = []  # ("var", VarDesc) or ("op", index), in build order
    for var in block.vars:
        k = first_writer.get(var.name)
        if k is None:
            plan.append(("var", var))
        while k is not None and emitted_ops <= k:
            plan.append(("op", emitted_ops))
            emitted_ops += 1
    plan += [("op", k) for k in range(emitted_ops, len(block.ops))]

    writer = {}     # var name -> Ref of the node that last wrote it
    declared = set()
    for kind, item in plan:
        if kind == "var":
            node = Node(_node_id(doc, item.name, ids), "variable",
                        {"desc": json_format.MessageToDict(item)})
            writer[item.name] = Ref(node.id)
            declared.add(item.name)
        else:
            node = _op_node(doc, block, block.ops[item], writer, declared)
        doc.graph.nodes[node.id] = node
    validate.check_document(doc)
    return doc


def _op_node(doc, block, op, writer, declared):
    node = Node(doc.fresh_id(op.type), "op", {"type": op.type})
    for slot in op.inputs:
        refs = []
        for name in slot.arguments:
            if name not in writer:
                raise DesignError(f"op {op.type} reads '{name}', which nothing declares or "
                                  "writes before it")
            refs.append(writer[name])
        node.inputs[slot.parameter] = refs
    outputs, index = {}, 0
    for slot in op.outputs:
        outputs[slot.parameter] = []
        for name in slot.arguments:
            var = next((v for v in block.vars if v.name == name), None)
            data = {"name": name} if var is None or name in declared else \
                json_format.MessageToDict(var)
            declared.add(name)
            outputs[slot.parameter].append(data)
            writer[name] = Ref(node.id, index)
            index += 1
    node.attrs["outputs"] = outputs
    node.attrs["attrs"] = {a.name: registry.attr_from_proto(a) for a in op.attrs}
    return node


def _node_id(doc, var_name, ids):
    """A node id from a variable name (ids cannot hold '@' or '/')."""
    base = re.sub(r"[^\w.\-]", "_", var_name) or "var"
    node_id, k = base, 1
    while node_id in doc.ids():
        node_id, k = f"{base}_{k}", k + 1
    ids[var_name] = node_id
    return node_id
