"""GraphView's toolbar actions without a browser: the mode switch, layers as boxes
(collapse / expand / toggle_group), and the front end's messages for them.

The browser side (the switch, the toggle, double-clicks, panning to the highlighted op)
is covered by tests/e2e/test_graph_view_e2e.py."""
import re

import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import GraphView
from fluidscope.widgets.graph import view as graph_view_module
from fluidscope.widgets.render import MODE_LABELS

FC_0 = {0, 1, 2}          # mul, elementwise_add, relu in /fc_0/
HEAD = {3, 4, 5, 6}       # /head/fc_1/ (3, 4) and /head/fc_2/ (5, 6)
MEAN, FILL = 7, 8         # /mean_0/ (one op), the loss gradient seed (no layer)
GRADS = set(range(9, 17))  # mean_grad, then the head's and fc_0's grad ops
FC_0_GRADS = {14, 15, 16}
SGD = set(range(17, 23))


def layered_program():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):  # fc_0, not fc_7
        x = fd.data(name="x", shape=[None, 4], dtype="float32")
        hidden = fd.fc(input=x, size=8, act="relu")
        with fd.name_scope("head"):
            out = fd.fc(input=fd.fc(input=hidden, size=3), size=2)
        loss = fd.mean(out)
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main


@pytest.fixture
def view():
    return GraphView(layered_program(), renderer="browser")  # no `dot` run per change


def drawn(view, kind):
    """The ids of the nodes of ``kind`` ("op" or "group") in the view's DOT; op ids as
    indices."""
    ids = re.findall(rf'id="({kind}:[^"]+)"', view.dot)
    return {int(i.rsplit(":", 1)[1]) for i in ids} if kind == "op" else set(ids)


def test_mode_switch_labels_and_the_drawn_ops(view):
    assert view.mode_labels == MODE_LABELS
    assert list(view.mode_labels) == ["forward", "backward", "all"]  # the switch's order
    assert drawn(view, "op") == set(range(23))
    view.set_state({"mode": "forward"})  # as the front end's switch writes it
    assert drawn(view, "op") == FC_0 | HEAD | {MEAN} and "label=mul_grad" not in view.dot
    view.set_state({"mode": "backward"})
    assert drawn(view, "op") == FC_0 | HEAD | {MEAN, FILL} | GRADS and "label=sgd" not in view.dot
    view.set_mode("all")
    assert drawn(view, "op") >= SGD


def test_collapse_draws_every_layer_as_a_box(view):
    view.collapse()
    assert view.collapse_all and view.collapsed == [] and view.expanded == []
    assert drawn(view, "group") == {"group:0:/fc_0/", "group:0:/head/", "group:0:/fc_0/@GRAD",
                                    "group:0:/head/@GRAD"}
    # a one-op layer stays its op; ops of no layer (the seed, the updates) stay too
    assert drawn(view, "op") == {MEAN, FILL, 9} | SGD


def test_expand_restores_the_ops(view):
    before = view.dot
    view.collapse()
    view.expand()
    assert not view.collapse_all and view.collapsed == view.expanded == []
    assert drawn(view, "group") == set() and view.dot == before


def test_collapse_and_expand_one_layer(view):
    view.collapse("fc_0")
    assert view.collapsed == ["/fc_0/"] and not view.collapse_all
    assert drawn(view, "group") == {"group:0:/fc_0/", "group:0:/fc_0/@GRAD"}
    assert not drawn(view, "op") & (FC_0 | FC_0_GRADS) and drawn(view, "op") >= HEAD
    view.collapse("/head/fc_1/")
    assert view.collapsed == ["/fc_0/", "/head/fc_1/"] and "group:0:/head/fc_1/" in view.dot
    view.expand("fc_0")
    assert view.collapsed == ["/head/fc_1/"] and drawn(view, "op") >= FC_0 | FC_0_GRADS


def test_drill_down_by_double_click(view):
    view.collapse()
    view.toggle_group("group:0:/head/")  # open the head: its layers are boxes of their own
    assert view.expanded == ["/head/"]
    assert {"group:0:/head/fc_1/", "group:0:/head/fc_2/"} <= drawn(view, "group")
    view.toggle_group("group:0:/head/fc_1/")
    assert view.expanded == ["/head/", "/head/fc_1/"] and drawn(view, "op") >= {3, 4}
    view.toggle_group("op:0:3")  # an op of an open layer closes that layer again
    assert view.expanded == ["/head/"] and not drawn(view, "op") & {3, 4}
    view.toggle_group("op:0:3")  # its layer is a box now: the open layer around it folds
    assert view.expanded == [] and "group:0:/head/" in view.dot


def test_a_grad_box_toggles_its_layer(view):
    view.collapse()
    view.toggle_group("group:0:/fc_0/@GRAD")
    assert view.expanded == ["/fc_0/"] and drawn(view, "op") >= FC_0 | FC_0_GRADS
    view.toggle_group("group:0:fc_0")  # the key the way select() takes it works too
    assert view.expanded == [] and "group:0:/fc_0/@GRAD" in view.dot


def test_an_op_outside_the_drawn_boxes_folds_its_layer(view):
    view.toggle_group("op:0:1")  # nothing collapsed yet: fold the op's layer
    assert view.collapsed == ["/fc_0/"] and "group:0:/fc_0/" in view.dot
    view.toggle_group("group:0:/fc_0/")
    assert view.collapsed == [] and drawn(view, "group") == set()


