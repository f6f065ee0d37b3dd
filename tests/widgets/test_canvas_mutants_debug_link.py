"""The canvas's debugger link in the cases mutation testing found unasserted (issue #17):
clicks in the debugger's graph on a variable, a layer or the op just run; the live loss
line kept through debugger stops and taken from the last monitor only; port cards; run to
here across blocks; and the trailing publisher's interval, driven by a fake clock so that
nothing depends on the machine's speed."""
import threading
import time

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import debug_link as debug_link_module
from fluidscope.widgets.training import TrainingMonitor

from test_canvas_debug_link import debugging
from test_canvas_files import batches
from test_canvas_view import sequence_classifier


def wait_for(condition, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


class FakeTime:
    """Stands for the ``time`` module inside debug_link.py: a clock the test moves, and a
    ``sleep`` that records what it was asked and moves the clock by as much."""

    def __init__(self, now=1000.0):
        self.now, self.slept = now, []

    def perf_counter(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_graph_clicks_on_a_variable_a_layer_or_an_op_select_their_node():
    c, view = debugging()
    view.graph.selected = "var:0:logits.tmp_1"          # a variable: the node writing it
    assert c.selected == ["logits"]
    view.graph.selected = "group:0:/cost/"              # a collapsed layer: its namescope
    assert c.selected == ["cost"]
    view.step()
    view.step()                                         # paused after op 1, the recurrent op
    assert c.link_state["node"] == "rnn" and c.selected == ["cost"]
    view.graph.selected = "op:0:1"                      # the op just run: the stop's own
    assert c.selected == ["cost"]
    view.graph.selected = "op:0:3"                      # another op: its layer
    assert c.selected == ["logits"]


def test_trait_changes_other_than_the_selection_do_not_reach_the_debugger():
    """Only ``selected`` is followed: an int trait changing (auto layout's request, the
    height) while a debugger view is linked is no selection."""
    c, view = debugging()
    assert c.receive({"action": "auto_layout"}), c.message
    assert c.layout_request == 1
    c.height = 480
    assert c.selected == [] and c.message == ""


def test_a_new_debugger_stops_the_canvas_following_the_old_ones_graph():
    c, old = debugging()
    c.reader = batches(1)
    new = c.debug()
    assert c.debug_link.view is new
    old.graph.selected = "op:0:5"                       # softmax_with_cross_entropy
    assert c.selected == []
    new.graph.selected = "op:0:5"
    assert c.selected == ["cost"]


def test_the_live_loss_comes_from_the_last_monitor_and_stays_through_stops():
    c = DesignCanvas(sequence_classifier())
    first, second = TrainingMonitor(), TrainingMonitor()
    c.link_training(first)
    first.loss_text = "0.5"
    assert c.link_state["loss"] == {"node": "loss", "text": "0.5"}
    c.link_training(second)
    first.loss_text = "0.4"                             # no longer followed
    assert c.link_state["loss"] == {"node": "loss", "text": "0.5"}
    second.loss_text = "0.3"
    assert c.link_state["loss"] == {"node": "loss", "text": "0.3"}
    c.reader = batches(1)
    view = c.debug()                                    # the stops' states keep the loss line
    assert c.link_state["active"] and c.link_state["loss"] == {"node": "loss", "text": "0.3"}
    # every stop published at once (the default interval would hold a stop this close to
    # the first one back for a trailing publish, or not, with the machine's speed)
    c.link_debugger(view, min_interval_s=0.0)
    view.step()
    assert c.link_state["node"] == "embedding_0"
    assert c.link_state["loss"] == {"node": "loss", "text": "0.3"}


def test_the_live_loss_of_a_design_without_a_loss_node():
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 3])
    d.add("fc", inputs={"input": x}, size=2, name="out")
    c = DesignCanvas(d)
    monitor = TrainingMonitor()
    c.link_training(monitor)
    monitor.loss_text = "1.25"
    assert c.link_state["loss"] == {"node": None, "text": "1.25"}


