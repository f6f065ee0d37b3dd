"""The canvas at real sizes (issue #19), Python side: the default layout wraps a long
chain into a block shaped like the pane, sources sit next to their readers, runs of
identical layers fold into one node (and unfold), find names the nodes drawn for its
matches, a refused edit's message clears after any later edit, and the automatic
layout's engine is sent on demand."""
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import canvas_view, folds, layout

from test_canvas_view import by_id


def varied_chain(layers=196):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 16])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=16 + k % 3, act="relu")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    return d


def same_chain(layers=30, head=True):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for _ in range(layers):
        h = d.add("fc", inputs={"input": h}, size=8, act="relu")
    if head:
        d.add("fc", inputs={"input": h}, size=2, name="head")
    return d


def view_of(design, **ui):
    return canvas_view(design, design.build(optimize=False), ui)


def extent(view):
    top = [n for n in view["nodes"] if n["parent"] is None]
    xs = [n["position"][0] for n in top]
    ys = [n["position"][1] for n in top]
    return max(xs) - min(xs) + layout.NODE_WIDTH, max(ys) - min(ys) + layout.COMPACT[1]


def test_a_long_chain_wraps_into_a_block_readable_at_its_fit():
    view = view_of(varied_chain(), pane=layout.PANE)
    assert len(view["nodes"]) == 200
    width, height = extent(view)
    fit = min(layout.PANE[0] / width, layout.PANE[1] / height)
    # the compact block's 56 px type (canvas.css) is >= 11 px on screen at this zoom
    assert fit * 56 >= 11.5, (width, height, fit)
    positions = {tuple(n["position"]) for n in view["nodes"]}
    assert len(positions) == 200  # no two nodes on one spot
    # reading order: each band left to right, bands top to bottom
    chain = [n for n in view["nodes"] if n["id"].startswith("fc_")]
    keys = [(n["position"][1], n["position"][0]) for n in chain]
    assert keys == sorted(keys)


def test_a_short_design_stays_on_one_row_and_a_source_sits_by_its_reader():
    view = view_of(varied_chain(6))
    nodes = by_id(view)
    ys = {n["position"][1] for k, n in nodes.items() if k != "label"}
    assert ys == {0.0}  # the chain reads straight along one row
    # the label is read by the loss only: in the column before it (under fc_5), not at
    # the far left with its wire running under every layer
    assert nodes["label"]["position"][0] == nodes["fc_5"]["position"][0]
    assert nodes["label"]["position"][1] > 0


def test_the_lstm_of_notebook_03_reads_along_one_row_with_its_label_beside_the_loss():
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64", lod_level=1)
    emb = d.add("embedding", inputs={"input": ids}, size=[40, 32])
    gates = d.add("fc", inputs={"input": emb}, size=4 * 96, bias_attr=False)
    hidden = d.add("lstmemory_group", inputs={"input": gates}, size=96, name="lstm")
    logits = d.add("fc", inputs={"input": hidden}, size=40)
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    nodes = by_id(view_of(d, pane=(950, 298)))  # a 360 px canvas
    row = [nodes[k]["position"] for k in ("ids", "embedding_0", "fc_0", "lstm", "fc_1",
                                           "softmax_with_cross_entropy_0", "mean_0")]
    assert {y for _, y in row} == {0.0} and [x for x, _ in row] == sorted(x for x, _ in row)
    # the label's wire spans one column gap: nothing lies between it and the loss
    assert nodes["label"]["position"][0] == nodes["fc_1"]["position"][0] > nodes["lstm"]["position"][0]


def test_a_run_of_identical_layers_is_one_node_with_its_ends_ports():
    d = same_chain(30)
    d.build(optimize=False)
    assert folds.runs(d.document, d.document.graph) == [[f"fc_{k}" for k in range(30)]]
    view = view_of(d)
    nodes = by_id(view)
    assert set(nodes) == {"x", "fold:fc_0", "head"}
    fold = nodes["fold:fc_0"]
    assert fold["type"] == "fold" and fold["title"] == "fc \u00d7 30"
    assert fold["members"] == [f"fc_{k}" for k in range(30)]
    assert fold["outputs"][0]["shape"] and fold["inputs"][0]["handle"] == "in:input"
    ends = {(e["source"], e["sourceHandle"], e["target"], e["targetHandle"]) for e in view["edges"]}
    assert ends == {("x", "out:0", "fold:fc_0", "in:input"),
                    ("fold:fc_0", "out:0", "head", "in:input")}
    # the head is one column after the fold, not 30
    assert nodes["head"]["position"][0] < nodes["fold:fc_0"]["position"][0] + 2 * layout.NODE_WIDTH
    assert len(view_of(d, unfolded=["fc_0"])["nodes"]) == 32


