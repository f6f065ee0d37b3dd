"""program_to_dot / dot_to_svg: assertions on the DOT text (the SVG only when `dot` exists)."""
import re
import xml.etree.ElementTree as ET

import pytest

from fluidscope.engine import append_backward_desc, registry
from fluidscope.engine.ir import descs
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType
from fluidscope.widgets import dot_to_svg, has_dot, program_to_dot
from fluidscope.widgets.render import describe_var_type, role_kind

from dot_text import subgraph_body

needs_dot = pytest.mark.skipif(not has_dot(), reason="system Graphviz (dot) is not installed")
SVG_NS = "{http://www.w3.org/2000/svg}"


# ------------------------------------------------------------------ builders
def declare(block, name, dims, dtype=pb.VarType.FP32, param=False, kind=pb.VarType.DENSE_TENSOR):
    return descs.add_var(block, name, dims, dtype, persistable=param, is_parameter=param, kind=kind)


add_op = descs.add_op


def new_program():
    desc = pb.ProgramDesc()
    return desc, desc.blocks.add(idx=0, parent_idx=-1)


def training_program():
    """x[-1,4] -> mul(w[4,10]) -> add(b[10]) -> mean -> loss; backward; an optimizer op."""
    desc, block = new_program()
    declare(block, "x", [-1, 4])
    declare(block, "fc_0.w_0", [4, 10], param=True)
    declare(block, "fc_0.b_0", [10], param=True)
    declare(block, "fc_0.tmp_0", [-1, 10])
    declare(block, "fc_0.tmp_1", [-1, 10])
    declare(block, "loss", [])
    declare(block, "learning_rate", [1], param=False).persistable = True
    add_op(block, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["fc_0.tmp_0"]})
    add_op(block, "elementwise_add", {"X": ["fc_0.tmp_0"], "Y": ["fc_0.b_0"]},
           {"Out": ["fc_0.tmp_1"]}, axis=1)
    add_op(block, "mean", {"X": ["fc_0.tmp_1"]}, {"Out": ["loss"]})
    pairs = append_backward_desc(desc, "loss")
    assert ("fc_0.w_0", "fc_0.w_0@GRAD") in pairs
    if registry.has("sgd"):
        add_op(block, "sgd", {"Param": ["fc_0.w_0"], "Grad": ["fc_0.w_0@GRAD"],
                              "LearningRate": ["learning_rate"]},
               {"ParamOut": ["fc_0.w_0"]}, op_role=2)
    else:  # the role is what is drawn; any op marked optimize will do
        add_op(block, "scale", {"X": ["fc_0.w_0@GRAD"]}, {"Out": ["fc_0.w_0"]}, scale=-0.1,
               op_role=2)
    return desc


def node_statement(dot, node):
    """The attribute text of node statement ``node`` (quoted or not) in ``dot``."""
    m = re.search(r'^\s*"?' + re.escape(node) + r'"? \[(.*)\]$', dot, re.M)
    assert m, f"no node {node} in\n{dot}"
    return m.group(1)


def fill_of(dot, node):
    return re.search(r'fillcolor="([^"]+)"', node_statement(dot, node)).group(1)


def op_types(desc):
    return [op.type for op in desc.blocks[0].ops]


# ------------------------------------------------------------------- tests
def test_ops_are_boxes_and_vars_ellipses_with_shapes():
    desc = training_program()
    dot = program_to_dot(desc)
    assert dot.startswith("digraph")
    assert "shape=box" in dot.splitlines()[2]  # the node default: ops are boxes
    mul = node_statement(dot, "op_0_0")
    assert mul.startswith("label=mul ")
    tmp = node_statement(dot, "var_0_fc_0.tmp_0")
    assert 'label="fc_0.tmp_0\\n[?, 10] float32"' in tmp and "shape=ellipse" in tmp
    assert 'id="var:0:fc_0.tmp_0"' in tmp
    assert node_statement(dot, "var_0_loss").startswith('label="loss\\n[] float32"')
    # the op tooltip carries the registry doc line and the non-default attributes only
    add = node_statement(dot, "op_0_1")
    assert registry.get("elementwise_add").doc in add and "axis = 1" in add
    assert "op_role" not in add.split("tooltip=")[1].split("role:")[0]


