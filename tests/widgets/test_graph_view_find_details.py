"""GraphView at real sizes (issue #18): how a large program opens, find by name / variable
/ op type, the details panel's data, hidden internal outputs, and following the
program's edits after each cell."""
import pathlib

import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import GraphView
from fluidscope.widgets.graph import after_cell
from fluidscope.widgets.graph.sizing import LARGE_PROGRAM_OPS, drawn_op_count

HERE = pathlib.Path(__file__).name


def language_model(hidden=8, vocab=11):
    """Notebook 03's model, small: embedding -> fc -> lstmemory_group -> fc -> loss, Adam."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        ids = fd.data("ids", [None, 1], "int64", lod_level=1)
        label = fd.data("label", [None, 1], "int64", lod_level=1)
        embedded = fd.embedding(ids, size=[vocab, 4])
        gates = fd.fc(embedded, 4 * hidden, bias_attr=False)
        lstm = fd.lstmemory_group(gates, hidden, name="lstm")
        logits = fd.fc(lstm, vocab)
        loss = fd.mean(fd.softmax_with_cross_entropy(logits, label))  # the loss line
        fd.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return main


def small_mlp():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4], "float32")
        loss = fd.mean(fd.fc(fd.reshape(x, [-1, 4]), 3))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main


@pytest.fixture(scope="module")
def lm():
    return language_model()


def test_a_large_program_opens_without_optimizer_and_with_layers_as_boxes(lm):
    assert drawn_op_count(lm.desc, "all") > LARGE_PROGRAM_OPS
    view = GraphView(lm, renderer="browser")
    assert view.mode == "backward" and view.collapse_all
    assert "adam" not in view.dot and 'id="group:0:/lstm/"' in view.dot
    # what the caller chose is kept
    whole = GraphView(lm, mode="all", collapse=False, renderer="browser")
    assert whole.mode == "all" and not whole.collapse_all and "label=adam" in whole.dot
    # a small program opens whole
    small = GraphView(small_mlp(), renderer="browser")
    assert small.mode == "all" and not small.collapse_all and "label=sgd" in small.dot


def test_find_by_op_type_variable_and_layer(lm):
    view = GraphView(lm, mode="backward", collapse=False, renderer="browser")
    muls = [f"op:0:{i}" for i, op in enumerate(lm.desc.blocks[0].ops) if op.type == "mul"]
    assert view.find("mul") == muls[0] and view.found[:2] == muls
    assert view.details["title"] == "mul"
    assert view.find("mul") == muls[1]  # the same query: the next match
    assert view.find("MUL") == muls[0]  # a new query (case differs): the first again
    assert view.find("lstm.w_0") == "var:0:lstm.w_0" and view.found[0] == "var:0:lstm.w_0"
    assert view.details["kind"] == "var" and view.details["subtitle"] == "parameter of block 0"
    # a layer: its first op drawn, or its box when layers are boxes
    assert view.find("lstm") in ("group:0:/lstm/", "op:0:2")
    view.collapse()
    assert view.find("lstm") == "group:0:/lstm/"
    inner = next(v.name for v in lm.desc.blocks[1].vars if "@PRE" in v.name)
    assert view.find(inner) == "group:0:/lstm/"  # a step block's var: inside the box
    # not drawn in this mode: the view switches to the one that draws the optimizer
    assert view.find("adam").startswith("op:0:") and view.mode == "all"
    with pytest.raises(FluidscopeError, match="no op type, variable or layer matches 'nope'"):
        view.find("nope")
    with pytest.raises(FluidscopeError, match="find: type part of"):
        view.find("  ")
    # the search box's message
    assert view.receive({"action": "find", "query": "softmax_with_cross_entropy"})
    assert view.details["title"] == "softmax_with_cross_entropy"
    assert not view.receive({"action": "find", "query": "zzz"})
    assert "zzz" in view.message


def test_details_of_an_op_a_variable_and_a_layer(lm):
    view = GraphView(lm, mode="forward", collapse=False, renderer="browser")
    mul = next(i for i, op in enumerate(lm.desc.blocks[0].ops) if op.type == "mul")
    view.select(mul)
    d = view.details
    assert d["kind"] == "op" and d["title"] == "mul" and d["layer"] == "fc_0"
    assert d["subtitle"] == f"op #{mul} of block 0, forward"
    assert [(r["slot"], r["name"], r["type"], r["lod"]) for r in d["inputs"]] == [
        ("X", "embedding_0.tmp_0", "[?, 1, 4] float32 lod=1", 1),
        ("Y", "fc_0.w_0", "[4, 32] float32", 0)]
    assert d["outputs"][0]["type"] == "[?, 32] float32 lod=1"
    assert d["parameters"] == 4 * 32 and d["parameter_names"] == ["fc_0.w_0"]
    assert d["source"].startswith(str(pathlib.Path(__file__))) or HERE in d["source"]
    assert "fd.fc(embedded" in d["source_text"]
    assert ["x_num_col_dims", "2"] in d["attrs"] or d["attrs"] == [] or all(
        len(a) == 2 for a in d["attrs"])
    view.select("fc_0.w_0")
    d = view.details
    assert d["type"] == "[4, 32] float32" and d["numel"] == 128
    assert d["written_by"] == [] or all("adam" in w for w in d["written_by"])
    assert d["read_by"][0] == f"#{mul} mul" and "is_parameter" in d["flags"]
    view.select("group:0:/lstm/")
    d = view.details
    assert d["kind"] == "group" and d["title"] == "lstm" and "#2 recurrent" in d["ops"]
    assert d["parameters"] == 8 * 32 + 32 + 3 * 8  # w, bias, the three peepholes
    view.select("")
    assert view.details == {}
    # a click in the page sets `selected` directly: the details follow
    view.selected = f"op:0:{mul}"
    assert view.details["title"] == "mul"


def test_internal_outputs_hidden_unless_asked():
    main = small_mlp()
    xshape = next(v.arguments[0] for op in main.desc.blocks[0].ops if op.type == "reshape2"
                  for v in op.outputs if v.parameter == "XShape")
    view = GraphView(main, renderer="browser")
    assert f'id="var:0:{xshape}"' not in view.dot
    assert view.receive({"action": "show_internal_outputs", "show": True})
    assert f'id="var:0:{xshape}"' in view.dot and view.options == {"show_internal": True}
    view.show_internal_outputs(False)
    assert f'id="var:0:{xshape}"' not in view.dot and view.options == {}
    view.select("op:0:0")
    assert [r["internal"] for r in view.details["outputs"]] == [False, True]


def test_the_view_follows_program_edits_after_each_cell():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4], "float32")
        h = fd.fc(x, 3)
    view = GraphView(main, renderer="browser")
    assert view.revision == main.revision and "label=relu" not in view.dot
    assert not view.sync()  # nothing changed
    with fd.program_guard(main, startup):
        fd.relu(h)
    assert "label=relu" not in view.dot  # not yet: the cell has not ended
    assert after_cell.run_all() >= 1  # what IPython's post_run_cell does
    assert "label=relu" in view.dot and view.revision == main.revision
