"""When the canvas's full collection runs (widgets/canvas/collector.py): just after a
gesture that replaced the build and came after a pause (its view sent, the person reading
it), not at the idle moment where a person's next edit often lands; a burst falls back to
the idle timer, and a gesture that arrives first cancels a pending collection."""
import asyncio
import gc
import weakref

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import collector
from fluidscope.widgets.canvas.collector import GestureCollector

from gc_cycles import Cycle, clean_gc_state  # noqa: F401  (the fixture)
from own_loop import run_in_own_loop


class Clock:
    """A clock the test moves: pauses without sleeping."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def delay_of(policy):
    """Seconds until the pending collection, or None."""
    if policy._timer is None:
        return None
    return round(policy._timer.when() - asyncio.get_running_loop().time(), 2)


def edit(policy, rebuild=True):
    with policy.gesture():
        if rebuild:
            policy.replaced_build()


def replace_a_build(policy):
    """A gesture that replaces a build (garbage in a cycle, dying inside it): a weak
    reference to that garbage."""
    old = Cycle()
    ref = weakref.ref(old)
    with policy.gesture():
        del old                         # the build this gesture replaced
        policy.replaced_build()
    return ref


def test_a_paused_rebuild_collects_just_after_its_view_and_frees_the_old_build():
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=0.05, pause_s=1.0, clock=clock)

    async def scenario():
        ref = replace_a_build(policy)
        armed = delay_of(policy)
        await asyncio.sleep(0.3)
        return armed, policy.gestures, policy._timer, ref() is None

    assert run_in_own_loop(scenario) == (0.05, 0, None, True)


def test_a_burst_a_gesture_without_a_rebuild_and_a_pause_each_choose_their_moment():
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=0.05, pause_s=1.0, clock=clock)

    async def scenario():
        delays = []
        edit(policy)                    # the first gesture: nothing before it
        delays.append(delay_of(policy))
        clock.now += 0.3                # a quick second edit: a burst
        edit(policy)
        delays.append(delay_of(policy))
        clock.now += 0.4
        edit(policy)                    # still the burst (0.4 s after the last one)
        delays.append(delay_of(policy))
        clock.now += 2.0
        edit(policy, rebuild=False)     # after a pause, but nothing rebuilt (a selection)
        delays.append(delay_of(policy))
        clock.now += 2.0
        edit(policy)                    # after a pause, rebuilt
        delays.append(delay_of(policy))
        return delays

    assert run_in_own_loop(scenario) == [0.05, 60, 60, 60, 0.05]


def test_a_gesture_before_the_pending_collection_cancels_it():
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=0.2, pause_s=1.0, clock=clock)
    fulls = []

    def count(phase, info):
        if phase == "stop" and info["generation"] == 2:
            fulls.append(1)

    async def scenario():
        gc.callbacks.append(count)
        try:
            edit(policy)
            pending = policy._timer
            clock.now += 0.1
            edit(policy)                # arrives before the collection: a burst
            await asyncio.sleep(0.4)
        finally:
            gc.callbacks.remove(count)
        return pending.cancelled(), delay_of(policy) is not None and delay_of(policy) > 50, \
            policy.gestures, len(fulls)

    assert run_in_own_loop(scenario) == (True, True, 2, 0)


def test_soon_after_thaw_every_gestures_a_paused_rebuild_keeps_the_sooner_moment():
    clock = Clock()
    policy = GestureCollector(idle_s=60, thaw_every=2, soon_s=0.3, after_view_s=0.05,
                              pause_s=1.0, clock=clock)

    async def scenario():
        edit(policy, rebuild=False)
        clock.now += 0.1
        edit(policy, rebuild=False)     # thaw_every gestures: soon
        soon = delay_of(policy)
        policy.thaw()
        edit(policy, rebuild=False)
        clock.now += 5
        edit(policy)                    # thaw_every gestures, paused and rebuilt
        return soon, delay_of(policy)

    assert run_in_own_loop(scenario) == (0.3, 0.05)


def test_the_canvas_says_which_gestures_replaced_the_build(monkeypatch):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    d.add("fc", inputs={"input": h}, size=4, name="fc0")
    canvas = DesignCanvas(d)
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=0.05, pause_s=1.0, clock=clock)
    monkeypatch.setattr(collector, "COLLECTOR", policy)
    monkeypatch.setattr("fluidscope.widgets.canvas.widget.COLLECTOR", policy)

    async def scenario():
        delays = []
        for message in ({"action": "set_attr", "node": "fc0", "name": "size", "value": 3},
                        {"action": "select", "ids": ["fc0"]},
                        {"action": "undo"},
                        {"action": "set_attr", "node": "nope", "name": "size", "value": 3}):
            clock.now += 2.0            # each after a pause
            canvas.receive(message)
            delays.append(delay_of(policy))
        return delays

    # the edit and the undo rebuilt; the selection did not; the refused action neither
    assert run_in_own_loop(scenario) == [0.05, 60, 0.05, 60]


def test_the_pages_drawn_message_runs_a_waiting_collection_and_only_that_one():
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=30, pause_s=1.0, clock=clock)

    async def scenario():
        ref = replace_a_build(policy)
        waiting = (delay_of(policy), ref() is None)
        policy.view_drawn()             # the page drew the view: collect now
        drawn = (policy._timer, policy.gestures, ref() is None)
        clock.now += 0.2
        edit(policy)                    # a burst: the idle timer, not the page's drawing
        policy.view_drawn()
        return waiting, drawn, (delay_of(policy), policy.gestures)

    assert run_in_own_loop(scenario) == ((30, False), (None, 0, True), (60, 1))


def test_drawn_from_the_page_is_no_gesture_and_keeps_the_message(monkeypatch):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    d.add("fc", inputs={"input": h}, size=4, name="fc0")
    canvas = DesignCanvas(d)
    clock = Clock()
    policy = GestureCollector(idle_s=60, after_view_s=30, pause_s=1.0, clock=clock)
    monkeypatch.setattr("fluidscope.widgets.canvas.widget.COLLECTOR", policy)

    async def scenario():
        clock.now += 2.0
        assert canvas.receive({"action": "set_attr", "node": "fc0", "name": "size", "value": 3})
        armed = delay_of(policy)
        assert canvas.receive({"action": "drawn"})      # collects, counts no gesture
        drawn = (policy._timer, policy.gestures)
        assert not canvas.receive({"action": "set_attr", "node": "nope", "name": "size", "value": 3})
        message = canvas.message
        assert canvas.receive({"action": "drawn"})      # nothing waits for it now
        return armed, drawn, (delay_of(policy), policy.gestures), message == canvas.message != ""

    assert run_in_own_loop(scenario) == (30, (None, 0), (60, 1), True)