def test_parameters_and_gradients_are_drawn_apart():
    dot = program_to_dot(training_program())
    w = node_statement(dot, "var_0_fc_0.w_0")
    assert "shape=cylinder" in w and "style=filled" in w
    lr = node_statement(dot, "var_0_learning_rate")
    assert "shape=cylinder" in lr and fill_of(dot, "var_0_learning_rate") != fill_of(
        dot, "var_0_fc_0.w_0")
    grad = node_statement(dot, "var_0_fc_0.w_0-40-GRAD")
    assert "style=dashed" in grad and 'id="var:0:fc_0.w_0@GRAD"' in grad
    plain = node_statement(dot, "var_0_x")
    assert "cylinder" not in plain and "dashed" not in plain


def test_show_shapes_off_keeps_names_only():
    dot = program_to_dot(training_program(), show_shapes=False)
    assert node_statement(dot, "var_0_x").startswith("label=x ")


def test_role_colours_differ_and_legend_lists_them():
    desc = training_program()
    types = op_types(desc)
    dot = program_to_dot(desc)
    forward = fill_of(dot, f"op_0_{types.index('mul')}")
    loss = fill_of(dot, f"op_0_{types.index('mean')}")
    backward = fill_of(dot, f"op_0_{types.index('mul_grad')}")
    optimize = fill_of(dot, f"op_0_{len(types) - 1}")
    assert len({forward, loss, backward, optimize}) == 4
    legend = node_statement(dot, "legend")
    for text, colour in (("forward", forward), ("backward", backward), ("optimize", optimize)):
        assert text in legend and colour in legend
    assert "legend" not in program_to_dot(desc, legend=False)


def test_role_kind_reads_paddle_role_bits():
    assert [role_kind(r) for r in (0, 1, 2, 256, 257, 4096, 16)] == [
        "forward", "backward", "optimize", "loss", "loss_grad", "forward", "optimize"]


def test_modes_filter_ops_and_their_vars():
    desc = training_program()
    types = op_types(desc)
    last = len(types) - 1
    forward = program_to_dot(desc, mode="forward")
    assert "_grad" not in forward and "@GRAD" not in forward
    assert f"op_0_{last} " not in forward and "fill_constant" not in forward
    assert "var_0_learning_rate" not in forward  # only the optimizer reads it
    backward = program_to_dot(desc, mode="backward")
    assert "label=mul_grad" in backward and "@GRAD" in backward
    assert f"op_0_{last} " not in backward
    everything = program_to_dot(desc, mode="all")
    assert f"op_0_{last} " in everything and "var_0_learning_rate" in everything
    with pytest.raises(FluidscopeError, match="mode"):
        program_to_dot(desc, mode="train")


def test_unused_vars_are_shown_but_not_unused_grads_in_forward_mode():
    desc, block = new_program()
    declare(block, "image", [-1, 3, 8, 8])
    declare(block, "image@GRAD", [-1, 3, 8, 8])
    assert 'label="image\\n[?, 3, 8, 8] float32"' in program_to_dot(desc)
    assert "image@GRAD" in program_to_dot(desc)
    assert "image@GRAD" not in program_to_dot(desc, mode="forward")


def two_block_program():
    """Block 0: x -> scale -> h; a `while` op owning block 1; block 1: h -> scale -> s."""
    desc, block0 = new_program()
    declare(block0, "x", [-1, 4])
    declare(block0, "h", [-1, 4])
    add_op(block0, "scale", {"X": ["x"]}, {"Out": ["h"]}, scale=2.0)
    loop = block0.ops.add(type="while")  # not registered: drawn all the same
    loop.inputs.add(parameter="X", arguments=["h"])
    loop.outputs.add(parameter="Out", arguments=["h"])
    registry.attr_to_proto("sub_block", AttrType.BLOCK, 1, loop.attrs.add())
    block1 = desc.blocks.add(idx=1, parent_idx=0)
    declare(block1, "s", [-1, 4])
    add_op(block1, "scale", {"X": ["h"]}, {"Out": ["s"]})
    return desc


