"""program_to_dot: outputs kept for backward only are hidden unless asked, var <-> op
edges are styled by what the var is, and the legend explains every shape and edge
style drawn (issue #18)."""
import fluidscope.designer as fd
from fluidscope.widgets.render import program_to_dot, render_program

from dot_text import edges


def reshape_program():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4, 2], dtype="float32")
        flat = fd.reshape(x, [-1, 8])
        loss = fd.mean(fd.fc(flat, 3))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main


def xshape_name(main):
    op = next(op for op in main.desc.blocks[0].ops if op.type == "reshape2")
    return next(v.arguments[0] for v in op.outputs if v.parameter == "XShape")


def test_xshape_hidden_unless_asked():
    main = reshape_program()
    xshape = xshape_name(main)
    for mode in ("forward", "backward", "all"):
        drawn = render_program(main, mode=mode)
        assert f"var_0_{xshape}" not in drawn.dot, mode  # named in tooltips only
        assert xshape in drawn.internal
        assert f"var:0:{xshape}" not in drawn.vars
    shown = render_program(main, mode="backward", show_internal=True)
    assert f"var:0:{xshape}" in shown.vars and shown.internal == frozenset()
    assert ("op_0_0", f"var_0_{xshape}") in {(t, h) for t, h, _ in edges(shown.dot)}
    # the reshape's only other output needs no slot name
    assert all("taillabel" not in a for t, h, a in edges(render_program(main).dot)
               if t == "op_0_0")


def test_edges_styled_by_var_kind_and_the_legend_lists_them():
    main = reshape_program()
    dot = program_to_dot(main, mode="all")
    weight = next(v.name for v in main.desc.blocks[0].vars if v.is_parameter
                  and v.name.endswith("w_0"))
    param_edges = [a for t, h, a in edges(dot) if f"var_0_{weight}" in (t, h)]
    assert param_edges and all(a["color"] == "#b8860b" for a in param_edges), param_edges
    grad_edges = [a for t, h, a in edges(dot) if "-40-GRAD" in t + h]
    assert grad_edges and all(a["color"] == "#b03a2e" for a in grad_edges)
    lr = [a for t, h, a in edges(dot) if "learning_rate" in t + h]
    assert lr and all("dashed" in a["style"] and a["color"] == "#9a9a9a" for a in lr)
    legend = dot[dot.index("legend ["):]
    for words in ("forward", "backward", "optimize", "parameter (cylinder)",
                  "persistable: optimizer state", "gradient @GRAD", "a parameter read",
                  "gradient flow", "grad op &#8596; its forward op", "data flow"):
        assert words in legend, words
    # forward only: no gradient or pairing rows, no optimizer state
    forward = program_to_dot(main, mode="forward")
    legend = forward[forward.index("legend ["):]
    assert "gradient flow" not in legend and "its forward op" not in legend
    assert "backward" not in legend and "parameter (cylinder)" in legend


def test_recurrent_memory_and_boot_rows_in_the_legend():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        ids = fd.data("ids", [None, 1], "int64", lod_level=1)
        emb = fd.embedding(ids, size=[10, 4])
        gates = fd.fc(emb, 16, bias_attr=False)
        fd.mean(fd.lstmemory_group(gates, 4, name="lstm"))
    dot = program_to_dot(main, mode="forward")
    legend = dot[dot.index("legend ["):]
    assert "memory: frame t" in legend


def test_a_slot_of_several_variables_is_named_once_at_its_op():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        ids = fd.data("ids", [None, 1], "int64", lod_level=1)
        gates = fd.fc(fd.embedding(ids, size=[10, 4]), 16, bias_attr=False)
        fd.mean(fd.lstmemory_group(gates, 4, name="lstm"))
    recurrent = next(i for i, op in enumerate(main.desc.blocks[0].ops) if op.type == "recurrent")
    params = [n for v in main.desc.blocks[0].ops[recurrent].inputs
              if v.parameter == "parameters" for n in v.arguments]
    into = [a for t, h, a in edges(program_to_dot(main, mode="forward"))
            if h == f"op_0_{recurrent}" and t.startswith("var_0_")]
    assert len(params) > 1 and len(into) >= len(params)
    assert [a.get("headlabel") for a in into].count("parameters") == 1
