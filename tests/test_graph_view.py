"""GraphView without a browser: traits, re-rendering, selection, the static files."""
import json
import pathlib
import re

import pytest

from fluidscope.engine import append_backward_desc, registry
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.proto import framework_pb2 as pb
from fluidscope.widgets import GraphView, has_dot
from fluidscope.widgets import graph_view as graph_view_module

STATIC = pathlib.Path(graph_view_module.__file__).parent / "static"


def declare(block, name, dims, param=False):
    v = block.vars.add(name=name, persistable=param, is_parameter=param)
    v.type.type = pb.VarType.DENSE_TENSOR
    v.type.dense_tensor.tensor.data_type = pb.VarType.FP32
    v.type.dense_tensor.tensor.dims.extend(dims)


def add_op(block, type, inputs, outputs):
    op = block.ops.add(type=type)
    for slot, names in inputs.items():
        op.inputs.add(parameter=slot, arguments=names)
    for slot, names in outputs.items():
        op.outputs.add(parameter=slot, arguments=names)


class Program:
    """Stands in for a designer Program: a thin view holding ``desc``."""

    def __init__(self):
        self.desc = pb.ProgramDesc()
        block = self.desc.blocks.add(idx=0, parent_idx=-1)
        declare(block, "x", [-1, 4])
        declare(block, "fc_0.w_0", [4, 3], param=True)
        declare(block, "fc_0.tmp_0", [-1, 3])
        declare(block, "loss", [])
        add_op(block, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["fc_0.tmp_0"]})
        add_op(block, "mean", {"X": ["fc_0.tmp_0"]}, {"Out": ["loss"]})
        append_backward_desc(self.desc, "loss")


@pytest.fixture
def view():
    return GraphView(Program())


def test_traits_after_construction(view):
    assert view.dot.startswith("digraph") and "label=mul" in view.dot
    if has_dot():
        assert view.svg.startswith("<svg") and 'id="op:0:0"' in view.svg
    else:
        assert view.svg == ""
    assert view.mode == "all" and view.highlight is None and view.selected == ""
    assert view.error == ""


def test_mode_change_re_renders(view):
    assert "mul_grad" in view.dot
    before_svg = view.svg
    view.set_mode("forward")
    assert view.mode == "forward" and "mul_grad" not in view.dot and "label=mul" in view.dot
    if has_dot():
        assert view.svg != before_svg and "mul_grad" not in view.svg
    view.mode = "backward"
    assert "mul_grad" in view.dot
    with pytest.raises(FluidscopeError, match="mode"):
        view.set_mode("train")
    assert view.mode == "backward"


def test_highlight_re_renders(view):
    assert "penwidth" not in view.dot
    view.set_highlight(1)
    assert view.highlight == 1 and "penwidth=3" in view.dot
    view.highlight = (0, 0)  # a pair in the drawn block is stored as a plain index
    assert view.highlight == 0
    view.highlight = "op:0:1"
    assert view.highlight == 1
    view.highlight = None
    assert "penwidth" not in view.dot
    with pytest.raises(FluidscopeError, match="highlight"):
        view.highlight = "mul"


def test_select_sets_selected(view):
    assert view.select("op:0:1") == "op:0:1" and view.selected == "op:0:1"
    assert view.select(0) == "op:0:0"
    assert view.select("fc_0.w_0") == "var:0:fc_0.w_0"
    assert view.select("var:0:fc_0.w_0@GRAD") == "var:0:fc_0.w_0@GRAD"
    for missing in ("op:0:99", "var:0:nope", "nope", "op:7:0"):
        with pytest.raises(FluidscopeError, match="no node"):
            view.select(missing)
    assert view.selected == "var:0:fc_0.w_0@GRAD"
    view.select(None)
    assert view.selected == ""


def test_front_end_selection_is_a_plain_trait(view):
    # the front end writes `selected` directly (model.set + save_changes)
    view.set_state({"selected": "var:0:x"})
    assert view.selected == "var:0:x"


def test_refresh_picks_up_program_edits():
    program = Program()
    view = GraphView(program, mode="forward")
    assert "label=relu" not in view.dot
    block = program.desc.blocks[0]
    declare(block, "act", [])
    add_op(block, "relu", {"X": ["loss"]}, {"Out": ["act"]})
    view.refresh()
    assert "label=relu" in view.dot and "var_0_act" in view.dot


def test_without_graphviz_svg_is_empty(monkeypatch):
    monkeypatch.setattr(graph_view_module, "has_dot", lambda: False)
    view = GraphView(Program())
    assert view.svg == "" and view.dot.startswith("digraph") and view.error == ""


def test_graphviz_failure_is_reported_not_raised(monkeypatch):
    def broken(dot):
        raise FluidscopeError("Graphviz could not lay out the graph: boom")
    monkeypatch.setattr(graph_view_module, "has_dot", lambda: True)
    monkeypatch.setattr(graph_view_module, "dot_to_svg", broken)
    view = GraphView(Program())
    assert view.svg == "" and "boom" in view.error and view.dot


def test_options_pass_through():
    view = GraphView(Program(), rankdir="LR", show_shapes=False)
    assert "rankdir=LR" in view.dot and 'label="x\\n' not in view.dot
    assert view.program.desc is not None


def test_state_is_json_serialisable(view):
    view.set_highlight((0, 1))
    view.select("x")
    state = view.get_state()
    for key in ("dot", "svg", "mode", "highlight", "selected", "error", "_esm", "_css"):
        assert key in state
    json.dumps({k: v for k, v in state.items() if k not in ("layout",)})


def test_static_files_are_referenced():
    js, css = STATIC / "graph_view.js", STATIC / "graph_view.css"
    assert js.is_file() and css.is_file()
    assert pathlib.Path(GraphView._esm._path) == js.resolve()
    assert pathlib.Path(GraphView._css._path) == css.resolve()
    view = GraphView(Program())
    assert view._esm == js.read_text(encoding="utf-8")
    assert view._css == css.read_text(encoding="utf-8")
    source = js.read_text(encoding="utf-8")
    assert "export default" in source and "save_changes" in source
    assert not re.search(r"^\s*import\b", source, re.M) and "http" not in source  # offline
    assert "fs-selected" in source and "fs-selected" in css.read_text(encoding="utf-8")