def test_sub_block_is_a_cluster_inside_its_owner_ops_cluster():
    dot = program_to_dot(two_block_program())
    owner = subgraph_body(dot, "cluster_op_0_1")
    assert re.search(r"^\s*op_0_1 \[label=while", owner, re.M)
    inner = subgraph_body(owner, "cluster_block_1")
    assert "label=\"block 1\"" in inner
    assert re.search(r"^\s*op_1_0 \[label=scale", inner, re.M)
    assert re.search(r"^\s*var_1_s \[", inner, re.M)  # declared in block 1: drawn there
    assert "var_0_h -> op_1_0" in dot  # the sub-block reads the parent's var
    assert "not in the fluidscope registry" in node_statement(dot, "op_0_1")
    # drawn from block 1 alone, the parent's var sits outside any cluster
    only = program_to_dot(two_block_program(), block=1)
    assert "op_1_0" in only and "op_0_0" not in only and "var_0_h -> op_1_0" in only
    with pytest.raises(FluidscopeError, match="block 5"):
        program_to_dot(two_block_program(), block=5)


def test_block_without_owner_op_still_drawn():
    desc, block0 = new_program()
    declare(block0, "x", [2])
    block1 = desc.blocks.add(idx=1, parent_idx=0)
    add_op(block1, "scale", {"X": ["x"]}, {"Out": ["x"]})
    body = subgraph_body(program_to_dot(desc), "cluster_block_1")
    assert "op_1_0" in body and "no owner op" in body


def test_highlight_by_index_pair_or_key():
    desc = two_block_program()
    for highlight, node in ((0, "op_0_0"), ((0, 1), "op_0_1"), ((1, 0), "op_1_0"),
                            ("op:1:0", "op_1_0")):
        dot = program_to_dot(desc, highlight=highlight)
        assert "penwidth=3" in node_statement(dot, node)
        assert dot.count("penwidth=3") == 1
    assert "penwidth" not in program_to_dot(desc)
    with pytest.raises(FluidscopeError, match="highlight"):
        program_to_dot(desc, highlight="mul")


ODD_NAMES = ['a"b', "c\\N\\l", "x@GRAD", "p/q.r", "<h>", "sp ace:1", "node", "e\\\"q\"", "ünï"]


def odd_program():
    desc, block = new_program()
    for name in ODD_NAMES:
        declare(block, name, [-1, 2])
    for a, b in zip(ODD_NAMES, ODD_NAMES[1:]):
        add_op(block, "scale", {"X": [a]}, {"Out": [b]})
    return desc


def test_odd_names_are_escaped():
    dot = program_to_dot(odd_program())
    assert node_statement(dot, "var_0_a-22-b").startswith('label="a\\"b\\n')
    assert 'id="var:0:a\\"b"' in dot
    assert node_statement(dot, "var_0_c-5c-N-5c-l").startswith('label="c\\\\N\\\\l\\n')
    assert node_statement(dot, "var_0_p-2f-q.r")
    assert node_statement(dot, "var_0_-3c-h-3e-").startswith('label="<h>\\n')
    assert '"var_0_sp-20-ace-3a-1" -> op_0_5' in dot  # no ':' port syntax in edges
    assert node_statement(dot, "var_0_-fc-n-ef-")


@needs_dot
def test_odd_names_survive_graphviz():
    svg = dot_to_svg(program_to_dot(odd_program()))
    root = ET.fromstring(svg)
    ids = {g.get("id") for g in root.iter(SVG_NS + "g") if g.get("class") == "node"}
    assert {f"var:0:{n}" for n in ODD_NAMES} <= ids
    texts = {t.text for t in root.iter(SVG_NS + "text")}
    assert set(ODD_NAMES) <= texts


def test_feed_and_fetch_are_compact():
    desc, block = new_program()
    declare(block, "feed", [], kind=pb.VarType.FEED_MINIBATCH).persistable = True
    declare(block, "fetch", [], kind=pb.VarType.FETCH_LIST).persistable = True
    declare(block, "x", [-1, 4])
    declare(block, "y", [-1, 4])
    add_op(block, "feed", {"X": ["feed"]}, {"Out": ["x"]}, col=0)
    add_op(block, "scale", {"X": ["x"]}, {"Out": ["y"]})
    add_op(block, "fetch", {"X": ["y"]}, {"Out": ["fetch"]}, col=0)
    dot = program_to_dot(desc)
    assert "var_0_feed" not in dot and "var_0_fetch" not in dot
    assert 'label="feed 0"' in node_statement(dot, "op_0_0")
    assert "shape=invhouse" in node_statement(dot, "op_0_0")
    assert "shape=house" in node_statement(dot, "op_0_2")
    assert "op_0_0 -> var_0_x" in dot and "var_0_y -> op_0_2" in dot


