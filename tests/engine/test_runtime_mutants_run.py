"""engine/runtime run.py and feed.py: a run driven step by step over LoD values equals the
whole run, and its messages name the op, the layer and the variable a person must look at
(issue #17: mutants of the runtime the executor tests let through)."""
import re

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import ExecutionError, FluidscopeError, LoDTensor
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime import threads
from fluidscope.engine.runtime.frames import FrameHistory

from test_debugger import mlp_session, params, rnn_session


def _copy(scope):
    twin = fd.Scope()
    for name, value in params(scope).items():
        twin.var(name).get_tensor().set(value)
    return twin


def test_a_run_of_a_block_without_lod_keeps_no_lod_list():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    assert run.lods is None  # the hot loop takes its no-LoD branch
    exe, main, scope, feed, fetch = rnn_session()
    run = exe.start(main, feed, scope)
    assert run.lods[run.plan.slot["x"]] == [[0, 3, 4, 8]]


def test_stepping_every_step_of_a_recurrent_program_whole_equals_exe_run():
    # Run.step drives the LoD-aware recurrent ops and the LoD checks of elementwise_mul
    exe, main, scope, feed, fetch = rnn_session()
    twin = _copy(scope)
    want = exe.run(main, feed=feed, fetch_list=fetch, scope=twin)
    run = exe.start(main, feed, scope)
    while not run.finished:
        run.step()
    run.write_back()
    for got, ref in zip(run.fetch(fetch), want):
        np.testing.assert_array_equal(got, ref)
    for name, value in params(twin).items():
        np.testing.assert_array_equal(params(scope)[name], value, err_msg=name)


def test_a_plan_driven_only_by_steps_is_decided_for_the_thread_policy_at_its_first_step():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    assert run.plan.small_products is None
    run.step()
    assert run.plan.small_products is True


