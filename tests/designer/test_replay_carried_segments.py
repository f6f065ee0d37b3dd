"""What a build did not build is carried to the builds after it (design/replay_cache.py).

Removing a node of a chain (or grouping two) leaves every node after it waiting; undoing
it used to build all of them again because that build had forgotten their segments. Now
a node that got no segment in a build keeps its old ones for ``CARRY_BUILDS`` builds. The
builds must still be a cold build's bytes (``assert_same_as_cold``), with the name
counters moved in between, and nothing carried may outlive its limit.
"""
import pytest

import fluidscope.designer as fd
from fluidscope.designer.design import build as design_build
from fluidscope.designer.design import replay_cache
from test_incremental_build_bytes import assert_same_as_cold
from test_replay_runs_bytes import build_order, chain


@pytest.fixture
def cold_builds(monkeypatch):
    """The ids of the nodes whose layer functions ran (no segment replayed for them)."""
    built = []
    real = design_build._build_node

    def counting(node, *args):
        built.append(node.id)
        return real(node, *args)
    monkeypatch.setattr(design_build, "_build_node", counting)
    return built


def test_undoing_a_remove_in_the_middle_replays_every_node_after_it(cold_builds):
    d = chain(40)
    middle = build_order(d)[20]
    d.build(optimize=False)
    d.remove(middle)  # its reader's input is now unconnected: the rest waits
    waiting = d.build(optimize=False).waiting
    assert len(waiting) > 15
    cold_builds.clear()
    d.undo()
    d.build(optimize=False)
    assert cold_builds == []
    assert_same_as_cold(d)


def test_undoing_a_group_replays_the_nodes_after_it(cold_builds):
    d = chain(40)
    ids = build_order(d)
    d.build(optimize=False)
    d.group([ids[20], ids[21]])
    d.build(optimize=False)
    cold_builds.clear()
    d.undo()
    d.build(optimize=False)
    assert cold_builds == []
    assert_same_as_cold(d)


def test_carried_segments_meet_moved_counters_and_still_give_the_cold_bytes(cold_builds):
    """Between the remove and its undo a new fc layer draws from the counters the carried
    segments recorded: the carried nodes after it must not replay names that moved."""
    d = chain(40)
    ids = build_order(d)
    d.build(optimize=False)
    d.remove(ids[20])
    d.build(optimize=False)
    d.add("fc", inputs={"input": ids[5]}, size=4)  # an fc before the gap: counters move
    d.build(optimize=False)
    d.undo()
    d.build(optimize=False)
    assert_same_as_cold(d)
    d.undo()
    cold_builds.clear()
    d.build(optimize=False)
    assert len(cold_builds) < 5  # the counters are where the carried segments found them
    assert_same_as_cold(d)


def cut_then_edited(builds):
    """A chain cut at its 21st node, then ``builds`` builds of edits before the cut (the
    nodes after it wait in each); returns the design and the original build order."""
    d = chain(40)
    ids = build_order(d)
    d.build(optimize=False)
    d.remove(ids[20])
    for size in range(5, 5 + builds):
        d.set(ids[2], size=size)
        d.build(optimize=False)
    return d, ids


def test_what_no_build_used_is_forgotten_after_the_carry_limit(cold_builds, monkeypatch):
    monkeypatch.setattr(replay_cache.NodeCache, "CARRY_BUILDS", 3)
    d, ids = cut_then_edited(4)  # four builds without the nodes after the cut: one too many
    cache = d._cache
    assert all(nid not in ids[20:] for _, nid, _ in cache._carried.values())
    assert all(set(run.ids).isdisjoint(ids[20:]) for run, _ in cache._carried_runs.values())
    for _ in range(5):
        d.undo()
    cold_builds.clear()
    d.build(optimize=False)
    assert set(ids[20:]) - {"x", "label"} <= set(cold_builds)
    assert_same_as_cold(d)


def test_a_carried_segment_is_used_within_the_limit(cold_builds, monkeypatch):
    monkeypatch.setattr(replay_cache.NodeCache, "CARRY_BUILDS", 3)
    d, ids = cut_then_edited(1)
    d.build(optimize=False)
    d.undo()
    d.undo()
    cold_builds.clear()
    b = d.build(optimize=False)
    assert b.waiting == {} and ids[2] in cold_builds and set(cold_builds) <= {ids[2], ids[3]}
    assert_same_as_cold(d)
