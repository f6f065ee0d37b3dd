"""The canvas linked to a debugger session: the layer of each stop lit, forward and
backward, the frame of a recurrent zone, port values, run to here, selection both ways,
the live loss while training."""
import time

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas.op_owners import op_owners

from test_canvas_files import batches
from test_canvas_view import sequence_classifier


def debugging(min_interval_s=0.0):
    """A canvas over the sequence classifier with a DebuggerView linked (every stop
    published at once unless ``min_interval_s``)."""
    c = DesignCanvas(sequence_classifier())
    c.reader = batches(1)
    view = c.debug()
    assert c.debug_link.view is view          # debug() links the view it opens
    c.link_debugger(view, min_interval_s=min_interval_s)
    return c, view


def test_op_owners_come_from_the_program_grad_ops_included():
    d = sequence_classifier()
    built = d.build()
    table = op_owners(built.main, d.document.ids())
    ops = built.main.desc.blocks[0].ops
    owned = {(ops[k].type, table.phase[(0, k)]): table.node_of(0, k) for k in range(len(ops))}
    assert owned[("mul", "forward")] == "logits" and owned[("mul_grad", "backward")] == "logits"
    assert owned[("recurrent", "forward")] == "rnn" and owned[("recurrent_grad", "backward")] == "rnn"
    assert owned[("adam", "optimize")] is None       # optimizer ops belong to no layer
    step_ops = built.main.desc.blocks[1].ops
    assert {table.node_of(1, k) for k in range(len(step_ops))} == {"h"}
    assert table.parent_op[1] == (0, 1)              # block 1 is the recurrent op's step
    assert table.output_of("logits") == built.outputs["logits"][0].name
    with pytest.raises(FluidscopeError, match="no op made by a node of this design"):
        op_owners(built.main, ["nothing_here"])


def test_stepping_lights_the_owning_node_forward_then_backward():
    c, view = debugging()
    assert c.link_state["active"] and c.link_state["node"] is None   # at the start
    view.step()
    assert c.link_state["node"] == "embedding_0" and c.link_state["phase"] == "forward"
    view.run_to(op_type="mul_grad")
    assert c.link_state["node"] == "logits" and c.link_state["phase"] == "backward"
    assert c.link_state["op"] == "mul_grad"


def test_python_calls_on_the_session_light_the_node_too():
    c, view = debugging()
    session = view.session
    session.step()                     # not through the view
    assert c.link_state["node"] == "embedding_0"
    session.step_into()                # into the recurrent op: frame 0 of the zone
    state = c.link_state
    assert (state["node"], state["zone"], state["frame"]) == ("h", "rnn", 0)
    assert state["frames"] == max(np.diff(batches(1)[0]["ids"].lod()[0]))
    session.back()
    assert (c.link_state["node"], c.link_state["zone"]) == ("embedding_0", None)
    session.restart()
    assert c.link_state["node"] is None


def test_a_loop_of_steps_is_published_once_per_interval_and_ends_on_the_last_stop():
    c, view = debugging(min_interval_s=3600)     # nothing more within the hour
    session = view.session
    published = c.debug_link.published
    for _ in range(40):
        session.step_into()
    link = c.debug_link
    assert link.stops >= 40 and link.published == published   # none of them went out
    link.flush()
    assert link.published == published + 1
    assert c.link_state["position"] == session.position.breadcrumb()


def test_run_to_here_stops_at_the_end_of_the_layer():
    c, view = debugging()
    assert c.receive({"action": "run_to_here", "node": "logits"}), c.message
    ops = view.session.program.desc.blocks[0].ops
    assert view.op_type == "elementwise_add" and ops[view.op_index + 1].type != "elementwise_add"
    assert c.link_state["node"] == "logits"
    c.run_to_here("logits")      # the forward run is past: the grad ops of the layer next
    assert c.link_state["phase"] == "backward" and c.link_state["node"] == "logits"
    assert view.op_type == "mul_grad"
    view.restart()               # inside the zone: the end of the layer's step in a frame
    c.run_to_here("h")
    assert (c.link_state["node"], c.link_state["zone"], c.link_state["frame"]) == ("h", "rnn", 0)
    assert view.op_type == "tanh"
    assert not c.receive({"action": "run_to_here", "node": "ids"})
    assert "made no op" in c.message


def test_run_to_here_past_the_layer_says_so():
    c, view = debugging()
    view.continue_()
    assert c.link_state["finished"]
    assert not c.receive({"action": "run_to_here", "node": "embedding_0"})
    assert "past layer 'embedding_0'" in c.message


