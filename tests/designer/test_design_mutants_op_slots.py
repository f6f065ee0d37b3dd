"""Op nodes (a loaded model's ops kept as they are) take their inputs by the op's own slots
(designer/design/validate.py): a registered op's slots, or for a Paddle op fluidscope does
not implement, Paddle's; every slot takes a list; a slot the op does not have, or a value
that is no list, is refused naming the op and the slot."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError
from test_design_build import OUT_DESC, X_DESC

UNIMPLEMENTED = "accuracy_check"  # a Paddle op (inputs x, y) fluidscope does not run


def _design():
    d = fd.Design()
    d.add("variable", name="x", desc=X_DESC)
    return d


def _op(d, op_type, inputs):
    return d.add("op", inputs=inputs, type=op_type, outputs={"Out": [OUT_DESC]}, attrs={})


def test_a_paddle_op_fluidscope_does_not_run_takes_paddles_slots_as_lists():
    d = _design()
    node = _op(d, UNIMPLEMENTED, {"x": ["x"]})
    assert d.node(node).inputs["x"] == [fd.design.Ref("x")]
    with pytest.raises(DesignError, match="op slot 'y' takes a list of inputs"):
        d.connect("x", node, "y")  # one wire, not a list
    with pytest.raises(DesignError, match=rf"op {UNIMPLEMENTED} has no input slot 'X'"):
        _op(d, UNIMPLEMENTED, {"X": ["x"]})


def test_a_registered_op_type_checks_its_slots_too():
    d = _design()
    with pytest.raises(DesignError, match="op scale has no input slot 'x'"):
        _op(d, "scale", {"x": ["x"]})
    with pytest.raises(DesignError, match="op slot 'X' takes a list of inputs"):
        _op(d, "scale", {"X": "x"})
