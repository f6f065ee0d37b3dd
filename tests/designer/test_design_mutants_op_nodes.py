"""A program with no layer record read as op nodes (designer/design/op_nodes.py): a
variable declared after the ops that read it (Paddle sorts vars by name) is one variable
node however many ops read it, and an op reading a name nothing declares or writes is
refused naming the op and the name."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError
from fluidscope.engine.ir.descs import add_op, add_var, new_program


def _program(declare_input=True):
    desc, block = new_program()
    add_var(block, "a_out", [-1, 2])
    add_var(block, "b_out", [-1, 2])
    if declare_input:
        add_var(block, "zz_in", [-1, 2])  # declared last, read by both ops
    add_op(block, "scale", {"X": ["zz_in"]}, {"Out": ["a_out"]}, {"scale": 2.0})
    add_op(block, "scale", {"X": ["zz_in"]}, {"Out": ["b_out"]}, {"scale": 3.0})
    return fd.Program.from_desc(desc)


def test_a_variable_declared_after_its_readers_is_one_node():
    d = fd.Design.from_program(_program())
    variables = [n.id for n in d.nodes.values() if n.layer == "variable"]
    assert variables == ["zz_in"]
    ops = [n for n in d.nodes.values() if n.layer == "op"]
    assert [n.inputs["X"] for n in ops] == [[fd.design.Ref("zz_in")]] * 2
    assert list(d.nodes)[0] == "zz_in"  # brought in before the first op that reads it


def test_an_op_reading_what_nothing_declares_or_writes_is_named():
    with pytest.raises(DesignError, match="op scale reads 'zz_in', which nothing declares or "
                                          "writes before it"):
        fd.Design.from_program(_program(declare_input=False))
