"""Reusing what a node built last time, so a rebuild after one edit is fast.

A node's ops depend only on its own data, on the variables it reads (names and
VarDescs) and on the name counters its layer draws from. ``NodeCache`` keeps, per
top-level node, the segment of descs the node appended last time (ops and vars of each
block, whole new blocks, startup ops and vars, the layer-call record, the counters it
advanced) keyed by exactly those inputs; when a rebuild meets the same key and the same
counter values it appends the saved descs instead of calling the layer again. The
program is the same bytes either way (the design tests build with and without the
cache and compare); only the nodes an edit reaches run their layer functions.
"""
from __future__ import annotations

import dataclasses
import itertools
import json

from fluidscope.engine.ir.proto import framework_pb2 as pb

from .. import unique_name
from .document import OUTER_SLOTS
from .files import node_to_json


@dataclasses.dataclass
class _Segment:
    blocks_before: tuple            # block counts of (main, startup) before the node
    counters: dict                  # key -> (value before, value after)
    programs: list                  # per program: ([(ops, vars) per old block], [new blocks])
    calls: list
    rates: dict
    outputs: dict                   # node id -> [(block idx, var name)], inner ones too
    shapes: dict                    # node id -> shapes (the node's and its inner nodes')
    # what a replay appends, the empty parts left out: [(program 0 main / 1 startup, block
    # idx, the ops and vars as the bytes of a BlockDesc holding only them, how many vars,
    # their names)]. A replay runs per node per gesture; merging those bytes into the
    # block appends the same ops and vars (a merge appends repeated fields) at about a
    # third of the cost of copying the messages one by one.
    # Made at the first replay, so the first build (which replays nothing) does not pay.
    appends: list | None = None

    def prepare(self):
        self.appends = [(p, b, _fragment(ops, vars_), len(vars_), [v.name for v in vars_])
                        for p, (old, _) in enumerate(self.programs)
                        for b, (ops, vars_) in enumerate(old) if ops or vars_]
        return self.appends


class NodeCache:
    """Segments of the last build, by node key; a build keeps only what it used."""

    def __init__(self):
        self._segments, self._next = {}, {}

    def key(self, node, env, outer_env):
        if node.layer == "op" and node.body is not None:
            return None  # its sub-block reads outer variables through any slot: rebuild it
        reads = []
        for slot, ref in _all_refs(node):
            source = outer_env if slot in ("outer", "boot_layer") else env
            outs = source.get(ref.node)
            if outs is None or ref.index >= len(outs):
                return None
            var = outs[ref.index]
            reads.append((var.name, var.desc.SerializeToString()))
        return json.dumps(node_to_json(node), sort_keys=True), tuple(reads)

    def replay(self, key, node_id, result):
        """Append the saved segment of ``key`` and return its outputs, or None."""
        seg = self._segments.get(key) if key is not None else None
        if seg is None:
            return None
        programs = (result.main, result.startup)
        if seg.blocks_before != (len(programs[0].desc.blocks), len(programs[1].desc.blocks)):
            return None
        for k, (before, _) in seg.counters.items():
            if unique_name.count(k) != before:
                return None
        appends = seg.appends if seg.appends is not None else seg.prepare()
        for p, b, _, _, names in appends:
            view = programs[p].block(b)
            for name in names:
                if view.has_var(name):
                    return None  # a name the node would create is taken: build it for real
        for p, b, data, count, _ in appends:
            program = programs[p]
            block = program.desc.blocks[b]
            block.MergeFromString(data)
            if count:
                program.block(b).note_appended_vars(block.vars[len(block.vars) - count:])
        for program, (_, new) in zip(programs, seg.programs):
            for desc in new:
                program.desc.blocks.add().CopyFrom(desc)
            if new:
                program.sync_blocks()
            program.bump_revision()
        main = programs[0]
        if seg.calls:
            main.layer_calls.extend(seg.calls)
        if seg.rates:
            main.param_learning_rates.update(seg.rates)
        for k, (_, after) in seg.counters.items():
            unique_name.set_count(k, after)
        result.shapes.update(seg.shapes)
        self._next[key] = seg
        for nid, places in seg.outputs.items():
            result.outputs[nid] = [main.block(b).var(name) for b, name in places]
        return result.outputs[node_id]

    def store(self, key, checkpoint, result, shapes_before, outputs_before):
        if key is None:
            return
        programs = []
        for program, sizes, calls, rates in checkpoint.saved:
            old = [(list(block.ops[ops:]), list(block.vars[vars_:]))
                   for block, (ops, vars_) in zip(program.desc.blocks, sizes)]
            old = [([_copy(o) for o in ops], [_copy(v) for v in vars_]) for ops, vars_ in old]
            new = [_copy(b) for b in list(program.desc.blocks)[len(sizes):]]
            programs.append((old, new))
        main = checkpoint.saved[0]
        changed = unique_name.changes_since(checkpoint.names_mark)
        self._next[key] = _Segment(
            tuple(len(s[1]) for s in checkpoint.saved), changed, programs,
            list(main[0].layer_calls[main[2]:]),
            {k: v for k, v in main[0].param_learning_rates.items() if k not in main[3]},
            {k: [(v.block.idx, v.name) for v in vs]
             for k, vs in itertools.islice(result.outputs.items(), outputs_before, None)},
            dict(itertools.islice(result.shapes.items(), shapes_before, None)))

    def finish(self):
        """Keep what this build used or made; forget the rest."""
        self._segments, self._next = self._next, {}


def _fragment(ops, vars_):
    """The bytes of a BlockDesc with only ``ops`` and ``vars_`` (no idx: merging it into a
    block leaves the block's own fields as they are)."""
    fragment = pb.BlockDesc()
    fragment.ops.extend(ops)
    fragment.vars.extend(vars_)
    return fragment.SerializePartialToString()


def _copy(message):
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


def _all_refs(node):
    """Every ref the node (and, for a group, its whole step) reads from outside."""
    refs = list(node.refs())
    if node.body is not None:
        for inner in node.body.nodes.values():
            outer = OUTER_SLOTS.get(inner.layer, ())
            refs += [(s, r) for s, r in inner.refs() if s in outer]
    return refs
