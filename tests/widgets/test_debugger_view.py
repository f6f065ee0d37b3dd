"""DebuggerView without a browser: every button is a Python method; the traits (what the
front end and the browser tests read), the graph's highlight and the inspector follow
the session after each one, and errors land in ``message`` instead of being raised."""
import re

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.widgets.debugger import DebuggerView
from fluidscope.widgets.tensor import TensorInspector
from sessions import mlp_session, rnn_session

H = 4  # rnn_session's hidden size
FAST_GRAPH = {"renderer": "browser"}  # no `dot` call per step; the DOT text is still made




@pytest.fixture
def mlp():
    return DebuggerView(mlp_session(), graph_options=FAST_GRAPH)


@pytest.fixture
def rnn():
    return DebuggerView(rnn_session(), graph_options=FAST_GRAPH)


def highlighted(view):
    """The GraphView's highlight as a path [(block, idx), ...]."""
    h = view.graph.highlight
    if h is None:
        return []
    if isinstance(h, int):
        return [(0, h)]
    if len(h) == 2 and all(isinstance(v, int) for v in h):
        return [tuple(h)]
    return [tuple(p) for p in h]


def assert_shows(view, position):
    """Traits, graph highlight and breadcrumb all name ``position``."""
    assert view.position_text == position.breadcrumb()
    assert view.op_index == position.op_index and view.phase == position.phase
    assert view.path == [list(p) for p in position.path]
    got = highlighted(view)
    # the whole path once GraphView draws paths; until then the innermost op
    assert got == position.path or got == position.path[-1:]
    if position.path:
        block, idx = position.path[-1]
        node = next(line for line in view.graph.dot.splitlines()
                    if line.strip().startswith(f"op_{block}_{idx} "))
        assert "penwidth" in node


def test_start_state(mlp):
    assert mlp.position_text == "block 0 › start" and mlp.op_index is None
    assert (mlp.finished, mlp.history_depth, mlp.frames, mlp.frame) == (False, 0, 0, None)
    assert mlp.message == "" and mlp.breakpoints == [] and mlp.graph.highlight is None
    assert mlp.upcoming_text == "block 0 › #0 mul" and mlp.stop_reason == "start"
    assert mlp.children == (mlp.controls, mlp.graph, mlp.inspector)
    assert "sgd" in mlp.controls.op_types and "fc_0.w_0" in mlp.controls.var_names


def test_step_moves_the_breadcrumb_highlight_and_inspector(mlp):
    version = mlp.version
    pos = mlp.step()
    assert pos.op_index == 0 and mlp.op_type == "mul" and mlp.version == version + 1
    assert_shows(mlp, pos)
    assert mlp.inspector.selected == "fc_0.tmp_0"  # nothing chosen: the op's output
    assert mlp.inspector.value["state"] == "value" and mlp.inspector.value["shape"] == [5, 8]
    for expected in range(1, 5):
        assert mlp.step().op_index == expected
        assert_shows(mlp, mlp.session.position)
    assert mlp.position_text == "block 0 › #4 elementwise_add" and mlp.history_depth == 5
    assert mlp.inspector.selected == "fc_0.tmp_0"  # a choice is kept while stepping


def test_back_restart_and_their_errors(mlp):
    mlp.step()
    mlp.step()
    mlp.back()
    assert mlp.op_index == 0 and mlp.stop_reason == "back" and mlp.message == ""
    mlp.back()
    assert mlp.op_index is None and mlp.history_depth == 0
    assert mlp.back() is None
    assert mlp.message == "back: already at the start" and mlp.op_index is None
    mlp.step()
    assert mlp.message == "" and mlp.op_index == 0
    assert mlp.step_out() is None
    assert mlp.message.startswith("step_out: not inside a recurrent op")
    mlp.continue_()
    assert mlp.finished and mlp.stop_reason == "finished" and mlp.message == ""
    assert mlp.op_type == "sgd" and mlp.upcoming_text == ""
    mlp.step()
    assert mlp.finished and mlp.message == ""
    mlp.restart()
    assert mlp.position_text == "block 0 › start" and not mlp.finished
    assert mlp.graph.highlight is None and mlp.history_depth == 0


