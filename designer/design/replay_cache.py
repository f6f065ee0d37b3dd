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
from operator import is_

from fluidscope.engine.ir.proto import framework_pb2 as pb

from .. import unique_name
from ..views import Parameter, Variable
from .document import OUTER_SLOTS
from .files import node_to_json
from .replay_runs import Entry, form_runs
from .undoable import same_types


@dataclasses.dataclass
class _Segment:
    blocks_before: tuple            # block counts of (main, startup) before the node
    counters: dict                  # key -> (value before, value after)
    programs: list                  # per program: ([(ops, vars) per old block], [new blocks])
    calls: list
    rates: dict
    outputs: dict                   # node id -> [(block idx, var name)], inner ones too
    shapes: dict                    # node id -> shapes (the node's and its inner nodes')
    # What a replay appends, made at the first replay (the first build, which replays
    # nothing, does not pay): [(program 0 main / 1 startup, block idx, the ops and vars
    # as the bytes of a BlockDesc holding only them, their var names)]; the bytes of the
    # main program's new VarDescs by (block idx, name), what a later node's key reads;
    # the outputs as (block idx, name, view class).
    appends: list | None = None
    new_blocks: bool = False
    var_bytes: dict | None = None
    views: dict | None = None

    def prepare(self):
        self.appends = [((p, b), _fragment(ops, vars_), [v.name for v in vars_])
                        for p, (old, _) in enumerate(self.programs)
                        for b, (ops, vars_) in enumerate(old) if ops or vars_]
        self.var_bytes = {(b, v.name): v.SerializeToString()
                          for b, (_, vars_) in enumerate(self.programs[0][0]) for v in vars_}
        params = {(b, v.name) for b, (_, vars_) in enumerate(self.programs[0][0])
                  for v in vars_ if v.is_parameter}
        self.views = {nid: [(b, name, Parameter if (b, name) in params else Variable)
                            for b, name in places] for nid, places in self.outputs.items()}
        self.new_blocks = any(new for _, new in self.programs)
        # the old blocks' messages are in the fragments now: drop them (thousands of
        # objects per build that every garbage collection would walk)
        self.programs = [((), new) for _, new in self.programs]
        return self.appends


