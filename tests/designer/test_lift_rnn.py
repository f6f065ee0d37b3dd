"""The fused ``rnn`` op read back from a file as the designer's ``lstm``/``gru`` layer
(design/lift.py): as the designer's layer writes it (transposes and zero states under the
layer's name: one node), and as ``paddle.nn.LSTM``/``GRU`` save it in PaddlePaddle 3.3.1
(skipped without .venv-paddle): the rnn op is the layer, time-major, its weights named
by Paddle's cells (``param_attr="lstm_cell_0"``), the transposes ``transpose`` layers,
Paddle's zero-state ops op nodes; it runs with Paddle's parameters and gives its numbers."""

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


def test_weights_named_by_paddle_cells_and_paddle_dropout_state_name():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 5, 3])
        fd.lstm(x, 4, num_layers=2, direction="bidirect", param_attr="lstm_cell_3",
                bias_attr="lstm_cell_3")
        with pytest.raises(DesignError, match="names a parameter \\('w'\\).*lstm_cell_0"):
            fd.gru(x, 4, param_attr="w")
    rnn = next(op for op in main.global_block().ops if op.type == "rnn")
    assert rnn.input("WeightList") == [
        f"lstm_cell_{c}.w_{k}" for c in range(3, 7) for k in (0, 1)] + [
        f"lstm_cell_{c}.b_{k}" for c in range(3, 7) for k in (0, 1)]
    assert rnn.output("DropoutState") == ["lstm_0.dropout_state__non_persistable"]


def test_the_designers_lstm_and_gru_read_back_as_one_node_each_and_rebuild_their_bytes():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 5, 3])
        out, last_h, last_c = fd.lstm(x, 4, num_layers=2, direction="bidirect", is_test=True)
        out2, h2 = fd.gru(out, 3, is_test=True)
        fd.elementwise_add(last_h, last_c)
    program = plain(main)
    d = fd.Design.from_program(program, layers=True)
    assert [(n.id, n.layer, n.attrs) for n in d.nodes.values()] == [
        ("x", "variable", d.node("x").attrs),
        ("lstm_0", "lstm", {"hidden_size": 4, "num_layers": 2, "direction": "bidirect",
                            "is_test": True}),
        ("gru_0", "gru", {"hidden_size": 3, "is_test": True}),
        ("elementwise_add_0", "elementwise_add", {})]
    assert d.node("elementwise_add_0").inputs == {"x": fd.design.Ref("lstm_0", 1),
                                                   "y": fd.design.Ref("lstm_0", 2)}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)
    scope = Scope()
    exe = Executor()
    exe.run(startup.desc, scope=scope)
    feed = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    fetch = [out2.name, h2.name]
    expected = exe.run(program.desc, feed={"x": feed}, fetch_list=fetch, scope=scope)
    got = exe.run(built.main.desc, feed={"x": feed}, fetch_list=fetch, scope=scope)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


PADDLE_SCRIPT = r'''
import sys
import numpy as np
import paddle

paddle.enable_static()
paddle.seed(0)
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 5, 6], "float32")
    out, (h, c) = paddle.nn.LSTM(6, 4, num_layers=2, direction="bidirect")(x)
    out2, h2 = paddle.nn.GRU(8, 3)(out)
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
fetch = [out2, h2, h, c]
paddle.static.save_inference_model(sys.argv[1], [x], fetch, exe, program=main)
got = exe.run(main, feed={"x": np.load(sys.argv[2])}, fetch_list=fetch)
np.savez(sys.argv[3], *got)
'''


@needs_paddle
def test_paddle_nn_lstm_and_gru_saved_by_paddle_read_back_as_layers_and_give_its_numbers(
        tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 5, 6)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    run_paddle(PADDLE_SCRIPT, tmp_path, tmp_path / "model", tmp_path / "x.npy",
               tmp_path / "out.npz")
    scope = Scope()
    desc, _, fetches = fio.load_inference_model_files(tmp_path / "model", scope)
    d = fd.Design.from_program(fd.Program.from_desc(desc), layers=True)
    layers = [(n.id, n.layer) for n in d.nodes.values() if n.layer not in ("op", "variable")]
    assert layers == [("transpose_0", "transpose"), ("lstm_0", "lstm"),
                      ("transpose_1", "transpose"), ("transpose_2", "transpose"),
                      ("gru_0", "gru"), ("transpose_3", "transpose")]
    assert d.node("lstm_0").attrs == {"hidden_size": 4, "num_layers": 2, "direction": "bidirect",
                                      "time_major": True, "is_test": True,
                                      "param_attr": "lstm_cell_0", "bias_attr": "lstm_cell_0"}
    assert d.node("gru_0").attrs["param_attr"] == "gru_cell_0"
    # Paddle's zero initial states (shape, slice, fill_constant) feed h_0 / c_0 as op nodes
    lstm_inputs = d.node("lstm_0").inputs
    assert set(lstm_inputs) == {"input", "h_0", "c_0"}
    assert lstm_inputs["input"] == fd.design.Ref("transpose_0")
    assert d.node(lstm_inputs["h_0"].node).attrs["type"] == "fill_constant"
    ops = {n.attrs["type"] for n in d.nodes.values() if n.layer == "op"}
    assert ops == {"feed", "fetch", "shape", "slice", "fill_constant"}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {}
    got = Executor().run(built.main.desc, feed={"x": x}, fetch_list=fetches, scope=scope)
    expected = np.load(tmp_path / "out.npz")
    for k, value in enumerate(got):
        np.testing.assert_allclose(value, expected[f"arr_{k}"], rtol=1e-5, atol=1e-6)
