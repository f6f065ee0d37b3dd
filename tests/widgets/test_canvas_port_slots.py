"""The handles the canvas gives each kind of node (widgets/canvas/ports.py ``input_slots``,
``output_count``): an op node's slots from its registry op, a step input's and a memory's
own, an unknown op's none, a layer's required outputs (issue #17: mutants survived)."""
import dataclasses

import fluidscope.designer as fd
from fluidscope.designer import layer_specs
from fluidscope.widgets.canvas import ports

from test_canvas_view import sequence_classifier


def op_design():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float32")
        a, b = fd.split(x, 2, dim=1)
        fd.elementwise_add(a, b)
    plain = fd.Program.from_desc(type(main.desc).FromString(main.desc.SerializeToString()))
    return fd.Design.from_program(plain)


def slots(node):
    return [(s.name, s.kind, s.optional) for s in ports.input_slots(node)]


def test_an_op_nodes_handles_come_from_its_registry_op():
    d = op_design()
    assert slots(d.node("elementwise_add_0")) == [("X", "list", False), ("Y", "list", False)]
    assert slots(d.node("split_0")) == [("X", "list", False), ("AxisTensor", "list", True),
                                        ("SectionsTensorList", "list", True)]
    assert ports.output_count(d.node("split_0"), None) == 2  # one handle per output var
    assert ports.output_count(d.node("elementwise_add_0"), None) == 1
    # an op the registry lacks (a file from a newer Paddle, read as it is) has no handles
    node = d.node("elementwise_add_0")
    unknown = dataclasses.replace(node, attrs={**node.attrs, "type": "no_such_op"})
    assert slots(unknown) == []


def test_step_inputs_memories_and_layers_have_their_own_handles():
    d = sequence_classifier()
    assert slots(d.node("word")) == [("outer", "tensor", False)]
    assert slots(d.node("state")) == [("boot_layer", "tensor", True), ("link", "tensor", False)]
    assert ports.output_count(d.node("word"), None) == 1
    assert ports.output_count(d.node("rnn"), None) == 1
    # softmax_with_cross_entropy declares ('loss', 'softmax?'): the optional one has no handle
    assert layer_specs.get("softmax_with_cross_entropy").outputs == ("loss", "softmax?")
    assert ports.output_count(d.node("cost"), None) == 1
    assert ports.output_count(d.node("cost"), ["a", "b"]) == 2  # what a build made wins
