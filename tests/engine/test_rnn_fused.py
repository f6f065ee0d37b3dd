"""dynamic_lstm / dynamic_gru layers: programs that train, gradients of the whole program
against central differences, the layers' checks, and the ops' shape errors."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.designer import DesignError
from fluidscope.engine import registry
from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.autodiff.gradcheck import build_single_op, run_op
from fluidscope.engine.runtime.tensor import LoDTensor
from op_matrix.cases_rnn import gru_reference, lstm_reference

LOD = [0, 3, 4, 6]  # three sequences, one of length 1


@pytest.fixture
def progs():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        yield main, startup


def _set_params(scope, main, rng, dtype="float64"):
    for p in main.all_parameters():
        value = rng.uniform(-0.6, 0.6, p.shape).astype(dtype)
        scope.var(p.name).get_tensor().set(value)


def _param(scope, name):
    return np.array(scope.find_var(name).get_tensor())


def _check_program_gradients(main, startup, loss, feed, rtol=1e-5, delta=1e-6):
    """Every parameter's gradient from the generated backward against central
    differences of the loss of the whole program (float64). Returns the loss."""
    params = [p.name for p in main.all_parameters()]
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    _set_params(scope, main, np.random.default_rng(5))
    check_program_grad(main.desc, loss.name, feed, params, scope, delta=delta, rtol=rtol)
    return exe.run(main, feed=feed, fetch_list=[loss.name], scope=scope)[0]


def _lod_feed(rng, width):
    return LoDTensor(rng.uniform(-1, 1, (LOD[-1], width)), [LOD])


def test_dynamic_lstm_program_gradients_match_central_differences(progs):
    main, startup = progs
    x = fd.data("x", [None, 3], dtype="float64", lod_level=1)
    proj = fd.fc(x, 4 * 2, bias_attr=False)
    hidden, cell = fd.dynamic_lstm(proj, 4 * 2, dtype="float64")
    loss = fd.mean(fd.elementwise_mul(hidden, hidden))
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "lstm_0.w_0", "lstm_0.b_0"]
    assert main.global_block().var("lstm_0.b_0").shape == (1, 14)
    assert hidden.lod_level == 1 and tuple(hidden.shape) == (-1, 2)
    _check_program_gradients(main, startup, loss, {"x": _lod_feed(np.random.default_rng(1), 3)})


def test_dynamic_lstm_reverse_with_states_and_cell_in_the_loss(progs):
    main, startup = progs
    x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
    h0 = fd.data("h0", [None, 2], dtype="float64")
    c0 = fd.data("c0", [None, 2], dtype="float64")
    proj = fd.fc(x, 8)
    hidden, cell = fd.dynamic_lstm(proj, 8, h_0=h0, c_0=c0, use_peepholes=False,
                                   is_reverse=True, dtype="float64")
    loss = fd.mean(fd.elementwise_add(fd.elementwise_mul(hidden, hidden), cell))
    rng = np.random.default_rng(2)
    feed = {"x": _lod_feed(rng, 2), "h0": rng.uniform(-1, 1, (3, 2)),
            "c0": rng.uniform(-1, 1, (3, 2))}
    _check_program_gradients(main, startup, loss, feed)


@pytest.mark.parametrize("origin_mode", [False, True])
def test_dynamic_gru_program_gradients_match_central_differences(progs, origin_mode):
    main, startup = progs
    x = fd.data("x", [None, 3], dtype="float64", lod_level=1)
    hidden = fd.dynamic_gru(fd.fc(x, 3 * 2, bias_attr=False), 2, origin_mode=origin_mode,
                            is_reverse=origin_mode)
    loss = fd.mean(fd.elementwise_mul(hidden, hidden))
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "gru_0.w_0", "gru_0.b_0"]
    _check_program_gradients(main, startup, loss, {"x": _lod_feed(np.random.default_rng(3), 3)})


def test_dynamic_lstm_forward_matches_the_reference_and_keeps_the_lod(progs):
    main, startup = progs
    x = fd.data("x", [None, 8], lod_level=1)
    hidden, cell = fd.dynamic_lstm(x, 8, is_reverse=True)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    _set_params(scope, main, np.random.default_rng(4))
    feed = LoDTensor(np.random.default_rng(6).uniform(-1, 1, (6, 8)).astype("float32"), [LOD])
    h, c = exe.run(main, feed={"x": feed}, fetch_list=[hidden, cell], scope=scope,
                   return_numpy=False)
    assert h.lod() == [LOD] and c.lod() == [LOD]
    ref = lstm_reference({"Input": feed, "Weight": _param(scope, "lstm_0.w_0"),
                          "Bias": _param(scope, "lstm_0.b_0")}, {"is_reverse": True})
    np.testing.assert_allclose(np.array(h), ref["Hidden"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(c), ref["Cell"], rtol=1e-5, atol=1e-6)


def test_a_gru_trains(progs):
    main, startup = progs
    x = fd.data("x", [None, 4], lod_level=1)
    target = fd.data("t", [None, 3])
    hidden = fd.dynamic_gru(fd.fc(x, 9), 3)
    loss = fd.mean(fd.square_error_cost(hidden, target))
    fd.optimizer.SGD(learning_rate=0.5).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(7)
    _set_params(scope, main, rng, "float32")  # deterministic, unlike the random init
    feed = {"x": LoDTensor(rng.uniform(-1, 1, (6, 4)).astype("float32"), [LOD]),
            "t": rng.uniform(-0.5, 0.5, (6, 3)).astype("float32")}
    losses = [float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0])
              for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]


def test_layer_mistakes_are_design_errors(progs):
    x = fd.data("x", [None, 8], lod_level=1)
    flat = fd.data("flat", [None, 8])
    with pytest.raises(DesignError, match=r"lstm layer 'lstm_0'.*multiple of 4"):
        fd.dynamic_lstm(x, 6)
    with pytest.raises(DesignError, match=r"\[-1, 8\].*\[T, 12\]"):
        fd.dynamic_lstm(x, 12)
    with pytest.raises(DesignError, match=r"sequence.*lod_level 0"):
        fd.dynamic_lstm(flat, 8)
    with pytest.raises(DesignError, match=r"gru layer.*\[-1, 8\].*\[T, 6\]"):
        fd.dynamic_gru(x, 2)
    with pytest.raises(DesignError, match=r"h_0 'h'.*\[num_sequences, 2\]"):
        fd.dynamic_lstm(x, 8, h_0=fd.data("h", [None, 3]))
    with pytest.raises(DesignError, match=r"gate_activation='softmax'"):
        fd.dynamic_lstm(x, 8, gate_activation="softmax")


def _lstm_inputs(d=2, width=None, weight=None, bias=None, h0=None):
    rng = np.random.default_rng(0)
    out = {"Input": LoDTensor(rng.uniform(-1, 1, (6, width or 4 * d)), [LOD]),
           "Weight": rng.uniform(-1, 1, weight or (d, 4 * d)),
           "Bias": rng.uniform(-1, 1, bias or (1, 7 * d))}
    if h0:
        out["H0"] = rng.uniform(-1, 1, h0)
    return out


@pytest.mark.parametrize("op, inputs, attrs, pattern", [
    ("lstm", _lstm_inputs(weight=(2, 6)), {},
     r"op lstm: slot Weight: Weight \[2, 6\] must be \[D, 4\*D\]"),
    ("lstm", _lstm_inputs(width=6), {},
     r"slot Input: Input \[6, 6\] must be \[T, 4\*D\] = \[T, 8\] to match Weight \[2, 8\]"),
    ("lstm", _lstm_inputs(bias=(1, 8)), {},
     r"slot Bias: Bias \[1, 8\] must be \[1, 14\] \(use_peepholes"),
    ("lstm", _lstm_inputs(), {"use_peepholes": False}, r"Bias \[1, 14\] must be \[1, 8\]"),
    ("lstm", _lstm_inputs(h0=(3, 3)), {}, r"slot H0: H0 \[3, 3\] must be \[num_sequences, 2\]"),
    ("gru", {"Input": LoDTensor(np.zeros((6, 6)), [LOD]), "Weight": np.zeros((2, 4))}, {},
     r"op gru: slot Weight: Weight \[2, 4\] must be \[D, 3\*D\]"),
])
def test_shape_errors_name_op_slot_and_shapes(op, inputs, attrs, pattern):
    with pytest.raises(Exception, match=pattern):
        build_single_op(op, inputs, attrs)


def test_initial_state_rows_must_match_the_sequences():
    with pytest.raises(ExecutionError, match=r"op lstm: H0 has shape \[2, 2\], expected \[3, 2\]"):
        run_op("lstm", _lstm_inputs(h0=(2, 2)))


def test_input_without_lod_is_a_clear_error():
    inputs = _lstm_inputs()
    inputs["Input"] = inputs["Input"].value
    with pytest.raises(ExecutionError, match=r"op lstm: input Input has no LoD"):
        run_op("lstm", inputs)


def test_activation_attribute_is_checked():
    with pytest.raises(Exception, match=r"gate_activation'='softmax' must be one of"):
        registry.get("lstm").parse_attrs({"gate_activation": "softmax"})


def test_gru_forward_without_bias_or_state_matches_reference():
    rng = np.random.default_rng(9)
    inputs = {"Input": LoDTensor(rng.uniform(-1, 1, (6, 9)), [LOD]),
              "Weight": rng.uniform(-1, 1, (3, 9))}
    out = run_op("gru", inputs, {"origin_mode": True})
    np.testing.assert_allclose(out["Hidden"], gru_reference(inputs, {"origin_mode": True})["Hidden"])
