"""GraphView without a browser: traits, re-rendering, renderers, selection, the static files.

The browser side (viz.js layout, clicks) is covered by tests/e2e/test_graph_view_e2e.py."""
import json
import pathlib
import re

import pytest

from fluidscope.engine import append_backward_desc
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.widgets import GraphView, has_dot
from fluidscope.widgets.graph import view as graph_view_module
from fluidscope.widgets.render import Rendering

STATIC = graph_view_module.STATIC
VIZ_BUNDLE = STATIC / "graph_view_viz.js"


def declare(block, name, dims, param=False):
    v = block.vars.add(name=name, persistable=param, is_parameter=param)
    v.type.type = pb.VarType.DENSE_TENSOR
    v.type.dense_tensor.tensor.data_type = pb.VarType.FP32
    v.type.dense_tensor.tensor.dims.extend(dims)


def add_op(block, type, inputs, outputs, namescope=None):
    op = block.ops.add(type=type)
    for slot, names in inputs.items():
        op.inputs.add(parameter=slot, arguments=names)
    for slot, names in outputs.items():
        op.outputs.add(parameter=slot, arguments=names)
    if namescope is not None:
        op.attrs.add(name="op_namescope", type=pb.AttrType.STRING, s=namescope)


class Program:
    """Stands in for a designer Program: a thin view holding ``desc``."""

    def __init__(self):
        self.desc = pb.ProgramDesc()
        block = self.desc.blocks.add(idx=0, parent_idx=-1)
        declare(block, "x", [-1, 4])
        declare(block, "fc_0.w_0", [4, 3], param=True)
        declare(block, "fc_0.tmp_0", [-1, 3])
        declare(block, "loss", [])
        add_op(block, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["fc_0.tmp_0"]},
               namescope="/fc_0/")
        add_op(block, "mean", {"X": ["fc_0.tmp_0"]}, {"Out": ["loss"]},
               namescope="/head/mean_0/")
        append_backward_desc(self.desc, "loss")


@pytest.fixture
def view():
    return GraphView(Program())


def test_traits_after_construction(view):
    assert view.dot.startswith("digraph") and "label=mul" in view.dot
    if has_dot():
        assert view.svg.startswith("<svg") and 'id="op:0:0"' in view.svg
        assert view.resolved_renderer == "python"
    else:
        assert view.svg == "" and view.resolved_renderer == "browser"
    assert view.mode == "all" and view.highlight is None and view.selected == ""
    assert view.error == "" and view.renderer == "auto"
    # written by the front end only
    assert view.rendered_by == "" and view.render_ms == -1.0


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
    assert "penwidth=3" not in view.dot
    view.set_highlight(1)
    assert view.highlight == 1 and "penwidth=3" in view.dot
    view.highlight = (0, 0)  # a pair in the drawn block is stored as a plain index
    assert view.highlight == 0
    view.highlight = "op:0:1"
    assert view.highlight == 1
    view.highlight = None
    assert "penwidth=3" not in view.dot
    with pytest.raises(FluidscopeError, match="highlight"):
        view.highlight = "mul"


def test_select_group_keys(view):
    # a group key names an op_namescope path or a leading part of it
    assert view.select("group:0:fc_0") == "group:0:fc_0"
    assert view.select("group:0:/fc_0/") == "group:0:/fc_0/"
    assert view.select("group:0:head") == "group:0:head"
    assert view.select("group:0:head/mean_0") == "group:0:head/mean_0"
    assert view.select("group:0:/fc_0/@GRAD") == "group:0:/fc_0/@GRAD"  # its grad ops
    assert view.select("group:0:/head/@OPT") == "group:0:/head/@OPT"
    for missing in ("group:0:fc", "group:0:", "group:3:fc_0", "group:0:mean_0",
                    "group:0:/fc_0/@FOO", "group:0:@GRAD"):
        with pytest.raises(FluidscopeError, match="no node"):
            view.select(missing)
    view.set_state({"selected": "group:0:fc_0"})  # as the front end writes it
    assert view.selected == "group:0:fc_0"


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


