"""DesignCanvas actions, sent as the browser sends them (``receive``) and called as methods."""
import pytest

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

from test_canvas_view import by_id, edges_by_kind, sequence_classifier


def send(canvas, action, **args):
    ok = canvas.receive({"action": action, **args})
    assert ok, canvas.message
    return canvas


def refused(canvas, action, **args):
    before = canvas.design.document.clone()
    revision = canvas.view["revision"]
    assert canvas.receive({"action": action, **args}) is False
    assert canvas.design.document == before and canvas.view["revision"] == revision
    return canvas.message


def nodes(canvas):
    return by_id(canvas.view)


def test_every_protocol_action_is_a_front_end_action():
    expected = {"add_node", "connect", "disconnect", "set_attr", "set_row", "add_row",
                "remove_row", "move_row", "remove", "move", "select", "undo", "redo", "copy",
                "paste", "duplicate", "group", "add_step_input", "add_memory", "link_memory",
                "add_output", "toggle_zone", "enter", "leave", "auto_layout", "show_graph",
                "train", "debug", "export", "show_code", "set_loss", "set_optimizer"}
    assert expected <= set(DesignCanvas().actions)


def test_compose_a_classifier_with_gestures():
    c = DesignCanvas()
    send(c, "add_node", layer="data", x=0, y=0)
    send(c, "set_attr", node="data_0", name="shape", value=[None, 8])
    send(c, "add_node", layer="fc", x=300, y=0, source="data_0")
    assert c.selected == ["fc_0"] and c.inspector["id"] == "fc_0"
    assert nodes(c)["fc_0"]["outputs"][0]["shape"] == "[-1, 64]"
    send(c, "set_attr", node="fc_0", name="size", value=4)
    send(c, "set_attr", node="fc_0", name="act", value="relu")
    assert nodes(c)["fc_0"]["detail"] == "size 4 · relu"
    send(c, "add_node", layer="mean", x=600, y=0, source="fc_0")
    (edge,) = [e for e in c.view["edges"] if e["target"] == "mean_0"]
    assert edge["id"] == "e:fc_0:0>mean_0:in:x:0" and edge["label"] == "[-1, 4]"
    assert c.design.node("mean_0").inputs["x"] == fd.design.Ref("fc_0")
    assert c.design.layout["fc_0"] == [300.0, 0.0]
    assert c.can_undo and not c.can_redo
    send(c, "set_loss", node="mean_0")
    send(c, "set_optimizer", kind="SGD", settings={"learning_rate": 0.1})
    assert c.view["loss"] == "mean_0" and nodes(c)["mean_0"]["is_loss"]
    assert c.view["optimizer"] == {"type": "SGD", "learning_rate": 0.1}
    assert "unknown optimizer" in refused(c, "set_optimizer", kind="Fast")


def test_refused_gestures_change_nothing():
    c = DesignCanvas(sequence_classifier())
    message = refused(c, "set_attr", node="logits", name="size", value="wide")
    assert "node 'logits' (fc): attribute 'size' must be int" in message
    message = refused(c, "connect", source="logits", source_index=0, target="pool",
                      handle="in:input")
    assert "slot 'input' takes sequence or ids_sequence inputs; 'logits' gives dense" in message
    assert "no input handle 'in:nope'" in refused(c, "connect", source="logits",
                                                  source_index=0, target="cost",
                                                  handle="in:nope")
    assert "unexpected argument" in refused(c, "undo", steps=2)
    assert "no edge" in refused(c, "disconnect", edge="e:x:0>y:in:z:0")
    with pytest.raises(fd.DesignError, match="must be int"):
        c.set_attr("logits", "size", "wide")


def test_python_refuses_float_outputs_into_an_ids_slot():
    """The embedding's input takes ids only: Python refuses a float output there as the
    front end does (its handle's accepts list), and takes an integer one."""
    c = DesignCanvas(sequence_classifier())
    emb = next(n for n in c.view["nodes"] if n["layer"] == "embedding")
    (slot,) = [h for h in emb["inputs"] if h["handle"] == "in:input"]
    assert slot["accepts"] == ["ids", "ids_sequence"]
    message = refused(c, "connect", source="logits", source_index=0, target=emb["id"],
                      handle="in:input")
    assert (f"node '{emb['id']}' (embedding): slot 'input' takes ids or ids_sequence inputs; "
            "'logits' gives dense (shape [-1, 2], float32, lod_level 0)") in message
    message = refused(c, "connect", source="rnn", source_index=0, target=emb["id"],
                      handle="in:input")
    assert "slot 'input' takes ids or ids_sequence inputs; 'rnn' gives sequence" in message
    with pytest.raises(fd.DesignError, match="'logits' gives dense"):
        c.connect("logits", 0, emb["id"], "in:input")
    send(c, "connect", source="label", source_index=0, target=emb["id"], handle="in:input")
    assert c.design.node(emb["id"]).inputs["input"] == fd.design.Ref("label")


