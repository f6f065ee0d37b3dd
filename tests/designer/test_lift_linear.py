"""``paddle.nn.Linear`` (matmul_v2 + elementwise_add on the last axis) as the designer's
``linear`` layer, and read back from a file as that layer (design/lift.py): built with
fluidscope, and saved by PaddlePaddle 3.3.1 (skipped without .venv-paddle)."""

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError, Executor, Scope
from fluidscope.engine import io as fio

from paddle_oracle import needs_paddle, run_paddle
from design_models import program_bytes


def plain(program):
    """``program`` as a file holds it: ops and variables, no record of layer calls."""
    return fd.Program.from_desc(type(program.desc).FromString(program.desc.SerializeToString()))


def test_linear_is_matmul_v2_and_a_bias_on_the_last_axis():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 5, 6])
        y = fd.linear(x, 8)
        z = fd.linear(y, 4, bias_attr=False)
    ops = [(op.type, op.input_arg_names, op.output_arg_names, op.attr("axis")
            if op.type == "elementwise_add" else None) for op in main.global_block().ops]
    assert ops == [("matmul_v2", ["x", "linear_0.w_0"], ["linear_0.tmp_0"], None),
                   ("elementwise_add", ["linear_0.tmp_0", "linear_0.b_0"], ["linear_0.tmp_1"], -1),
                   ("matmul_v2", ["linear_0.tmp_1", "linear_1.w_0"], ["linear_1.tmp_0"], None)]
    assert list(y.shape) == [-1, 5, 8] and list(z.shape) == [-1, 5, 4]
    scope = Scope()
    exe = Executor()
    exe.run(startup.desc, scope=scope)
    feed = np.random.default_rng(0).standard_normal((2, 5, 6)).astype("float32")
    got = exe.run(main.desc, feed={"x": feed}, fetch_list=[z.name], scope=scope)[0]
    w0, b0, w1 = (np.asarray(scope.find_var(n).get_tensor().numpy()) for n in
                  ("linear_0.w_0", "linear_0.b_0", "linear_1.w_0"))
    np.testing.assert_allclose(got, (feed @ w0 + b0) @ w1, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, size, message", [
    ([None, 5, -1], 4, "its last axis (the in_features the weight is sized by) must be known"),
    ([None, 6], 0, "size must be a positive int, got 0"),
])
def test_linear_errors_name_the_layer_and_the_shape(shape, size, message):
    with fd.program_guard(fd.Program(), fd.Program()), fd.unique_name.guard():
        x = fd.data("x", shape)
        with pytest.raises(DesignError, match="linear layer 'linear_0'") as caught:
            fd.linear(x, size)
    assert message in str(caught.value)


def test_a_program_of_linear_layers_reads_back_as_them_and_rebuilds_its_bytes():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 6])
        h = fd.relu(fd.linear(x, 8))
        out = fd.softmax(fd.linear(h, 3, bias_attr=False))
    program = plain(main)
    d = fd.Design.from_program(program, layers=True)
    assert [(n.id, n.layer, n.attrs) for n in d.nodes.values() if n.layer != "variable"] == [
        ("linear_0", "linear", {"size": 8}), ("relu_0", "relu", {}),
        ("linear_1", "linear", {"size": 3, "bias_attr": False}), ("softmax_0", "softmax", {})]
    assert [n.id for n in d.nodes.values() if n.layer == "variable"] == ["x"]
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)
    scope = Scope()
    exe = Executor()
    exe.run(startup.desc, scope=scope)
    feed = np.random.default_rng(1).standard_normal((3, 6)).astype("float32")
    expected = exe.run(program.desc, feed={"x": feed}, fetch_list=[out.name], scope=scope)[0]
    got = exe.run(built.main.desc, feed={"x": feed}, fetch_list=[out.name], scope=scope)[0]
    np.testing.assert_array_equal(got, expected)
    d.set("linear_0", size=5)  # a design like any other: the next layer's weight follows
    assert d.build(scope=Scope()).shapes["linear_1"] == [[-1, 3]]


def test_a_matmul_of_two_activations_is_no_linear_layer():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        a = fd.data("a", [None, 4, 5])
        b = fd.data("b", [None, 5, 2])
        fd.matmul(a, b)
    d = fd.Design.from_program(plain(main), layers=True)
    assert "linear" not in {n.layer for n in d.nodes.values()}


PADDLE_SCRIPT = r'''
import sys
import numpy as np
import paddle
import paddle.nn.functional as F

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 5, 6], "float32")
    h = F.relu(paddle.nn.Linear(6, 8)(x))
    h = paddle.nn.Linear(8, 4, bias_attr=False)(h)
    out = paddle.nn.Linear(4, 3, name="head")(h)  # outputs head.tmp_*, weights linear_2.*
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
scope = paddle.static.global_scope()
for name in ("linear_0.b_0", "linear_2.b_0"):  # biases away from 0, so they matter
    t = scope.find_var(name).get_tensor()
    t.set(np.linspace(-1, 1, np.array(t).size).astype("float32"), paddle.CPUPlace())
paddle.static.save_inference_model(sys.argv[1], [x], [out], exe, program=main)
got = exe.run(main, feed={"x": np.load(sys.argv[2])}, fetch_list=[out])[0]
np.save(sys.argv[3], got)
'''


@needs_paddle
def test_paddle_nn_linear_saved_by_paddle_reads_back_as_linear_layers(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 5, 6)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    run_paddle(PADDLE_SCRIPT, tmp_path, tmp_path / "model", tmp_path / "x.npy",
               tmp_path / "out.npy")
    scope = Scope()
    desc, _, fetches = fio.load_inference_model_files(tmp_path / "model", scope)
    d = fd.Design.from_program(fd.Program.from_desc(desc), layers=True)
    kinds = {n.id: (n.layer, n.attrs.get("type")) for n in d.nodes.values()}
    assert kinds["linear_0"] == ("linear", None) and kinds["relu_0"] == ("relu", None)
    assert kinds["linear_1"] == ("linear", None)
    assert d.node("linear_1").attrs == {"size": 4, "bias_attr": False}
    # a named Linear names its outputs head.tmp_* but its weights linear_2.*: read back
    # with its parameters by name
    assert kinds["head"] == ("linear", None)
    assert d.node("head").attrs == {"size": 3, "param_attr": "linear_2.w_0",
                                    "bias_attr": "linear_2.b_0"}
    assert {n.attrs["type"] for n in d.nodes.values() if n.layer == "op"} == {"feed", "fetch"}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    got = Executor().run(built.main.desc, feed={"x": x}, fetch_list=fetches, scope=scope)[0]
    np.testing.assert_allclose(got, np.load(tmp_path / "out.npy"), rtol=1e-5, atol=1e-6)
