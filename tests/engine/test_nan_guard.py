"""The NaN/Inf guard of a plain run: ``exe.run(..., check_nan_inf=True)`` and
``FLAGS_check_nan_inf=1`` stop at the first op writing a NaN or an Inf, before the
optimizer runs, and name the op, the block, the variable and the counts."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import ExecutionError, FluidscopeError, NonFiniteError
from fluidscope.engine.runtime.nan_guard import ENV_FLAG, count_non_finite, flag_from_env

from test_debugger import params
from test_recurrent import D, H

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's log(0) notes


def log_then_train():
    """scale(-1) -> relu -> log (the third op: -inf where x >= 0) -> fc -> loss -> SGD."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64")
        p = fd.relu(fd.scale(x, scale=-1.0))
        lg = fd.log(p)
        loss = fd.mean(fd.fc(lg, 2, name="head"))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    return exe, main, scope, loss, lg


BAD = {"x": np.array([[0.0, -1.0, 2.0], [-3.0, -1.0, 5.0]])}    # three values >= 0
GOOD = {"x": np.array([[-0.5, -1.0, -2.0], [-3.0, -1.0, -5.0]])}


def test_the_third_op_writing_inf_raises_naming_op_var_and_counts_and_params_stay():
    exe, main, scope, loss, lg = log_then_train()
    before = params(scope)
    with pytest.raises(NonFiniteError) as caught:
        exe.run(main, feed=BAD, fetch_list=[loss], scope=scope, check_nan_inf=True)
    err = caught.value
    assert isinstance(err, ExecutionError) and isinstance(err, FluidscopeError)
    assert (err.op_type, err.op_index, err.block, err.var) == ("log", 2, 0, lg.name)
    assert (err.nans, err.infs, err.size) == (0, 3, 6)
    assert err.frame is None and err.parent is None
    message = str(err)
    assert "op #2 log" in message and "block 0" in message and f"'{lg.name}'" in message
    assert "0 NaN and 3 Inf among 6 values" in message and "FLAGS_check_nan_inf" in message
    after = params(scope)
    assert set(after) == set(before)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


def test_without_the_guard_the_same_run_spoils_the_weights():
    # What the guard prevents: an unguarded run updates the weights with NaN gradients.
    exe, main, scope, loss, lg = log_then_train()
    exe.run(main, feed=BAD, fetch_list=[loss], scope=scope, check_nan_inf=False)
    weight = next(v for k, v in params(scope).items() if k.startswith("head") and ".w_" in k)
    assert not np.isfinite(weight).all()


def test_the_environment_flag_turns_the_guard_on_and_an_explicit_false_off(monkeypatch):
    _, main, scope, loss, lg = log_then_train()
    monkeypatch.setenv(ENV_FLAG, "1")
    assert flag_from_env()
    exe = fd.Executor()  # the flag is read when an Executor is made, as Paddle reads it
    assert exe.check_nan_inf
    with pytest.raises(NonFiniteError, match="op #2 log"):
        exe.run(main, feed=BAD, fetch_list=[loss], scope=scope)
    out = exe.run(main, feed=BAD, fetch_list=[lg], scope=scope,
                  check_nan_inf=False)[0]
    assert np.isinf(out).sum() == 3
    for off in ("0", "false", "", "off"):
        monkeypatch.setenv(ENV_FLAG, off)
        assert not flag_from_env()
    monkeypatch.delenv(ENV_FLAG)
    assert not flag_from_env() and not fd.Executor().check_nan_inf
    exe.check_nan_inf = False  # the executor's own switch
    exe.run(main, feed=BAD, fetch_list=[loss], scope=scope)  # no error


def test_a_finite_run_is_untouched_by_the_guard():
    exe, main, scope, loss, lg = log_then_train()
    twin = fd.Scope()
    for name, value in params(scope).items():
        twin.var(name).get_tensor().set(value)
    guarded = exe.run(main, feed=GOOD, fetch_list=[loss, lg], scope=scope, check_nan_inf=True)
    plain = exe.run(main, feed=GOOD, fetch_list=[loss, lg], scope=twin)
    for a, b in zip(guarded, plain):
        np.testing.assert_array_equal(a, b)
    for name, value in params(twin).items():  # the optimizer ran and wrote back the same
        np.testing.assert_array_equal(params(scope)[name], value, err_msg=name)


