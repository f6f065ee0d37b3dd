"""TensorInspector's tools without a browser: the grouped variable list, NCHW feature maps,
the difference from the previous stop, save as .npy and the float64 gradient check."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.widgets.tensor import TensorInspector
from fluidscope.widgets.tensor.groups import GROUPS
from sessions import mlp_session, rnn_session


def adam_session(rows=4):
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 4])
        label = fd.data("label", [None, 1], dtype="int64")
        prob = fd.fc(fd.fc(x, 8, act="relu"), 3, act="softmax")
        loss = fd.mean(fd.cross_entropy(prob, label))
        fd.optimizer.Adam(0.01).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(3)
    feed = {"x": rng.standard_normal((rows, 4)).astype(np.float32),
            "label": rng.integers(0, 3, (rows, 1))}
    return exe.debug(main, feed, [loss], scope), main


def conv_session(batch=2, dropout=False):
    """x [batch, 1, 14, 14] -> conv2d(16, 3x3, padding 1) relu [-> dropout] -> fc(2) -> mean."""
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 1, 14, 14])
        feature = fd.conv2d(x, 16, 3, padding=1, act="relu")
        if dropout:
            feature = fd.dropout(feature, 0.5)
        loss = fd.mean(fd.fc(feature, 2))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    x = np.random.default_rng(4).standard_normal((batch, 1, 14, 14)).astype(np.float32)
    return exe.debug(main, {"x": x}, [loss], scope), feature.name


def step_until(session, view, done):
    while not done():
        assert not session.finished, "the session ended first"
        session.step()
        view.refresh()


# ------------------------------------------------------------------ groups
def test_variables_are_grouped_and_optimizer_state_is_folded_away():
    session, main = adam_session()
    view = TensorInspector(session)
    groups = view.groups
    assert list(groups) == list(GROUPS)
    assert sorted(n for names in groups.values() for n in names) == sorted(view.variables)
    parameters = sorted(p.name for p in main.all_parameters())
    assert sorted(groups["parameters"]) == parameters
    assert all(n.endswith("@GRAD") for n in groups["gradients"])
    assert "fc_0.w_0@GRAD" in groups["gradients"]
    assert {"x", "label", "fc_0.tmp_0"} <= set(groups["activations"])
    state = groups["optimizer state"]
    # Adam keeps two moments and two beta powers per parameter, plus the learning rate
    assert len(state) >= 4 * len(parameters) + 1
    assert not set(state) & set(parameters) and not any("@GRAD" in n for n in state)
    assert view.show_optimizer_state is False
    assert view.receive({"action": "set_show_optimizer_state", "on": True})
    assert view.show_optimizer_state is True


# ------------------------------------------------------------- feature maps
def test_nchw_value_is_sent_as_one_tile_per_channel_of_the_chosen_sample():
    session, name = conv_session(batch=2)
    view = TensorInspector(session, name)
    step_until(session, view, lambda: view.value["state"] == "value")
    maps = view.value["feature_maps"]
    array = session.tensor(name).numpy()
    assert array.shape == (2, 16, 14, 14)
    assert (maps["sample"], maps["samples"], maps["channels"], maps["shown"]) == (0, 2, 16, 16)
    assert (maps["tile_rows"], maps["tile_cols"], maps["binned"]) == (14, 14, False)
    tiles = np.frombuffer(maps["data"], "<f4").reshape(16, 14, 14)
    np.testing.assert_array_equal(tiles, array[0])
    assert maps["lo"] == pytest.approx(float(array[0].min()))
    assert maps["hi"] == pytest.approx(float(array[0].max()))
    assert view.receive({"action": "set_sample", "sample": 1})
    tiles = np.frombuffer(view.value["feature_maps"]["data"], "<f4").reshape(16, 14, 14)
    np.testing.assert_array_equal(tiles, array[1])
    assert not view.receive({"action": "set_sample", "sample": 2})
    assert "sample 2 is out of range" in view.message and "0..1" in view.message
    assert view.sample == 1


def test_feature_maps_only_for_4d_and_set_sample_says_why():
    session = mlp_session()
    view = TensorInspector(session, "fc_0.w_0")
    assert view.value["feature_maps"] is None
    assert not view.receive({"action": "set_sample", "sample": 0})
    assert "not a 4-D (NCHW) tensor" in view.message and "[4, 8]" in view.message


# ---------------------------------------------------------------- difference
def test_difference_from_the_previous_stop():
    session = mlp_session()
    view = TensorInspector(session, "fc_0.w_0")
    assert view.difference["state"] == "none"
    before = session.tensor("fc_0.w_0").numpy().copy()
    where_before = view.where
    session.step()
    view.refresh()
    # the parameter did not change in the first op: a difference of zeros
    assert view.difference["state"] == "value" and view.difference["changed"] == 0
    step_until(session, view,
               lambda: not np.array_equal(session.tensor("fc_0.w_0").numpy(), before))
    now = session.tensor("fc_0.w_0").numpy()
    previous = before  # the value at the stop before the update is the initial one
    diff = view.difference
    assert diff["state"] == "value" and diff["since"] != where_before
    expected = now.astype(np.float64) - previous.astype(np.float64)
    assert diff["changed"] == np.count_nonzero(expected)
    np.testing.assert_allclose(np.frombuffer(diff["heatmap"]["data"], "<f4").reshape(4, 8),
                               expected.astype(np.float32))
    assert diff["stats"]["max"] == pytest.approx(expected.max())
    view.select("fc_1.w_0")  # another variable: nothing to compare yet
    assert view.difference["state"] == "none"
    assert view.receive({"action": "set_show_difference", "on": True}) and view.show_difference


# --------------------------------------------------------------------- save
def test_save_npy_writes_the_value_and_the_gradient(tmp_path, monkeypatch):
    session = mlp_session()
    view = TensorInspector(session, "fc_0.w_0")
    path = view.save_npy(str(tmp_path / "w.npy"))
    loaded = np.load(path, allow_pickle=False)
    np.testing.assert_array_equal(loaded, session.tensor("fc_0.w_0").numpy())
    assert loaded.dtype == np.float32 and view.saved == path
    assert not view.receive({"action": "save_npy", "which": "gradient"})
    assert "has no gradient" in view.message
    step_until(session, view, lambda: view.gradient["state"] == "value")
    monkeypatch.chdir(tmp_path)
    assert view.receive({"action": "save_npy", "which": "gradient"})
    assert view.saved == "fc_0.w_0_GRAD.npy"
    np.testing.assert_array_equal(np.load(tmp_path / "fc_0.w_0_GRAD.npy", allow_pickle=False),
                                  session.tensor("fc_0.w_0@GRAD").numpy())


# ------------------------------------------------------------ gradient check
def test_check_gradient_matches_the_runs_own_gradient():
    session = mlp_session(rows=6)
    view = TensorInspector(session, "fc_0.w_0")
    result = view.check_gradient()
    assert result["parameter"] == "fc_0.w_0" and result["loss"] == "mean_0.tmp_0"
    assert (result["checked"], result["size"]) == (24, 32) and result["ok"]
    assert result["max_error"] < 1e-6
    errors = [r["error"] for r in result["rows"]]
    assert errors == sorted(errors, reverse=True) and result["worst"] == result["rows"][0]
    assert view.gradient_check["max_error"] == result["max_error"]
    assert len(view.gradient_check["rows"]) == 12
    # the float64 figures are the gradient the run computes in float32 at this stop
    step_until(session, view, lambda: view.gradient["state"] == "value")
    grad = session.tensor("fc_0.w_0@GRAD").numpy()
    for row in result["rows"]:
        assert row["numeric"] == pytest.approx(grad[tuple(row["index"])], rel=1e-4, abs=1e-7)


def test_check_gradient_compares_the_runs_own_gradient_before_the_update():
    session = mlp_session(rows=6)
    view = TensorInspector(session, "fc_0.w_0")
    assert view.check_gradient()["run"]["available"] is False  # at the start: no gradient
    assert "has not computed fc_0.w_0@GRAD" in view.gradient_check["run"]["reason"]
    step_until(session, view, lambda: view.gradient["state"] == "value")
    result = view.check_gradient()
    run = result["run"]
    assert run["available"] and run["ok"] and run["dtype"] == "float32"
    assert run["max_error"] < 1e-3
    grad = session.tensor("fc_0.w_0@GRAD").numpy()
    for row in result["rows"]:
        assert row["run"] == grad[tuple(row["index"])]
        assert row["run_error"] <= run["max_error"]
    # once sgd has updated the weight, the run's gradient belongs to its old value
    session.continue_()  # to the end: every sgd op has run
    later = view.check_gradient()["run"]
    assert later["available"] is False and "has updated fc_0.w_0" in later["reason"]
    assert later["reason"].startswith("op #") and " sgd " in later["reason"]
    assert view.check_gradient()["ok"]  # the float64 check itself still holds


def test_check_gradient_leaves_the_session_as_it_was():
    session = mlp_session()
    session.step()
    where = session.position.breadcrumb()
    view = TensorInspector(session, "fc_1.w_0")
    view.check_gradient(samples=8)
    assert session.position.breadcrumb() == where
    session.continue_()
    checked = session.fetch()[0]
    session.restart()  # the scope as it was made: a run nothing else touched
    session.continue_()
    np.testing.assert_array_equal(checked, session.fetch()[0])


def test_check_gradient_flags_a_kink():
    """x = 0 puts every hidden unit exactly on relu's kink: the one-sided analytic
    derivative and the central difference (half of it) disagree, and the check says so."""
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 4])
        loss = fd.mean(fd.fc(fd.fc(x, 8, act="relu"), 1))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    session = exe.debug(main, {"x": np.zeros((3, 4), np.float32)}, [loss], scope)
    view = TensorInspector(session, "fc_0.b_0")
    result = view.check_gradient()
    assert not result["ok"] and result["max_error"] > 0.1
    worst = result["worst"]
    assert worst["numeric"] != pytest.approx(worst["analytic"], rel=1e-3)


def test_check_gradient_with_dropout_and_a_conv_layer():
    session, _ = conv_session(batch=1, dropout=True)
    view = TensorInspector(session, "conv2d_0.w_0")
    result = view.check_gradient(samples=6)
    assert result["checked"] == 6 and result["size"] == 16 * 9
    assert result["ok"], result["worst"]


def test_check_gradient_refuses_what_is_not_a_parameter():
    view = TensorInspector(mlp_session(), "fc_0.tmp_0")
    assert not view.receive({"action": "check_gradient"})
    assert "'fc_0.tmp_0' is not a parameter" in view.message
    assert view.gradient_check == {}
    main_no_backward, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main_no_backward, startup):
        fd.fc(fd.data("x", [None, 2]), 2)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    plain = exe.debug(main_no_backward, {"x": np.ones((1, 2), np.float32)}, None, scope)
    view = TensorInspector(plain)
    view.select("fc_0.w_0")
    assert not view.receive({"action": "check_gradient"})
    assert "no backward" in view.message


def test_check_gradient_through_a_recurrent_group():
    """Frames and memories: the forward copy keeps the recurrent op and its step block."""
    session = rnn_session()
    view = TensorInspector(session, "w1")  # the memory's weight: gradient through time
    result = view.check_gradient()
    assert result["ok"] and (result["checked"], result["size"]) == (16, 16)
    session.continue_()  # past the recurrent_grad op: the run's gradient is there
    view.refresh()
    run = view.check_gradient()["run"]
    assert run["available"] and run["ok"] and run["max_error"] < 1e-6  # float64 run
