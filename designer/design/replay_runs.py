"""Whole runs of unchanged nodes replayed in one step (what keeps a 1,000-layer rebuild short).

``NodeCache`` replays a node's saved segment once its key (the node's text, the bytes
of what it reads) and its name counters match. At 1,000 layers those per-node checks
are most of a rebuild, though an edit reaches two or three nodes. A ``Run`` is a stretch
of consecutive top-level nodes, in build order, that the last build replayed or built
and saved one after the other (no failure, no new block, no composite in between). It
replays as a whole when

* the build order has the same ids there, and every node equals the copy its key was
  made from, with values of the same types (1, 1.0 and True are equal, their texts are
  not);
* what the run reads from outside itself has the names and VarDesc bytes it had (what
  a node reads from an earlier node of the run is what that node's segment made);
* the name counters it draws from are at the values its first user found, the block
  counts are the same and none of the names it creates is taken.

Those are the per-node conditions of every node of the run, met in sequence: a node's
counters are where the node before it left them, its reads are the outputs the run
made. Then the run appends, per block, the concatenation of its nodes' fragments (the
same bytes as appending them one by one) and sets each counter to its last value. If
anything differs the build goes on node by node from the run's first node, and the
next ``finish`` forms the runs again from what that build did.
"""
from __future__ import annotations

# Nodes per run: an edit sends one or two runs back to per-node replay (a few hundred
# microseconds each), the others replay whole; boundaries stay where they were because
# runs are re-formed only from the stretches a build went through node by node.
RUN_LENGTH = 40


class Entry:
    """One top-level node of a build that replayed or saved its segment."""
    __slots__ = ("nid", "key", "segment", "text")

    def __init__(self, nid, key, segment, text):
        self.nid, self.key, self.segment, self.text = nid, key, segment, text


class Run:
    """Consecutive entries of one build; see the module docstring."""

    def __init__(self, entries, outside_reads):
        self.entries = entries
        self.ids = [e.nid for e in entries]
        self.copies = [e.text[0] for e in entries]  # the nodes as their keys were made
        self.segments = {e.key: e.segment for e in entries}
        self.key_ids = {e.key: e.nid for e in entries}
        self.texts = {e.nid: e.text for e in entries}
        self.outside_reads = outside_reads      # [(node id, output index, name, bytes)]
        self.blocks_before = entries[0].segment.blocks_before
        self.prepared = False

    def prepare(self):
        """Merge the entries' segments (at the first replay: a build that only forms runs
        does not pay). False when two entries create the same name in one block (each
        would have been refused on its own, so the run must not hide that)."""
        appends, names, counters, var_bytes = {}, {}, {}, {}
        calls, rates, shapes, views = [], {}, {}, []
        for e in self.entries:
            seg = e.segment
            if seg.appends is None:
                seg.prepare()
            for where, data, made in seg.appends:
                taken = names.setdefault(where, set())
                if not taken.isdisjoint(made):
                    return False
                taken.update(made)
                appends.setdefault(where, []).append(data)
            for key, (before, after) in seg.counters.items():
                first = counters.get(key)
                counters[key] = (before if first is None else first[0], after)
            var_bytes.update(seg.var_bytes)
            calls += seg.calls
            rates.update(seg.rates)
            shapes.update(seg.shapes)
            views.append((e.nid, seg.views[e.nid]))
        self.appends = [(where, b"".join(chunks), names[where])
                        for where, chunks in appends.items()]
        self.counters, self.var_bytes = counters, var_bytes
        self.calls, self.rates, self.shapes, self.views = calls, rates, shapes, views
        self.prepared = True
        return True


def form_runs(trail, refs_of):
    """Runs (by first node id) from a build's trail: ``Run``s it replayed whole are kept
    as they are, stretches of entries between breaks (None) become runs of at most
    ``RUN_LENGTH`` nodes. ``refs_of(node)``: the refs a node's key reads, in key order."""
    runs, stretch = {}, []

    def close():
        for start in range(0, len(stretch), RUN_LENGTH):
            chunk = stretch[start:start + RUN_LENGTH]
            if len(chunk) > 1:
                run = _run_of(chunk, refs_of)
                runs[run.ids[0]] = run
        stretch.clear()

    for item in trail:
        if isinstance(item, Entry):
            if stretch and stretch[-1].segment.blocks_before != item.segment.blocks_before:
                close()  # a run appends to the blocks there were at its start
            stretch.append(item)
            continue
        close()
        if item is not None:
            runs[item.ids[0]] = item
    close()
    return runs


def _run_of(entries, refs_of):
    inside, outside = set(), []
    for e in entries:
        for (_, ref), (name, data) in zip(refs_of(e.text[0]), e.key[1]):
            if ref.node not in inside:
                outside.append((ref.node, ref.index, name, data))
        inside.add(e.nid)
    return Run(entries, outside)
