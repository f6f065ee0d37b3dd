"""The one widget protocol: every widget answers {"action": name, ...} through its declared
actions, and reports what it cannot do the same way, in its ``message`` trait."""
import pytest

from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import (DebuggerView, GraphView, SummaryView, TensorInspector,
                                 TrainingMonitor)
from fluidscope.widgets.base import Action, FluidscopeWidget, action, actions_of
from sessions import mlp_session


# widget name -> (the anywidget that receives, its actions, one action and a bad argument)
def make(name):
    if name == "GraphView":
        widget = GraphView(mlp_session().program, renderer="browser")
        return widget, {"collapse", "expand", "toggle_group", "find", "show_internal_outputs"}, (
            "toggle_group", "key", 3)
    if name == "TensorInspector":
        widget = TensorInspector(mlp_session())
        return widget, {"select", "refresh", "set_sample", "set_show_difference",
                        "set_show_optimizer_state", "save_npy", "check_gradient"}, (
            "select", "name", ["x"])
    if name == "DebuggerView":
        widget = DebuggerView(mlp_session(), graph_options={"renderer": "browser"}).controls
        actions = {"step", "step_into", "step_out", "continue_", "back", "restart",
                   "add_breakpoint", "remove_breakpoint", "toggle_breakpoint",
                   "clear_breakpoints", "toggle_breakpoint_here", "select_frame", "select"}
        return widget, actions, ("select_frame", "t", 1.5)
    if name == "SummaryView":
        widget = SummaryView(mlp_session().program)
        return widget, {"group_by", "set_batch_size", "refresh"}, ("set_batch_size", "batch_size", 1.5)
    widget = TrainingMonitor()
    return widget, {"stop", "set_log_scale", "export_csv", "export_png", "save_png"}, (
        "set_log_scale", "on", "yes")


WIDGETS = ["GraphView", "TensorInspector", "DebuggerView", "TrainingMonitor", "SummaryView"]


@pytest.mark.parametrize("name", WIDGETS)
def test_every_widget_declares_its_actions_and_shares_the_base(name):
    widget, actions, _ = make(name)
    assert isinstance(widget, FluidscopeWidget)
    assert set(widget.actions) == actions
    assert all(isinstance(spec, Action) for spec in widget.actions.values())


@pytest.mark.parametrize("name", WIDGETS)
def test_an_unknown_action_is_reported_in_the_message(name):
    widget, actions, _ = make(name)
    cls = type(widget).__name__
    assert widget.receive({"action": "no_such_thing"}) is False
    assert widget.message == (f"{cls}: unknown action 'no_such_thing'; known: "
                              f"{sorted(actions)}")
    for malformed in ({"event": "stop"}, ["step"], None, {"action": 3}):
        assert widget.receive(malformed) is False
        assert widget.message.startswith(f"{cls}: a front-end message must be an object with "
                                         f"an 'action' string, got ")


@pytest.mark.parametrize("name", WIDGETS)
def test_malformed_arguments_are_reported_in_the_message(name):
    widget, _, (act, argument, bad) = make(name)
    cls = type(widget).__name__
    assert widget.receive({"action": act, argument: bad}) is False
    assert widget.message.startswith(f"{cls}: {act}: argument '{argument}' must be ")
    assert widget.message.endswith(f", got {bad!r}")
    assert widget.receive({"action": act, argument: bad, "extra": 1}) is False
    assert widget.message == (f"{cls}: {act}: unexpected argument(s) ['extra']; it takes "
                              f"{sorted(widget.actions[act].params)}")


class Probe(FluidscopeWidget):
    """A widget of this test: one action of each outcome."""

    @action(n=int, label=(str, None))
    def count(self, n, label=None):
        self.last = (n, label)

    @action()
    def refuse(self):
        raise FluidscopeError("not now")

    @action()
    def crash(self):
        raise ZeroDivisionError("division by zero")

    def not_an_action(self):
        raise AssertionError("never called from the front end")


def test_the_dispatcher_binds_checks_and_reports():
    probe = Probe()
    assert probe.receive({"action": "count", "n": 2}) and probe.last == (2, None)
    assert probe.receive({"action": "count", "n": 3, "label": None}) and probe.last == (3, None)
    assert probe.message == ""
    assert not probe.receive({"action": "count"})
    assert probe.message == "Probe: count: missing argument(s) ['n']"
    assert not probe.receive({"action": "count", "n": True})  # JSON true is no number
    assert probe.message == "Probe: count: argument 'n' must be a whole number, got True"
    assert not probe.receive({"action": "refuse"}) and probe.message == "refuse: not now"
    assert not probe.receive({"action": "crash"})
    assert probe.message == "crash: ZeroDivisionError: division by zero"
    assert not probe.receive({"action": "not_an_action"})
    assert "unknown action 'not_an_action'" in probe.message
    assert probe.receive({"action": "count", "n": 1}) and probe.message == ""  # cleared
    assert set(actions_of(Probe)) == {"count", "refuse", "crash"}


def test_an_action_must_name_real_parameters():
    with pytest.raises(TypeError, match="no parameter"):
        @action(missing=int)
        def method(self, present):
            return present


def test_a_report_does_not_erase_what_the_widget_itself_shows():
    """The monitor's message is its status line: an action that works leaves it alone, and
    a report of a bad message is cleared by the next message."""
    monitor = TrainingMonitor()
    monitor.message = "finished 3 epochs, 30 steps in 1.0 s"
    assert monitor.receive({"action": "set_log_scale", "on": True})
    assert monitor.message == "finished 3 epochs, 30 steps in 1.0 s"
    assert not monitor.receive({"action": "explode"})
    assert "unknown action 'explode'" in monitor.message
    assert monitor.receive({"action": "set_log_scale", "on": False})
    assert monitor.message == ""
