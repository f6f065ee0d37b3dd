"""Canvas actions and their refusals in the cases mutation testing found unasserted (issue
#17): what a refused gesture says, the starting attributes of a dropped layer, ports of op
nodes and of layers whose build failed, the second output of a node fed on, memories sized
from the output they remember, the design file, and the notebook hook released on close."""
import json

import pytest
from IPython.core.events import EventManager, available_events

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import palette_view

from test_canvas_view import by_id, sequence_classifier, view_of


def desc(name, dtype="FP32", dims=("-1", "8")):
    """A VarDesc as an op node's outputs (and a variable node) carry it."""
    return {"name": name, "type": {"type": "DENSE_TENSOR", "denseTensor": {"tensor": {
        "dataType": dtype, "dims": list(dims)}}}}


def top_k_design():
    """A variable x and an op node ``best`` (top_k): values (float) and indices (int64)."""
    d = fd.Design()
    d.add("variable", name="x", desc={**desc("x"), "stopGradient": True})
    d.add("op", inputs={"X": ["x"]}, type="top_k", name="best", attrs={"k": 2},
          outputs={"Out": [desc("vals", dims=("-1", "2"))],
                   "Indices": [desc("idx", "INT64", ("-1", "2"))]})
    return d


def refused(canvas, action, **args):
    before = canvas.design.document.clone()
    assert canvas.receive({"action": action, **args}) is False
    assert canvas.design.document == before
    return canvas.message


def test_refusals_say_what_and_where():
    c = DesignCanvas(sequence_classifier())
    assert refused(c, "paste") == "paste: nothing copied"
    assert refused(c, "clear_memory_link", memory="nope") == "clear_memory_link: no node 'nope'"
    relu = c.add_node("relu", 0, 0, source="logits")
    assert refused(c, "set_attr_text", node=relu, name="size", text="3") == \
        f"set_attr_text: node '{relu}' (relu) has no attribute 'size'; it has none"
    mix = c.add_node("mixed_layer", 0, 0, source="pool")
    assert refused(c, "connect", source="pool", source_index=0, target=mix,
                   handle="row:3:input") == \
        f"connect: node '{mix}' (mixed_layer): no input handle 'row:3:input'; it has " \
        "['row:0:input']"
    assert refused(c, "set_row", node=mix, index=0, name="kind", value=5) == \
        "set_row: a row kind is a layer name such as 'full_matrix_projection', got 5"
    c.set_row(mix, 0, "kind", "identity")   # a short name: the catalog's projection
    assert c.design.node(mix).rows[0].kind == "identity_projection"


def test_a_canvas_refuses_what_is_not_a_design_and_starts_with_the_palette():
    with pytest.raises(TypeError, match="design must be a fluidscope Design, got str"):
        DesignCanvas(design="model.fsdesign.json")
    assert DesignCanvas().palette == palette_view()


def test_required_attributes_without_an_ordinary_value_by_name_get_one_by_type():
    c = DesignCanvas()
    lstm = c.add_node("lstm", 0, 0)
    pool = c.add_node("adaptive_pool2d", 0, 200)
    assert c.design.node(lstm).attrs == {"hidden_size": 1}
    assert c.design.node(pool).attrs == {"pool_size": 1}


def test_running_needs_a_loss_and_a_design_that_builds_with_its_optimizer(tmp_path):
    c = DesignCanvas(sequence_classifier())
    c.design.set_loss(None)
    c.reader = []
    assert refused(c, "train") == "train: mark a loss first (design.set_loss(node))"
    d = sequence_classifier()
    d.set_optimizer("SGD", learning_rate=0.1, bogus=3)
    c = DesignCanvas(d)
    assert refused(c, "export", folder=str(tmp_path)).startswith(
        "export: the design does not build: optimizer SGD: ")
    assert not list(tmp_path.iterdir())


def test_an_op_node_shows_its_ops_slots_and_type():
    nodes = by_id(DesignCanvas(top_k_design()).view)
    best = nodes["best"]
    assert best["detail"] == "top_k" and best["type"] == "op"
    assert [(p["handle"], p["kind"], p["many"]) for p in best["inputs"]][0] == \
        ("in:X", "list", True)
    assert [(o["kind"], o["dtype"]) for o in best["outputs"]] == \
        [("dense", "float32"), ("ids", "int64")]


def test_a_layer_dropped_on_a_second_output_is_fed_by_that_output():
    """top_k's indices (int64) feed an embedding, whose input takes ids only: the kind
    checked is the second output's, not the first's (float)."""
    c = DesignCanvas(top_k_design())
    emb = c.add_node("embedding", 300, 0, source="best", source_index=1)
    assert c.design.node(emb).inputs == {"input": fd.design.Ref("best", 1)}
    assert "takes" in refused(c, "add_node", layer="embedding", x=0, y=0, source="best",
                              source_index=0)