def test_a_failing_op_is_reported_and_the_position_kept():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        fd.mean(fd.elementwise_add(fd.data("x", [None, 3]), fd.data("y", [None, 3])))
    feed = {"x": np.ones((5, 3), np.float32), "y": np.ones((4, 3), np.float32)}
    view = DebuggerView(fd.Executor().debug(main, feed, None, fd.Scope()),
                        graph_options=FAST_GRAPH)
    assert view.step() is None
    assert view.message.startswith("step: op #0 elementwise_add")
    assert "could not be broadcast" in view.message
    assert view.op_index is None and view.position_text == "block 0 › start"
    view.continue_()
    assert view.message.startswith("continue: op #0 elementwise_add")


def test_breakpoints_add_toggle_remove_and_continue(mlp):
    by_type = mlp.add_breakpoint(op_type="relu")
    by_index = mlp.add_breakpoint(op_index="9", block="")  # as the form sends them
    assert [b["id"] for b in mlp.breakpoints] == [by_type.id, by_index.id]
    assert mlp.breakpoints[1] == {
        "id": by_index.id, "enabled": True, "hits": 0,
        "description": f"breakpoint {by_index.id}: op #9 of block 0", "op_type": None,
        "op_index": 9, "block": 0, "var": None, "frame": None, "nan_inf": False,
        "condition": None}
    mlp.continue_()
    assert mlp.op_type == "relu" and mlp.stop_reason.startswith(f"breakpoint {by_type.id}")
    assert mlp.breakpoints[0]["hits"] == 1
    mlp.continue_()
    assert mlp.op_index == 9 and mlp.phase == "backward"
    mlp.restart()
    mlp.toggle_breakpoint(by_type.id)
    assert mlp.breakpoints[0]["enabled"] is False
    mlp.continue_()
    assert mlp.op_index == 9
    mlp.remove_breakpoint(by_index.id)
    assert [b["id"] for b in mlp.breakpoints] == [by_type.id]
    mlp.continue_()
    assert mlp.finished
    by_var = mlp.add_breakpoint(var="fc_1.tmp_2")
    mlp.restart()
    mlp.continue_()
    assert mlp.op_type == "softmax" and by_var.hits == 1
    mlp.clear_breakpoints()
    assert mlp.breakpoints == []


@pytest.mark.parametrize("fields, error", [
    ({}, "break_on needs at least one of"),
    ({"op_type": "sofmax"}, "no op of type 'sofmax'"),
    ({"var": "nope"}, "no variable 'nope'"),
    ({"op_index": 99}, "block 0 has ops #0..#20, not #99"),
    ({"op_index": "two"}, "op index must be a whole number, got 'two'"),
    ({"op_index": 1, "block": 7}, "no block 7"),
])
def test_wrong_breakpoints_are_reported(mlp, fields, error):
    assert mlp.add_breakpoint(**fields) is None
    assert mlp.message.startswith("add_breakpoint: ") and error in mlp.message
    assert mlp.breakpoints == []


def test_breakpoint_id_errors_are_reported(mlp):
    mlp.toggle_breakpoint(4)
    assert mlp.message == "toggle_breakpoint: no breakpoint 4; there are []"
    mlp.remove_breakpoint(4)
    assert mlp.message.startswith("remove_breakpoint: no breakpoint 4")
    mlp.remove_breakpoint("first")
    assert mlp.message == "remove_breakpoint: id must be a whole number, got 'first'"
    mlp.select_frame("2.5")
    assert mlp.message == "select_frame: frame must be a whole number, got '2.5'"


def test_toggle_breakpoint_here_marks_the_next_op(mlp):
    mlp.step()
    bp = mlp.toggle_breakpoint_here()
    assert (bp.op_index, bp.block) == (1, 0) and len(mlp.breakpoints) == 1
    mlp.toggle_breakpoint_here()
    assert mlp.breakpoints == []
    mlp.toggle_breakpoint_here()
    mlp.restart()
    mlp.continue_()
    assert mlp.op_index == 1


