"""The canvas's view model (widgets/canvas/view.py): pure dicts from a design and its build."""
import json

import pytest

import fluidscope.designer as fd
from fluidscope.widgets.canvas import canvas_view, palette_view
from fluidscope.widgets.canvas.ports import accepts, check_connection, output_kind


def sequence_classifier(vocab=30, width=16):
    """ids -> embedding -> recurrent group (fc over the step and a memory of itself) ->
    max pool -> fc -> softmax_with_cross_entropy -> mean, with Adam."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    emb = d.add("embedding", inputs={"input": ids}, size=[vocab, width])
    g = d.add("recurrent_group", name="rnn")
    step = d.add_step_input(g, emb, name="word")
    mem = d.add_memory(g, size=width, name="state")
    h = d.add("fc", inputs={"input": [step, mem]}, size=width, act="tanh", group=g, name="h")
    d.link_memory(mem, h)
    d.set_outputs(g, [h])
    pooled = d.add("sequence_pool", inputs={"input": g}, pool_type="max", name="pool")
    logits = d.add("fc", inputs={"input": pooled}, size=2, name="logits")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label},
                 name="cost")
    d.set_loss(d.add("mean", inputs={"x": cost}, name="loss"))
    d.set_optimizer("Adam", learning_rate=0.01)
    return d


def view_of(design, **ui):
    return canvas_view(design, design.build(optimize=False), ui)


def by_id(view):
    return {n["id"]: n for n in view["nodes"]}


def edges_by_kind(view, kind):
    return [e for e in view["edges"] if e["kind"] == kind]


def test_view_is_json_and_lists_parents_before_children():
    view = view_of(sequence_classifier())
    assert json.loads(json.dumps(view)) == view
    seen = set()
    for node in view["nodes"]:
        assert node["parent"] is None or node["parent"] in seen
        seen.add(node["id"])
    assert view["loss"] == "loss" and view["path"] == []
    assert view["summary"] == "9 layers"
    assert by_id(view)["loss"]["is_loss"]


def test_ports_carry_kinds_shapes_dtypes_and_accepts():
    nodes = by_id(view_of(sequence_classifier()))
    (ids_out,) = nodes["ids"]["outputs"]
    assert ids_out == {"handle": "out:0", "index": 0, "kind": "ids_sequence",
                       "shape": "[-1, 1]", "dtype": "int64"}
    (emb_in,) = nodes["embedding_0"]["inputs"]
    assert emb_in["handle"] == "in:input" and emb_in["kind"] == "ids"
    assert emb_in["accepts"] == ["ids", "ids_sequence"] and emb_in["connected"] == 1
    assert nodes["embedding_0"]["outputs"][0]["kind"] == "sequence"
    assert nodes["pool"]["inputs"][0]["accepts"] == ["sequence", "ids_sequence"]
    assert nodes["pool"]["outputs"][0]["kind"] == "dense"
    assert nodes["pool"]["outputs"][0]["shape"] == "[-1, 16]"
    # a step input gives one time step: the sequence's rows, dense
    assert nodes["word"]["outputs"][0]["kind"] == "dense"
    assert nodes["cost"]["detail"] == ""
    assert nodes["h"]["detail"] == "size 16 · tanh"
    assert nodes["h"]["inputs"][0]["connected"] == 2


def test_accept_rule_is_shared_by_view_and_connect_check():
    d = sequence_classifier()
    built = d.build(optimize=False)
    dense = built.outputs["logits"][0]
    assert output_kind(dense) == "dense"
    assert "dense" not in accepts("sequence")
    with pytest.raises(fd.DesignError, match=r"slot 'input' takes sequence or ids_sequence "
                                             r"inputs; 'logits' gives dense"):
        check_connection(d.node("pool"), "in:input", "logits", dense)
    check_connection(d.node("pool"), "in:input", "rnn", built.outputs["rnn"][0])


def test_errors_after_an_impossible_size_and_after_fixing_it():
    d = sequence_classifier()
    d.set("logits", size=3)
    d.set("label", shape=[None, 1])
    d.add("fc", inputs={"input": "logits"}, size=4, name="after")
    d.add("elementwise_add", inputs={"x": "logits", "y": "pool"}, name="bad_add")
    nodes = by_id(view := view_of(d))
    assert "bad_add" in nodes["bad_add"]["error"]
    assert "[-1, 3]" in nodes["bad_add"]["error"] and "[-1, 16]" in nodes["bad_add"]["error"]
    assert nodes["bad_add"]["outputs"][0]["shape"] is None
    assert view["summary"] == "11 layers, 1 error"
    d.add("relu", inputs={"x": "bad_add"}, name="downstream")
    nodes = by_id(view_of(d))
    assert nodes["downstream"]["waiting_on"] == "bad_add"
    assert nodes["downstream"]["error"] is None
    d.set("logits", size=16)
    nodes = by_id(view_of(d))
    assert nodes["bad_add"]["error"] is None and nodes["downstream"]["waiting_on"] is None
    assert nodes["downstream"]["outputs"][0]["shape"] == "[-1, 16]"


def test_zone_with_in_link_memory_back_edge_and_out_link():
    view = view_of(sequence_classifier())
    nodes = by_id(view)
    rnn = nodes["rnn"]
    assert rnn["type"] == "group" and not rnn["collapsed"] and rnn["size"][0] > 220
    assert nodes["word"]["parent"] == "rnn" and nodes["word"]["type"] == "step_input"
    assert nodes["state"]["type"] == "memory" and nodes["h"]["parent"] == "rnn"
    (inlink,) = edges_by_kind(view, "inlink")
    assert (inlink["source"], inlink["target"], inlink["targetHandle"]) == \
        ("embedding_0", "word", "in:outer")
    (memory,) = edges_by_kind(view, "memory")
    assert (memory["source"], memory["target"], memory["targetHandle"]) == \
        ("h", "state", "in:link")
    (outlink,) = edges_by_kind(view, "outlink")
    assert (outlink["source"], outlink["target"], outlink["targetHandle"]) == \
        ("h", "rnn", "out:0")
    assert outlink["label"] == "[-1, 16]"
    # inner positions are relative to the zone and inside it
    for inner in ("word", "state", "h"):
        x, y = nodes[inner]["position"]
        assert 0 < x < rnn["size"][0] and 0 < y < rnn["size"][1]


def test_boot_and_static_edges():
    d = sequence_classifier()
    d.add("data", name="ctx", shape=[None, 16])
    d.boot_memory("state", "ctx")
    d.add_step_input("rnn", "ctx", static=True, name="context")
    view = view_of(d)
    (boot,) = edges_by_kind(view, "boot")
    assert (boot["source"], boot["target"], boot["targetHandle"]) == \
        ("ctx", "state", "in:boot_layer")
    (static,) = edges_by_kind(view, "static")
    assert static["target"] == "context" and by_id(view)["context"]["static"]


def test_collapsed_zone_hides_its_step_and_takes_its_edges():
    view = view_of(sequence_classifier(), collapsed=["rnn"])
    nodes = by_id(view)
    assert nodes["rnn"]["collapsed"] and nodes["rnn"]["size"] is None
    assert not {"word", "state", "h"} & set(nodes)
    (inlink,) = edges_by_kind(view, "inlink")
    assert (inlink["target"], inlink["targetHandle"]) == ("rnn", "in:word")
    assert "in:word" in [p["handle"] for p in nodes["rnn"]["inputs"]]
    assert not edges_by_kind(view, "memory") and not edges_by_kind(view, "outlink")
    ids = {n["id"] for n in view["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in view["edges"])


def test_entered_zone_shows_its_step_alone():
    view = view_of(sequence_classifier(), path=["rnn"])
    assert view["path"] == [{"id": "rnn", "title": "rnn"}]
    assert {n["id"] for n in view["nodes"]} == {"word", "state", "h"}
    assert all(n["parent"] is None for n in view["nodes"])
    assert {e["kind"] for e in view["edges"]} == {"data", "memory"}


def test_mixed_rows():
    d = sequence_classifier()
    m = d.add("mixed_layer", size=8, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": "pool"})
    d.add_row(m, "dot_mul_operator", inputs={"a": "pool", "b": "pool"})
    nodes = by_id(view := view_of(d))
    rows = nodes["mix"]["rows"]
    assert nodes["mix"]["type"] == "mixed"
    assert [r["kind"] for r in rows] == ["full_matrix_projection", "dot_mul_operator"]
    assert rows[0]["handle"] == "row:0:input" and rows[0]["source"] == "pool"
    assert [s["handle"] for s in rows[1]["inputs"]] == ["row:1:a", "row:1:b"]
    targets = {e["targetHandle"] for e in view["edges"] if e["target"] == "mix"}
    assert targets == {"row:0:input", "row:1:a", "row:1:b"}


def test_sig_changes_only_for_the_node_that_changed():
    d = sequence_classifier()
    before = {n["id"]: n["sig"] for n in view_of(d)["nodes"]}
    d.set("logits", act="relu")
    d.move("pool", 500, 500)
    after = {n["id"]: n["sig"] for n in view_of(d)["nodes"]}
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"logits"}


def test_default_layout_is_layered_and_a_layout_entry_wins():
    d = sequence_classifier()
    nodes = by_id(view_of(d))
    x = {k: n["position"][0] for k, n in nodes.items() if n["parent"] is None}
    assert x["ids"] < x["embedding_0"] < x["rnn"] < x["pool"] < x["logits"] < x["cost"] \
        < x["loss"]
    right_of_zone = nodes["rnn"]["position"][0] + nodes["rnn"]["size"][0]
    assert x["pool"] >= right_of_zone
    d.move("pool", 7, 9)
    assert by_id(view_of(d))["pool"]["position"] == [7.0, 9.0]


def test_palette_groups_by_category_and_carries_accepts():
    palette = palette_view()
    names = [e["name"] for e in palette]
    assert names[0] == "data" and "fc" in names and "sequence_pool" in names
    categories = [e["category"] for e in palette]
    assert categories == sorted(categories, key=categories.index)  # contiguous groups
    seq_pool = next(e for e in palette if e["name"] == "sequence_pool")
    assert seq_pool["inputs"] == [{"slot": "input", "kind": "sequence", "many": False,
                                   "optional": False, "accepts": ["sequence", "ids_sequence"]}]
    assert "pool_type" in seq_pool["attrs"]
    swce = next(e for e in palette if e["name"] == "softmax_with_cross_entropy")
    assert swce["outputs"][1] == {"name": "softmax", "many": False, "optional": True}


def test_a_failing_step_shows_its_error_inside_the_zone():
    d = sequence_classifier()
    d.add("fc", group="rnn", size=4, name="loose")  # its input is not connected
    nodes = by_id(view := view_of(d))
    assert "input 'input' is not connected" in nodes["loose"]["error"]
    assert "its step has an error" in nodes["rnn"]["error"]
    assert nodes["pool"]["waiting_on"] == "rnn"
    # what the step built before it failed was rolled back: no stale ports
    assert nodes["h"]["outputs"][0]["dtype"] is None
    assert view["summary"] == "10 layers, 2 errors, 4 waiting"