def test_an_op_that_fails_under_the_guard_is_reported_as_in_a_plain_run():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64")
        y = fd.data("y", [None, -1], dtype="float64")  # its width is known only at run time
        out = fd.elementwise_add(fd.relu(x), y)
    feed = {"x": np.ones((2, 3)), "y": np.ones((2, 5))}
    messages = []
    for guard in (False, True):
        with pytest.raises(ExecutionError) as caught:
            fd.Executor().run(main, feed=feed, fetch_list=[out], scope=fd.Scope(),
                              check_nan_inf=guard)
        assert not isinstance(caught.value, NonFiniteError)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "op #1 elementwise_add" in messages[1]


def test_counts_cover_nan_and_inf_and_skip_ints_and_holders():
    assert count_non_finite(np, np.array([np.nan, np.inf, -np.inf, 1.0])) == (1, 2)
    assert count_non_finite(np, np.array([1.0, 2.0])) is None
    assert count_non_finite(np, np.array([1e308, 1e308])) is None  # the sum overflows; no value
    assert count_non_finite(np, np.array([np.inf, -np.inf], dtype=np.float16)) == (0, 2)
    assert count_non_finite(np, np.array([1, 2])) is None
    assert count_non_finite(np, object()) is None


def rnn_with_log():
    """A recurrent group whose step takes log of its in-link: a negative row of x is a
    NaN in that row's frame only."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, D], dtype="float64", lod_level=1)

        def step(x_t):
            h_pre = fd.memory("h", size=H)
            return fd.fc([fd.log(x_t), h_pre], size=H, act="tanh", name="h")

        out = fd.recurrent_group(step, [x])
        loss = fd.mean(out)
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    return exe, main, scope, loss


def test_a_nan_inside_a_recurrent_frame_names_the_step_op_and_the_frame():
    exe, main, scope, loss = rnn_with_log()
    x = np.full((4, D), 2.0)
    x[2, 1] = -1.0  # one sequence of 4 steps: frame 2 reads row 2
    feed = {"x": fd.LoDTensor(x, [[0, 4]])}
    before = params(scope)
    with pytest.raises(NonFiniteError) as caught:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope, check_nan_inf=True)
    err = caught.value
    index = next(k for k, op in enumerate(main.global_block().ops) if op.type == "recurrent")
    assert err.frame == 2 and err.op_type == "log" and err.block > 0
    assert (err.nans, err.infs) == (1, 0)
    assert err.parent == f"op #{index} recurrent"
    assert f"frame 2 of {err.parent}, step op #{err.op_index} log" in str(err)
    for name, value in before.items():
        np.testing.assert_array_equal(params(scope)[name], value, err_msg=name)
    x[2, 1] = 1.0
    finite = exe.run(main, feed={"x": fd.LoDTensor(x, [[0, 4]])}, fetch_list=[loss],
                     scope=scope, check_nan_inf=True)[0]
    assert np.isfinite(finite).all()


def test_a_gradient_inside_a_recurrent_frame_names_the_grad_op_and_the_frame():
    # log(1e-320) is finite (-737); its gradient dout / 1e-320 overflows: only the backward
    # frame fails (no tanh, whose saturated derivative of 0 would hide it)
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, D], dtype="float64", lod_level=1)
        x.stop_gradient = False

        def step(x_t):
            h_pre = fd.memory("h", size=H)
            return fd.fc([fd.log(x_t), h_pre], size=H, name="h")

        loss = fd.mean(fd.recurrent_group(step, [x]))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    values = np.full((4, D), 2.0)
    values[2, 0] = 1e-320  # a subnormal float64
    before = params(scope)
    with pytest.raises(NonFiniteError) as caught:
        exe.run(main, feed={"x": fd.LoDTensor(values, [[0, 4]])}, fetch_list=[loss],
                scope=scope, check_nan_inf=True)
    err = caught.value
    assert (err.op_type, err.frame) == ("log_grad", 2) and err.parent.endswith("recurrent_grad")
    assert f"grad op #{err.op_index} log_grad" in str(err) and (err.nans, err.infs) == (0, 1)
    for name, value in before.items():
        np.testing.assert_array_equal(params(scope)[name], value, err_msg=name)
