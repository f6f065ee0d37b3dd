"""A loaded inference program read back as layer nodes (``Design.from_program(program,
layers=True)``, designer/design/lift.py): conv2d + batch_norm + relu as three layer
nodes, a residual add as its own node; the design rebuilds the file's ops exactly and
runs with the file's parameters; what no layer rebuilds stays op nodes. A model saved
by PaddlePaddle 3.3.1 is read the same way (skipped without .venv-paddle)."""

import numpy as np

import fluidscope.designer as fd
from fluidscope.engine import Executor, Scope
from fluidscope.engine import io as fio

from paddle_oracle import needs_paddle, run_paddle
from design_models import lenet, program_bytes


def residual_block(filter_name=None):
    """conv-bn-relu, conv-bn, + shortcut, relu, adaptive pool, flatten, fc: an inference
    program as a file holds it (no layer record)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3, 8, 8])
        h = fd.relu(fd.batch_norm(fd.conv2d(x, 4, 3, padding=1, bias_attr=False,
                                            param_attr=filter_name), is_test=True))
        r = fd.batch_norm(fd.conv2d(h, 4, 3, padding=1, bias_attr=False), is_test=True)
        out = fd.fc(fd.flatten(fd.adaptive_pool2d(fd.relu(fd.elementwise_add(r, h)), 1, "avg"),
                               1), 3, act="softmax")
    plain = fd.Program.from_desc(type(main.desc).FromString(main.desc.SerializeToString()))
    return plain, startup, out.name


def test_a_residual_block_reads_back_as_layer_nodes_and_rebuilds_its_ops():
    program, startup, out = residual_block()
    d = fd.Design.from_program(program, layers=True)
    layers = [(n.id, n.layer) for n in d.nodes.values()]
    assert layers == [("x", "variable"), ("conv2d_0", "conv2d"), ("batch_norm_0", "batch_norm"),
                      ("relu_0", "relu"), ("conv2d_1", "conv2d"), ("batch_norm_1", "batch_norm"),
                      ("elementwise_add_0", "elementwise_add"), ("relu_1", "relu"),
                      ("pool2d_0", "adaptive_pool2d"), ("flatten_0", "flatten"), ("fc_0", "fc")]
    assert d.node("conv2d_0").attrs == {"num_filters": 4, "filter_size": 3, "padding": 1,
                                        "bias_attr": False}
    assert d.node("batch_norm_0").attrs == {"is_test": True}
    assert d.node("fc_0").attrs == {"size": 3, "act": "softmax"}
    add = d.node("elementwise_add_0").inputs  # the shortcut: an edge back to relu_0
    assert add == {"x": fd.design.Ref("batch_norm_1"), "y": fd.design.Ref("relu_0")}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    assert program_bytes(built.main) == program_bytes(program)
    # the same numbers with the same parameters
    scope = Scope()
    exe = Executor()
    exe.run(startup.desc, scope=scope)
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype("float32")
    expected = exe.run(program.desc, feed={"x": x}, fetch_list=[out], scope=scope)[0]
    got = exe.run(built.main.desc, feed={"x": x}, fetch_list=[out], scope=scope)[0]
    np.testing.assert_array_equal(got, expected)
    # and it is a design like any other: edit a layer, the shapes follow
    d.set("conv2d_1", num_filters=6)
    assert d.build(scope=Scope()).shapes["conv2d_1"] == [[-1, 6, 8, 8]]


def test_without_layers_a_file_is_op_nodes_and_a_training_program_stays_op_nodes():
    program, _, _ = residual_block()
    assert {n.layer for n in fd.Design.from_program(program).nodes.values()} == \
        {"variable", "op"}
    built = lenet().build(scope=Scope())
    training = fd.Program.from_desc(type(built.main.desc).FromString(
        built.main.desc.SerializeToString()))
    d = fd.Design.from_program(training, layers=True)  # backward ops belong to no layer
    assert {n.layer for n in d.nodes.values()} == {"variable", "op"}


def test_a_parameter_named_otherwise_reads_back_by_name():
    # a filter named by the user: the layer read back names it (param_attr), as Paddle's
    # nn.Conv2D does, whose filter is named when the layer is made, apart from its outputs
    program, _, _ = residual_block(filter_name="my_filter")
    d = fd.Design.from_program(program, layers=True)
    assert "my_filter" not in d.nodes
    assert d.node("conv2d_0").attrs == {"num_filters": 4, "filter_size": 3, "padding": 1,
                                        "bias_attr": False, "param_attr": "my_filter"}
    assert d.node("conv2d_1").attrs.get("param_attr") is None  # named as the layer names it
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)


def test_a_run_no_layer_rebuilds_stays_op_nodes():
    # conv2d_0's output goes through an op no layer appends after a convolution
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 3, 8, 8])
        y = fd.conv2d(x, 4, 3, bias_attr=False)
        block = main.global_block()
        out = block.create_var(name="conv2d_0.tmp_1", dtype="float32")
        block.append_op("sqrt", {"X": y}, {"Out": out})
        fd.relu(out)
    program = plain_copy(main)
    d = fd.Design.from_program(program, layers=True)
    kinds = {n.id: (n.layer, n.attrs.get("type")) for n in d.nodes.values()}
    assert kinds == {"x": ("variable", None), "conv2d_0.w_0": ("variable", None),
                     "conv2d_0": ("op", "conv2d"), "sqrt_0": ("op", "sqrt"),
                     "relu_0": ("relu", None)}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)


def plain_copy(program):
    """``program`` as a file holds it: ops and variables, no record of layer calls."""
    return fd.Program.from_desc(type(program.desc).FromString(program.desc.SerializeToString()))


PADDLE_SCRIPT = r'''
import sys
import numpy as np
import paddle
import paddle.nn.functional as F

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 3, 8, 8], "float32")
    h = F.relu(paddle.static.nn.batch_norm(
        paddle.static.nn.conv2d(x, 4, 3, padding=1, bias_attr=False), is_test=True))
    r = paddle.static.nn.batch_norm(paddle.static.nn.conv2d(h, 4, 3, padding=1, bias_attr=False),
                                    is_test=True)
    s = F.relu(paddle.add(r, h))
    p = paddle.flatten(F.adaptive_avg_pool2d(F.max_pool2d(s, 2, 2), 1), 1)
    out = paddle.static.nn.fc(p, 3, activation="softmax")
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
scope = paddle.static.global_scope()
rng = np.random.default_rng(1)
for v in main.all_parameters():  # running statistics away from 0/1, so they matter
    t = scope.find_var(v.name).get_tensor()
    value = np.array(t)
    t.set((value + rng.uniform(0.1, 0.5, value.shape)).astype("float32"), paddle.CPUPlace())
paddle.static.save_inference_model(sys.argv[1], [x], [out], exe, program=main)
feed = np.load(sys.argv[2])
got = exe.run(main.clone(for_test=True), feed={"x": feed}, fetch_list=[out])[0]
np.save(sys.argv[3], got)
'''


@needs_paddle
def test_a_model_saved_by_paddle_reads_back_as_layers_and_runs_with_its_parameters(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    run_paddle(PADDLE_SCRIPT, tmp_path, tmp_path / "model", tmp_path / "x.npy",
               tmp_path / "out.npy")
    scope = Scope()
    desc, feeds, fetches = fio.load_inference_model_files(tmp_path / "model", scope)
    d = fd.Design.from_program(fd.Program.from_desc(desc), layers=True)
    layers = {n.id: n.layer for n in d.nodes.values()}
    assert [layers[k] for k in ("conv2d_0", "batch_norm_0", "relu_0", "elementwise_add_0",
                                "pool2d_0", "pool2d_1", "flatten_0", "fc_0")] == [
        "conv2d", "batch_norm", "relu", "elementwise_add", "pool2d", "adaptive_pool2d",
        "flatten", "fc"]
    assert {n.attrs.get("type") for n in d.nodes.values() if n.layer == "op"} == {"feed", "fetch"}
    # the flatten's XShape, pruned from the op but left declared, is made again by the layer
    assert [k for k, layer in layers.items() if layer == "variable"] == ["feed"]
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    got = Executor().run(built.main.desc, feed={"x": x}, fetch_list=fetches, scope=scope)[0]
    np.testing.assert_allclose(got, np.load(tmp_path / "out.npy"), rtol=1e-5, atol=1e-6)


def test_a_layer_id_taken_by_an_op_node_of_another_layer_is_still_lifted():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 2, 5, 5])
        fd.relu(fd.pool2d(fd.conv2d(x, 3, 3, act="relu"), 2, "avg", 2))
    program = fd.Program.from_desc(type(main.desc).FromString(main.desc.SerializeToString()))
    plain = fd.Design.from_program(program)  # op node ids: relu_0 is the conv's act
    assert plain.node("relu_0").attrs["outputs"]["Out"][0]["name"] == "conv2d_0.tmp_2"
    d = fd.Design.from_program(program, layers=True)
    assert [(n.id, n.layer) for n in d.nodes.values()] == [
        ("x", "variable"), ("conv2d_0", "conv2d"), ("pool2d_0", "pool2d"), ("relu_0", "relu")]
    assert d.node("conv2d_0").attrs["act"] == "relu"
    assert program_bytes(d.build(scope=Scope(), optimize=False).main) == program_bytes(program)
    added = d.add("relu", inputs={"x": "relu_0"})  # fresh ids skip the lifted ones
    assert added not in ("relu_0", "conv2d_0", "pool2d_0")
    assert d.build(scope=Scope()).shapes[added] == [[-1, 3, 1, 1]]