class NodeCache:
    """Segments of the last build, by node key; a build keeps what it used, and for a
    while what the builds before it made for nodes it did not build.

    A run of replayed nodes is not merged into the program one node at a time: their
    fragments wait (``_pending``) and ``flush`` merges each block's in one call, before
    a node is built for real and at the end of the build. Parsing the concatenated
    fragments appends the same ops and vars in the same order as merging them one by
    one (a repeated field's entries are appended as they are read), at a fraction of
    the per-call cost. Until then the keys of later nodes read a waiting var's bytes
    from its segment (a replay only appends, so they are the bytes the program will
    hold), and the Variables handed out are views by name, valid once flushed.

    Stretches of nodes the last build went through one after the other are replayed
    as whole runs (``replay_run``, replay_runs.py): one check of the run's ids, nodes,
    outside reads, counters and names instead of a key per node.

    What an edit cuts off is carried: removing a node of a chain (or grouping two)
    leaves the nodes after it waiting, so that build replays nothing there, and undoing
    it would build every one of them again (498 nodes, ~320 ms at 1,000 layers) if
    ``finish`` forgot what it did not use. So a node that got no segment in a build keeps
    its segments and runs from the builds before (``_carried``) for ``CARRY_BUILDS``
    builds; a replay checks a carried segment as any other (its key, counters, blocks and
    names), so carrying changes no byte, only what can be reused."""

    CARRY_BUILDS = 16  # builds a segment no build used is kept (an undo history's depth)

    def __init__(self):
        self._segments, self._next = {}, {}
        self._texts, self._next_texts = {}, {}  # node id -> (node copy, value kinds, text)
        self._runs = {}  # first node id -> Run of the last build (replay_runs.py)
        # node id of each key in ``_segments`` / ``_next`` (replayed, built and saved, or
        # in a run the build replayed)
        self._ids, self._next_ids = {}, {}
        # what builds before the last made for nodes it did not build: key -> (segment,
        # node id, builds since it was made or used); first node id -> (Run, builds)
        self._carried, self._carried_runs = {}, {}
        self.begin()

    def begin(self):
        """Start a build: nothing waits to be merged, no node is on the trail yet."""
        # what this build did, in build order, for the next build's runs: an Entry per
        # node that replayed or saved its segment, a Run replayed whole, None for a
        # node that cannot be part of a run (failed, waiting, composite, new blocks)
        self._trail = []
        self._clear_pending()

    def _clear_pending(self):
        self._pending = {}        # (program 0/1, block idx) -> [fragment bytes]
        self._taken = {}          # (program 0/1, block idx) -> var names, waiting ones too
        self._pending_bytes = {}  # (block idx, var name) -> VarDesc bytes (main program)

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
            data = self._pending_bytes.get((var.block.idx, var.name)) if self._pending else None
            reads.append((var.name, data if data is not None else var.desc.SerializeToString()))
        return self._text(node), tuple(reads)

    def _text(self, node):
        """The node as sorted JSON text, kept per node id while the node stays the same:
        the same value (``==``) with values of the same types (1 and 1.0 are equal, their
        texts are not). Composites are written out each time."""
        kept = self._texts.get(node.id)
        if node.rows is None and node.body is None:
            kinds = _kinds(node.attrs)
            if kept is not None and kept[1] == kinds and kept[0] == node:
                self._next_texts[node.id] = kept
                return kept[2]
            text = json.dumps(node_to_json(node), sort_keys=True)
            self._next_texts[node.id] = (node.clone(), kinds, text)
            return text
        return json.dumps(node_to_json(node), sort_keys=True)

    def _names_free(self, appends, main, startup):
        """Whether none of the names ``appends`` would create is taken in its block yet."""
        taken = self._taken
        for where, _, names in appends:
            names_there = taken.get(where)
            if names_there is None:
                program = main if where[0] == 0 else startup
                names_there = taken[where] = set(program.block(where[1]).var_names())
            if not names_there.isdisjoint(names):
                return False
        return True

    def _queue(self, appends, var_bytes):
        """Queue ``appends``' bytes for the next flush and mark their names taken."""
        pending, taken = self._pending, self._taken
        for where, data, names in appends:
            chunks = pending.get(where)
            if chunks is None:
                pending[where] = [data]
            else:
                chunks.append(data)
            taken[where].update(names)
        self._pending_bytes.update(var_bytes)

    @staticmethod
    def _record(piece, result):
        """What a replayed segment or run brings beside its bytes: its layer calls,
        learning rates, name counters and shapes."""
        if piece.calls:
            result.main.layer_calls.extend(piece.calls)
        if piece.rates:
            result.main.param_learning_rates.update(piece.rates)
        unique_name.advance(piece.counters)
        result.shapes.update(piece.shapes)

    def replay(self, key, node_id, result):
        """Append the saved segment of ``key`` and return its outputs, or None."""
        seg = self._segments.get(key) if key is not None else None
        if seg is None and key is not None:
            carried = self._carried.get(key)
            seg = carried[0] if carried is not None else None
        if seg is None:
            return None
        main, startup = result.main, result.startup
        if seg.blocks_before != (main.num_blocks, startup.num_blocks):
            return None
        if not unique_name.all_at(seg.counters):
            return None
        if seg.appends is None:
            seg.prepare()
        if seg.new_blocks:
            self.flush(result)  # new blocks: the old ones complete first (simplest to read)
        if not self._names_free(seg.appends, main, startup):
            return None  # a name the node would create is taken: build it for real
        self._queue(seg.appends, seg.var_bytes)
        if seg.new_blocks:
            for program, (_, new) in zip((main, startup), seg.programs):
                for desc in new:
                    program.desc.blocks.add().CopyFrom(desc)
                if new:
                    program.sync_blocks()
            self._taken = {}
        self._record(seg, result)
        self._next[key] = seg
        self._note(node_id, key, seg)
        outputs = result.outputs
        for nid, places in seg.views.items():
            outputs[nid] = [cls(main.block(b), name) for b, name, cls in places]
        return outputs[node_id]

    def replay_run(self, ids, position, nodes, env, result):
        """Replay the run that starts at ``ids[position]`` as a whole (replay_runs.py);
        returns how many nodes it replayed, 0 when it does not apply (the build goes
        on node by node, changing nothing it checked here)."""
        run = self._runs.get(ids[position])
        if run is None:
            carried = self._carried_runs.get(ids[position])
            run = carried[0] if carried is not None else None
        if run is None:
            return 0
        count = len(run.ids)
        main, startup = result.main, result.startup
        if ids[position:position + count] != run.ids or \
                run.blocks_before != (main.num_blocks, startup.num_blocks):
            return 0
        for nid, copy in zip(run.ids, run.copies):
            node = nodes[nid]
            if copy != node:
                return 0
            kept, now = copy.attrs, node.attrs
            # equal, and mostly the very same leaf objects (a clone shares them)
            if not all(map(is_, kept.values(), now.values())) and not same_types(kept, now):
                return 0
        waiting_bytes = self._pending_bytes if self._pending else {}
        for nid, index, name, data in run.outside_reads:
            outs = env.get(nid)
            if outs is None or index >= len(outs) or outs[index].name != name:
                return 0
            var = outs[index]
            now = waiting_bytes.get((var.block.idx, name))
            if (now if now is not None else var.desc.SerializeToString()) != data:
                return 0
        if not (run.prepared or run.prepare()) or not unique_name.all_at(run.counters):
            return 0
        if not self._names_free(run.appends, main, startup):
            return 0
        self._queue(run.appends, run.var_bytes)
        self._record(run, result)
        outputs = result.outputs
        for nid, places in run.views:
            outputs[nid] = env[nid] = [cls(main.block(b), name) for b, name, cls in places]
        # kept for the next build, should it go node by node here (dicts merged with
        # their keys' stored hashes: no key tuple is hashed again)
        self._next.update(run.segments)
        self._next_ids.update(run.key_ids)
        self._next_texts.update(run.texts)
        self._trail.append(run)
        return count

    def interrupt(self):
        """The node the build is at did not replay or save a segment: no run spans it."""
        self._trail.append(None)

    def _note(self, node_id, key, seg):
        self._next_ids[key] = node_id
        text = self._next_texts.get(node_id)  # only plain nodes keep a copy
        plain = text is not None and not any(new for _, new in seg.programs)
        self._trail.append(Entry(node_id, key, seg, text) if plain else None)

    def flush(self, result):
        """Merge what the replays since the last flush appended into the programs (and
        forget the names seen: a layer built for real after this adds its own)."""
        if not self._pending:
            self._taken = {}
            return
        programs = (result.main, result.startup)
        for (p, b), chunks in self._pending.items():
            programs[p].desc.blocks[b].MergeFromString(b"".join(chunks))
            # the block's name index is rebuilt at its next lookup, if any: indexing
            # the new vars here made a wrapper per var (~5,000 at 1,000 layers) that a
            # canvas rebuild, which reads shapes from the Build, never looks at
            programs[p].block(b).forget_index()
        for program in programs:
            program.bump_revision()
        self._clear_pending()

    def store(self, node_id, key, checkpoint, result, shapes_before, outputs_before):
        if key is None:
            self.interrupt()
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
             for k, vs in _tail(result.outputs, outputs_before)},
            dict(_tail(result.shapes, shapes_before)))
        self._note(node_id, key, self._next[key])

    def finish(self):
        """Keep what this build used or made, and carry what it did not build (the class
        docstring); forget the rest."""
        kept, limit = set(self._next_ids.values()), self.CARRY_BUILDS
        carried = {key: (seg, nid, 0) for key, seg in self._segments.items()
                   if key not in self._next and (nid := self._ids.get(key)) not in kept}
        for key, (seg, nid, age) in self._carried.items():
            if age + 1 < limit and nid not in kept and key not in self._next \
                    and key not in carried:
                carried[key] = (seg, nid, age + 1)
        runs = form_runs(self._trail, _all_refs)
        carried_runs = {first: (run, 0) for first, run in self._runs.items()
                        if first not in runs and kept.isdisjoint(run.ids)}
        for first, (run, age) in self._carried_runs.items():
            if age + 1 < limit and first not in runs and first not in carried_runs \
                    and kept.isdisjoint(run.ids):
                carried_runs[first] = (run, age + 1)
        self._carried, self._carried_runs = carried, carried_runs
        self._segments, self._next = self._next, {}
        self._ids, self._next_ids = self._next_ids, {}
        self._texts, self._next_texts = self._next_texts, {}
        self._runs, self._trail = runs, []


def _tail(entries, kept):
    """The (key, value) pairs of dict ``entries`` after its first ``kept``, in order, read
    from the end (reading from the start is quadratic over a build)."""
    return reversed(list(itertools.islice(reversed(entries.items()), len(entries) - kept)))


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



def _kinds(value):
    """The types of a JSON-like value's leaves, nested as the value is."""
    if isinstance(value, dict):
        return tuple((k, _kinds(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_kinds(v) for v in value)
    return type(value)
