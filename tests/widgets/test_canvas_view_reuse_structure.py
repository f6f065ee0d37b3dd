"""canvas_view's structure memo (widgets/canvas/view_memo.py, issue #16 item 4) never
shows a stale view: after every gesture of a sequence that changes attributes only
(kept structure), wires in place (a Ref replaced in the same slot, a list slot grown),
fold configurations, a step input's ``static`` flag, the pane, the loss, positions
inside a zone, a dtype upstream, nodes inserted, renamed and removed, and undo/redo of
each, the canvas's view equals one drawn from scratch, and the page's copy kept from the
patches equals it. The memo is seen to be used (an attribute edit and its undo keep the
structure and the unchanged nodes' finished views), and deliberately broken reuse fails
the same check."""
import types

import pytest

import fluidscope.designer as fd

from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import view as view_module, view_memo

from test_canvas_size import varied_chain
from test_canvas_view_reuse_gestures import Page, fresh_view, recurrent_and_fold, wire

GESTURES = [
    ("edit a folded member", {"action": "set_attr", "node": "fc_4", "name": "size",
                              "value": 9}),
    ("undo: the run folds again", {"action": "undo"}),
    ("redo", {"action": "redo"}),
    ("undo", {"action": "undo"}),
    ("an act in the run", {"action": "set_attr", "node": "fc_7", "name": "act",
                           "value": "tanh"}),
    ("undo", {"action": "undo"}),
    ("rewire in place", {"action": "connect", "source": "fc_5", "source_index": 0,
                         "target": "logits", "handle": "in:input"}),
    ("undo rewire", {"action": "undo"}),
    ("grow a list slot", {"action": "connect", "source": "word", "source_index": 0,
                          "target": "h", "handle": "in:input"}),
    ("undo grow", {"action": "undo"}),
    ("static step input", {"action": "set_attr", "node": "word", "name": "static",
                           "value": True}),
    ("undo static", {"action": "undo"}),
    ("pane", {"action": "set_pane", "width": 1400, "height": 900}),
    ("the loss on a run member", {"action": "set_loss", "node": "fc_5"}),
    ("undo loss", {"action": "undo"}),
    ("loss", {"action": "set_loss", "node": "cost"}),
    ("move inside the zone", {"action": "move", "positions": {"h": [10.0, 20.0]}}),
    ("move back", {"action": "move", "positions": {"h": [0.0, 0.0]}}),
    ("dtype upstream", {"action": "set_attr", "node": "label", "name": "shape",
                        "value": [None, 2]}),
    ("an edit", {"action": "set_attr", "node": "logits", "name": "size", "value": 5}),
    ("duplicate", {"action": "duplicate", "ids": ["logits"]}),
    ("rename a run member", {"action": "rename", "node": "fc_3", "name": "fc_mid"}),
    ("undo rename", {"action": "undo"}),
    ("an error made", {"action": "add_node", "layer": "elementwise_add", "x": 0, "y": 0,
                       "source": "logits"}),
    ("the error fixed", {"action": "connect", "source": "logits", "source_index": 0,
                         "target": "elementwise_add_0", "handle": "in:y"}),
    ("broken again", {"action": "undo"}),
    ("fixed again", {"action": "redo"}),
    ("a mixed layer", {"action": "add_node", "layer": "mixed_layer", "x": 5, "y": 5,
                       "source": "pool"}),
    ("undo", {"action": "undo"}),
    ("collapse", {"action": "toggle_zone", "group": "rnn"}),
    ("edit inside the collapsed zone", {"action": "set_attr", "node": "h", "name": "act",
                                        "value": "relu"}),
    ("undo", {"action": "undo"}),
    ("expand", {"action": "toggle_zone", "group": "rnn"}),
    ("enter", {"action": "enter", "group": "rnn"}),
    ("memory size inside", {"action": "set_attr", "node": "state", "name": "size",
                            "value": 6}),
    ("undo inside", {"action": "undo"}),
    ("leave", {"action": "leave", "depth": 0}),
    ("remove", {"action": "remove", "ids": ["fc_6"]}),
    ("undo remove", {"action": "undo"}),
    ("undo", {"action": "undo"}),
    ("undo", {"action": "undo"}),
    ("redo", {"action": "redo"}),
    ("redo", {"action": "redo"}),
]


def first_stale(canvas, gestures=GESTURES):
    """The name of the first gesture after which the view (or the page's copy) is not
    the one drawn from scratch, else None."""
    page = Page(canvas)
    for name, message in gestures:
        assert canvas.receive(message), (name, canvas.message)
        page.after()
        expected = fresh_view(canvas)
        if canvas.view != expected or wire(canvas.view) != wire(expected) \
                or page.view != wire(canvas.view):
            return name
    return None