def test_layers_that_did_not_build_show_the_outputs_their_spec_declares():
    d = sequence_classifier()
    d.add("dynamic_lstm", inputs={"input": "logits"}, size=8, name="dl")  # not a sequence
    d.add("softmax_with_cross_entropy", inputs={"logits": "logits"}, name="sx")  # no label
    nodes = by_id(view_of(d))
    assert nodes["dl"]["error"] and nodes["sx"]["error"]
    assert [o["handle"] for o in nodes["dl"]["outputs"]] == ["out:0", "out:1"]  # hidden, cell
    assert [o["handle"] for o in nodes["sx"]["outputs"]] == ["out:0"]  # softmax? is optional


def test_a_memory_linked_to_a_second_output_takes_that_outputs_width():
    d = sequence_classifier()
    d.add("split", inputs={"input": "h"}, num_or_sections=[4, 12], dim=1, group="rnn",
          name="parts")
    c = DesignCanvas(d)
    memory = c.add_memory("rnn")
    c.connect("parts", 1, memory, "in:link")
    assert c.design.node(memory).inputs["link"] == fd.design.Ref("parts", 1)
    assert c.design.node(memory).attrs["size"] == 12


def test_a_memory_of_a_node_without_a_width_yet_starts_at_the_default_size():
    """In a zone without out-links nothing builds, so widths come from ``size``
    attributes; an embedding's ``size`` is [vocab, width], not a width."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    group = d.add("recurrent_group", name="rnn")
    word = d.add_step_input(group, ids, name="word")
    inner = d.add("embedding", inputs={"input": word}, size=[30, 16], group=group)
    c = DesignCanvas(d)
    memory = c.add_memory(group, link=inner)
    assert c.design.node(memory).attrs["size"] == 64
    assert c.design.node(memory).inputs["link"] == fd.design.Ref(inner, 0)


def test_opening_a_design_file_does_not_rewrite_it(tmp_path):
    path = tmp_path / "m.fsdesign.json"
    sequence_classifier().save(path)
    text = json.dumps(json.loads(path.read_text("utf-8")))   # the same design, one line
    path.write_text(text, "utf-8")
    c = DesignCanvas(path=path)
    assert "rnn" in by_id(c.view)
    c.close()
    assert path.read_text("utf-8") == text


class KernelShell:
    """What ``get_ipython()`` returns inside a kernel, as far as the canvas uses it."""

    kernel = object()

    def __init__(self):
        self.events = EventManager(self, available_events)


def test_the_cell_hook_edits_show_after_a_cell_and_close_releases_it(monkeypatch):
    import IPython
    shell = KernelShell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    c = DesignCanvas(sequence_classifier())
    revision = c.view["revision"]
    c.design.set("logits", size=3)           # a cell edits the design ...
    shell.events.trigger("post_run_cell", None)   # ... and finishes
    assert by_id(c.view)["logits"]["outputs"][0]["shape"] == "[-1, 3]"
    assert c.view["revision"] == revision + 1
    c.close()
    assert shell.events.callbacks["post_run_cell"] == []
    c.close()                                # twice: nothing left to release
    shell.events.trigger("post_run_cell", None)


def test_closing_after_the_shell_dropped_the_hook_itself(monkeypatch):
    import IPython
    shell = KernelShell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    c = DesignCanvas(sequence_classifier())
    shell.events.unregister("post_run_cell", c._after_cell)   # a reset shell forgot it
    c.close()                                # IPython's ValueError is no error here
    assert shell.events.callbacks["post_run_cell"] == []


def test_a_memory_booted_from_a_padded_sequence_takes_its_last_dimension():
    d = sequence_classifier()
    d.add("data", name="padded", shape=[None, None, 8])       # [-1, -1, 8]
    c = DesignCanvas(d)
    memory = c.add_memory("rnn", boot="padded")
    assert c.design.node(memory).attrs["size"] == 8
    assert c.design.node(memory).inputs["boot_layer"] == fd.design.Ref("padded", 0)


def test_an_unknown_zone_after_a_zone_named_dash_leaves_the_entered_chain():
    """Zone ids are free text: a zone may be called "-", and an unknown id after it in the
    saved chain is dropped all the same."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4], lod_level=1)
    g = d.add("recurrent_group", name="-")
    h = d.add("fc", inputs={"input": d.add_step_input(g, x)}, size=4, group=g, name="h")
    d.set_outputs(g, [h])
    d.document.view = {"entered": ["-", "ghost"]}
    c = DesignCanvas(d)
    assert [p["id"] for p in c.view["path"]] == ["-"]
    assert c.design.document.view["entered"] == ["-"]