def _lod_sum(n_inputs=3):
    """sum(a, b, c) of three [N, 2] inputs; returns (exe, main, names)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        xs = [fd.data(n, [None, 2], dtype="float64", lod_level=1) for n in "abc"[:n_inputs]]
        out, = fd.op("sum", inputs={"X": xs},
                     outputs={"Out": [{"name": "total", "type": {"type": "DENSE_TENSOR"}}]})
    return fd.Executor(), main, out


def test_inputs_cut_into_different_sequences_are_refused_after_one_without_lod():
    exe, main, out = _lod_sum()
    ones = np.ones((4, 2))
    feed = {"a": ones, "b": LoDTensor(ones, [[0, 1, 4]]), "c": LoDTensor(ones, [[0, 2, 4]])}
    message = ("X 'b' has LoD [[0, 1, 4]] but X 'c' has LoD [[0, 2, 4]]; they must hold the "
               "same sequences")
    with pytest.raises(ExecutionError, match=r"^op #0 sum \(X: a \[4, 2\], X: b \[4, 2\], "
                                             r"X: c \[4, 2\]\): ") as whole:
        exe.run(main, feed=feed, fetch_list=[out], scope=fd.Scope())
    assert str(whole.value).endswith(message)
    run = exe.start(main, feed, fd.Scope())
    with pytest.raises(ExecutionError) as stepped:
        run.step()
    assert str(stepped.value).endswith(message)
    same = dict(feed, a=LoDTensor(ones, [[0, 1, 4]]), c=LoDTensor(ones, [[0, 1, 4]]))
    total, = exe.run(main, feed=same, fetch_list=[out], scope=fd.Scope(), return_numpy=False)
    np.testing.assert_array_equal(np.array(total), 3 * ones)
    assert total.lod() == [[0, 1, 4]]  # Out shares X[0]'s LoD, as in Paddle


def test_fetching_lod_tensors_gives_the_values_and_their_lod():
    exe, main, scope, feed, fetch = rnn_session()
    twin = _copy(scope)
    arrays = exe.run(main, feed=feed, fetch_list=fetch[:2], scope=twin)
    tensors = exe.run(main, feed=feed, fetch_list=fetch[:2], scope=scope, return_numpy=False)
    assert all(isinstance(t, LoDTensor) for t in tensors)
    np.testing.assert_array_equal(tensors[0].numpy(), arrays[0])
    assert tensors[0].lod() == [[0, 3, 4, 8]]  # the recurrent output keeps x's sequences
    np.testing.assert_array_equal(np.asarray(tensors[1]), arrays[1])
    assert tensors[1].lod() == []


def test_fetching_the_step_scopes_gives_the_frame_history_itself():
    exe, main, scope, feed, fetch = rnn_session()
    run = exe.start(main, feed, scope)
    run.run_to_end()
    name = next(n for n in run.plan.names if n and "step_scopes" in n)
    holder, = run.fetch([name])
    assert isinstance(holder, FrameHistory)
    assert holder.frames_run() == [0, 1, 2, 3] and holder.batch_size(3) == 1


def test_an_ops_description_names_the_layer_that_made_it():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    first, fourth = run.plan.steps[0], run.plan.steps[3]
    assert re.fullmatch(r"op #0 mul in layer hidden \(X: x \[5, 4\], "
                        r"Y: hidden\.w_\d+ \[4, 8\]\)", run.describe(first))
    assert re.fullmatch(r"op #3 mul in layer out \(X: hidden\.tmp_\d+ unset, "
                        r"Y: out\.w_\d+ \[8, 3\]\)", run.describe(fourth))


def test_a_parameter_nothing_set_names_the_op_that_reads_it_not_the_first_op():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3], dtype="float64")
        fd.fc(fd.relu(x), 2, name="head")  # op #0 relu, op #1 mul reads head.w_0
    exe = fd.Executor()
    with pytest.raises(ExecutionError) as err:
        exe.start(main, {"x": np.ones((2, 3))}, fd.Scope())
    assert str(err.value) == ("op #1 mul reads parameter 'head.w_0', which nothing has set: "
                              "run the startup program first")


def test_feeding_a_typo_of_a_computed_variable_suggests_it():
    exe, main, scope, feed, loss = mlp_session()
    plan = exe.prepare(main)
    hidden = plan.names[plan.steps[2].output_slots()[0]]  # the hidden layer's relu output
    typo = hidden.replace("hidden", "hiden")
    with pytest.raises(FluidscopeError) as err:
        exe.run(main, feed=dict(feed, **{typo: np.ones((5, 8))}), scope=scope)
    assert str(err.value) == (f"feed '{typo}' is not a variable of this program; did you "
                              f"mean '{hidden}'? it can be fed ['x', 'y']")


def test_a_lod_aware_op_with_one_output_per_input_writes_each_of_them():
    # sequence_concat_grad gives each input its gradient: duplicable outputs of a LoD kernel
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        a = fd.data("a", [None, 2], dtype="float64", lod_level=1)
        b = fd.data("b", [None, 2], dtype="float64", lod_level=1)
        a.stop_gradient = b.stop_gradient = False
        joined = fd.sequence_concat([a, b])
        loss = fd.reduce_sum(fd.elementwise_mul(joined, fd.data("w", [None, 2], "float64")))
        fd.append_backward(loss)
    w = np.arange(14.0).reshape(7, 2)  # a: sequences of 1 and 2 rows, b: of 3 and 1 rows
    feed = {"a": LoDTensor(np.ones((3, 2)), [[0, 1, 3]]),
            "b": LoDTensor(np.ones((4, 2)), [[0, 3, 4]]), "w": w}
    da, db = fd.Executor().run(main, feed=feed, fetch_list=["a@GRAD", "b@GRAD"],
                               scope=fd.Scope(), return_numpy=False)
    # joined rows: a0, b0 b1 b2 | a1 a2, b3
    np.testing.assert_array_equal(da.numpy(), w[[0, 4, 5]])
    np.testing.assert_array_equal(db.numpy(), w[[1, 2, 3, 6]])
    assert (da.lod(), db.lod()) == ([[0, 1, 3]], [[0, 3, 4]])  # each its own input's sequences


def test_a_feed_of_the_declared_dtype_is_bound_as_is_not_copied():
    exe, main, scope, feed, loss = mlp_session()
    x = np.ascontiguousarray(feed["x"], dtype=np.float64)  # declared float64
    run = exe.start(main, dict(feed, x=x), scope)
    assert run.vals[run.plan.slot["x"]] is x
    as32 = x.astype(np.float32)  # cast to the declared dtype: a new array of it
    run = exe.start(main, dict(feed, x=as32), scope)
    bound = run.vals[run.plan.slot["x"]]
    assert bound.dtype == np.float64 and bound is not as32


def _one_op(namescope=None):
    desc, b = new_program()
    add_var(b, "x", [-1, 2])
    add_var(b, "y", [-1, 2])
    attrs = {} if namescope is None else {"op_namescope": namescope}
    add_op(b, "relu", {"X": ["x"]}, {"Out": ["y"]}, **attrs)
    return desc


@pytest.mark.parametrize("namescope, layer", [
    (None, ""), ("", ""), ("/", ""), ("/Xception/", " in layer Xception"),
    ("/block_1/X/", " in layer block_1/X")])
def test_an_ops_description_names_its_layer_only_when_it_has_one(namescope, layer):
    exe = fd.Executor()
    run = exe.start(_one_op(namescope), {"x": np.ones((3, 2), np.float32)}, fd.Scope())
    assert run.describe(run.plan.steps[0]) == f"op #0 relu{layer} (X: x [3, 2])"


def test_fetching_a_tensor_without_lod_as_a_lod_tensor():
    exe, main, scope, feed, loss = mlp_session()
    t, = exe.run(main, feed=feed, fetch_list=[loss], scope=scope, return_numpy=False)
    assert isinstance(t, LoDTensor) and t.lod() == [] and t.shape() == []


def test_running_to_the_end_after_one_step_runs_each_op_once():
    # op #0 updates the persistable w in place (w = 3w): running it twice would show
    desc, b = new_program()
    add_var(b, "w", [2], persistable=True)
    add_var(b, "y", [2])
    add_op(b, "scale", {"X": ["w"]}, {"Out": ["w"]}, scale=3.0)
    add_op(b, "scale", {"X": ["w"]}, {"Out": ["y"]}, bias=1.0)
    scope = fd.Scope()
    scope.var("w").get_tensor().set(np.array([1.0, 2.0], np.float32))
    run = fd.Executor().start(desc, None, scope)
    run.step()
    run.run_to_end()
    run.write_back()
    np.testing.assert_array_equal(run.fetch(["y"])[0], [4.0, 7.0])
    np.testing.assert_array_equal(np.array(scope.find_var("w").get_tensor()), [3.0, 6.0])


def test_stepping_carries_lod_through_ops_that_only_pass_it_on():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        r = fd.relu(x)
        pooled = fd.sequence_pool(r, "sum")
    x_val = np.arange(10.0).reshape(5, 2)
    run = fd.Executor().start(main, {"x": LoDTensor(x_val, [[0, 2, 5]])}, fd.Scope())
    while not run.finished:
        run.step()
    relu_out, total = run.fetch([r, pooled], return_numpy=False)
    assert relu_out.lod() == [[0, 2, 5]]
    np.testing.assert_array_equal(total.numpy(), [x_val[:2].sum(0), x_val[2:].sum(0)])


def test_a_persistable_result_is_written_back_with_its_lod():
    desc, b = new_program()
    add_var(b, "x", [-1, 2], lod_level=1)
    add_var(b, "kept", [-1, 2], persistable=True)
    add_op(b, "assign", {"X": ["x"]}, {"Out": ["kept"]})
    scope = fd.Scope()
    x = LoDTensor(np.ones((3, 2), np.float32), [[0, 1, 3]])
    fd.Executor().run(desc, feed={"x": x}, scope=scope)
    kept = scope.find_var("kept").get_tensor()
    assert kept.lod() == [[0, 1, 3]]
    np.testing.assert_array_equal(kept.numpy(), x.numpy())


def test_a_typo_of_a_parameter_is_not_offered_as_a_feed():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        fd.fc(fd.data("x", [None, 3], dtype="float64"), 2, name="head")
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    with pytest.raises(FluidscopeError) as err:
        exe.run(main, feed={"x": np.ones((1, 3)), "head.w_O": np.ones((3, 2))}, scope=scope)
    message = str(err.value)  # the nearest name that is not persistable may be offered
    assert message.startswith("feed 'head.w_O' is not a variable of this program; ")
    assert message.endswith("it can be fed ['x']") and "head.w_0" not in message


def test_fetch_names_and_fetch_errors_name_what_was_asked():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    assert run.fetch_names(["x", loss]) == ["x", loss.name]
    with pytest.raises(FluidscopeError) as err:
        run.fetch(["nope"])
    assert str(err.value) == "cannot fetch 'nope': no op of this program reads or writes it"
    assert str(run.error_at(None, ValueError("boom"))) == "executor: ValueError: boom"


def test_seek_stands_before_the_step_asked_for():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    run.seek(2)
    assert run.next_step == 2 and not run.finished
    assert run.unroll_next() is None
    run.seek(len(run.plan.steps))
    assert run.finished


def test_stepping_keeps_the_decision_its_first_step_made(monkeypatch):
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    run.step()
    assert run.plan.small_products is True
    monkeypatch.setattr(threads, "SMALL_PRODUCT", 1)  # every product "large" from now on
    while not run.finished:
        run.step()
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert run.plan.small_products is True  # decided once: every run at one count


def test_training_through_a_kid_scope_updates_the_parameters_where_they_live():
    exe, main, root, feed, loss = mlp_session()
    before = params(root)
    kid = root.new_scope()
    exe.run(main, feed=feed, fetch_list=[loss], scope=kid)
    assert kid.local_var_names() == []  # nothing new in the kid: the root's vars changed
    after = params(root)
    assert any(not np.array_equal(before[n], after[n]) for n in before)
    w = root.find_var(next(n for n in before if ".w_" in n)).get_tensor()
    assert w.place == exe.place