@pytest.mark.parametrize("key, message", [
    ("fc_0", "expected a layer's box such as 'group:0:/fc_0/'"),
    (None, "expected a layer's box"),
    (3, "expected a layer's box"),
    ("var:0:x", "expected a layer's box"),
    ("group:0:/nope/", "block 0 has no layer '/nope/' .its layers: fc_0, head, head/fc_1"),
    ("group:0:/fc_0/@FOO", "block 0 has no layer '/fc_0/@FOO'"),
    ("group:0:", "expected a layer's box"),  # NodeKey.find: not a key
    ("group:7:/fc_0/", "the program has no block 7 .1 block"),
    ("group:x", "expected a layer's box"),
    ("op:0:99", "the program has no op 'op:0:99'"),
    ("op:0", "expected a layer's box"),
    ("op:0:8", "op 8 .fill_constant. of block 0 belongs to no layer of several ops"),
    ("op:0:7", "op 7 .mean. of block 0 belongs to no layer of several ops"),
])
def test_toggle_group_refuses_bad_keys(view, key, message):
    view.collapse("head")
    before = (view.dot, view.collapsed, view.expanded, view.collapse_all)
    with pytest.raises(FluidscopeError, match=f"^GraphView.toggle_group: .*{message}"):
        view.toggle_group(key)
    assert (view.dot, view.collapsed, view.expanded, view.collapse_all) == before


def test_unknown_layers_are_refused(view):
    with pytest.raises(FluidscopeError, match=r"GraphView.collapse: the program has no layer "
                                              r"'fc_9'; its layers are fc_0, head, head/fc_1"):
        view.collapse("fc_9")
    with pytest.raises(FluidscopeError, match="GraphView.expand: a layer is named by its"):
        view.expand("/")
    with pytest.raises(FluidscopeError, match="GraphView.collapsed: the program has no layer"):
        view.collapsed = ["nope"]
    assert not view.collapse_all and view.collapsed == [] and "group:" not in view.dot
    view.collapsed = ["fc_0", "/fc_0/"]  # as a trait: normalised, each once
    assert view.collapsed == ["/fc_0/"] and "group:0:/fc_0/" in view.dot


def test_constructor_takes_program_to_dot_collapse_and_expand():
    program = layered_program()
    view = GraphView(program, collapse=True, expand={"head"}, renderer="browser")
    assert view.collapse_all and view.expanded == ["/head/"]
    assert "group:0:/head/fc_1/" in view.dot and "group:0:/fc_0/" in view.dot
    view = GraphView(program, expand="fc_0", renderer="browser")  # expand alone: the rest folds
    assert view.collapse_all and view.expanded == ["/fc_0/"] and "group:0:/head/" in view.dot
    view = GraphView(program, collapse=["head/fc_2"], renderer="browser")
    assert view.collapsed == ["/head/fc_2/"] and not view.collapse_all
    with pytest.raises(FluidscopeError, match="collapse must be True, False, None or namescopes"):
        GraphView(program, collapse=3)
    with pytest.raises(FluidscopeError, match="no layer 'nope'"):
        GraphView(program, expand=["nope"])


def test_front_end_messages_call_the_same_methods(view):
    assert view.receive({"action": "collapse"})  # "layers as boxes" ticked
    assert view.collapse_all and "group:0:/fc_0/" in view.dot
    view.receive({"action": "toggle_group", "key": "group:0:/fc_0/"})
    assert view.expanded == ["/fc_0/"] and view.message == ""
    assert not view.receive({"action": "toggle_group", "key": "op:0:8"})  # not raised
    assert view.message.startswith("GraphView.toggle_group: op 8 (fill_constant) of block 0 belongs to "
                                   "no layer")
    assert view.expanded == ["/fc_0/"]
    view.receive({"action": "toggle_group", "key": "op:0:0"})
    assert view.message == "" and view.expanded == []
    view.receive({"action": "expand"})  # "layers as boxes" unticked
    assert not view.collapse_all and "group:" not in view.dot


@pytest.mark.parametrize("message, reported", [
    ({"action": "close"}, "GraphView: unknown action 'close'; known: ['collapse', 'expand', "
                          "'find', 'show_internal_outputs', 'toggle_group']"),
    ({"event": "stop"}, "GraphView: a front-end message must be an object with an 'action' "
                        "string, got {'event': 'stop'}"),
    (["collapse"], "GraphView: a front-end message must be an object with an 'action' string, "
                   "got ['collapse']"),
    ({"action": "toggle_group"}, "GraphView: toggle_group: missing argument(s) ['key']"),
    ({"action": "toggle_group", "key": 3}, "GraphView: toggle_group: argument 'key' must be a "
                                           "string, got 3"),
])
def test_bad_front_end_messages_are_reported(view, message, reported):
    dot = view.dot
    assert not view.receive(message)
    assert view.message == reported and view.dot == dot


def test_highlighted_op_inside_a_box_lights_the_box(view):
    view.collapse()
    view.set_highlight(1)
    box = next(line for line in view.dot.splitlines() if 'id="group:0:/fc_0/"' in line)
    assert "fs-current" in box
    view.expand("fc_0")
    op = next(line for line in view.dot.splitlines() if 'id="op:0:1"' in line)
    assert "fs-current" in op


def test_one_render_per_layer_action(view, monkeypatch):
    calls = []
    real = graph_view_module.render_program

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(graph_view_module, "render_program", counting)
    view.collapse()
    view.toggle_group("group:0:/head/")
    assert len(calls) == 2
    assert calls[-1]["collapse"] is True and calls[-1]["expand"] == ["/head/"]


def test_selection_keys_keep_working_with_boxes(view):
    view.collapse()
    assert view.select("group:0:/fc_0/") == "group:0:/fc_0/"
    assert view.select("group:0:/head/@GRAD") == "group:0:/head/@GRAD"
    assert view.select(1) == "op:0:1"  # an op inside a box is still a node of the program
    view.set_state({"selected": "group:0:/head/"})  # a click on a box, from the front end
    assert view.selected == "group:0:/head/"
