"""runtime.fused_updates: a plain run drives a training program's consecutive sgd ops as
one step (issue #16 item 2). It must give, byte for byte, what the same plan gives with
each sgd run as its own step (the general path) and what the debugger gives stepping
each sgd op by op; keep every guarantee of runtime.recycle's ownership rule (a fetched
array the user holds never changes); and name the member op that fails."""
import numpy as np
import pytest

import fluidscope.designer as fd
import fluidscope.engine.random as fluid_random
from fluidscope.engine import ExecutionError
from fluidscope.engine.runtime import recycle
from fluidscope.engine.runtime.fused_updates import FusedUpdates

pytestmark = pytest.mark.skipif(not recycle.ENABLED, reason="no reference counts here")

ROWS = 72


def _mlp(dtype, seed=5):
    fluid_random.seed(seed)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 20], dtype)
        label = fd.data("label", [None, 1], "int64")
        h = fd.fc(fd.fc(x, 16, act="relu"), 16, act="relu")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(h, 5), label))
        fd.optimizer.SGD(0.05).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, exe, scope, loss


def _feeds(dtype, count=4):
    rng = np.random.default_rng(3)
    return [{"x": rng.standard_normal((ROWS, 20)).astype(dtype),
             "label": rng.integers(0, 5, (ROWS, 1))} for _ in range(count)]


def _params(main, scope):
    return [np.array(scope.find_var(p.name).get_tensor().value, copy=True)
            for p in main.all_parameters()]


def _fused_of(plan):
    return [s for s in plan.run_steps if isinstance(s, FusedUpdates)]


def _train(dtype, fused, fetch_params=False):
    main, exe, scope, loss = _mlp(dtype)
    plan = exe.prepare(main)
    if not fused:
        plan.run_steps = plan.steps  # every sgd its own step, as before the fusion
    fetch = [loss] + (main.all_parameters() if fetch_params else [])
    out = [[np.asarray(v).tobytes() for v in exe.run(main, feed=f, fetch_list=fetch,
                                                      scope=scope)]
           for f in _feeds(dtype)]
    return out, _params(main, scope)


def _debugged(dtype):
    main, exe, scope, loss = _mlp(dtype)
    out = []
    for feed in _feeds(dtype):
        sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
        while not sess.finished:
            sess.step()
        out.append([np.asarray(v).tobytes() for v in sess.fetch()])
    return out, _params(main, scope)


def _same(a, b):
    (fa, pa), (fb, pb) = a, b
    assert fa == fb
    for x, y in zip(pa, pb, strict=True):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


def test_a_training_plan_runs_its_six_sgd_ops_as_one_step():
    main, exe, scope, loss = _mlp("float32")
    plan = exe.prepare(main)
    (fused,) = _fused_of(plan)
    assert [s.type for s in fused.members] == ["sgd"] * 6
    assert plan.run_steps[-1] is fused
    assert len(plan.run_steps) == len(plan.steps) - 5
    assert all(s.type == "sgd" for s in plan.steps[-6:])  # the debugger's steps: as they were


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fetch_params", [False, True])
def test_fused_updates_equal_the_general_path_and_the_debugger_byte_for_byte(
        dtype, fetch_params):
    fused = _train(dtype, True, fetch_params)
    _same(fused, _train(dtype, False, fetch_params))
    if not fetch_params:
        _same(fused, _debugged(dtype))


def test_a_fetched_parameter_the_user_holds_never_changes():
    main, exe, scope, loss = _mlp("float32")
    params = main.all_parameters()
    feeds = _feeds("float32")
    held = exe.run(main, feed=feeds[0], fetch_list=[loss] + params, scope=scope)[1:]
    copies = [np.array(a, copy=True) for a in held]
    for feed in feeds * 2:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    for a, c in zip(held, copies):
        assert a.tobytes() == c.tobytes()
    now = _params(main, scope)
    assert any(a.tobytes() != n.tobytes() for a, n in zip(held, now))  # training went on


def test_a_parameter_of_another_dtype_takes_the_kernel_and_gives_its_bytes():
    """A float64 bias in a float32 program: that member leaves the numpy fast case for the
    kernel (``_sgd_into`` falls back to ``_sgd``), in the fused step as in its own."""
    def trained(fused):
        main, exe, scope, loss = _mlp("float32")
        plan = exe.prepare(main)
        if not fused:
            plan.run_steps = plan.steps
        tensor = scope.find_var(main.all_parameters()[1].name).get_tensor()
        tensor.value = tensor.value.astype(np.float64)
        for feed in _feeds("float32"):
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        return [], _params(main, scope)
    _same(trained(True), trained(False))


def test_an_error_in_a_member_names_that_sgd_op():
    main, exe, scope, loss = _mlp("float32")
    feed = _feeds("float32")[0]
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    plan = exe.prepare(main)
    (fused,) = _fused_of(plan)
    lr_name = main.global_block().ops[fused.members[0].index].input("LearningRate")[0]
    scope.find_var(lr_name).get_tensor().value = np.array([0.05, 0.05], np.float32)
    with pytest.raises(ExecutionError) as err:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    first = fused.members[0]
    assert f"op #{first.index} sgd" in str(err.value)
    assert "LearningRate" in str(err.value) and "[2]" in str(err.value)


def test_fetched_gradients_and_parameters_held_by_the_user_never_change():
    """Fetching the gradients keeps their slots: each sgd then may not write into its
    dead gradient and takes its own spare, under the ownership rule; nothing the user
    holds from an earlier step may change, and every step equals the general path's."""
    def trained(fused):
        main, exe, scope, loss = _mlp("float32")
        plan = exe.prepare(main)
        if not fused:
            plan.run_steps = plan.steps
        params = [p.name for p in main.all_parameters()]
        fetch = [loss.name] + [p + "@GRAD" for p in params] + params
        held, copies = [], []
        for feed in _feeds("float32") * 2:
            got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
            held.append(got)
            copies.append([np.array(a, copy=True) for a in got])
        for got, saved in zip(held, copies):
            for a, c in zip(got, saved, strict=True):
                assert a.tobytes() == c.tobytes()
        return [[a.tobytes() for a in got] for got in held], _params(main, scope)
    _same(trained(True), trained(False))
