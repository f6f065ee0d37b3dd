"""A canvas driven by front-end messages (issue #16 item 4: the view is reused node by
node and sent as patches) shows exactly what a fresh canvas over the same design shows:
after every gesture of a long sequence (attribute edits, undo, redo, disconnect and
connect, move, delete, rename, unfold and fold, a recurrent zone collapsed, expanded,
entered and left, an error node), on a design with a recurrent group and a folded run,
``canvas.view`` equals ``canvas_view`` drawn without a cache, a second ``DesignCanvas``
over a copy of the design draws the same nodes and edges, and the page's copy, kept only
by applying the patches the canvas sent, equals the view."""
import json

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import canvas_view
from fluidscope.widgets.canvas.view_patch import apply_patch


def recurrent_and_fold():
    """ids -> embedding -> recurrent group "rnn" (fc over the step and a memory) -> max
    pool -> a run of ten identical fc layers (drawn as one fold) -> fc -> loss."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    emb = d.add("embedding", inputs={"input": ids}, size=[30, 8])
    g = d.add("recurrent_group", name="rnn")
    step = d.add_step_input(g, emb, name="word")
    mem = d.add_memory(g, size=8, name="state")
    h = d.add("fc", inputs={"input": [step, mem]}, size=8, act="tanh", group=g, name="h")
    d.link_memory(mem, h)
    d.set_outputs(g, [h])
    x = d.add("sequence_pool", inputs={"input": g}, pool_type="max", name="pool")
    for _ in range(10):
        x = d.add("fc", inputs={"input": x}, size=8, act="relu")
    logits = d.add("fc", inputs={"input": x}, size=2, name="logits")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label},
                 name="cost")
    d.set_loss(d.add("mean", inputs={"x": cost}, name="loss"))
    return d


def wire(value):
    return json.loads(json.dumps(value))


class Page:
    """The front end's copy of ``view``: the whole view when it is sent, else the last
    copy with each ``view_patch`` message applied (what js/src/canvas/view_patch.js does)."""

    def __init__(self, canvas):
        self.canvas, self.view, self.patches = canvas, wire(canvas.view), 0
        self._sent = []
        canvas.send = lambda content, buffers=None: self._sent.append(content)

    def after(self):
        patches = [m for m in self._sent if m.get("kind") == "view_patch"]
        self._sent.clear()
        if self.canvas._patched and patches:
            for patch in patches:
                self.view = apply_patch(self.view, wire(patch))
            self.patches += len(patches)
        else:  # the whole trait went
            self.view = wire(self.canvas.view)


def fresh_view(canvas):
    """``canvas``'s view drawn now with no cache (same ui, same revision)."""
    ui = {"collapsed": sorted(canvas._collapsed), "path": canvas._path,
          "unfolded": sorted(canvas._unfolded), "revision": canvas.view["revision"],
          "pane": canvas.pane}
    return canvas_view(canvas.design, canvas.design.build(optimize=False), ui)


def fresh_canvas_view(canvas):
    """What a new ``DesignCanvas`` over a copy of the design, put in the same ui state,
    draws (its revision and the per-view signatures aside, they are the same model)."""
    other = DesignCanvas(design=fd.Design.from_json(canvas.design.to_json()))
    other._collapsed, other._path = set(canvas._collapsed), list(canvas._path)
    other._unfolded = set(canvas._unfolded)
    other._revision = canvas.view["revision"] - 1
    other._publish(rebuild=False)
    return other.view


def edge_id(view, target):
    (edge,) = [e for e in view["edges"] if e["target"] == target]
    return edge["id"]


def gestures(canvas):
    """(name, message) pairs; a callable message is made from the view before it."""
    yield "size", {"action": "set_attr", "node": "logits", "name": "size", "value": 3}
    yield "act", {"action": "set_attr", "node": "h", "name": "act", "value": "relu"}
    yield "undo", {"action": "undo"}
    yield "redo", {"action": "redo"}
    yield "disconnect", lambda view: {"action": "disconnect", "edge": edge_id(view, "logits")}
    yield "connect", {"action": "connect", "source": "pool", "source_index": 0,
                      "target": "logits", "handle": "in:input"}
    yield "move", {"action": "move", "positions": {"pool": [120.0, 40.0]}}
    yield "unfold", {"action": "unfold", "node": "fold:fc_0"}
    yield "edit in the run", {"action": "set_attr", "node": "fc_3", "name": "size",
                              "value": 9}
    yield "undo run edit", {"action": "undo"}
    yield "fold again", {"action": "fold", "node": "fc_0"}
    yield "an error", {"action": "add_node", "layer": "elementwise_add", "x": 0, "y": 0,
                       "source": "logits"}
    yield "rename", {"action": "set_attr", "node": "logits", "name": "id", "value": "scores"}
    yield "collapse zone", {"action": "toggle_zone", "group": "rnn"}
    yield "edit beside it", {"action": "set_attr", "node": "scores", "name": "size",
                             "value": 4}
    yield "expand zone", {"action": "toggle_zone", "group": "rnn"}
    yield "memory size", {"action": "set_attr", "node": "state", "name": "size", "value": 6}
    yield "enter zone", {"action": "enter", "group": "rnn"}
    yield "edit inside", {"action": "set_attr", "node": "h", "name": "act", "value": "tanh"}
    yield "leave zone", {"action": "leave", "depth": 0}
    yield "delete", {"action": "remove", "ids": ["fc_5"]}
    yield "undo delete", {"action": "undo"}
    yield "undo", {"action": "undo"}
    yield "undo", {"action": "undo"}
    yield "redo", {"action": "redo"}


def test_every_gesture_leaves_the_view_a_fresh_canvas_draws_and_the_page_has_it():
    canvas = DesignCanvas(design=recurrent_and_fold())
    assert any(n["type"] == "fold" for n in canvas.view["nodes"])
    assert any(n["id"] == "rnn" for n in canvas.view["nodes"])
    page = Page(canvas)
    for name, message in gestures(canvas):
        if callable(message):
            message = message(canvas.view)
        assert canvas.receive(message), (name, canvas.message)
        page.after()
        expected = fresh_view(canvas)
        assert canvas.view == expected, name
        assert wire(canvas.view) == wire(expected), name
        other = fresh_canvas_view(canvas)
        assert wire(canvas.view) == wire(other), name
        assert page.view == wire(canvas.view), name
    assert page.patches >= 10  # most gestures went as patches, which is what is tested


def test_the_error_node_is_drawn_with_its_error_after_reuse():
    canvas = DesignCanvas(design=recurrent_and_fold())
    page = Page(canvas)
    assert canvas.receive({"action": "add_node", "layer": "elementwise_add", "x": 0, "y": 0,
                           "source": "logits"})
    page.after()
    errors = [n for n in canvas.view["nodes"] if n["error"]]
    assert len(errors) == 1 and errors[0]["layer"] == "elementwise_add"
    assert canvas.receive({"action": "undo"})
    page.after()
    assert not any(n["error"] for n in canvas.view["nodes"])
    assert page.view == wire(canvas.view) == wire(fresh_view(canvas))
