"""Lifting inference programs built without layer records back to layer nodes
(designer/design/lift_read.py) for the layers the Paddle-made models leave untested here
(those tests skip without .venv-paddle): conv2d_transpose with and without a bias and an
activation (and an output size), adaptive max pooling, layer_norm with every scale/shift
combination and an activation, transpose. Each design names the layers and attributes the
program implies and rebuilds the program's ops byte for byte."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import Scope
from design_models import program_bytes


def _plain(build):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        build(fd.data("x", [None, 4, 6, 6]))
    return fd.Program.from_desc(type(main.desc).FromString(main.desc.SerializeToString()))


def _lifted(build):
    program = _plain(build)
    d = fd.Design.from_program(program, layers=True)
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    assert program_bytes(built.main) == program_bytes(program)
    return [(n.layer, n.attrs) for n in d.nodes.values() if n.layer != "variable"], d


@pytest.mark.parametrize("biased,act", [(True, "relu"), (False, None), (True, None),
                                        (False, "tanh")])
def test_conv2d_transpose_reads_back_with_its_bias_and_activation(biased, act):
    layers, _ = _lifted(lambda x: fd.conv2d_transpose(
        x, 3, filter_size=3, stride=2, bias_attr=None if biased else False, act=act))
    (layer, attrs), = layers
    assert layer == "conv2d_transpose"
    assert attrs["num_filters"] == 3 and attrs["filter_size"] == 3 and attrs["stride"] == 2
    assert attrs.get("bias_attr", True) is biased and attrs.get("act") == act


def test_conv2d_transpose_with_an_output_size():
    layers, _ = _lifted(lambda x: fd.conv2d_transpose(x, 2, output_size=[12, 12], stride=2,
                                                      filter_size=2))
    (layer, attrs), = layers
    assert layer == "conv2d_transpose" and attrs["output_size"] == 12  # square: one number


def test_adaptive_max_pooling_reads_back_as_adaptive_pool2d():
    layers, d = _lifted(lambda x: fd.adaptive_pool2d(x, [2, 3], "max"))
    (layer, attrs), = layers
    assert (layer, attrs) == ("adaptive_pool2d", {"pool_size": [2, 3]})  # max: the default
    node = next(n for n in d.nodes.values() if n.layer == "adaptive_pool2d")
    assert node.inputs["input"].node == "x"


@pytest.mark.parametrize("scale,shift,act", [(True, True, None), (False, True, "relu"),
                                             (True, False, None), (False, False, "tanh")])
def test_layer_norm_reads_back_with_scale_shift_and_activation(scale, shift, act):
    layers, d = _lifted(lambda x: fd.layer_norm(x, scale=scale, shift=shift,
                                                begin_norm_axis=2, epsilon=1e-3, act=act))
    (layer, attrs), = layers
    assert layer == "layer_norm"
    assert attrs["begin_norm_axis"] == 2 and attrs["epsilon"] == pytest.approx(1e-3)
    assert attrs.get("scale", True) is scale and attrs.get("shift", True) is shift
    assert attrs.get("act") == act
    node = next(n for n in d.nodes.values() if n.layer == "layer_norm")
    assert node.inputs["input"].node == "x"


def test_transpose_reads_back_with_its_permutation():
    layers, _ = _lifted(lambda x: fd.transpose(x, [0, 2, 3, 1]))
    assert layers == [("transpose", {"perm": [0, 2, 3, 1]})]


def test_a_time_major_lstm_with_states_and_cell_named_weights_reads_back_whole():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [5, None, 3])
        h0 = fd.data("h0", [1, None, 4])
        c0 = fd.data("c0", [1, None, 4])
        fd.lstm(x, 4, time_major=True, h_0=h0, c_0=c0, param_attr="lstm_cell_3",
                bias_attr="lstm_cell_3", is_test=True)
    program = fd.Program.from_desc(type(main.desc).FromString(main.desc.SerializeToString()))
    d = fd.Design.from_program(program, layers=True)
    node = next(n for n in d.nodes.values() if n.layer == "lstm")
    assert node.attrs == {"hidden_size": 4, "time_major": True, "param_attr": "lstm_cell_3",
                          "bias_attr": "lstm_cell_3", "is_test": True}
    assert {s: r.node for s, r in node.inputs.items()} == {"input": "x", "h_0": "h0",
                                                           "c_0": "c0"}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)


def test_reshape_reads_back_with_its_shape():
    layers, _ = _lifted(lambda x: fd.reshape(x, [-1, 36, 4]))
    assert layers == [("reshape", {"shape": [-1, 36, 4]})]


@pytest.mark.parametrize("biased,act", [(False, "relu"), (True, "sigmoid"), (False, None)])
def test_fc_and_linear_read_back_with_their_bias_and_activation(biased, act):
    bias = None if biased else False
    layers, _ = _lifted(lambda x: fd.fc(fd.flatten(x, 1), 5, act=act, bias_attr=bias))
    (_, flat), (layer, attrs) = layers
    assert layer == "fc" and attrs["size"] == 5 and attrs.get("act") == act
    assert attrs.get("bias_attr", True) is biased
    layers, _ = _lifted(lambda x: fd.linear(fd.flatten(x, 1), 3, bias_attr=bias))
    assert layers[1] == ("linear", {"size": 3} if biased else {"size": 3, "bias_attr": False})


def test_an_elementwise_add_with_an_activation_reads_back_whole():
    layers, d = _lifted(lambda x: fd.elementwise_add(x, fd.relu(x), act="tanh"))
    assert layers[1] == ("elementwise_add", {"act": "tanh"})  # axis -1: the default


def test_pair_attributes_that_differ_keep_both_values():
    layers, _ = _lifted(lambda x: fd.conv2d(x, 2, [3, 1], stride=[2, 1], padding=[1, 0]))
    (layer, attrs), = layers
    assert layer == "conv2d"
    assert attrs["filter_size"] == [3, 1] and attrs["stride"] == [2, 1]
    assert attrs["padding"] == [1, 0]


def test_a_flatten_whose_xshape_paddle_pruned_drops_the_declared_variable():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        out = fd.flatten(fd.data("x", [None, 4, 6, 6]), 1)
    desc = type(main.desc).FromString(main.desc.SerializeToString())
    flatten = next(o for o in desc.blocks[0].ops if o.type == "flatten_contiguous_range")
    xshape = next(v for v in flatten.outputs if v.parameter == "XShape")
    pruned = list(xshape.arguments)
    del xshape.arguments[:]  # the op no longer writes it; the variable stays declared
    assert pruned and any(v.name == pruned[0] for v in desc.blocks[0].vars)
    d = fd.Design.from_program(fd.Program.from_desc(desc), layers=True)
    assert [(n.id, n.layer) for n in d.nodes.values()] == [("x", "variable"),
                                                          ("flatten_0", "flatten")]
    assert d.build(scope=Scope(), optimize=False).var("flatten_0").name == out.name