def test_other_var_kinds_are_described():
    desc, block = new_program()
    declare(block, "steps", [], kind=pb.VarType.STEP_SCOPES)
    rows = declare(block, "rows", [], kind=pb.VarType.SELECTED_ROWS)
    rows.type.selected_rows.data_type = pb.VarType.FP32
    rows.type.selected_rows.dims.extend([-1, 8])
    seq = declare(block, "words", [-1, 1], dtype=pb.VarType.INT64)
    seq.type.dense_tensor.legacy_lod_level = 1
    assert describe_var_type(block.vars[0]) == "step_scopes"
    assert describe_var_type(rows) == "rows [?, 8] float32"
    assert describe_var_type(seq) == "[?, 1] int64 lod=1"


def test_accepts_a_program_object_and_rejects_others():
    class Program:
        desc = training_program()
    assert program_to_dot(Program()) == program_to_dot(Program.desc)
    with pytest.raises(FluidscopeError, match="ProgramDesc"):
        program_to_dot(42)


def scale_chain(n):
    desc, block = new_program()
    for i in range(n + 1):
        declare(block, f"x_{i}", [-1, 8])
    for i in range(n):
        add_op(block, "scale", {"X": [f"x_{i}"]}, {"Out": [f"x_{i + 1}"]}, scale=0.5)
    return desc


def test_thousand_op_chain_renders():
    dot = program_to_dot(scale_chain(1000), highlight=500, rankdir="LR")
    assert dot.count("[label=scale") == 1000 and dot.count(" -> ") == 2000
    assert "rankdir=LR" in dot


@needs_dot
def test_dot_to_svg_makes_svg():
    svg = dot_to_svg(program_to_dot(training_program()))
    assert svg.startswith("<svg")
    root = ET.fromstring(svg)
    ids = {g.get("id") for g in root.iter(SVG_NS + "g")}
    assert {"op:0:0", "var:0:fc_0.w_0", "legend"} <= ids


@needs_dot
def test_dot_to_svg_reports_bad_source():
    with pytest.raises(FluidscopeError, match="Graphviz"):
        dot_to_svg("digraph { a -> }")


def test_missing_graphviz_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot` anywhere
    assert not has_dot()
    with pytest.raises(FluidscopeError, match="not installed"):
        dot_to_svg("digraph { a -> b }")


def test_views_hide_paddles_runtime_only_attributes():
    """A real Paddle file sets use_cudnn/use_mkldnn on every conv and pool: tooltips and
    the program printout show what changes the result, not those."""
    import fluidscope.designer as fd
    from fluidscope.designer.printer import program_to_string
    from fluidscope.widgets.render.text import non_default_attrs

    attrs = {"use_cudnn": (pb.AttrType.BOOLEAN, True), "use_mkldnn": (pb.AttrType.BOOLEAN, True),
             "pooling_type": (pb.AttrType.STRING, "avg"), "ksize": (pb.AttrType.INTS, [3, 3])}
    shown = dict(non_default_attrs("pool2d", attrs))
    assert set(shown) == {"pooling_type", "ksize"}, shown

    program = fd.Program()
    with fd.program_guard(program, fd.Program()):
        x = fd.data("x", [-1, 2, 6, 6])
        out = program.global_block().create_var(name="y", shape=[-1, 2, 3, 3], dtype="float32")
        program.global_block().append_op(
            "pool2d", inputs={"X": [x.name]}, outputs={"Out": [out.name]},
            attrs={"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2], "use_cudnn": True})
    text = program_to_string(program)
    assert "ksize=[2, 2]" in text and "use_cudnn" not in text
    assert "use_cudnn=True" in program_to_string(program, with_details=True)
