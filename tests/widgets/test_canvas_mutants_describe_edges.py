"""The canvas's texts, edges, folds, view patches and op table in the cases mutation testing
found unasserted (issue #17): detail lines, every edge's fields and removing a plain data
edge, runs of layers given the same attributes in another order, a design file's top-level
outputs, the patch's revision, and the op table read from a bare ProgramDesc."""
import json

import pytest

import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas.edges import Edge, design_edges
from fluidscope.widgets.canvas.op_owners import op_owners
from fluidscope.widgets.canvas.view_patch import apply_patch, view_patch

from test_canvas_view import by_id, sequence_classifier, view_of


def with_context():
    """The sequence classifier with a boot layer and a static in-link ``context``."""
    d = sequence_classifier()
    d.add("data", name="ctx", shape=[None, 16])
    d.boot_memory("state", "ctx")
    d.add_step_input("rnn", "ctx", static=True, name="context")
    return d


def test_detail_lines():
    d = with_context()
    d.set("logits", param_attr="shared_w")          # a parameter's name is not shown
    nodes = by_id(view_of(d))
    assert nodes["logits"]["detail"] == "size 2"
    assert nodes["ids"]["detail"] == "shape [-1, 1] \u00b7 dtype int64 \u00b7 lod_level 1"
    assert nodes["context"]["detail"] == "static from ctx"
    assert nodes["word"]["detail"] == "from embedding_0"


def test_an_in_links_output_is_one_step_of_its_sequence():
    nodes = by_id(view_of(sequence_classifier()))
    assert nodes["word"]["outputs"] == [{"handle": "out:0", "index": 0, "kind": "dense",
                                         "shape": "[-1, 1, 16]", "dtype": "float32"}]


def test_every_edge_says_where_it_enters_and_which_zone_links_it():
    edges = {e.id: e for e in design_edges(with_context().document)}
    assert edges["e:embedding_0:0>word:in:outer:0"] == Edge(
        "embedding_0", 0, "word", "in:outer", "inlink", "outer", group="rnn")
    assert edges["e:ctx:0>context:in:outer:0"] == Edge(
        "ctx", 0, "context", "in:outer", "static", "outer", group="rnn")
    assert edges["e:ctx:0>state:in:boot_layer:0"] == Edge(
        "ctx", 0, "state", "in:boot_layer", "boot", "boot_layer", group="rnn")
    assert edges["e:h:0>state:in:link:0"] == Edge(
        "h", 0, "state", "in:link", "memory", "link", group="rnn")
    assert edges["e:h:0>rnn:out:0:0"] == Edge("h", 0, "rnn", "out:0", "outlink", group="rnn")
    assert edges["e:pool:0>logits:in:input:0"] == Edge(
        "pool", 0, "logits", "in:input", "data", "input")
    assert edges["e:state:0>h:in:input:1"] == Edge(
        "state", 0, "h", "in:input", "data", "input", 1)


def test_plain_and_row_edges_are_data_edges_and_a_plain_one_can_be_removed():
    d = sequence_classifier()
    mix = d.add("mixed_layer", size=8, name="mix")
    d.add_row(mix, "full_matrix_projection", inputs={"input": "pool"})
    c = DesignCanvas(d)
    kinds = {e["id"]: e["kind"] for e in c.view["edges"]}
    assert kinds["e:pool:0>logits:in:input:0"] == "data"
    assert kinds["e:pool:0>mix:row:0:input:0"] == "data"
    c.disconnect("e:pool:0>logits:in:input:0")
    assert "input" not in c.design.node("logits").inputs
    assert "e:pool:0>logits:in:input:0" not in {e["id"] for e in c.view["edges"]}
    assert "input 'input' is not connected" in by_id(c.view)["logits"]["error"]


def test_layers_given_the_same_attributes_in_another_order_fold_together():
    d = fd.Design()
    prev = d.add("data", name="x", shape=[None, 4])
    for k in range(8):
        attrs = {"size": 4, "act": "relu"} if k % 2 else {"act": "relu", "size": 4}
        prev = d.add("fc", inputs={"input": prev}, name=f"f{k}", **attrs)
    assert [n["id"] for n in view_of(d)["nodes"]] == ["x", "fold:f0"]


def test_a_design_files_top_level_output_is_a_reader_of_its_node(tmp_path):
    """A run breaks where a node has a reader outside it; a top-level output listed in the
    file is one (here with a side layer, so f7 has three readers)."""
    d = fd.Design()
    prev = d.add("data", name="x", shape=[None, 4])
    for k in range(16):
        prev = d.add("fc", inputs={"input": prev}, size=4, name=f"f{k}")
    d.add("relu", inputs={"x": "f7"}, name="side")
    path = tmp_path / "m.fsdesign.json"
    d.save(path)
    data = json.loads(path.read_text("utf-8"))
    data["outputs"] = [["f7", 0], ["f15", 0]]   # f15 has no other reader
    path.write_text(json.dumps(data), "utf-8")
    loaded = fd.Design.load(path)
    assert [r.node for r in loaded.document.graph.outputs] == ["f7", "f15"]
    ids = [n["id"] for n in view_of(loaded)["nodes"]]
    assert ids[:3] == ["x", "fold:f0", "fold:f8"] and "f7" not in ids


def test_a_patch_names_its_revision_and_refuses_another_base():
    c = DesignCanvas(sequence_classifier())
    old = json.loads(json.dumps(c.view))
    c.set_attr("logits", "size", 3)
    patch = view_patch(old, c.view)
    assert (patch["base"], patch["revision"]) == (old["revision"], c.view["revision"])
    with pytest.raises(ValueError) as refused:
        apply_patch(c.view, patch)
    assert str(refused.value) == (f"view patch: base revision {old['revision']} is not the "
                                  f"view's {c.view['revision']}")


def test_the_op_table_reads_a_bare_program_desc_and_filters_by_block():
    d = sequence_classifier()
    built = d.build()
    from_program = op_owners(built.main, d.document.ids())
    from_desc = op_owners(built.main.desc, d.document.ids())
    assert from_desc == from_program
    step_ops = from_program.ops_of("h", block=1)
    assert step_ops and {b for b, _ in step_ops} == {1}
    assert set(from_program.ops_of("h")) > set(step_ops)
    assert from_program.ops_of("logits", block=1) == []
