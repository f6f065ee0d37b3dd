"""The garbage collector kept out of canvas gestures (widgets/canvas/collector.py): during
a gesture the objects that existed before it are frozen (no full collection walks them),
with an event loop they stay frozen until the loop has been idle, then are thawed and
collected; without one they are thawed when the gesture ends; garbage cycles that died
while frozen are freed; a disabled collector or someone else's freeze is left alone."""
import asyncio
import gc
import weakref

import pytest

from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import collector
from fluidscope.widgets.canvas.collector import GestureCollector

from own_loop import run_in_own_loop
from test_canvas_view import sequence_classifier


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


@pytest.fixture(autouse=True)
def clean_gc_state():
    gc.collect()
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    yield
    collector.COLLECTOR.thaw()  # whatever a test left frozen
    gc.unfreeze()
    gc.enable()


def test_a_canvas_gesture_runs_with_the_old_objects_frozen_and_thaws_without_a_loop():
    canvas = DesignCanvas(sequence_classifier())
    seen = []
    publish = canvas._publish

    def watched_publish(*args, **kwargs):
        old = canvas.build.main  # made before the gesture: not in any generation a
        walked = any(o is old for g in range(3) for o in gc.get_objects(g))  # collection walks
        seen.append((gc.get_freeze_count() > 1000, walked))
        return publish(*args, **kwargs)
    canvas._publish = watched_publish
    assert canvas.receive({"action": "set_attr", "node": "logits", "name": "size", "value": 3})
    assert canvas.receive({"action": "undo"})
    assert seen == [(True, False), (True, False)]
    old = canvas.design  # made before both gestures: walked again once they end
    assert any(o is old for g in range(3) for o in gc.get_objects(g))
    assert gc.get_freeze_count() == 0 and not collector.COLLECTOR.frozen  # no loop: thawed
    # a gesture that fails is thawed as well
    assert not canvas.receive({"action": "set_attr", "node": "nope", "name": "size", "value": 3})
    assert gc.get_freeze_count() == 0


def test_a_full_collection_inside_a_gesture_walks_only_what_the_gesture_made():
    old = Cycle()
    ref = weakref.ref(old)
    policy = GestureCollector()
    with policy.gesture():
        del old                      # dies while frozen: no collection may free it now
        young = Cycle()
        young_ref = weakref.ref(young)
        del young
        gc.collect()                 # what a full collection inside a gesture does
        assert young_ref() is None   # made during the gesture: collected
        assert ref() is not None     # frozen: not walked
    gc.collect()
    assert ref() is None             # thawed (no loop): collected as usual


def test_with_a_loop_the_freeze_holds_until_idle_then_one_full_collection_frees_the_cycles():
    policy = GestureCollector(idle_s=0.05)
    fulls = []

    def count_full(phase, info):
        if phase == "stop" and info["generation"] == 2:
            fulls.append(gc.get_freeze_count())

    async def scenario():
        old = Cycle()
        ref = weakref.ref(old)
        with policy.gesture():
            del old
        gc.collect()
        after_gesture = (policy.frozen, gc.get_freeze_count() > 0, ref() is not None)
        with policy.gesture():       # a second gesture before the idle moment
            pass
        second = policy.gestures
        gc.callbacks.append(count_full)
        try:
            await asyncio.sleep(0.3)
        finally:
            gc.callbacks.remove(count_full)
        return after_gesture, second, (policy.frozen, gc.get_freeze_count(), ref() is None)

    after_gesture, second, idle = run_in_own_loop(scenario)
    assert after_gesture == (True, True, True)   # still frozen: the old cycle survives
    assert second == 2
    assert idle == (False, 0, True)              # thawed, and the cycle is gone
    assert fulls and fulls[0] == 0               # the idle collection walked everything


def test_without_an_idle_moment_every_nth_gesture_thaws_and_collects():
    policy = GestureCollector(idle_s=3600, thaw_every=3)

    async def scenario():
        refs = []
        for k in range(3):
            cycle = Cycle()
            refs.append(weakref.ref(cycle))
            with policy.gesture():
                del cycle
            gc.collect()
            refs.append((policy.frozen, policy.gestures))
        return refs

    out = run_in_own_loop(scenario)
    assert out[1] == (True, 1) and out[3] == (True, 2)
    assert out[5] == (False, 0)                  # the third gesture thawed and collected
    assert all(r() is None for r in (out[0], out[2], out[4]))


def test_a_disabled_collector_and_someone_elses_freeze_are_left_alone():
    policy = GestureCollector()
    gc.disable()
    with policy.gesture():
        assert gc.get_freeze_count() == 0 and not gc.isenabled()
    assert not gc.isenabled() and not policy.frozen
    gc.enable()
    gc.freeze()                                  # a freeze this module did not make
    frozen = gc.get_freeze_count()
    with policy.gesture():
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == frozen and not policy.frozen
    gc.unfreeze()
