"""A recorded program read back as a design (designer/design/from_program.py): list and
tuple arguments become lists of their values; what has no design form (a minimize with a
parameter_list, an input no recorded layer made) is refused naming the node and the value;
a recurrent group's step inputs get step_input ids."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError


def test_list_and_tuple_arguments_read_back_as_lists_of_their_values():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3, 8, 8])
        fd.conv2d(fd.conv2d(x, 4, [3, 2], stride=(2, 1)), 2, (1, 1), padding=[1, 0])
    d = fd.Design.from_program(main)
    assert d.node("conv2d_0").attrs["filter_size"] == [3, 2]
    assert d.node("conv2d_0").attrs["stride"] == [2, 1]
    assert d.node("conv2d_1").attrs["filter_size"] == [1, 1]
    assert d.node("conv2d_1").attrs["padding"] == [1, 0]


def test_a_minimize_with_a_parameter_list_has_no_design_form():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3])
        loss = fd.mean(fd.fc(x, 1, param_attr=fd.ParamAttr("w")))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss, parameter_list=["w"])
    with pytest.raises(DesignError, match="SGD.minimize: a parameter_list or no_grad_set has no "
                                          "design form yet"):
        fd.Design.from_program(main)


def test_an_input_no_recorded_layer_made_is_named():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        free = main.global_block().create_var(name="free", shape=[-1, 3], dtype="float32")
        fd.fc(free, 2)
    with pytest.raises(DesignError, match="node 'fc_0': input 'input' is 'free', which no "
                                          "recorded layer made"):
        fd.Design.from_program(main)


def test_a_recurrent_groups_step_inputs_get_step_input_ids():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], lod_level=1)
        fd.recurrent_group(lambda x_t: fd.fc([x_t, fd.memory("h", size=2)], 2, name="h"), x)
    d = fd.Design.from_program(main)
    group = next(n for n in d.nodes.values() if n.layer == "recurrent_group")
    steps = [n.id for n in group.body.nodes.values() if n.layer == "step_input"]
    assert steps == ["step_input_0"]
    assert [r.node for r in group.body.outputs] == ["h"]
