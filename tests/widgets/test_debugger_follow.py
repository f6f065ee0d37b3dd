"""DebuggerView follows its session however it is driven, and marks the current op in
every mode (issue #18): plain session calls are shown after the cell (once, however
many steps the cell took), and an op the graph's mode does not draw is marked on the op
standing in for it."""
import re

from fluidscope.widgets.debugger import DebuggerView
from fluidscope.widgets.graph import after_cell
from sessions import mlp_session, rnn_session

FAST_GRAPH = {"renderer": "browser"}


def current(view):
    """(node key, note) the graph marks as the position."""
    found = re.findall(r'class="fs-current[^"]*"[^\]]*id="([^"]+)"', view.graph.dot)
    return (found[0] if found else None), view.graph.current_note


def test_plain_session_calls_are_shown_after_the_cell_once():
    session = mlp_session()
    view = DebuggerView(session, graph_options=FAST_GRAPH)
    version = view.version
    for _ in range(5):  # a loop in one cell: the view is not redrawn per step
        session.step()
    assert view.version == version and view.op_index is None
    after_cell.run_all()  # the end of the cell
    assert view.version == version + 1
    assert view.op_index == 4 and view.position_text == session.position.breadcrumb()
    assert view.graph.highlight == 4
    # nothing moved: the next cell end shows nothing again
    after_cell.run_all()
    assert view.version == version + 1
    # a breakpoint added on the session is listed after the cell
    session.break_on(op_type="sgd")
    after_cell.run_all()
    assert [b["op_type"] for b in view.breakpoints] == ["sgd"]
    # the view's own methods show at once, and the cell end then has nothing to do
    view.step()
    assert view.op_index == 5 and not view.sync()


def test_forward_only_marks_the_forward_op_of_the_grad_op():
    session = mlp_session()
    view = DebuggerView(session, graph_options={**FAST_GRAPH, "mode": "forward"})
    ops = [op.type for op in session.program.desc.blocks[0].ops]
    view.run_to(op_type="mul_grad")
    grad = view.op_index
    assert ops[grad] == "mul_grad" and view.phase == "backward"
    key, note = current(view)
    forward = int(key.split(":")[2])
    assert ops[forward] == "mul" and forward < grad
    assert note == f"now at #{grad} mul_grad, the gradient of this op"
    # with gradients drawn, the grad op itself
    view.graph.set_mode("backward")
    assert current(view) == (f"op:0:{grad}", "")
    # the optimizer in "with gradients": the op reading the parameter it updates
    view.run_to(op_type="sgd")
    key, note = current(view)
    assert key is not None and "updates a parameter this op reads" in note


def test_in_a_recurrent_grad_frame_forward_only_marks_the_step_op():
    view = DebuggerView(rnn_session(), graph_options={**FAST_GRAPH, "mode": "forward"})
    desc = view.session.program.desc
    grad_block = next(b for b in range(len(desc.blocks)) if desc.blocks[b].forward_block_idx >= 0)
    view.run_to(block=grad_block, op_index=0)
    assert view.phase == "backward" and view.path[-1][0] == grad_block
    key, note = current(view)
    step_block = desc.blocks[grad_block].forward_block_idx
    assert key is not None and key.startswith(f"op:{step_block}:"), (key, view.graph.dot)
    assert ", the gradient of this op" in note
    # the recurrent op it runs in is outlined as the enclosing op
    assert re.search(r'class="fs-enclosing"[^\]]*id="op:0:', view.graph.dot)


def test_the_debuggers_graph_opens_details_only_when_asked_in_the_page():
    view = DebuggerView(mlp_session(), graph_options=FAST_GRAPH)
    assert view.graph.details_auto is False  # the inspector shows what the view selects
    view.step()
    view.select("fc_0.tmp_0")
    assert view.graph.selected == "var:0:fc_0.tmp_0"
    assert view.graph.details["title"] == "fc_0.tmp_0"  # ready for a click in the page


def test_plain_session_calls_redraw_live_but_throttled():
    session = mlp_session()
    view = DebuggerView(session, graph_options=FAST_GRAPH)
    view.follow_interval = 0  # no throttle: every stop is drawn as it happens
    version = view.version
    session.step()
    assert view.version == version + 1 and view.op_index == 0
    session.step()
    assert view.version == version + 2 and view.graph.highlight == 1
    # the view's own actions draw once, not once more through the session's listener
    view.step()
    assert view.version == version + 3
    # throttled: a burst of stops inside the interval draws nothing until the cell ends
    view.follow_interval = 3600
    for _ in range(4):
        session.step()
    assert view.version == version + 3 and view.op_index == 2
    after_cell.run_all()
    assert view.version == version + 4 and view.op_index == 6

