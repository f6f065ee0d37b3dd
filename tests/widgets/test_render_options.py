"""program_to_dot's options: shapes and LoD on edges (declared and live), the three
modes, the highlight forms, hub vars, and the settings of a large drawing."""
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets import dot_to_svg, program_to_dot
from fluidscope.widgets.render import MODE_LABELS, MODES, normalize_highlight, render_program

from dot_text import needs_dot, SVG_NS, edges, edge, node


def sequence_program():
    """words (sequences of 128-wide rows) -> sequence_pool -> fc -> mean; backward; SGD
    over six parameters (three fc layers)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        words = fd.data("words", [None, 128], dtype="float32", lod_level=1)
        pooled = fd.sequence_pool(words, "sum")
        h = fd.fc(fd.fc(fd.fc(pooled, 16, act="relu"), 16, act="relu"), 1)
        fd.optimizer.SGD(learning_rate=0.1).minimize(fd.mean(h))
    return main, pooled.name


def test_edges_carry_declared_shapes_and_lod():
    main, pooled = sequence_program()
    dot = program_to_dot(main, mode="forward")
    pool = edge(dot, "var_0_words", "op_0_0")
    assert pool["label"] == "[?, 128] lod 1"
    assert edge(dot, "op_0_0", f"var_0_{pooled}")["label"] == "[?, 128]"
    assert edge(dot, "var_0_fc_0.w_0", "op_0_1")["label"] == "[128, 16]"
    assert "fontcolor" not in pool  # declared shapes use the edge's grey
    bare = program_to_dot(main, mode="forward", edge_labels=False)
    assert not [a for *_, a in edges(bare) if "label" in a]
    assert 'label="words\\n[?, 128] float32 lod=1"' in bare  # the var's own label stays


def test_live_shapes_replace_the_declared_ones():
    main, pooled = sequence_program()
    lod_tensor = fd.LoDTensor(np.zeros((7, 128), "float32"), [[0, 3, 7]])
    for value in (([7, 128], [[0, 3, 7]]), ((7, 128), 1), lod_tensor):
        dot = program_to_dot(main, mode="forward", shapes={"words": value})
        live = edge(dot, "var_0_words", "op_0_0")
        assert live["label"] == "[7, 128] lod 1" and live["fontcolor"] == "#1a5fb4"
    tip = node(dot, "var_0_words")["tooltip"]
    assert tip.endswith("runtime [7, 128], LoD [[0, 3, 7]]")
    dot = program_to_dot(main, mode="forward", shapes={
        pooled: np.zeros((2, 128)), f"var:0:{pooled}": [3, 128], "fc_0.w_0": (128, 16)})
    assert edge(dot, "op_0_0", f"var_0_{pooled}")["label"] == "[3, 128]"  # the key wins
    assert edge(dot, "var_0_fc_0.w_0", "op_0_1")["label"] == "[128, 16]"
    for bad, message in ((["words"], "map variable names"), ({"words": "big"}, "sequence"),
                         ({"words": [7.5, 2]}, "ints"), ({"words": ([7], "x")}, "LoD"),
                         ({3: [1]}, "names")):
        with pytest.raises(FluidscopeError, match=message):
            program_to_dot(main, shapes=bad)


def test_the_three_modes_and_their_names():
    assert set(MODE_LABELS) == set(MODES)
    assert MODE_LABELS == {"forward": "forward only", "backward": "with gradients",
                           "all": "with optimizer"}
    main, _ = sequence_program()
    types = [op.type for op in main.desc.blocks[0].ops]
    forward, backward, everything = (program_to_dot(main, mode=m) for m in MODES)
    drawn = [set(re.findall(r"^\s*op_0_(\d+) \[label=(\w+)", d, re.M)) for d in
             (forward, backward, everything)]
    kinds = [{t for _, t in d} for d in drawn]
    assert kinds[0] == {"sequence_pool", "mul", "elementwise_add", "relu", "mean"}
    # (no sequence_pool_grad: the data `words` needs no gradient)
    assert kinds[1] == kinds[0] | {"fill_constant", "mean_grad", "mul_grad",
                                   "elementwise_add_grad", "relu_grad"}
    assert kinds[2] == kinds[1] | {"sgd"}
    assert len(drawn[2]) == len(types)
    assert "@GRAD" not in forward and "learning_rate" not in forward
    assert "learning_rate" not in backward


def test_a_var_read_by_many_ops_is_drawn_beside_each_of_them():
    main, _ = sequence_program()
    dot = program_to_dot(main)
    lr_nodes = re.findall(r'^\s*"?(var_0_learning_rate_0(?:@\d+)?)"? \[', dot, re.M)
    assert len(lr_nodes) == 6 and len(set(lr_nodes)) == 6
    readers = [(t, h) for t, h, _ in edges(dot) if t.startswith("var_0_learning_rate_0")]
    assert sorted(t for t, _ in readers) == sorted(lr_nodes)  # one copy per sgd op
    for name in lr_nodes:
        assert node(dot, name)["id"] == "var:0:learning_rate_0"
    assert "read by 6 ops" in node(dot, "var_0_learning_rate_0@3")["tooltip"]
    # a parameter (read by its mul, mul_grad and sgd, written by sgd) stays one node
    assert len(re.findall(r'^\s*"?var_0_fc_0.w_0"? \[', dot, re.M)) == 1


def test_highlight_forms():
    assert normalize_highlight(None) is None and normalize_highlight([]) is None
    assert normalize_highlight(3) == (0, 3) and normalize_highlight(3, block=2) == (2, 3)
    assert normalize_highlight((1, 4)) == (1, 4) == normalize_highlight("op:1:4")
    assert normalize_highlight([(0, 5)]) == (0, 5)
    assert normalize_highlight([(0, 5), [1, 2]]) == ((0, 5), (1, 2))
    assert normalize_highlight([[0, 5], "op:1:2"]) == ((0, 5), (1, 2))
    assert normalize_highlight((np.int64(1), np.int64(4))) == (1, 4)
    for bad in ("mul", -1, (0, -1), [0, 5, 2], [(0, 5), 3], [(0, 5), (1,)], True, 2.0):
        with pytest.raises(FluidscopeError, match="highlight"):
            normalize_highlight(bad)


def test_highlight_of_an_op_the_mode_hides_marks_the_op_standing_in_for_it():
    main, _ = sequence_program()
    types = [op.type for op in main.desc.blocks[0].ops]
    grad, mean = types.index("mean_grad"), types.index("mean")
    assert "fs-stand-in" not in program_to_dot(main, highlight=grad)
    drawn = render_program(main, highlight=grad)
    assert drawn.current == f"op:0:{grad}" and drawn.current_note == ""
    # forward only: the grad op is not drawn; its forward op (mean) is marked instead
    forward = render_program(main, mode="forward", highlight=grad)
    assert forward.current == f"op:0:{mean}"
    assert forward.current_note == f"now at #{grad} mean_grad, the gradient of this op"
    assert forward.dot.count("fs-current") == 1 and "fs-stand-in" in forward.dot
    # an optimizer op without the optimizer drawn: the first op reading its parameter
    sgd = types.index("sgd")
    param = main.desc.blocks[0].ops[sgd].inputs
    param = next(v.arguments[0] for v in param if v.parameter == "Param")
    shown = render_program(main, mode="backward", highlight=sgd)
    op = main.desc.blocks[0].ops[int(shown.current.split(":")[2])]
    assert param in [n for v in op.inputs for n in v.arguments]
    assert "updates a parameter this op reads" in shown.current_note
    assert "fs-current" not in program_to_dot(main, highlight=(0, 999))


def scale_chain(n):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        out = fd.data("x", [None, 8], dtype="float32")
        for _ in range(n):
            out = fd.scale(out, scale=0.5)
    return main


def test_a_large_drawing_gets_graphviz_s_fast_settings():
    small, large = program_to_dot(scale_chain(50)), program_to_dot(scale_chain(600))
    shape_label = re.compile(r'[\[ ]label="\[\?, 8\]"')
    assert "newrank" not in small and shape_label.search(small)
    assert "newrank=true" in large and "nslimit=" in large
    assert 'xlabel="[?, 8]"' in large and not shape_label.search(large)


def test_option_types_are_checked():
    main, _ = sequence_program()
    for option in ("edge_labels", "pair_grads", "show_shapes"):
        with pytest.raises(FluidscopeError, match=option):
            program_to_dot(main, **{option: "yes"})
    with pytest.raises(FluidscopeError, match="block"):
        program_to_dot(main, block=True)


@needs_dot
def test_edge_labels_and_hub_copies_survive_graphviz():
    main, _ = sequence_program()
    svg = dot_to_svg(program_to_dot(main, shapes={"words": ([7, 128], [[0, 3, 7]])}))
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(SVG_NS + "text")]
    assert "[7, 128] lod 1" in texts and "[128, 16]" in texts
    ids = [g.get("id") for g in root.iter(SVG_NS + "g") if g.get("class") == "node"]
    assert ids.count("var:0:learning_rate_0") == 6