@pytest.mark.filterwarnings("ignore:.*encountered in log:RuntimeWarning")
def test_nan_breakpoint_stops_at_the_log_and_inspects_its_output():
    view = DebuggerView(mlp_session(log_of_zero=True), graph_options=FAST_GRAPH)
    view.add_breakpoint(nan_inf=True)
    view.continue_()
    log_op = next(i for i, op in enumerate(view.session.program.desc.blocks[0].ops)
                  if op.type == "log")
    assert view.op_type == "log" and view.op_index == log_op
    assert "NaN/Inf" in view.stop_reason and view.stop_var in view.stop_reason
    assert view.inspector.selected == view.stop_var
    stats = view.inspector.value["stats"]
    assert stats["inf"] == stats["size"] == 20 and stats["finite"] == 0
    log_out = view.stop_var
    view.clear_breakpoints()
    view.step()
    assert view.stop_reason == "step" and view.stop_var == ""
    assert view.inspector.selected == log_out  # the choice stays


def test_front_end_messages_call_the_methods(mlp):
    send = mlp.controls.receive  # exactly what the browser's {action, ...} does
    assert send({"action": "step"})
    assert send({"action": "step_into"})
    assert mlp.op_index == 1
    assert send({"action": "add_breakpoint", "op_type": "", "op_index": 3, "block": None,
                 "var": "", "frame": "", "nan_inf": False})
    assert mlp.breakpoints[0]["op_index"] == 3
    send({"action": "continue_"})
    assert mlp.op_index == 3
    send({"action": "toggle_breakpoint", "id": mlp.breakpoints[0]["id"]})
    assert mlp.breakpoints[0]["enabled"] is False
    send({"action": "back"})
    assert mlp.op_index == 2
    send({"action": "restart"})
    assert mlp.op_index is None
    send({"action": "select", "name": "fc_1.w_0"})
    assert mlp.inspector.selected == "fc_1.w_0"
    send({"action": "select_frame", "t": 0})
    assert mlp.message.startswith("select_frame: view_frame: frame 0 has not run here")


def test_bad_front_end_messages_are_reported_not_run(mlp):
    version = mlp.version
    assert not mlp.controls.receive({"action": "__init__"})
    assert mlp.message.startswith("DebuggerControls: unknown action '__init__'; known: [")
    assert mlp.version == version + 1  # the front end's busy state ends
    assert not mlp.controls.receive({"action": "add_breakpoint", "op_index": 3,
                                     "evil": "__import__('os')"})
    assert "unexpected argument(s) ['evil']" in mlp.message and not mlp.breakpoints
    assert not mlp.controls.receive({"action": "toggle_breakpoint", "id": [1]})
    assert mlp.message == ("DebuggerControls: toggle_breakpoint: argument 'id' must be a whole "
                           "number or a string, got [1]")
    assert mlp.op_index is None  # nothing ran


def test_graph_clicks_select_in_the_inspector(mlp):
    mlp.graph.selected = "var:0:fc_0.w_0"
    assert mlp.inspector.selected == "fc_0.w_0" and mlp.inspector.value["shape"] == [4, 8]
    mlp.graph.selected = "op:0:5"  # softmax: its output
    assert mlp.inspector.selected == "fc_1.tmp_2"
    mlp.select("fc_1.b_0")
    assert mlp.graph.selected == "var:0:fc_1.b_0" and mlp.inspector.selected == "fc_1.b_0"
    mlp.select("no_such_var")
    assert mlp.inspector.selected == "fc_1.b_0" and "no variable 'no_such_var'" in mlp.message


def test_stepping_into_the_recurrent_op_and_its_frames(rnn):
    assert rnn.upcoming_text == "block 0 › #0 recurrent"
    pos = rnn.step_into()
    assert pos.frame == 0 and rnn.inside and (rnn.frames, rnn.frame) == (1, 0)
    assert rnn.position_text == "block 0 › #0 recurrent › frame 0 › block 1 › #0 mul"
    assert rnn.path == [[0, 0], [1, 0]]
    assert_shows(rnn, pos)
    rnn.run_to(frame=2)
    assert (rnn.frame, rnn.frames, rnn.frame_numbers) == (2, 3, [0, 1, 2])
    assert re.search(r"› frame 2 › block 1 › #0 mul$", rnn.position_text)
    assert_shows(rnn, rnn.session.position)
    pos = rnn.step_out()
    assert rnn.position_text == "block 0 › #0 recurrent" and not rnn.inside
    assert (rnn.frames, rnn.frame) == (4, None)  # just after the op: frames still listed
    assert_shows(rnn, pos)
    rnn.select("h.tmp_4")  # the out-link: whole sequences until a frame is picked
    assert rnn.inspector.value["shape"] == [8, H] and rnn.inspector.value["lod"] == [[0, 3, 4, 8]]
    assert rnn.inspector.value["sequences"]["total"] == 3
    rnn.select_frame(1)
    assert rnn.frame == 1 and rnn.inspector.value["shape"] == [2, H]
    rnn.select_frame(None)
    assert rnn.frame is None and rnn.inspector.value["shape"] == [8, H]
    rnn.step_out()
    assert rnn.message.startswith("step_out: not inside a recurrent op")
    rnn.step()
    assert rnn.op_type == "elementwise_mul" and (rnn.frames, rnn.frame) == (0, None)