def test_inspect_port_reads_the_value_at_the_position():
    c, view = debugging()
    c.inspect_port("logits", 0)
    assert "not computed yet" in c.link_state["port"]["error"]
    c.run_to_here("logits")
    port = c.inspect_port("logits", 0)
    value = view.session.tensor(port["var"]).numpy()
    assert port["shape"] == list(value.shape) == [6, 2]
    assert port["min"] == pytest.approx(value.min()) and port["max"] == pytest.approx(value.max())
    # the card averages in float64: a float32 sum of values near zero differs in the 4th digit
    assert port["mean"] == pytest.approx(value.mean(dtype=np.float64), rel=1e-12)
    assert not c.receive({"action": "inspect_port", "node": "logits", "index": 3})
    assert "no output 3" in c.message


def test_actions_need_a_linked_debugger():
    c = DesignCanvas(sequence_classifier())
    assert not c.receive({"action": "run_to_here", "node": "logits"})
    assert "no debugger is linked" in c.message


def test_selection_follows_between_canvas_and_debugger_graph():
    c, view = debugging()
    c.select(["logits"])
    assert view.inspector.selected == c.debug_link.table.output_of("logits")
    ops = view.session.program.desc.blocks[0].ops
    cost = next(k for k, op in enumerate(ops) if op.type == "softmax_with_cross_entropy")
    view.graph.selected = f"op:0:{cost}"
    assert c.selected == ["cost"]


def test_unlink_stops_following():
    c, view = debugging()
    c.unlink_debugger()
    assert c.link_state == {"active": False}
    view.step()
    assert c.link_state == {"active": False}


def test_training_shows_the_live_loss_on_the_loss_node():
    c = DesignCanvas(sequence_classifier())
    c.reader = batches(3)
    c.train(epochs=1).wait()
    loss = c.link_state["loss"]
    assert loss["node"] == "loss" and loss["text"] and loss["text"] == c.panel.children[0].loss_text


def test_the_trailing_publish_leaves_the_last_stop_on_the_canvas():
    c, view = debugging(min_interval_s=0.05)    # the interval canvas.debug() uses
    session = view.session
    for _ in range(30):
        session.step_into()                     # far faster than one per 50 ms
    link = c.debug_link
    assert link.published < link.stops
    deadline = time.monotonic() + 30            # a condition, waited for
    while c.link_state.get("position") != session.position.breadcrumb():
        assert time.monotonic() < deadline, (c.link_state, session.position)
        time.sleep(0.01)


def test_closing_the_canvas_unlinks_its_session():
    c, view = debugging()
    session = view.session
    link = c.debug_link  # the DebuggerView listens too (it follows plain session calls)
    assert session.listeners.count(link.on_stop) == 1
    c.close()
    assert link.on_stop not in session.listeners and c.debug_link is None
    session.step()                         # nobody to tell: no error


def test_gradient_plumbing_belongs_to_the_layer_whose_gradient_it_writes():
    d = fd.Design()
    x = d.add("data", name="img", shape=[None, 1, 12, 12])
    y = d.add("data", name="label", shape=[None, 1], dtype="int64")
    conv = d.add("conv2d", inputs={"input": x}, num_filters=4, filter_size=3, name="conv")
    pool = d.add("pool2d", inputs={"input": conv}, pool_size=2, pool_stride=2, name="pool")
    head = d.add("fc", inputs={"input": [pool, pool]}, size=3, name="head")  # two readers
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": head, "label": y})
    d.set_loss(d.add("mean", inputs={"x": cost}, name="loss"))
    d.set_optimizer("SGD", learning_rate=0.1)
    built = d.build()
    table = op_owners(built.main, d.document.ids())
    ops = built.main.desc.blocks[0].ops
    backward = {ops[k].type: table.node_of(0, k) for k in range(len(ops))
                if table.phase[(0, k)] == "backward"}
    assert backward["sum"] == "pool"              # pool's gradient over its two readers
    assert backward["fill_constant"] == "loss"    # the seed: d loss / d loss
    assert backward["conv2d_grad"] == "conv"
    assert all(node is not None for node in backward.values()), backward


def test_a_zone_stepped_backward_lights_its_inner_layer_with_the_frame():
    c, view = debugging()
    view.run_to(op_type="tanh_grad")          # the step's grad block, its first frame
    state = c.link_state
    assert (state["node"], state["phase"], state["zone"]) == ("h", "backward", "rnn")
    assert state["frame"] == state["frames"] - 1     # the backward runs the frames in reverse


def test_the_debuggers_own_follow_of_a_stop_leaves_the_canvas_selection():
    c, view = debugging()
    assert c.selected == [] and not view.inspector.selected
    view.step()                                 # the view inspects the stop's output itself
    assert view.inspector.selected and view.graph.selected   # it did select, in its graph
    assert c.selected == []                     # not a user's click: the canvas keeps its own
