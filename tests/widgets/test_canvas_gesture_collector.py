"""The garbage collector kept out of canvas gestures (widgets/canvas/collector.py): a
gesture runs with the objects that existed before it frozen (no collection inside it walks
them) and thaws them when it ends; the garbage frozen as it died is freed by one full
collection when the event loop has been idle, soon after ``thaw_every`` gestures, or at
once after twice as many (after ``thaw_every`` without a loop); a disabled collector or
someone else's freeze is left alone."""
import asyncio
import gc
import threading
import weakref

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import collector
from fluidscope.widgets.canvas.collector import GestureCollector

from gc_cycles import Cycle, clean_gc_state  # noqa: F401  (the fixture)
from own_loop import run_in_own_loop


def walked(obj):
    """Whether a collection may walk ``obj`` (it is in a generation, not frozen)."""
    return any(o is obj for g in range(3) for o in gc.get_objects(g))


def full_collections(record):
    def callback(phase, info):
        if phase == "stop" and info["generation"] == 2:
            record.append(gc.get_freeze_count())
    return callback


def test_a_canvas_gesture_runs_with_the_old_objects_frozen_and_thaws_them_after():
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    d.add("fc", inputs={"input": h}, size=4, name="fc0")
    canvas = DesignCanvas(d)
    seen = []
    publish = canvas._publish

    def watched_publish(*args, **kwargs):
        seen.append((gc.get_freeze_count() > 1000, walked(canvas.design)))
        return publish(*args, **kwargs)
    canvas._publish = watched_publish
    before = collector.COLLECTOR.gestures
    assert canvas.receive({"action": "set_attr", "node": "fc0", "name": "size", "value": 3})
    assert canvas.receive({"action": "undo"})
    assert seen == [(True, False), (True, False)]
    assert gc.get_freeze_count() == 0 and walked(canvas.design)
    # a refused gesture thaws as well
    assert not canvas.receive({"action": "set_attr", "node": "nope", "name": "size", "value": 3})
    assert gc.get_freeze_count() == 0
    assert collector.COLLECTOR.gestures in (before + 3, (before + 3) % collector.THAW_EVERY)


def test_a_collection_inside_a_gesture_walks_only_what_the_gesture_made():
    old = Cycle()
    ref = weakref.ref(old)
    policy = GestureCollector()
    with policy.gesture():
        del old                      # dies while frozen: no collection may free it now
        young = Cycle()
        young_ref = weakref.ref(young)
        del young
        gc.collect()
        assert young_ref() is None   # made during the gesture: collected
        assert ref() is not None
    assert policy.gestures == 1
    policy.thaw()
    assert ref() is None and policy.gestures == 0


def test_with_a_loop_one_full_collection_comes_when_idle_and_frees_the_cycles():
    policy = GestureCollector(idle_s=0.1)
    fulls = []

    async def scenario():
        old = Cycle()
        ref = weakref.ref(old)
        gc.callbacks.append(full_collections(fulls))
        try:
            with policy.gesture():
                del old
            with policy.gesture():   # a second gesture before the idle moment
                assert gc.get_freeze_count() > 0
            armed = (policy.gestures, policy._timer is not None, len(fulls))
            await asyncio.sleep(0.5)
        finally:
            gc.callbacks.pop()
        return armed, (policy.gestures, policy._timer, ref() is None)

    armed, idle = run_in_own_loop(scenario)
    assert armed == (2, True, 0)                 # no full collection yet
    assert idle == (0, None, True)               # the idle one freed the cycle
    assert fulls == [0]                          # one, with nothing frozen


def test_after_thaw_every_gestures_it_comes_soon_and_after_twice_as_many_at_once():
    policy = GestureCollector(idle_s=3600, thaw_every=2, soon_s=0.05)

    async def scenario():
        states = []
        for _ in range(2):
            with policy.gesture():
                assert gc.get_freeze_count() > 0
            states.append((policy.gestures, policy._timer.when() - asyncio.get_running_loop().time()))
        await asyncio.sleep(0.3)
        states.append(policy.gestures)           # the soon timer collected
        for _ in range(4):                        # gestures faster than the soon timer
            with policy.gesture():
                assert gc.get_freeze_count() > 0
            states.append(policy.gestures)
        return states

    states = run_in_own_loop(scenario)
    assert states[0][0] == 1 and states[0][1] > 3000        # idle wait
    assert states[1][0] == 2 and states[1][1] < 1           # soon
    assert states[2:] == [0, 1, 2, 3, 0]                    # at once at 2 x thaw_every


def _in_a_thread_without_a_loop(fn):
    """``fn()`` in a new thread: after the browser tests, Playwright keeps an event loop
    running in the main thread, which the collector would take for a kernel's."""
    outcome = {}

    def run():
        try:
            outcome["result"] = fn()
        except BaseException as exc:  # noqa: BLE001  re-raised in the test's thread
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_without_a_loop_the_nth_gesture_collects_at_its_end():
    policy = GestureCollector(thaw_every=3)

    def scenario():
        old = Cycle()
        ref = weakref.ref(old)
        fulls, states = [], []
        gc.callbacks.append(full_collections(fulls))
        try:
            for k in range(3):
                with policy.gesture():
                    if k == 0:
                        del old
                states.append(policy.gestures)
        finally:
            gc.callbacks.pop()
        return states, ref() is None, fulls[-1:]

    assert _in_a_thread_without_a_loop(scenario) == ([1, 2, 0], True, [0])


def test_a_disabled_collector_and_someone_elses_freeze_are_left_alone():
    policy = GestureCollector()
    gc.disable()
    with policy.gesture():
        assert gc.get_freeze_count() == 0 and not gc.isenabled()
    assert not gc.isenabled() and policy.gestures == 0
    gc.enable()
    gc.freeze()                                  # a freeze this module did not make
    frozen = gc.get_freeze_count()
    with policy.gesture():
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == frozen and policy.gestures == 0
    gc.unfreeze()