def test_connect_by_handle_and_disconnect_by_edge_id():
    c = DesignCanvas(sequence_classifier())
    c.add_node("fc", 0, 0, attrs={"size": 16})
    c.connect("pool", 0, "fc_0", "in:input")
    c.connect("logits", 0, "fc_0", "in:input")
    assert [r.node for r in c.design.node("fc_0").inputs["input"]] == ["pool", "logits"]
    send(c, "disconnect", edge="e:pool:0>fc_0:in:input:0")
    assert [r.node for r in c.design.node("fc_0").inputs["input"]] == ["logits"]
    send(c, "undo")
    assert [r.node for r in c.design.node("fc_0").inputs["input"]] == ["pool", "logits"]
    send(c, "redo")
    assert nodes(c)["fc_0"]["inputs"][0]["connected"] == 1


def test_mixed_rows_through_gestures():
    c = DesignCanvas(sequence_classifier())
    c.add_node("mixed_layer", 0, 0)
    send(c, "add_row", node="mixed_layer_0", kind="full_matrix")
    send(c, "set_row", node="mixed_layer_0", index=0, name="size", value=8)
    send(c, "connect", source="pool", source_index=0, target="mixed_layer_0",
         handle="row:0:input")
    send(c, "add_row", node="mixed_layer_0", kind="identity_projection")
    send(c, "connect", source="logits", source_index=0, target="mixed_layer_0",
         handle="row:1:input")
    rows = nodes(c)["mixed_layer_0"]["rows"]
    assert [(r["kind"], r["source"]) for r in rows] == [
        ("full_matrix_projection", "pool"), ("identity_projection", "logits")]
    send(c, "move_row", node="mixed_layer_0", index=1, to=0)
    send(c, "set_row", node="mixed_layer_0", index=1, name="kind", value="trans_full_matrix")
    rows = c.design.node("mixed_layer_0").rows
    assert [r.kind for r in rows] == ["identity_projection", "trans_full_matrix_projection"]
    assert rows[1].inputs["input"].node == "pool" and rows[1].attrs["size"] == 8
    send(c, "disconnect", edge="e:pool:0>mixed_layer_0:row:1:input:0")
    assert c.design.node("mixed_layer_0").rows[1].inputs == {}
    send(c, "remove_row", node="mixed_layer_0", index=0)
    assert len(c.design.node("mixed_layer_0").rows) == 1


def test_zone_gestures_in_link_memory_out_link():
    c = DesignCanvas()
    c.add_node("data", 0, 0, attrs={"shape": [None, 8], "lod_level": 1})
    send(c, "add_node", layer="recurrent_group", x=300, y=0, source="data_0")
    (word,) = c.design.node("recurrent_group_0").body.nodes
    send(c, "add_node", layer="fc", x=200, y=40, group="recurrent_group_0", source=word)
    send(c, "add_memory", group="recurrent_group_0", link="fc_0")
    memory = next(n for n in c.design.node("recurrent_group_0").body.nodes if n != word
                  and n != "fc_0")
    assert c.design.node(memory).attrs["size"] == 64  # sized like what it remembers
    send(c, "connect", source=memory, source_index=0, target="fc_0", handle="in:input")
    send(c, "add_output", group="recurrent_group_0", source="fc_0")
    send(c, "connect", source=word, source_index=0, target="recurrent_group_0",
         handle="out:new")
    assert [r.node for r in c.design.node("recurrent_group_0").body.outputs] == ["fc_0", word]
    send(c, "connect", source="fc_0", source_index=0, target="recurrent_group_0",
         handle="out:1")
    send(c, "disconnect", edge="e:fc_0:0>recurrent_group_0:out:1:0")
    assert [r.node for r in c.design.node("recurrent_group_0").body.outputs] == ["fc_0"]
    view = c.view
    assert nodes(c)["fc_0"]["error"] is None, nodes(c)["fc_0"]["error"]
    assert edges_by_kind(view, "memory")[0]["source"] == "fc_0"
    assert nodes(c)["recurrent_group_0"]["outputs"][0]["kind"] == "sequence"
    send(c, "link_memory", memory=memory, target="fc_0")
    # from outside the zone straight into a node of its step: an in-link is made
    c.add_node("data", 0, 200, attrs={"shape": [None, 8], "lod_level": 1})
    send(c, "connect", source="data_1", source_index=0, target="fc_0", handle="in:input")
    assert len(edges_by_kind(c.view, "inlink")) == 2
    # from a node of the step straight to a node outside: an out-link is made (or reused)
    c.add_node("sequence_pool", 900, 0, attrs={"pool_type": "sum"})
    send(c, "connect", source="fc_0", source_index=0, target="sequence_pool_0",
         handle="in:input")
    assert c.design.node("sequence_pool_0").inputs["input"] == fd.design.Ref(
        "recurrent_group_0", 0)
    send(c, "add_step_input", group="recurrent_group_0", source="data_1", static=True)
    assert edges_by_kind(c.view, "static")
    send(c, "disconnect", edge=edges_by_kind(c.view, "static")[0]["id"])
    assert not edges_by_kind(c.view, "static")
    assert "must remember a node" in refused(c, "disconnect",
                                             edge=edges_by_kind(c.view, "memory")[0]["id"])