def test_a_stop_state_has_every_field_at_the_top_level_too():
    c, view = debugging()
    view.step()
    state = c.link_state
    assert state == {"active": True, "finished": False, "node": "embedding_0",
                     "phase": "forward", "op": "lookup_table_v2", "zone": None,
                     "frame": None, "frames": None, "position": state["position"]}


def test_port_cards_name_the_port_and_say_why_there_is_no_value():
    c, view = debugging()
    assert c.inspect_port("logits", 0) == {"node": "logits", "index": 0,
                                           "var": c.build.outputs["logits"][0].name,
                                           "error": "not computed yet at this position"}
    extra = c.add_node("fc", 0, 0, source="logits")     # added after the debugger opened
    port = c.inspect_port(extra, 0)
    assert (port["node"], port["index"]) == (extra, 0)
    assert port["error"].startswith(f"tensor: the program has no variable '{port['var']}'")
    assert c.link_state["port"] == port


def test_run_to_here_stops_after_the_forward_op_of_a_one_op_layer():
    c, view = debugging()
    c.run_to_here("cost")            # its one forward op, not its grad op later
    assert (view.op_type, c.link_state["phase"]) == ("softmax_with_cross_entropy", "forward")
    assert c.link_state["node"] == "cost"


def test_run_to_here_in_a_zone_past_its_forward_runs_its_backward_step():
    c, view = debugging()
    c.run_to_here("logits")          # past the recurrent op
    c.run_to_here("h")               # h's ops are in the step block and its grad block
    state = c.link_state
    assert (state["node"], state["zone"], state["phase"]) == ("h", "rnn", "backward")
    assert not state["finished"]
    assert not c.receive({"action": "run_to_here", "node": "ids"})
    assert c.message.endswith("opened: debug() again)")


def test_the_trailing_publish_waits_out_the_rest_of_the_interval(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(debug_link_module, "time", clock)
    c, view = debugging(min_interval_s=0.05)
    link = c.debug_link
    published = link.published
    clock.now += 0.01
    view.session.step()              # 10 ms after the last publish: left to the worker
    wait_for(lambda: link.published == published + 1, "the trailing publish")
    assert len(clock.slept) == 1 and abs(clock.slept[0] - 0.04) < 1e-9
    assert c.link_state["node"] == "embedding_0"
    workers = [t for t in threading.enumerate() if t.name == "fluidscope-debug-link"]
    assert workers and all(t.daemon for t in workers)  # never keeps the kernel alive


def test_a_stop_landing_while_the_trailing_publish_reads_is_published_after_it(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(debug_link_module, "time", clock)
    c, view = debugging(min_interval_s=0.05)
    session, publish = view.session, c.set_link_state
    stepped = []

    def publish_and_step(state):     # the user's loop steps on while the worker publishes
        publish(state)
        if threading.current_thread().name == "fluidscope-debug-link" and not stepped:
            stepped.append(state["position"])
            session.step()
    monkeypatch.setattr(c, "set_link_state", publish_and_step)
    clock.now += 0.01
    session.step()
    wait_for(lambda: stepped and c.link_state["position"] == session.position.breadcrumb(),
             "the last stop on the canvas")
    assert c.link_state["node"] == "rnn" and stepped[0] != c.link_state["position"]


def test_flush_publishes_once_and_the_next_stop_after_the_interval_goes_at_once(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(debug_link_module, "time", clock)
    c, view = debugging(min_interval_s=100)             # no worker: flush() by hand
    link, session = c.debug_link, view.session
    published = link.published
    clock.now += 1
    session.step()
    assert link.published == published
    link.flush()
    assert link.published == published + 1 and c.link_state["node"] == "embedding_0"
    link._trailing()                 # what the worker would run next: nothing is due
    assert link.published == published + 1
    clock.now += 200
    session.step()                   # the interval has passed: published at once
    assert link.published == published + 2 and c.link_state["node"] == "rnn"