def test_without_graphviz_auto_lays_out_in_the_browser(monkeypatch):
    monkeypatch.setattr(graph_view_module, "has_dot", lambda: False)
    view = GraphView(Program())
    assert view.renderer == "auto" and view.resolved_renderer == "browser"
    assert view.svg == "" and view.dot.startswith("digraph") and view.error == ""
    assert view._esm == VIZ_BUNDLE.read_text(encoding="utf-8")  # carries viz.js


@pytest.mark.skipif(not has_dot(), reason="needs Graphviz's dot program")
def test_with_graphviz_python_lays_out_and_sends_the_small_module():
    view = GraphView(Program())
    assert view.resolved_renderer == "python" and 'id="op:0:1"' in view.svg
    assert view._esm == (STATIC / "graph_view.js").read_text(encoding="utf-8")
    assert len(view._esm) < 50_000  # no viz.js in it


def test_browser_renderer_sends_dot_not_svg():
    view = GraphView(Program(), renderer="browser")
    assert view.resolved_renderer == "browser" and view.renderer == "browser"
    assert view.svg == "" and view.error == ""
    assert 'id="op:0:0"' in view.dot and "label=mul" in view.dot
    assert view._esm == VIZ_BUNDLE.read_text(encoding="utf-8")
    view.set_mode("forward")  # re-renders stay in the browser
    assert view.svg == "" and "mul_grad" not in view.dot


@pytest.mark.skipif(not has_dot(), reason="needs Graphviz's dot program")
def test_switching_renderer_re_renders_and_sends_viz_once():
    view = GraphView(Program(), renderer="python")
    small = view._esm
    assert view.svg and view.resolved_renderer == "python"
    view.set_renderer("browser")
    assert view.svg == "" and view.resolved_renderer == "browser"
    assert view._esm != small and "fluidscope.viz-js.wasm" in view._esm
    view.renderer = "python"  # the viz build draws Python's SVG too: it stays
    assert view.svg.startswith("<svg") and view.resolved_renderer == "python"
    assert "fluidscope.viz-js.wasm" in view._esm
    view.renderer = "auto"
    assert view.resolved_renderer == "python"


def test_python_renderer_without_graphviz_says_so(monkeypatch):
    monkeypatch.setattr(graph_view_module, "has_dot", lambda: False)
    view = GraphView(Program(), renderer="python")
    assert view.svg == "" and view.resolved_renderer == "python" and view.dot
    assert "renderer='auto' or 'browser'" in view.error


def test_bad_renderer_is_refused(view):
    before = (view.renderer, view.dot)
    with pytest.raises(FluidscopeError, match="renderer must be one of"):
        view.set_renderer("gpu")
    assert (view.renderer, view.dot) == before
    with pytest.raises(FluidscopeError, match="renderer must be one of"):
        GraphView(Program(), renderer="svg")


def test_front_end_reports_are_plain_traits(view):
    view.set_state({"rendered_by": "browser", "render_ms": 12.5, "error": ""})
    assert (view.rendered_by, view.render_ms, view.error) == ("browser", 12.5, "")
    view.set_state({"rendered_by": "", "error": "in-browser Graphviz (viz.js) failed"})
    assert view.rendered_by == "" and "viz.js" in view.error


def test_graphviz_failure_is_reported_not_raised(monkeypatch):
    def broken(dot):
        raise FluidscopeError("Graphviz could not lay out the graph: boom")
    monkeypatch.setattr(graph_view_module, "has_dot", lambda: True)
    monkeypatch.setattr(graph_view_module, "dot_to_svg", broken)
    view = GraphView(Program())
    assert view.svg == "" and "boom" in view.error and view.dot


