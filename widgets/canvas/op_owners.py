"""Which design node owns each op of a built program: the map the debugger link reads.

A design build calls every node's layer function with ``name=<node id>``, and the layer
records that name in each op it appends (``op_namescope`` "/fc_0/"; the nodes of a
recurrent step are built under their own ids, "/h/"). The backward copies a forward
op's namescope onto its grad ops, so ``fc_0``'s ``mul_grad`` is owned by ``fc_0`` too,
in the backward phase. What the backward adds of its own (the loss gradient's seed, the
``sum`` of a gradient over several readers) records no layer: it is owned by the layer
whose output's gradient it writes. Optimizer ops have no owner. This table is therefore read from the program the session runs, never
guessed from op types or positions.
"""
from __future__ import annotations

import dataclasses

from fluidscope.engine import FluidscopeError
from fluidscope.engine.ir.roles import phase_of


def _attr(op, name, default=None):
    for a in op.attrs:
        if a.name == name:
            return a
    return default


def _grad_owner(op, outputs):
    """The layer a backward op without a namescope works for: the one whose output's
    gradient it writes (``pool2d_0.tmp_0@GRAD`` summed over two readers, the loss's
    ``@GRAD`` seed)."""
    for v in op.outputs:
        for name in v.arguments:
            forward = name.split("@GRAD")[0]
            if forward != name and forward in outputs:
                return outputs[forward]
    return None


@dataclasses.dataclass
class OpOwners:
    """``owner[(block, op index)] -> node id`` and ``phase[(block, op index)]``;
    ``parent_op[block] -> (block, op index)`` of the op that runs a sub-block (a
    recurrent op and its grad); ``outputs[var name] -> node id`` (what each node writes);
    ``last_output[node id]``: the first output of its last forward op (the layer's output)."""
    owner: dict
    phase: dict
    parent_op: dict
    outputs: dict
    last_output: dict

    def node_of(self, block, op_index):
        return self.owner.get((block, op_index))

    def ops_of(self, node_id, block=None):
        """(block, index) of the ops ``node_id`` owns, in program order."""
        return sorted(k for k, v in self.owner.items()
                      if v == node_id and (block is None or k[0] == block))

    def output_of(self, node_id):
        """The variable the layer ``node_id`` outputs (None: it made no forward op)."""
        return self.last_output.get(node_id)


def op_owners(program, node_ids) -> OpOwners:
    """The table for ``program`` (a Program or its desc) and the design's ``node_ids``.
    FluidscopeError when no op belongs to any of them (a program of another design)."""
    desc = getattr(program, "desc", program)
    known = set(node_ids)
    owner, phase, parent_op, outputs, last_output = {}, {}, {}, {}, {}
    for b, block in enumerate(desc.blocks):
        for k, op in enumerate(block.ops):
            phase[(b, k)] = phase_of(op)  # the one decoding of op_role bits
            scope = _attr(op, "op_namescope")
            parts = [p for p in (scope.s if scope is not None else "").split("/") if p]
            node = next((p for p in reversed(parts) if p in known), None)
            if node is not None:
                owner[(b, k)] = node
                written = [n for v in op.outputs for n in v.arguments]
                if phase[(b, k)] == "forward" and written:
                    for name in written:
                        outputs.setdefault(name, node)
                    if b == 0 or node not in last_output or last_output[node][0] != 0:
                        last_output[node] = (b, written[0])
            sub = _attr(op, "sub_block")
            if sub is not None:
                parent_op[sub.block_idx] = (b, k)
    for key, grad_phase in phase.items():  # gradient plumbing the backward adds itself
        if key not in owner and grad_phase == "backward":
            node = _grad_owner(desc.blocks[key[0]].ops[key[1]], outputs)
            if node is not None:
                owner[key] = node
    if not owner:
        raise FluidscopeError("the program has no op made by a node of this design "
                              "(a session over another program?)")
    return OpOwners(owner, phase, parent_op, outputs,
                    {node: name for node, (_, name) in last_output.items()})
