"""Node views reused between publishes (widgets/canvas/node_views.py): the view drawn with
the cache equals the one drawn afresh after every kind of edit, undo and redo, on designs
with zones, mixed rows, folds, errors and dtype changes; and what it reuses is reused."""
import json

import pytest

from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import canvas_view
from fluidscope.widgets.canvas.node_views import NodeViewCache

from test_canvas_size import same_chain, varied_chain
from test_canvas_view import sequence_classifier


def fresh(canvas):
    """The canvas's view drawn now without any cache (same ui, same revision)."""
    view = canvas.view
    ui = {"collapsed": sorted(canvas._collapsed), "path": canvas._path,
          "unfolded": sorted(canvas._unfolded), "revision": view["revision"],
          "pane": canvas.pane}
    return canvas_view(canvas.design, canvas.build, ui)


def same(canvas):
    expected = fresh(canvas)
    assert canvas.view == expected
    # the wire form too (tuples and lists alike), and the signatures node by node
    assert json.loads(json.dumps(canvas.view)) == json.loads(json.dumps(expected))


def with_mixed():
    d = sequence_classifier()
    m = d.add("mixed_layer", size=8, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": "pool"})
    return d


EDITS = [
    ("size", lambda c: c.set_attr("logits", "size", 3)),
    ("size back", lambda c: c.set_attr("logits", "size", 2)),
    ("an error", lambda c: c.add_node("elementwise_add", 0, 0, source="logits")),
    ("act", lambda c: c.set_attr("logits", "act", "relu")),
    ("dtype upstream", lambda c: c.set_attr("label", "shape", [None, 2])),
    ("rename", lambda c: c.set_attr("logits", "id", "scores")),
    ("memory size", lambda c: c.set_attr("state", "size", 8)),
    ("a row", lambda c: c.add_row("mix", "dot_mul_operator")),
    ("loss", lambda c: c.set_loss("cost")),
    ("move", lambda c: c.move({"pool": [3, 4]})),
    ("collapse", lambda c: c.toggle_zone("rnn")),
    ("expand", lambda c: c.toggle_zone("rnn")),
    ("remove", lambda c: c.remove(["mix"])),
    ("undo", lambda c: c.undo()),
    ("undo", lambda c: c.undo()),
    ("redo", lambda c: c.redo()),
    ("undo", lambda c: c.undo()),
]


def test_cached_view_equals_a_fresh_one_after_every_edit_undo_and_redo():
    canvas = DesignCanvas(design=with_mixed())
    same(canvas)
    for name, edit in EDITS:
        edit(canvas)
        assert not canvas.message, (name, canvas.message)
        same(canvas)


def test_equal_values_of_other_types_are_drawn_as_fresh():
    """``1 == 1.0``: the cache keys on ``repr`` so a node drawn from either reads as a fresh
    drawing of it reads."""
    d = varied_chain(3)
    d.add("scale", inputs={"x": "fc_2"}, scale=1, name="sc")
    canvas = DesignCanvas(design=d)
    canvas.design.set("sc", scale=1.0)
    canvas.refresh()
    canvas._publish()  # the document compares equal: draw it again anyway
    same(canvas)
    canvas.set_attr("sc", "scale", 2.5)
    same(canvas)


@pytest.mark.parametrize("gesture", ["unfold", "edit inside", "fold"])
def test_folds_and_long_chains(gesture):
    canvas = DesignCanvas(design=same_chain(30))
    if gesture != "fold":
        canvas.unfold("fold:fc_0")
    if gesture == "edit inside":
        canvas.set_attr("fc_12", "size", 9)
    if gesture == "fold":
        canvas.set_attr("fc_29", "act", "tanh")
    same(canvas)
    canvas.undo()
    same(canvas)


def test_unchanged_nodes_are_reused_and_the_edited_one_is_drawn_again(monkeypatch):
    from fluidscope.widgets.canvas import view as view_module
    canvas = DesignCanvas(design=varied_chain(40))
    drawn = []
    real = view_module._node_view
    monkeypatch.setattr(view_module, "_node_view",
                        lambda doc, node, *a: drawn.append(node.id) or real(doc, node, *a))
    canvas.set_attr("fc_20", "size", 30)
    # fc_21 reads fc_20's new shape but draws only its own ports: nothing else changed
    assert drawn == ["fc_20"]
    drawn.clear()
    canvas.undo()
    assert drawn == ["fc_20"]
    same(canvas)


def test_a_cache_forgets_nodes_no_longer_drawn():
    canvas = DesignCanvas(design=varied_chain(10))
    canvas.remove(["fc_3"])
    assert "fc_3" not in canvas._node_views._entries
    assert set(canvas._node_views._entries) == {n["id"] for n in canvas.view["nodes"]}


def test_cache_is_optional_and_shared_views_are_not_changed_by_a_later_view():
    d = varied_chain(8)
    build = d.build(optimize=False)
    cache = NodeViewCache()
    first = canvas_view(d, build, {"revision": 1}, cache)
    kept = json.loads(json.dumps(first))
    d.move("fc_1", 500, 500)
    second = canvas_view(d, build, {"revision": 2}, cache)
    assert json.loads(json.dumps(first)) == kept  # the older view was not touched
    assert second == canvas_view(d, build, {"revision": 2})
    assert {n["id"]: n["position"] for n in second["nodes"]}["fc_1"] == [500.0, 500.0]
