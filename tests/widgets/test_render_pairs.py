"""Grad ops paired with their forward ops (render_pairs), and how the pairs and the
backward are drawn: dotted non-constraining pair edges, gradient edges mirrored."""
import re

import pytest

import fluidscope.designer as fd
from fluidscope.engine.ir import descs
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType, attr_to_proto
from fluidscope.widgets import program_to_dot
from fluidscope.widgets.render import pair_grad_ops
from fluidscope.widgets.render.pairs import forward_type

from dot_text import edges


def shared_weight_program():
    """x -> fc a and fc b sharing weight w and reading the same x (so x@GRAD and w@GRAD
    fan in: renamed writes and a sum) -> a + b -> mean; backward."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4], dtype="float32")
        x.stop_gradient = False
        a = fd.fc(x, 3, act="tanh", name="a", param_attr=fd.ParamAttr("w"), bias_attr=False)
        b = fd.fc(x, 3, act="sigmoid", name="b", param_attr=fd.ParamAttr("w"), bias_attr=False)
        fd.append_backward(fd.mean(fd.elementwise_add(a, b)))
    return main


def ops(main, block=0):
    return [(op.type, {n for v in op.outputs for n in v.arguments}) for op in
            main.desc.blocks[block].ops]


def test_every_grad_op_pairs_with_the_op_it_differentiates():
    main = shared_weight_program()
    listed = ops(main)
    pairs = pair_grad_ops(main, 0)
    for g, (fb, f) in pairs.items():
        assert fb == 0 and listed[g][0] == listed[f][0] + "_grad", (listed[g], listed[f])
    # each mul_grad pairs with the mul whose output gradient it reads, despite the
    # shared weight and input (their X@GRAD / Y@GRAD writes are renamed for the sum)
    for g, (_, f) in pairs.items():
        if listed[g][0] == "mul_grad":
            read = {n for v in main.desc.blocks[0].ops[g].inputs for n in v.arguments}
            assert {o + "@GRAD" for o in listed[f][1]} <= read
    forward = [i for i, (t, _) in enumerate(listed) if t in ("mul", "tanh", "sigmoid",
                                                              "elementwise_add", "mean")]
    assert sorted(f for _, f in pairs.values()) == forward  # each exactly once
    # bookkeeping of the backward is the gradient of no single op
    unpaired = {listed[i][0] for i in range(len(listed)) if i not in pairs and i not in forward}
    assert unpaired == {"fill_constant", "sum"}


def _relu_twice():
    """Two identical relu ops (a -> b) and their grad ops in backward order: a tie only
    the reverse order can break."""
    desc = pb.ProgramDesc()
    block = desc.blocks.add(idx=0, parent_idx=-1)
    for name in ("a", "b", "b@GRAD", "a@GRAD@RENAME@block0@0", "a@GRAD@RENAME@block0@1"):
        descs.add_var(block, name, [2])
    for _ in range(2):
        descs.add_op(block, "relu", {"X": ["a"]}, {"Out": ["b"]})
    for k in range(2):
        descs.add_op(block, "relu_grad", {"Out": ["b"], "Out@GRAD": ["b@GRAD"]},
                     {"X@GRAD": [f"a@GRAD@RENAME@block0@{k}"]}, op_role=1)
    return desc


def test_ties_follow_the_reverse_order_of_the_backward():
    assert pair_grad_ops(_relu_twice(), 0) == {2: (0, 1), 3: (0, 0)}


def test_types_the_registry_does_not_know_pair_by_name():
    desc = pb.ProgramDesc()
    block = desc.blocks.add(idx=0, parent_idx=-1)
    for type_, inputs, outputs, role in (
            ("my_op", {"X": ["x"]}, {"Out": ["y"]}, 0),
            ("my_op_grad", {"X": ["x"], "Out@GRAD": ["y@GRAD"]}, {"X@GRAD": ["x@GRAD"]}, 1),
            ("other_grad", {"Out@GRAD": ["z@GRAD"]}, {"X@GRAD": ["q@GRAD"]}, 1)):
        op = block.ops.add(type=type_)
        for slot, names in inputs.items():
            op.inputs.add(parameter=slot, arguments=names)
        for slot, names in outputs.items():
            op.outputs.add(parameter=slot, arguments=names)
        attr_to_proto("op_role", AttrType.INT, role, op.attrs.add())
    assert pair_grad_ops(desc, 0) == {1: (0, 0)}
    assert forward_type("my_op_grad") == "my_op"
    assert forward_type("recurrent_grad") == "recurrent"
    assert forward_type("sum") is None


def test_pair_edges_are_dotted_and_do_not_constrain_the_layout():
    main = shared_weight_program()
    listed = ops(main)
    dot = program_to_dot(main, mode="backward")
    pair_edges = {(t, h): a for t, h, a in edges(dot) if a.get("style") == "dotted"}
    assert len(pair_edges) == len(pair_grad_ops(main, 0))
    g = next(i for i, (t, _) in enumerate(listed) if t == "tanh_grad")
    f = next(i for i, (t, _) in enumerate(listed) if t == "tanh")
    attrs = pair_edges[(f"op_0_{f}", f"op_0_{g}")]
    assert attrs["constraint"] == "false" and attrs["tooltip"] == f"grad of #{f} tanh"
    node = re.search(rf"^\s*op_0_{g} \[(.*)\]$", dot, re.M).group(1)
    assert f"grad of #{f} tanh" in node  # the grad op's tooltip names its forward op
    assert not [a for *_, a in edges(program_to_dot(main, mode="forward"))
                if a.get("style") == "dotted"]
    assert not [a for *_, a in edges(program_to_dot(main, mode="backward", pair_grads=False))
                if a.get("style") == "dotted"]


def test_gradient_edges_are_mirrored_so_the_backward_lies_beside_the_forward():
    main = shared_weight_program()
    listed = ops(main)
    dot = program_to_dot(main, mode="backward")
    g = next(i for i, (t, _) in enumerate(listed) if t == "tanh_grad")
    out = next(iter(listed[next(i for i, (t, _) in enumerate(listed) if t == "tanh")][1]))
    by_pair = {(t, h): a for t, h, a in edges(dot)}
    # reads Out@GRAD: drawn var -> op, given to Graphviz op -> var with dir=back
    read = by_pair[(f"op_0_{g}", f"var_0_{out}-40-GRAD")]
    assert read["dir"] == "back" and read["taillabel"] == "Out@GRAD"
    # reads the forward Out: an ordinary edge
    assert "dir" not in by_pair[(f"var_0_{out}", f"op_0_{g}")]
    # writes X@GRAD: drawn op -> var, given as var -> op with dir=back
    written = [(t, a) for (t, h), a in by_pair.items() if h == f"op_0_{g}" and "@GRAD" in
               t.replace("-40-", "@")]
    assert written and all(a["dir"] == "back" for _, a in written)
    forward_edges = [a for t, h, a in edges(program_to_dot(main, mode="forward"))]
    assert forward_edges and not any("dir" in a for a in forward_edges)


@pytest.mark.parametrize("mode", ["backward", "all"])
def test_every_pair_edge_joins_two_drawn_nodes(mode):
    main = shared_weight_program()
    dot = program_to_dot(main, mode=mode)
    declared = set(re.findall(r"^\s*\"?([\w.-]+)\"? \[", dot, re.M))
    for t, h, a in edges(dot):
        if a.get("style") == "dotted":
            assert t in declared and h in declared
