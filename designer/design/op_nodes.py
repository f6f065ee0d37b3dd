"""A program without a layer record (a loaded file) as a design of op nodes.

One ``variable`` node per variable no op writes (feeds, parameters) and one ``op`` node
per op (``layers/op_node.py``), in an order that declares the variables in the order
the program did: walking the block's variables, a variable no op writes is emitted
where it stands, and a variable an op writes first brings that op (and the ops before
it) in. Edges follow the data: an input is the node that last wrote that variable.
"""
from __future__ import annotations

import collections
import re

from google.protobuf import json_format

from fluidscope.engine import DesignError, registry
from fluidscope.engine import framework_pb2 as pb

from . import validate
from .document import EMPTY, Document, Graph, Node, Ref


def document_from_ops(program) -> Document:
    doc = Document()
    doc.taken = set()  # ids given so far (bodies are attached to the document only later)
    doc.graph = _block_graph(doc, program.desc, 0, {}, {})
    del doc.taken
    validate.check_document(doc)
    return doc


def _block_graph(doc, desc, block_idx, outer_writer, writers):
    """The nodes of block ``block_idx``; ``outer_writer``: the enclosing blocks' var name
    -> Ref (a sub-block reads its parents' variables); ``writers``: block idx -> its
    writer map (a gradient block also reads its forward block's variables)."""
    block = desc.blocks[block_idx]
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
    emitted_ops = 0
    plan = []  # ("var", VarDesc) or ("op", index), in build order
    planned = set()
    by_name = {v.name: v for v in block.vars}

    def emit_ops_to(k):
        # An op whose input is a variable node declared later in the block (Paddle
        # writes its vars sorted by name: the ``feed`` holder after the ops' outputs)
        # brings that variable node in first.
        nonlocal emitted_ops
        while emitted_ops <= k:
            for slot in block.ops[emitted_ops].inputs:
                for name in slot.arguments:
                    if name in by_name and name not in first_writer and name not in planned:
                        planned.add(name)
                        plan.append(("var", by_name[name]))
            plan.append(("op", emitted_ops))
            emitted_ops += 1

    for var in block.vars:
        k = first_writer.get(var.name)
        if k is None and var.name not in planned:
            planned.add(var.name)
            plan.append(("var", var))
        if k is not None:
            emit_ops_to(k)
    emit_ops_to(len(block.ops) - 1)

    graph = Graph()
    forward = desc.blocks[block_idx].forward_block_idx
    if forward in writers:
        outer_writer = collections.ChainMap(writers[forward], outer_writer)
    writer = collections.ChainMap({}, outer_writer)  # var name -> Ref of its last writer
    writers[block_idx] = writer.maps[0]
    declared = set()
    for kind, item in plan:
        if kind == "var":
            node = Node(_node_id(doc, item.name), "variable",
                        {"desc": json_format.MessageToDict(item)})
            writer[item.name] = Ref(node.id)
            declared.add(item.name)
        else:
            node = _op_node(doc, desc, block, block.ops[item], writer, declared, writers)
        graph.nodes[node.id] = node
    return graph


def _op_node(doc, desc, block, op, writer, declared, writers):
    node_id = doc.fresh_id(op.type)
    while node_id in doc.taken:
        node_id = doc.fresh_id(op.type)
    doc.taken.add(node_id)
    node = Node(node_id, "op", {"type": op.type})
    for slot in op.inputs:
        refs = []
        for name in slot.arguments:
            if name == EMPTY:
                refs.append(Ref(EMPTY))
                continue
            if name not in writer:
                raise DesignError(f"op {op.type} reads '{name}', which nothing declares or "
                                  "writes before it")
            refs.append(writer[name])
        node.inputs[slot.parameter] = refs
    sub_block = next((a.block_idx for a in op.attrs if a.type == pb.AttrType.BLOCK), None)
    if sub_block is not None:  # its step: a nested graph that reads this block's nodes
        node.body = _block_graph(doc, desc, sub_block, writer, writers)
        if desc.blocks[sub_block].HasField("forward_block_idx"):
            node.attrs["forward_block"] = desc.blocks[sub_block].forward_block_idx
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
    # (a sub_block attribute keeps its place; the rebuilt body's block index replaces it)
    node.attrs["attrs"] = {a.name: registry.attr_from_proto(a) for a in op.attrs}
    return node


def _node_id(doc, var_name):
    """A node id from a variable name (ids cannot hold '@' or '/')."""
    base = re.sub(r"[^\w.\-]", "_", var_name) or "var"
    node_id, k = base, 1
    while node_id in doc.taken:
        node_id, k = f"{base}_{k}", k + 1
    doc.taken.add(node_id)
    return node_id
