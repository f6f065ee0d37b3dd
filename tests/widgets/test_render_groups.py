"""program_to_dot(collapse=..., expand=...): a layer (op_namescope) as one box."""
import re
import xml.etree.ElementTree as ET

import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import dot_to_svg, program_to_dot
from fluidscope.widgets.render import group_key, parse_group_key

from dot_text import needs_dot, SVG_NS, edges, node


def group_node(key):
    """DOT node name of a group key (render_keys.node_name)."""
    b, rest = key[len("group:"):].split(":", 1)
    return f"group_{b}_" + re.sub(r"[^A-Za-z0-9_.]", lambda m: f"-{ord(m.group()):x}-", rest)


def mlp():
    """encoder (name_scope) = fc_0 + fc_1 with relu; fc_2; softmax cross entropy; mean;
    backward; SGD (six parameters)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4], dtype="float32")
        label = fd.data("label", [None, 1], dtype="int64")
        with fd.name_scope("encoder"):
            h = fd.fc(fd.fc(x, 8, act="relu"), 8, act="relu")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(h, 3), label))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main


def types(main):
    return [op.type for op in main.desc.blocks[0].ops]


def test_collapse_true_folds_each_top_level_layer_into_one_box():
    main = mlp()
    dot = program_to_dot(main, collapse=True)
    encoder = node(dot, group_node("group:0:/encoder/"))
    assert encoder["label"] == "encoder\\nmul x2 + elementwise_add x2 + relu x2"
    assert encoder["id"] == "group:0:/encoder/" and encoder["shape"] == "box3d"
    assert node(dot, group_node("group:0:/fc_2/"))["label"] == "fc_2\\nmul + elementwise_add"
    grad = node(dot, group_node("group:0:/encoder/@GRAD"))
    assert grad["label"].startswith("encoder grad\\nrelu_grad x2 + elementwise_add_grad x2")
    # ops folded into boxes are not drawn; a layer of one op (mean_0) stays that op
    assert 'id="op:0:0"' not in dot and 'id="op:0:5"' not in dot
    assert node(dot, f"op_0_{types(main).index('mean')}")["id"].startswith("op:0:")
    assert "group:0:/mean_0/" not in dot
    # sgd ops record no layer: still drawn one by one
    assert dot.count("label=sgd ") == 6


def test_internal_vars_are_hidden_and_outside_edges_kept():
    dot = program_to_dot(mlp(), collapse=True)
    encoder, fc_2 = group_node("group:0:/encoder/"), group_node("group:0:/fc_2/")
    for hidden in ("fc_0.tmp_0", "fc_0.tmp_1", "fc_0.tmp_2", "fc_1.tmp_0", "fc_0.tmp_2@GRAD"):
        assert f'id="var:0:{hidden}"' not in dot
    assert "hidden inside: fc_0.tmp_0, fc_0.tmp_0@GRAD" in node(dot, encoder)["tooltip"]
    e = edges(dot)
    # one edge per outside var and side, however many ops of the box use it
    assert [(t, h) for t, h, _ in e if (t, h) == ("var_0_x", encoder)] == [("var_0_x", encoder)]
    assert ("var_0_fc_0.w_0", encoder) in {(t, h) for t, h, _ in e}
    assert (encoder, "var_0_fc_1.tmp_2") in {(t, h) for t, h, _ in e}
    assert ("var_0_fc_1.tmp_2", fc_2) in {(t, h) for t, h, _ in e}
    # the parameter gradients leave the grad box (the optimizer reads them)
    grad = group_node("group:0:/encoder/@GRAD")
    back = {(t, h): a for t, h, a in e if grad in (t, h)}
    assert back[("var_0_fc_0.w_0-40-GRAD", grad)]["dir"] == "back"
    pair = next(a for (t, h), a in back.items() if (t, h) == (encoder, grad))
    assert pair["style"] == "dotted" and pair["tooltip"] == "grad of layer encoder"


def test_collapse_a_set_and_drill_down_with_expand():
    main = mlp()
    only_fc_2 = program_to_dot(main, collapse={"fc_2"})
    assert re.findall(r'id="(group:[^"]+)"', only_fc_2) == ["group:0:/fc_2/",
                                                            "group:0:/fc_2/@GRAD"]
    assert 'id="op:0:0"' in only_fc_2
    nested = program_to_dot(main, collapse={"/encoder/fc_1/"})
    assert set(re.findall(r'id="(group:[^"]+)"', nested)) == {
        "group:0:/encoder/fc_1/", "group:0:/encoder/fc_1/@GRAD"}
    drill = program_to_dot(main, collapse=True, expand={"encoder"})
    assert {"group:0:/encoder/fc_0/", "group:0:/encoder/fc_1/", "group:0:/fc_2/"} <= set(
        re.findall(r'id="(group:[^"]+)"', drill))
    assert "group:0:/encoder/\"" not in drill
    assert node(drill, group_node("group:0:/encoder/fc_0/"))["label"].startswith(
        "encoder/fc_0\\n")
    # expand alone: everything else collapsed
    assert program_to_dot(main, expand={"encoder"}) == drill
    assert program_to_dot(main, collapse=set()) == program_to_dot(main)
    assert program_to_dot(main, collapse=False, expand={"encoder"}) == program_to_dot(main)


def test_forward_mode_has_no_grad_boxes():
    dot = program_to_dot(mlp(), mode="forward", collapse=True)
    assert "group:0:/encoder/" in dot and "@GRAD" not in dot


def test_highlighted_op_inside_a_box_lights_the_box():
    main = mlp()
    dot = program_to_dot(main, collapse=True, highlight=1)  # elementwise_add of fc_0
    encoder = node(dot, group_node("group:0:/encoder/"))
    assert encoder["class"] == "fs-current" and encoder["penwidth"] == "3"
    assert dot.count("fs-current") == 1
    grad_op = types(main).index("relu_grad")
    dot = program_to_dot(main, collapse=True, highlight=grad_op)
    assert node(dot, group_node("group:0:/fc_2/@GRAD")).get("class") is None
    assert node(dot, group_node("group:0:/encoder/@GRAD"))["class"] == "fs-current"


def test_group_keys_round_trip_and_bad_scopes_are_refused():
    assert group_key(0, "/fc_0/") == "group:0:/fc_0/"
    assert group_key(1, "/a/b/", "backward") == "group:1:/a/b/@GRAD"
    assert parse_group_key("group:1:/a/b/@GRAD") == (1, "/a/b/", "backward")
    assert parse_group_key("group:0:/fc_0/") == (0, "/fc_0/", "forward")
    with pytest.raises(FluidscopeError, match="group key"):
        parse_group_key("op:0:1")
    main = mlp()
    with pytest.raises(FluidscopeError, match="root namescope"):
        program_to_dot(main, collapse={"/"})
    with pytest.raises(FluidscopeError, match="collapse"):
        program_to_dot(main, collapse=3)
    with pytest.raises(FluidscopeError, match="expand"):
        program_to_dot(main, expand=[1])


@needs_dot
def test_group_ids_survive_graphviz():
    svg = dot_to_svg(program_to_dot(mlp(), collapse=True, highlight=0))
    root = ET.fromstring(svg)
    ids = {g.get("id"): g.get("class") for g in root.iter(SVG_NS + "g")}
    assert {"group:0:/encoder/", "group:0:/encoder/@GRAD", "group:0:/fc_2/"} <= set(ids)
    assert "fs-current" in ids["group:0:/encoder/"]
    assert not any(k.startswith("op:0:0") for k in ids)
