"""program_to_dot on recurrent groups: the step block as a cluster beside its op, memories
dashed (state -> ex_state), boot links solid, the grad block's memory gradients dashed,
grad ops paired with their forward ops across blocks."""
import re
import xml.etree.ElementTree as ET

import fluidscope.designer as fd
from fluidscope.widgets import dot_to_svg, program_to_dot

from dot_text import needs_dot, SVG_NS, edges, edge, subgraph_body


def rnn_program(static=False):
    """x (sequences) -> recurrent group: h = tanh(fc([x_t, memory h booted by h0]));
    then fc -> square error -> mean; backward with h0 trainable; SGD."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], dtype="float32", lod_level=1)
        y = fd.data("y", [None, 1], dtype="float32")
        h0 = fd.data("h0", [None, 8], dtype="float32")
        h0.stop_gradient = False
        inputs = [x]
        if static:
            s = fd.data("s", [None, 3], dtype="float32")
            inputs.append(fd.StaticInput(s))

        def step(x_t, *rest):
            h_pre = fd.memory("h", size=8, boot_layer=h0)
            return fd.fc([x_t, h_pre] + list(rest), size=8, act="tanh", name="h")

        h = fd.recurrent_group(step, inputs)
        loss = fd.mean(fd.square_error_cost(fd.fc(h, size=1), y))
        fd.optimizer.SGD(learning_rate=0.02).minimize(loss)
    return main


def op_attr(program, block, idx, name):
    op = program.desc.blocks[block].ops[idx]
    return next(list(a.strings) for a in op.attrs if a.name == name)


def test_step_block_is_a_cluster_beside_its_recurrent_op():
    main = rnn_program()
    assert [op.type for op in main.desc.blocks[0].ops][0] == "recurrent"
    dot = program_to_dot(main)
    owner = subgraph_body(dot, "cluster_op_0_0")
    assert re.search(r"^\s*op_0_0 \[label=recurrent ", owner, re.M)
    step = subgraph_body(owner, "cluster_block_1")
    assert 'label="block 1 (step)"' in step and 'id="block:1"' in step
    assert re.search(r"^\s*op_1_0 \[label=mul ", step, re.M)
    grad_owner = subgraph_body(dot, "cluster_op_0_" + str(next(
        i for i, op in enumerate(main.desc.blocks[0].ops) if op.type == "recurrent_grad")))
    assert 'label="block 2 (grad of block 1)"' in subgraph_body(grad_owner, "cluster_block_2")


def test_memory_is_dashed_and_boot_is_solid():
    main = rnn_program()
    (state,), (ex_state,) = op_attr(main, 0, 0, "states"), op_attr(main, 0, 0, "ex_states")
    dot = program_to_dot(main)
    memory = edge(dot, f"var_1_{state}", f"var_1_{ex_state.replace('@', '-40-')}")
    assert memory["style"] == "dashed" and memory["label"] == "memory"
    assert memory["constraint"] == "false"  # frame t -> t + 1 is not a rank inside a frame
    boot = edge(dot, "var_0_h0", f"var_1_{ex_state.replace('@', '-40-')}")
    assert boot["style"] == "solid" and boot["label"] == "boot"
    assert boot["color"] == memory["color"]
    # in-link and out-link join the outer sequences to their per-step vars
    assert edge(dot, "var_0_x", "var_1_x")["tooltip"].startswith("in-link")
    out = next(n for v in main.desc.blocks[0].ops[0].outputs if v.parameter == "outputs"
               for n in v.arguments)
    assert edge(dot, f"var_1_{out}", f"var_0_{out}")["tooltip"].startswith("out-link")


def test_grad_block_has_dashed_memory_gradients_and_a_boot_gradient():
    main = rnn_program()
    (state,), (ex_state,) = op_attr(main, 0, 0, "states"), op_attr(main, 0, 0, "ex_states")
    dot = program_to_dot(main, mode="backward")
    ex_grad = "var_2_" + ex_state.replace("@", "-40-") + "-40-GRAD"
    memory_grads = [(t, h, a) for t, h, a in edges(dot) if a.get("label") == "memory grad"]
    assert len(memory_grads) == 1
    tail, head, attrs = memory_grads[0]
    # drawn mirrored (dir=back): the gradient flows from ex_state@GRAD to state@GRAD
    assert head == ex_grad and tail.endswith(f"{state}-40-GRAD") and attrs["dir"] == "back"
    assert attrs["style"] == "dashed"
    # the grad block reads the step's vars where the step block declares them (the way
    # engine.ir.lookup.visible_vars finds them), not as undeclared copies
    step_var = next(t for t, h, _ in edges(dot) if h == "op_2_1" and t.startswith("var_1_"))
    assert "not declared" not in dot and step_var.startswith("var_1_h.tmp_")
    boot_grad = edge(dot, "var_0_h0-40-GRAD", ex_grad)
    assert boot_grad["style"] == "solid" and boot_grad["label"] == "boot grad"
    assert "memory grad" not in program_to_dot(main, mode="forward")


def test_static_input_has_a_boot_link_but_no_memory_edge():
    main = rnn_program(static=True)
    states, ex_states = op_attr(main, 0, 0, "states"), op_attr(main, 0, 0, "ex_states")
    static = next(e for s, e in zip(states, ex_states) if s == e)
    dot = program_to_dot(main, mode="forward")
    link = edge(dot, "var_0_s", "var_1_" + static.replace("@", "-40-"))
    assert link["label"] == "static" and link["style"] == "solid"
    assert sum(a.get("label") == "memory" for _, _, a in edges(dot)) == 1


def test_grad_ops_of_the_step_block_pair_with_their_forward_ops():
    main = rnn_program()
    dot = program_to_dot(main, mode="backward")
    pairs = {(t, h): a for t, h, a in edges(dot) if a.get("style") == "dotted"}
    step_ops = [op.type for op in main.desc.blocks[1].ops]
    grad_ops = [op.type for op in main.desc.blocks[2].ops]
    tanh_grad = grad_ops.index("tanh_grad")
    pair = pairs[(f"op_1_{step_ops.index('tanh')}", f"op_2_{tanh_grad}")]
    assert pair["constraint"] == "false"
    assert pair["tooltip"] == f"grad of #{step_ops.index('tanh')} tanh in block 1"
    # sum's gradient is one `scale` per input: both pair with the forward sum
    scales = [i for i, t in enumerate(grad_ops) if t == "scale"]
    assert len(scales) == 2
    assert {(f"op_1_{step_ops.index('sum')}", f"op_2_{i}") for i in scales} <= set(pairs)
    recurrent_grad = [op.type for op in main.desc.blocks[0].ops].index("recurrent_grad")
    assert ("op_0_0", f"op_0_{recurrent_grad}") in pairs


def test_highlight_path_lights_the_step_op_and_its_recurrent_op():
    main = rnn_program()
    dot = program_to_dot(main, highlight=[(0, 0), (1, 2)])
    op_line = re.search(r"^\s*op_1_2 \[(.*)\]$", dot, re.M).group(1)
    assert 'class="fs-current"' in op_line and "penwidth=3" in op_line
    outer = re.search(r"^\s*op_0_0 \[(.*)\]$", dot, re.M).group(1)
    assert 'class="fs-enclosing"' in outer and "penwidth=2" in outer
    assert 'class="fs-enclosing"' in subgraph_body(dot, "cluster_op_0_0").split("\n")[1]
    assert dot.count("fs-current") == 1
    # the step position alone: the enclosing op is found from the block structure
    assert program_to_dot(main, highlight=(1, 2)) == dot
    # grad block position inside recurrent_grad
    recurrent_grad = [op.type for op in main.desc.blocks[0].ops].index("recurrent_grad")
    dot = program_to_dot(main, highlight=[(0, recurrent_grad), (2, 0)])
    assert 'class="fs-current"' in re.search(r"^\s*op_2_0 \[(.*)\]$", dot, re.M).group(1)


def test_lstmemory_group_has_two_memories_and_collapses_into_its_layer():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 12], dtype="float32", lod_level=1)
        h = fd.lstmemory_group(x, 3, name="lstm")
        fd.append_backward(fd.mean(h))
    dot = program_to_dot(main, mode="forward")
    memories = [(t, h) for t, h, a in edges(dot) if a.get("label") == "memory"]
    assert len(memories) == 2 and all(t.startswith("var_1_") for t, _ in memories)
    folded = program_to_dot(main, mode="forward", collapse=True)
    assert "cluster_block_1" not in folded and "op_1_" not in folded  # the step is in the box
    node = re.search(r'^\s*"?group_0_-2f-lstm-2f-"? \[(.*)\]$', folded, re.M).group(1)
    assert node.startswith('label="lstm\\nrecurrent"') and 'id="group:0:/lstm/"' in node
    # a position inside the folded step block lights the layer's box
    lit = program_to_dot(main, mode="forward", collapse=True, highlight=[(0, 0), (1, 3)])
    assert 'class="fs-current"' in re.search(
        r'^\s*"?group_0_-2f-lstm-2f-"? \[(.*)\]$', lit, re.M).group(1)
    # expanded, the step block is drawn open again; the one-op layers inside it (each
    # gate op has a namescope of its own under /lstm/) stay plain ops
    opened = program_to_dot(main, mode="forward", collapse=True, expand={"lstm"})
    step = subgraph_body(opened, "cluster_block_1")
    assert "group:" not in step and re.search(r"^\s*op_1_0 \[", step, re.M)
    assert sum(a.get("label") == "memory" for _, _, a in edges(opened)) == 2


@needs_dot
def test_recurrent_svg_has_the_clusters_and_ids():
    main = rnn_program()
    svg = dot_to_svg(program_to_dot(main, highlight=[(0, 0), (1, 2)]))
    root = ET.fromstring(svg)
    groups = {g.get("id"): g.get("class") for g in root.iter(SVG_NS + "g")}
    assert {"op:0:0", "op:1:2", "op:2:0", "block:1", "block:2"} <= set(groups)
    assert "fs-current" in groups["op:1:2"] and "fs-enclosing" in groups["op:0:0"]
    dashed = [p for p in root.iter(SVG_NS + "path") if p.get("stroke-dasharray")]
    assert dashed  # memories and gradients are drawn dashed
