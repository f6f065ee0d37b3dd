"""Whole runs of unchanged nodes replayed in one step give the bytes of a cold build.

``design/replay_runs.py`` replays a stretch of nodes the last build went through
unchanged as one append. These tests make runs short (so a small design has many run
boundaries) and edit at the boundaries: the first and last node of a run, a node
inserted into a run and one deleted from it, a rename, a value of another type (1
vs 1.0), an error made and fixed, undo and redo across all of them. After each
gesture the incremental build (forward only and with the optimizer) must equal a cold
build field by field (``assert_same_as_cold``: program bytes, shapes, errors, waits,
outputs, calls, rates), and runs must really have been replayed.
"""
import pytest

import fluidscope.designer as fd
from fluidscope.designer.design import replay_cache, replay_runs
from test_incremental_build_bytes import assert_same_as_cold, design_under_test, edits

RUN = 4


@pytest.fixture
def short_runs(monkeypatch):
    """Runs of RUN nodes, and the ids of the nodes the builds replayed as runs."""
    monkeypatch.setattr(replay_runs, "RUN_LENGTH", RUN)
    replayed = []
    real = replay_cache.NodeCache.replay_run

    def counting(self, ids, position, *args):
        n = real(self, ids, position, *args)
        replayed.extend(ids[position:position + n])
        return n
    monkeypatch.setattr(replay_cache.NodeCache, "replay_run", counting)
    return replayed


def chain(layers=30):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=(8, 9, 10)[k % 3], act="relu")
        if k == 10:  # a float attribute: 2 and 2.0 are equal, their texts are not
            h = d.add("scale", inputs={"x": h}, scale=2, name="scaled")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("SGD", learning_rate=0.1)
    return d


def build_order(d):
    from fluidscope.designer.design.document import order
    return order(d.document.graph)[0]


def insert_after(d, source):
    """A relu between ``source`` and the node that reads it (inside a run)."""
    reader = next(n.id for n in d.nodes.values()
                  if any(r.node == source for _, r in n.refs()))
    with d.transaction():
        new = d.add("relu", inputs={"x": source})
        d.connect(new, reader, "input")


def delete_inside(d, node_id):
    """Remove ``node_id`` and wire its input to its reader."""
    source = d.node(node_id).inputs["input"].node
    reader = next(n.id for n in d.nodes.values()
                  if any(r.node == node_id for _, r in n.refs()))
    with d.transaction():
        d.remove(node_id)
        d.connect(source, reader, "input")


def chain_gestures(d):
    ids = build_order(d)
    first, last = ids[2 * RUN], ids[2 * RUN - 1]  # the first node of run 3, the last of run 2
    return [
        ("nothing", lambda: None),
        ("first node of a run", lambda: d.set(first, size=11)),
        ("last node of a run", lambda: d.set(last, size=12)),
        ("same value, other type", lambda: d.set("scaled", scale=2.0)),
        ("back to int", lambda: d.set("scaled", scale=2)),
        ("act inside a run", lambda: d.set(ids[13], act="tanh")),
        ("insert inside a run", lambda: insert_after(d, ids[5])),
        ("delete inside a run", lambda: delete_inside(d, ids[17])),
        ("rename inside a run", lambda: d.rename(ids[21], "renamed")),
        # a data layer named as a later layer's weight: that layer's run would create a
        # name the block already has
        ("a name taken before its run", lambda: d.rename("label", f"{ids[23]}.w_0")),
        ("the name given back", d.undo),
        ("error inside a run", lambda: d.set(ids[25], num_flatten_dims=3)),
        ("edit while failing", lambda: d.set(ids[6], size=7)),
        ("fix the error", lambda: d.set(ids[25], num_flatten_dims=None)),
        ("undo the fix", d.undo),
        ("undo twice", lambda: (d.undo(), d.undo())),
        ("redo twice", lambda: (d.redo(), d.redo())),
        ("undo all", lambda: [d.undo() for _ in range(40) if d.can_undo]),
        ("redo all", lambda: [d.redo() for _ in range(40) if d.can_redo]),
        ("undo half", lambda: [d.undo() for _ in range(6) if d.can_undo]),
    ]


def check_each(d, gestures, replayed):
    assert_same_as_cold(d)
    for label, gesture in gestures:
        replayed.clear()
        gesture()
        try:
            assert_same_as_cold(d)
        except AssertionError as exc:
            raise AssertionError(f"after '{label}': {exc}") from None
        assert len(replayed) >= RUN, f"after '{label}': no run was replayed whole"


def test_gestures_at_run_boundaries_build_the_cold_bytes(short_runs):
    d = chain()
    check_each(d, chain_gestures(d), short_runs)


def test_the_error_gesture_fails_and_waits(short_runs):
    d = chain()
    d.build(optimize=False)
    broken = build_order(d)[25]
    d.set(broken, num_flatten_dims=3)
    b = d.build(optimize=False)
    assert broken in b.errors and len(b.waiting) > 0
    d.undo()
    b = d.build(optimize=False)
    assert b.errors == {} and b.waiting == {}


def test_composite_design_edits_with_short_runs(short_runs):
    """The edit sequence of test_incremental_build_bytes (groups, mixed rows, failures),
    with runs of RUN nodes between the composites."""
    d = design_under_test()
    assert_same_as_cold(d)
    for label, edit in edits(d):
        edit()
        try:
            assert_same_as_cold(d)
        except AssertionError as exc:
            raise AssertionError(f"after '{label}': {exc}") from None


def test_a_run_replays_whole_when_nothing_changed(short_runs):
    d = chain()
    d.build(optimize=False)
    short_runs.clear()
    d.build(optimize=False)
    # every node but the composite-free tail is in some run of RUN nodes
    assert len(short_runs) >= len(d.nodes) - RUN


def test_a_value_of_another_type_is_not_replayed_in_a_run(short_runs):
    """2 and 2.0 are equal but write different key texts: the node is keyed anew, as a
    node-by-node replay would (a run must not be more lenient than a node's key)."""
    d = chain()
    d.build(optimize=False)
    d.set("scaled", scale=2.0)
    short_runs.clear()
    d.build(optimize=False)
    assert "scaled" not in short_runs and len(short_runs) > 0


def test_a_run_needs_its_name_counters_where_it_found_them(short_runs, monkeypatch):
    """A run whose counters moved (a layer before it drew names from a key it shares)
    is refused and its nodes go one by one."""
    from fluidscope.designer import unique_name
    d = chain()
    d.build(optimize=False)
    d.build(optimize=False)
    target = build_order(d)[2 * RUN]
    real = replay_cache.NodeCache.replay_run
    answers = []

    def shifted(self, ids, position, *args):
        if ids[position] == target:
            unique_name.set_count("fc", unique_name.count("fc") + 1)
            answers.append(real(self, ids, position, *args))
            unique_name.set_count("fc", unique_name.count("fc") - 1)
            return answers[-1]
        return real(self, ids, position, *args)
    monkeypatch.setattr(replay_cache.NodeCache, "replay_run", shifted)
    d.build(optimize=False)
    assert answers == [0]
