"""What the canvas publishes and when, in the cases mutation testing found unasserted
(issue #17): the exact fields of every node view (PROTOCOL.md) as the canvas draws them,
the band length of a wrapped design, when a view goes as a patch, the patched view held
back, forward-only edit builds, a pending save written on close, and a few gestures'
results and refusals."""
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import folds, layout
from fluidscope.widgets.canvas.view_patch import view_patch

from own_loop import run_in_own_loop
from test_canvas_view import by_id, sequence_classifier

NODE_FIELDS = {"id", "layer", "category", "type", "parent", "position", "size", "title",
               "detail", "inputs", "outputs", "error", "waiting_on", "rows", "collapsed",
               "reverse", "static", "is_loss", "members", "sig"}
PORT_FIELDS = {"handle", "slot", "kind", "many", "optional", "accepts", "connected"}


def test_every_node_view_has_exactly_the_protocols_fields():
    d = sequence_classifier()
    d.add("mixed_layer", size=8, name="mix")
    c = DesignCanvas(d)
    c.set_attr("logits", "size", 3)            # a second publish: views from the cache
    nodes = by_id(c.view)
    for node in nodes.values():
        assert set(node) == NODE_FIELDS, node["id"]
        assert all(set(p) == PORT_FIELDS for p in node["inputs"]), node["id"]
        assert len(node["sig"]) == 16
    assert nodes["rnn"]["size"] and nodes["rnn"]["size"][0] > layout.NODE_WIDTH
    assert [p["connected"] for p in nodes["logits"]["inputs"]] == [1]
    assert nodes["mix"]["rows"] == []
    ids = {p["slot"]: p["connected"] for p in nodes["cost"]["inputs"]}
    assert ids == {"logits": 1, "label": 1}
    c.disconnect("e:label:0>cost:in:label:0")
    assert {p["slot"]: p["connected"] for p in by_id(c.view)["cost"]["inputs"]} == \
        {"logits": 1, "label": 0}


def test_a_wrapped_chain_takes_the_band_length_that_fits_the_pane_best():
    """44 columns of 220 x 116 boxes in a 950 x 510 pane: 7 to a band (7 bands) fits at
    zoom min(950 / 1804, 510 / 1100) = 0.464; 8 to a band fits at 0.459 (2068 px wide),
    6 at 0.403 (8 bands, 1264 px tall)."""
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for k in range(43):
        h = d.add("fc", inputs={"input": h}, size=8 + k % 2, name=f"f{k}")
    nodes = by_id(DesignCanvas(d).view)
    xs = sorted({n["position"][0] for n in nodes.values()})
    ys = sorted({n["position"][1] for n in nodes.values()})
    assert len(xs) == 7 and len(ys) == 7
    width = xs[-1] + layout.NODE_WIDTH
    height = ys[-1] + layout.COMPACT[1]
    assert (width, height) == (7 * 220 + 6 * layout.COLUMN_GAP, 7 * 116 + 6 * layout.BAND_GAP)


def test_a_view_goes_as_a_patch_unless_more_than_half_its_nodes_changed():
    def view(revision, nodes, edges=()):
        return {"revision": revision, "path": [], "nodes": [{"id": n, "v": v} for n, v in nodes],
                "edges": [{"id": e, "v": v} for e, v in edges]}
    old = view(1, [("a", 0), ("b", 0), ("c", 0), ("d", 0)], [("e1", 0), ("e2", 0)])
    half = view(2, [("a", 1), ("b", 1), ("c", 0), ("d", 0)], [("e1", 1), ("e2", 1)])
    patch = view_patch(old, half)                # two of four nodes, every edge: a patch
    assert patch is not None and len(patch["edges"]["changed"]) == 2
    more = view(2, [("a", 1), ("b", 1), ("c", 1), ("d", 0)], [("e1", 0), ("e2", 0)])
    assert view_patch(old, more) is None          # three of four: the whole view


def test_the_patched_view_is_held_back_and_a_plain_trait_still_goes():
    c = DesignCanvas(sequence_classifier())
    sent, states = [], []
    c.send = lambda content, buffers=None: sent.append(content)
    original = c.send_state
    # a copy of the keys: the canvas clears the set it passes once it is sent
    c.send_state = lambda key=None: states.append(
        set(key) if isinstance(key, (set, list, tuple)) else {key}) or original(key)
    c.set_attr("logits", "size", 3)
    c.undo()                                       # a patch, and can_redo turns True
    assert [m["kind"] for m in sent] == ["view_patch", "view_patch"]
    sent_keys = set().union(*states)
    assert "view" not in sent_keys and "can_redo" in sent_keys


def test_an_edit_builds_the_forward_program_only():
    c = DesignCanvas(sequence_classifier())        # Adam, with a loss
    c.set_attr("logits", "size", 3)
    types = {op.type for op in c.build.main.global_block().ops}
    assert "softmax_with_cross_entropy" in types
    assert not any(t.endswith("_grad") or t == "adam" for t in types)


def test_closing_the_canvas_writes_a_layout_change_still_waiting(tmp_path):
    path = tmp_path / "m.fsdesign.json"

    async def session():
        c = DesignCanvas(sequence_classifier(), path=path)   # written at once (a new file)
        c.move({"logits": [123, 45]})                          # debounced: waits for a timer
        waiting = fd.Design.load(path).layout.get("logits")
        c.close()
        return waiting, fd.Design.load(path).layout.get("logits")
    waiting, closed = run_in_own_loop(session)
    assert waiting != [123.0, 45.0] and closed == [123.0, 45.0]


def test_removing_one_input_of_an_operator_row_keeps_the_other():
    d = sequence_classifier()
    mix = d.add("mixed_layer", size=2, name="mix")
    d.add_row(mix, "dot_mul_operator", inputs={"a": "pool", "b": "logits"})
    c = DesignCanvas(d)
    c.disconnect("e:pool:0>mix:row:0:a:0")
    (row,) = c.design.node("mix").rows
    assert (row.kind, row.inputs) == ("dot_mul_operator", {"b": fd.design.Ref("logits")})


def test_zone_actions_on_a_plain_layer_say_what_it_is():
    c = DesignCanvas(sequence_classifier())
    assert not c.receive({"action": "toggle_zone", "group": "logits"})
    assert c.message == "toggle_zone: node 'logits' is a fc, not a recurrent_group"


def test_folded_runs_count_the_readers_themselves_when_not_given():
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for k in range(9):
        h = d.add("fc", inputs={"input": h}, size=8, name=f"f{k}")
    runs = folds.folded_runs(d.document, d.document.graph, set())
    assert runs == {"f0": [f"f{k}" for k in range(9)]}
    assert folds.folded_runs(d.document, d.document.graph, {"f0"}) == {}