def test_frame_slider_changes_the_inspector(rnn):
    rnn.run_to(frame=2, op_type="tanh")
    name = rnn.inspector.selected
    assert name == "h.tmp_4"  # nothing chosen: the output of the op stopped at (tanh)
    value = rnn.inspector.value
    frames = {f.t: f for f in rnn.session.frames}
    assert value["shape"] == [2, H] and rnn.inspector.frame == 2
    rnn.select_frame(0)
    assert rnn.frame == 0 and rnn.controls.frame == 0 and rnn.inspector.frame == 0
    first = rnn.inspector.value
    expected = frames[0].tensor(name)
    assert first["shape"] == [3, H]
    assert first["stats"]["mean"] == pytest.approx(expected.mean())
    assert first["stats"]["mean"] != value["stats"]["mean"]
    rnn.select_frame(9)
    assert rnn.message.startswith("select_frame: view_frame: frame 9 has not run here")
    assert rnn.frame == 0
    rnn.step_into()  # a step shows the current frame again: frame 3's first op
    assert (rnn.frame, rnn.inspector.frame, rnn.frame_numbers) == (3, 3, [0, 1, 2, 3])
    assert rnn.inspector.value["state"] == "unset"  # frame 3 has not run its tanh yet
    rnn.back()
    assert rnn.frame == 2 and rnn.inspector.value["shape"] == [2, H]


def test_backward_frames_run_in_reverse(rnn):
    rnn.add_breakpoint(op_type="tanh_grad", frame=2)
    rnn.continue_()
    assert rnn.phase == "backward" and rnn.frame_numbers == [3, 2] and rnn.frame == 2
    assert rnn.position_text == "block 0 › #6 recurrent_grad › frame 2 › block 2 › #0 tanh_grad"
    assert_shows(rnn, rnn.session.position)
    rnn.back()
    assert rnn.frame_numbers == [3] and rnn.frame == 3
    assert rnn.position_text.endswith("› frame 3 › block 2 › #5 mul_grad")


def test_custom_inspector_and_refresh_after_driving_the_session():
    session = mlp_session()
    inspector = TensorInspector(session, "fc_0.w_0", bins=8)
    view = DebuggerView(session, inspector=inspector, graph_options=FAST_GRAPH)
    assert view.inspector is inspector and view.children[2] is inspector
    session.step()
    session.step()
    view.refresh()
    assert view.op_index == 1 and view.history_depth == 2
    assert inspector.selected == "fc_0.w_0" and inspector.where == "block 0 › #1 elementwise_add"
    assert len(inspector.value["histogram"]["counts"]) == 8 * 4


def test_front_end_bundles_call_only_known_actions():
    from fluidscope.widgets.base import actions_of
    from fluidscope.widgets.base import STATIC

    js = (STATIC / "debugger_view.js").read_text(encoding="utf-8")
    own = js.split("// src/debugger_view.js")[1]  # after the shared helpers esbuild inlined
    sent = set(re.findall(r'send\("(\w+)"', own)) | set(re.findall(r'\[\s*"(\w+)", "fs-dbg-', own))
    sent |= set(re.findall(r':\s*"(\w+)"', own.split("function render")[0]))  # key bindings
    assert sent and sent <= set(actions_of(DebuggerView)), sent
    assert {"step", "step_into", "step_out", "continue_", "back", "restart"} <= sent
    for hook in ("fs-dbg-step", "fs-dbg-into", "fs-dbg-out", "fs-dbg-continue", "fs-dbg-back",
                 "fs-dbg-restart", "fs-dbg-breadcrumb", "fs-dbg-frame-slider", "fs-dbg-bp-add"):
        assert hook in js