def test_runs_break_at_a_different_attribute_a_branch_and_the_minimum():
    d = same_chain(folds.FOLD_MIN - 1)
    assert folds.runs(d.document, d.document.graph) == []
    d = same_chain(20)
    d.set("fc_10", size=9)  # fc_0..9 and fc_11..19 (10 and 9 long); fc_10 alone
    runs = folds.runs(d.document, d.document.graph)
    assert [(r[0], len(r)) for r in runs] == [("fc_0", 10), ("fc_11", 9)]
    d.add("relu", inputs={"x": "fc_4"})  # fc_4 read twice: the run stops after it
    runs = folds.runs(d.document, d.document.graph)
    assert ("fc_0", 10) not in [(r[0], len(r)) for r in runs]


def test_fold_unfold_and_find_as_methods_and_actions():
    canvas = DesignCanvas(design=same_chain(30))
    assert {n["id"] for n in canvas.view["nodes"]} == {"x", "fold:fc_0", "head"}
    assert canvas.receive({"action": "unfold", "node": "fold:fc_0"})
    assert len(canvas.view["nodes"]) == 32
    assert canvas.find("fc_12") == ["fc_12"] and canvas.found["ids"] == ["fc_12"]
    canvas.fold("fc_7")
    assert len(canvas.view["nodes"]) == 3
    # a match inside a fold lights the fold; every fc layer matches by kind
    assert canvas.find("fc_12") == ["fc_12"] and canvas.found["focus"] == "fold:fc_0"
    canvas.find("FC", index=1)
    assert canvas.found["matches"] == 31 and canvas.found["ids"] == ["fold:fc_0", "head"]
    assert canvas.found["focus"] == "head"
    canvas.find("")
    assert canvas.found["ids"] == [] and canvas.found["focus"] is None
    # a fold moves as its first layer
    canvas.move({"fold:fc_0": [300, 40]})
    assert canvas.design.layout["fc_0"] == [300.0, 40.0]
    assert by_id(canvas.view)["fold:fc_0"]["position"] == [300.0, 40.0]
    assert canvas.receive({"action": "unfold", "node": "head"}) is False
    assert "no run of identical layers" in canvas.message


def test_find_lights_a_collapsed_zone_for_a_node_inside_it():
    from test_canvas_view import sequence_classifier

    canvas = DesignCanvas(design=sequence_classifier())
    canvas.toggle_zone("rnn")
    canvas.find("h")
    assert "rnn" in canvas.found["ids"] and "h" not in canvas.found["ids"]


def test_a_refused_edit_message_clears_after_an_edit_from_python():
    canvas = DesignCanvas(design=same_chain(2))
    bad = {"action": "set_attr", "node": "x", "name": "shape", "value": [None, "a"]}
    assert canvas.receive(bad) is False
    assert "must be shape" in canvas.message
    canvas.set_attr("fc_0", "size", 12)  # as a notebook cell does, not through receive
    assert canvas.message == ""
    assert canvas.receive(bad) is False and canvas.message
    canvas.design.set("fc_0", size=10)
    canvas.refresh()  # what the cell hook does after a cell that edits the design
    assert canvas.message == ""


def test_layout_engine_is_sent_as_a_binary_message():
    canvas = DesignCanvas(design=same_chain(2))
    sent = []
    canvas.send = lambda content, buffers=None: sent.append((content, buffers))
    assert canvas.receive({"action": "layout_engine"})
    (content, buffers), = sent
    assert content == {"kind": "layout_engine"}
    assert buffers[0].startswith(b"// Generated by js/build.mjs") and len(buffers[0]) > 1_000_000
    assert "layout_engine" not in canvas.trait_names()  # never a trait: not saved in notebooks


def test_unfolded_runs_are_kept_in_the_design_file(tmp_path):
    path = tmp_path / "chain.fsdesign.json"
    canvas = DesignCanvas(design=same_chain(30), path=path)
    assert len(canvas.view["nodes"]) == 3
    canvas.unfold("fold:fc_0")
    canvas.close()
    reopened = DesignCanvas(path=path)
    assert len(reopened.view["nodes"]) == 32  # still open after a restart
    reopened.fold("fc_3")
    reopened.close()
    assert len(DesignCanvas(path=path).view["nodes"]) == 3
    # a run whose first layer is gone is dropped from the file
    d = fd.Design.load(path)
    d.document.view["unfolded"] = ["fc_0", "no_such_node"]
    d.save(path)
    assert fd.Design.load(path).document.view.get("unfolded") == ["fc_0"]


def test_the_default_layout_fits_the_pane_the_front_end_reports():
    canvas = DesignCanvas(design=varied_chain())
    wide = extent(canvas.view)
    revision = canvas.view["revision"]
    canvas.set_pane(canvas.pane[0] * 1.05, canvas.pane[1])  # within 15%: no new layout
    assert canvas.view["revision"] == revision
    assert canvas.receive({"action": "set_pane", "width": 600, "height": 700})
    narrow = extent(canvas.view)
    assert narrow[0] / narrow[1] < wide[0] / wide[1]  # shaped like the taller pane
    fit = min(600 / narrow[0], 700 / narrow[1])
    assert fit >= min(950 / wide[0], 510 / wide[1]) * 0.8
    assert canvas.receive({"action": "set_pane", "width": 20, "height": 700}) is False
    assert "too small" in canvas.message