def test_every_gesture_leaves_the_view_drawn_from_scratch():
    canvas = DesignCanvas(design=recurrent_and_fold())
    assert first_stale(canvas) is None


def test_an_error_made_and_fixed_is_drawn_then_gone():
    canvas = DesignCanvas(design=recurrent_and_fold())
    made = [g for g in GESTURES if g[0] == "an error made"]
    assert first_stale(canvas, made) is None
    assert [n["id"] for n in canvas.view["nodes"] if n["error"]] == ["elementwise_add_0"]
    fixed = [g for g in GESTURES if g[0] == "the error fixed"]
    assert first_stale(canvas, fixed) is None
    assert not any(n["error"] for n in canvas.view["nodes"])


def test_an_edit_and_its_undo_reuse_the_structure_and_the_other_nodes():
    canvas = DesignCanvas(design=varied_chain(60))
    structure = canvas._node_views.memo.structure
    before = {n["id"]: n for n in canvas.view["nodes"]}
    canvas.set_attr("fc_30", "size", 40)
    assert canvas._node_views.memo.structure is structure
    after = {n["id"]: n for n in canvas.view["nodes"]}
    redrawn = sorted(k for k in after if after[k] is not before[k])
    assert redrawn == ["fc_30"]  # fc_31 reads the new shape but draws only its own ports
    label = {e["target"]: e["label"] for e in canvas.view["edges"]}["fc_31"]
    assert label == "[-1, 40]"
    canvas.undo()
    assert canvas._node_views.memo.structure is structure
    undone = {n["id"]: n for n in canvas.view["nodes"]}
    assert sorted(k for k in undone if undone[k] is not after[k]) == ["fc_30"]
    assert canvas.view == fresh_view(canvas)
    canvas.connect("fc_10", 0, "fc_40", "in:input")  # a new wire: a new structure
    assert canvas._node_views.memo.structure is not structure
    assert canvas.view == fresh_view(canvas)


def test_a_new_pane_lays_a_long_design_out_again():
    canvas = DesignCanvas(design=varied_chain(60))
    page = Page(canvas)
    for width, height in [(3000, 300), (300, 3000), (950, 510)]:
        assert canvas.receive({"action": "set_pane", "width": width, "height": height})
        page.after()
        assert canvas.view == fresh_view(canvas) and page.view == wire(canvas.view)


def scale_run():
    """x -> ten ``scale(scale=1)`` layers (one fold) -> fc."""
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 4])
    for _ in range(10):
        h = d.add("scale", inputs={"x": h}, scale=1)
    d.add("fc", inputs={"input": h}, size=2, name="head")
    return d


def test_attributes_equal_in_value_but_not_in_type_are_drawn_as_fresh():
    """``1 == 1.0``, but a node's detail and a fold's configuration (JSON text) tell them
    apart: the memo must too."""
    canvas = DesignCanvas(design=scale_run())
    assert [n["type"] for n in canvas.view["nodes"]].count("fold") == 1
    for value in (1.0, 1, 1.0, 1):
        canvas.design.set("scale_4", scale=value)
        canvas._publish()
        assert canvas.view == fresh_view(canvas), value
        assert wire(canvas.view) == wire(fresh_view(canvas)), value
    canvas.design.set("scale_4", scale=1.0)
    canvas._publish()
    assert not any(n["type"] == "fold" for n in canvas.view["nodes"])  # the run broke


def _every_object_is_the_same(monkeypatch):
    monkeypatch.setattr(view_memo, "operator", types.SimpleNamespace(is_=lambda a, b: True))


def _first_structure_forever(monkeypatch):
    real = view_memo.ViewMemo.scan
    kept = {}

    def scan(self, doc):
        data, structure = real(self, doc)
        return data, kept.setdefault(id(self), structure)
    monkeypatch.setattr(view_memo.ViewMemo, "scan", scan)


def _drawn_wherever_it_is(monkeypatch):
    monkeypatch.setattr(view_module, "_same_place", lambda view, position: True)


def _configs_never_remade(monkeypatch):
    real = view_memo.GraphMemo.runs

    def runs(self, graph, data):  # every node's attributes look unchanged to the memo
        if data is not None:
            data = {k: (v[0], "{}") + v[2:] for k, v in data.items()}
        return real(self, graph, data)
    monkeypatch.setattr(view_memo.GraphMemo, "runs", runs)


@pytest.mark.parametrize("bug", [_every_object_is_the_same, _first_structure_forever,
                                 _drawn_wherever_it_is, _configs_never_remade])
def test_a_deliberately_broken_reuse_is_caught(monkeypatch, bug):
    bug(monkeypatch)
    assert first_stale(DesignCanvas(design=recurrent_and_fold())) is not None