def test_options_pass_through():
    program = Program()
    view = GraphView(program, rankdir="LR", show_shapes=False, height=300)
    assert "rankdir=LR" in view.dot and 'label="x\\n' not in view.dot
    assert view.options == {"rankdir": "LR", "show_shapes": False} and view.height == 300
    # the view holds the program itself (not a copy): an edit shows after refresh(), drawn
    # with the same options
    assert view.program is program
    block = program.desc.blocks[0]
    declare(block, "act", [-1, 3])
    add_op(block, "relu", {"X": ["fc_0.tmp_0"]}, {"Out": ["act"]})
    assert "label=relu" not in view.dot
    view.refresh()
    assert "label=relu" in view.dot and "rankdir=LR" in view.dot and 'label="x\\n' not in view.dot
    with pytest.raises(FluidscopeError, match="unknown option.*'colour'"):
        GraphView(Program(), colour="red")


def test_set_options_re_renders_and_rolls_back_on_error(view):
    view.set_options(rankdir="LR")
    assert "rankdir=LR" in view.dot and view.options["rankdir"] == "LR"
    before = view.dot
    with pytest.raises(FluidscopeError, match="rankdir"):
        view.set_options(rankdir="sideways")
    assert view.dot == before and view.options["rankdir"] == "LR"
    with pytest.raises(FluidscopeError, match="unknown option"):
        view.set_options(colour="red")
    view.set_options(rankdir=None)  # back to program_to_dot's default
    assert "rankdir" not in view.options and "rankdir=TB" in view.dot


def test_set_options_keeps_the_highlighted_op_across_blocks(view):
    view.set_highlight(1)
    view.set_options(block=0, legend=False)
    assert view.highlight == 1 and "penwidth=3" in view.dot


def test_new_render_options_reach_program_to_dot(monkeypatch):
    """Options program_to_dot gains later pass through GraphView with no change here;
    collapse/expand are GraphView's own (its layer traits) and always given."""
    seen = {}

    def extended(program, *, block=0, mode="all", highlight=None, collapse=None, expand=None,
                 rankdir="TB", fold_loops=False):
        seen.update(block=block, collapse=collapse, expand=expand, rankdir=rankdir,
                    fold_loops=fold_loops)
        return Rendering(f"digraph {{ rankdir={rankdir} }}", {}, frozenset(), None, "",
                         frozenset())

    monkeypatch.setattr(graph_view_module, "render_program", extended)
    view = GraphView(Program(), fold_loops=True, collapse=["fc_0"], renderer="browser")
    assert seen["fold_loops"] is True and view.options == {"fold_loops": True}
    assert seen["collapse"] == ["/fc_0/"] and seen["expand"] is None
    view.set_options(fold_loops=False, rankdir="LR")
    assert seen == {"block": 0, "collapse": ["/fc_0/"], "expand": None, "rankdir": "LR",
                    "fold_loops": False} and "LR" in view.dot
    with pytest.raises(FluidscopeError, match="unknown option.*show_shapes"):
        view.set_options(show_shapes=False)  # this program_to_dot has no such option
    with pytest.raises(FluidscopeError, match=r"collapse\(namescope\)"):
        view.set_options(collapse=True)  # a trait of the view, not a pass-through option


def test_state_is_json_serialisable(view):
    view.set_highlight((0, 1))
    view.select("x")
    state = view.get_state()
    for key in ("dot", "svg", "mode", "highlight", "selected", "error", "_esm", "_css",
                "renderer", "resolved_renderer", "rendered_by", "render_ms", "mode_labels",
                "collapse_all", "collapsed", "expanded", "message"):
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
    assert "as default" in source and "save_changes" in source and "rendered_by" in source
    assert not re.search(r"^\s*import\b", source, re.M) and "http" not in source  # offline
    assert "fs-selected" in source and "fs-selected" in css.read_text(encoding="utf-8")
    # the toolbar and double-clicks speak the Python API's names
    for name in ("mode_labels", "collapse_all", '"toggle_group"', '"collapse"', '"expand"',
                 "dblclick", "fs-current", "fs-graph-mode", "fs-graph-layers"):
        assert name in source, name
    assert VIZ_BUNDLE.is_file() and VIZ_BUNDLE == graph_view_module.VIZ_MODULE