def test_group_selection_toggle_enter_leave():
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 8], lod_level=1)
    h = d.add("fc", inputs={"input": x}, size=8, name="h")
    d.add("sequence_pool", inputs={"input": h}, pool_type="sum", name="pool")
    c = DesignCanvas(d)
    send(c, "group", ids=["h"])
    group = c.selected[0]
    assert nodes(c)[group]["type"] == "group" and nodes(c)["h"]["parent"] == group
    send(c, "toggle_zone", group=group)
    assert nodes(c)[group]["collapsed"] and "h" not in nodes(c)
    send(c, "toggle_zone", group=group)
    send(c, "enter", group=group)
    assert [p["id"] for p in c.view["path"]] == [group]
    assert "x" not in nodes(c) and nodes(c)["h"]["parent"] is None
    send(c, "leave", depth=0)
    assert c.view["path"] == [] and "x" in nodes(c)
    send(c, "undo")
    assert "h" in c.design.nodes and group not in nodes(c)


def test_remove_select_move_and_auto_layout():
    c = DesignCanvas(sequence_classifier())
    send(c, "select", ids=["pool", "ghost"])
    assert c.selected == ["pool"] and c.inspector["layer"] == "sequence_pool"
    pool_type = next(a for a in c.inspector["attrs"] if a["name"] == "pool_type")
    assert pool_type["value"] == "max" and "average" in pool_type["choices"]
    undo_depth = c.can_undo
    send(c, "move", positions={"pool": [11, 22]})
    assert nodes(c)["pool"]["position"] == [11.0, 22.0] and c.can_undo == undo_depth
    send(c, "auto_layout")
    assert c.layout_request == 1
    send(c, "move", positions={"pool": [1, 2], "logits": [3, 4]}, layout=True)
    assert c.design.layout["logits"] == [3.0, 4.0]
    send(c, "remove", ids=["pool"])
    assert "pool" not in c.design.nodes and c.selected == [] and c.inspector == {}
    assert nodes(c)["logits"]["waiting_on"] is None
    assert "not connected" in nodes(c)["logits"]["error"]
    send(c, "undo")
    assert "pool" in c.design.nodes and nodes(c)["logits"]["error"] is None
    send(c, "remove", ids=["rnn"])
    assert "h" not in c.design.document.ids()


def test_copy_paste_duplicate_fresh_ids_inner_edges_kept_one_undo_step():
    c = DesignCanvas(sequence_classifier())
    c.move({"embedding_0": [100, 50], "rnn": [300, 40]})
    send(c, "copy", ids=["embedding_0", "rnn"])
    send(c, "paste", x=1000, y=500)
    new_emb, new_rnn = c.selected
    assert {new_emb, new_rnn}.isdisjoint({"embedding_0", "rnn"})
    design = c.design
    # the copied nodes' bounding box lands with its top-left corner at (x, y)
    assert c.design.layout[new_emb] == [1000.0, 510.0]
    assert c.design.layout[new_rnn] == [1200.0, 500.0]
    body = design.node(new_rnn).body
    step, memory, fc = (body.nodes[k] for k in body.nodes)
    assert step.inputs["outer"].node == new_emb            # edge among the copies kept
    assert design.node(new_emb).inputs == {}                 # ids was not copied
    assert memory.inputs["link"].node == fc.id and fc.id != "h"
    assert body.outputs[0].node == fc.id
    assert nodes(c)[fc.id]["error"] is None
    send(c, "undo")
    assert new_rnn not in design.document.ids() and new_emb not in design.document.ids()
    send(c, "duplicate", ids=["h", "state"])     # a box selection inside the zone
    assert len(c.selected) == 1 and c.design.node(c.selected[0]).layer == "fc"
    assert "copy the zone" in refused(c, "copy", ids=["state"])
    send(c, "duplicate", ids=["logits", "cost"])
    logits2, cost2 = c.selected
    assert design.node(cost2).inputs["logits"].node == logits2
    assert design.node(logits2).inputs == {} and "label" not in design.node(cost2).inputs
    # from Python, the same module
    from fluidscope.designer.design import clipboard
    renamed = clipboard.paste(design, clipboard.copy(design, ["pool"]), x=0, y=0)
    assert renamed["pool"] in design.nodes


def test_show_code_and_python_edits_after_refresh():
    d = sequence_classifier()
    c = DesignCanvas(d)
    send(c, "show_code", visible=True)
    assert "fd.sequence_pool(" in c.code or "sequence_pool" in c.code
    revision = c.view["revision"]
    d.set("logits", size=5)              # an edit from a Python cell
    d.add("relu", inputs={"x": "logits"}, name="extra")
    assert c.design is d and "extra" not in nodes(c)
    c.refresh()
    assert c.view["revision"] == revision + 1
    assert nodes(c)["extra"]["outputs"][0]["shape"] == "[-1, 5]"
    assert "extra" in c.code
    c.refresh()                          # nothing changed: nothing republished
    assert c.view["revision"] == revision + 1
    send(c, "show_code", visible=False)
    assert c.code == ""
