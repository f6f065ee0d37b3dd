"""What the details panel of a GraphView shows for one node, as plain JSON-ready data.

``node_details(desc, key)`` reads the ProgramDesc only (pure, no widget): for an op its
type and documentation, the attributes that differ from the registry's defaults, each
input and output with its slot, shape, dtype and LoD level, the parameters it reads and
their element count, the layer (``op_namescope``) it belongs to and the user's source
line that made it (``op_callstack``); for a variable what it is and who writes and
reads it; for a layer's box its ops, parameters and source lines.
"""
from __future__ import annotations

import math

from fluidscope.designer.callsite import site_label, site_text
from fluidscope.engine import registry
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.lookup import owner_block
from fluidscope.engine.ir.names import EMPTY_VAR

from ..keys import NodeKey
from ..render.text import (attr_values, describe_var_type, namescope_of, non_default_attrs,
                           role_of, tensor_of)

_LISTED = 12  # readers / writers / ops named before "and N more"


def _var_desc(desc, block, name):
    owner = owner_block(desc, block, name)
    return None if owner is None else next(v for v in desc.blocks[owner].vars if v.name == name)


def _numel(var):
    found = tensor_of(var) if var is not None else None
    if found is None or any(d < 0 for d in found[0].dims):
        return None
    return math.prod(found[0].dims)


def _var_row(desc, block, slot, name):
    """One input or output: slot, name, shape/dtype/LoD text and what kind of var."""
    var = _var_desc(desc, block, name)
    found = tensor_of(var) if var is not None else None
    kind = ("parameter" if var is not None and var.is_parameter else
            "persistable" if var is not None and var.persistable else
            "gradient" if "@GRAD" in name else "variable")
    return {"slot": slot, "name": name, "kind": kind,
            "type": describe_var_type(var) if var is not None else "(not declared)",
            "lod": found[1] if found else 0,
            "numel": _numel(var)}


def _source(attrs):
    """(label, text) of the user's line that made the op, or ("", "")."""
    stack = attrs.get("op_callstack", (None, []))[1]
    site = next((s for s in reversed(stack or []) if isinstance(s, str) and s), "")
    if not site:
        return "", ""
    return site_label(site), site_text(site).strip()


def _more(items):
    extra = len(items) - _LISTED
    return items[:_LISTED] + ([f"and {extra} more"] if extra > 0 else [])


def op_details(desc, block, idx):
    op = desc.blocks[block].ops[idx]
    attrs = attr_values(op)
    opdef = registry.get(op.type) if registry.has(op.type) else None
    inputs = [_var_row(desc, block, v.parameter, n) for v in op.inputs for n in v.arguments
              if n != EMPTY_VAR]
    outputs = [_var_row(desc, block, v.parameter, n) for v in op.outputs for n in v.arguments
               if n != EMPTY_VAR]
    internal = set()
    if opdef is not None:
        internal = {s.name for s in opdef.outputs if s.intermediate}
    for row in outputs:
        row["internal"] = row["slot"] in internal
    params = [r for r in inputs if r["kind"] == "parameter"]
    label, text = _source(attrs)
    scope = namescope_of(attrs)
    return {
        "key": str(NodeKey.op(block, idx)), "kind": "op", "title": op.type,
        "subtitle": f"op #{idx} of block {block}, {role_of(attrs)}",
        "doc": opdef.doc if opdef else "not in the fluidscope registry",
        "layer": scope.strip("/"),
        "source": label, "source_text": text,
        "attrs": [[n, t] for n, t in non_default_attrs(op.type, attrs) if n != "op_namescope"],
        "inputs": inputs, "outputs": outputs,
        "parameters": sum(r["numel"] or 0 for r in params),
        "parameter_names": [r["name"] for r in params],
    }


def var_details(desc, block, name):
    var = _var_desc(desc, block, name)
    writers, readers = [], []
    for b, blk in enumerate(desc.blocks):
        for i, op in enumerate(blk.ops):
            if any(name in v.arguments for v in op.outputs):
                writers.append(f"#{i} {op.type}" + (f" (block {b})" if b else ""))
            if any(name in v.arguments for v in op.inputs):
                readers.append(f"#{i} {op.type}" + (f" (block {b})" if b else ""))
    found = tensor_of(var) if var is not None else None
    what = ("parameter" if var is not None and var.is_parameter else
            "persistable" if var is not None and var.persistable else
            "gradient" if "@GRAD" in name else "variable")
    return {
        "key": str(NodeKey.var(block, name)), "kind": "var", "title": name,
        "subtitle": f"{what} of block {block}",
        "type": describe_var_type(var) if var is not None else "(not declared)",
        "lod": found[1] if found else 0,
        "numel": _numel(var),
        "flags": [f for f in ("persistable", "is_parameter", "stop_gradient")
                  if var is not None and getattr(var, f)],
        "written_by": _more(writers), "read_by": _more(readers),
    }


def group_details(desc, node):
    block, scope, phase = node.block, node.name, node.phase
    ops = []
    params, sources = {}, []
    for i, op in enumerate(desc.blocks[block].ops):
        attrs = attr_values(op)
        if not namescope_of(attrs).startswith(scope):
            continue
        ops.append(f"#{i} {op.type}")
        for v in op.inputs:
            for n in v.arguments:
                var = _var_desc(desc, block, n)
                if var is not None and var.is_parameter:
                    params[n] = _numel(var) or 0
        label, text = _source(attrs)
        if label and (label, text) not in sources:
            sources.append((label, text))
    return {
        "key": str(node), "kind": "group", "title": scope.strip("/"),
        "subtitle": f"layer in block {block}" + ("" if phase == "forward" else f", {phase} ops"),
        "ops": _more(ops), "parameters": sum(params.values()),
        "parameter_names": list(params),
        "source": sources[0][0] if sources else "",
        "source_text": sources[0][1] if sources else "",
    }


def node_details(desc, key) -> dict:
    """The details of node ``key`` (``"op:0:3"``, ``"var:0:fc_0.w_0"``,
    ``"group:0:/fc_0/"``) of ProgramDesc ``desc``; {} for ``""``. FluidscopeError for a
    key the program does not have."""
    if not key:
        return {}
    node = NodeKey.parse(key)
    if node.block >= len(desc.blocks):
        raise FluidscopeError(f"node_details: the program has no block {node.block}")
    if node.kind == "op":
        if node.index >= len(desc.blocks[node.block].ops):
            raise FluidscopeError(f"node_details: block {node.block} has no op {node.index}")
        return op_details(desc, node.block, node.index)
    if node.kind == "var":
        return var_details(desc, node.block, node.name)
    return group_details(desc, node)


__all__ = ["node_details", "op_details", "var_details", "group_details"]
