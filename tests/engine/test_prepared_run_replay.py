"""Executor.run's prepared runs (runtime.replay, issue #16 item 2): a training loop's runs
after the first skip the work around the ops. They must give, byte for byte, what the
general path and the debugger give; every change they were not prepared for (feed shape
or dtype, scope, program edit, NaN guard, fetch list, a debugger session holding values)
must send the run the general way; and an op's error must read as the general path's.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
import fluidscope.engine.random as fluid_random
from fluidscope.engine import ExecutionError
from fluidscope.engine.runtime.replay import PreparedRun
from prepared_run_spy import replays  # noqa: F401  (the fixture)

ROWS = 72  # more rows than linalg.SMALL_M: every buffer-reuse path of a plain run is taken


def _mlp(dtype, seed=11):
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


def _feeds(dtype, rows=ROWS, count=3):
    rng = np.random.default_rng(2)
    return [{"x": rng.standard_normal((rows, 20)).astype(dtype),
             "label": rng.integers(0, 5, (rows, 1))} for _ in range(count)]


def _params(main, scope):
    return [np.array(scope.find_var(p.name).get_tensor().value, copy=True)
            for p in main.all_parameters()]


def _general_only(monkeypatch):
    monkeypatch.setattr(PreparedRun, "after", classmethod(lambda cls, *a: None))


def _train(dtype, feeds, fetch=None):
    main, exe, scope, loss = _mlp(dtype)
    fetch = fetch or [loss]
    out = [exe.run(main, feed=f, fetch_list=fetch, scope=scope) for f in feeds]
    return [[np.asarray(v).tobytes() for v in got] for got in out], _params(main, scope)


def _debugged(dtype, feeds):
    """The same steps, each driven op by op by the debugger to its end."""
    main, exe, scope, loss = _mlp(dtype)
    out = []
    for feed in feeds:
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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prepared_runs_equal_general_runs_and_the_debugger_byte_for_byte(
        dtype, replays, monkeypatch):
    feeds = _feeds(dtype) * 3
    prepared = _train(dtype, feeds)
    assert replays and all(replays[1:]) and len(replays) == len(feeds) - 1
    debugged = _debugged(dtype, feeds)
    _general_only(monkeypatch)
    replays.clear()
    general = _train(dtype, feeds)
    assert replays == []  # no prepared run was ever made
    _same(prepared, general)
    _same(prepared, debugged)


def test_fetching_every_value_by_name_is_the_same_prepared_or_not(replays, monkeypatch):
    main, exe, scope, loss = _mlp("float32")
    names = [n for n in exe.prepare(main).names[1:] if not n.endswith("@GRAD")]
    feeds = _feeds("float32") * 2
    got = [exe.run(main, feed=f, fetch_list=names, scope=scope) for f in feeds]
    assert all(replays)
    _general_only(monkeypatch)
    main2, exe2, scope2, _ = _mlp("float32")
    want = [exe2.run(main2, feed=f, fetch_list=names, scope=scope2) for f in feeds]
    for g, w in zip(got, want, strict=True):
        assert [np.asarray(v).tobytes() for v in g] == [np.asarray(v).tobytes() for v in w]


def _reference(steps):
    """(fetched bytes, params) of ``steps`` (callables (main, exe, scope, loss) -> fetched)
    each on a fresh executor's general path."""
    main, exe, scope, loss = _mlp("float32")
    out = []
    for step in steps:
        exe.prepare(main).prepared_run = None
        out.append([np.asarray(v).tobytes() for v in step(main, exe, scope, loss)])
    return out, _params(main, scope)


def _with_replay(steps, replays):
    main, exe, scope, loss = _mlp("float32")
    out = [[np.asarray(v).tobytes() for v in step(main, exe, scope, loss)] for step in steps]
    return (out, _params(main, scope)), list(replays)


FEEDS = _feeds("float32")


def _plain(feed, **kw):
    return lambda main, exe, scope, loss: exe.run(
        main, feed=feed, fetch_list=kw.get("fetch", [loss]), scope=scope,
        check_nan_inf=kw.get("nan"))


def _check(steps, replays, expect):
    got, taken = _with_replay(steps, replays)
    assert taken == expect
    _same(got, _reference(steps))


def test_a_new_feed_shape_runs_the_general_way(replays):
    small = _feeds("float32", rows=8)[0]
    _check([_plain(FEEDS[0]), _plain(FEEDS[1]), _plain(small), _plain(small), _plain(FEEDS[2])],
           replays, [True, False, True, False])


def test_a_new_feed_dtype_runs_the_general_way(replays):
    as_int32 = dict(FEEDS[1], label=FEEDS[1]["label"].astype(np.int32))  # cast every run
    as_f64 = dict(FEEDS[2], x=FEEDS[2]["x"].astype(np.float64))
    _check([_plain(FEEDS[0]), _plain(as_int32), _plain(as_int32), _plain(as_f64),
            _plain(FEEDS[0]), _plain(FEEDS[1])], replays, [False, True])
    # (a run whose feed was cast leaves no prepared run: the next two did not try one)


def test_a_feed_in_another_order_or_a_list_runs_the_general_way(replays):
    reordered = {"label": FEEDS[1]["label"], "x": FEEDS[1]["x"]}
    listed = dict(FEEDS[2], label=FEEDS[2]["label"].tolist())
    _check([_plain(FEEDS[0]), _plain(reordered), _plain(FEEDS[1]), _plain(listed),
            _plain(FEEDS[0])], replays, [False, False, False])


def test_a_changed_fetch_list_runs_the_general_way(replays):
    def fetch_w(main, exe, scope, loss):
        return exe.run(main, feed=FEEDS[1], fetch_list=[loss, "fc_0.w_0"], scope=scope)
    _check([_plain(FEEDS[0]), fetch_w, _plain(FEEDS[2]), _plain(FEEDS[0])],
           replays, [False, False, True])


def test_the_nan_guard_runs_the_general_way(replays):
    _check([_plain(FEEDS[0]), _plain(FEEDS[1], nan=True), _plain(FEEDS[2])], replays, [True])


def test_another_scope_or_a_scope_that_changed_runs_the_general_way(replays):
    main, exe, scope, loss = _mlp("float32")
    _, _, other, _ = _mlp("float32", seed=12)
    for feed in FEEDS:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert replays == [True, True]
    (got,) = exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=other)
    assert replays[-1] is False
    main2, exe2, _, loss2 = _mlp("float32")
    _, _, other2, _ = _mlp("float32", seed=12)
    (want,) = exe2.run(main2, feed=FEEDS[0], fetch_list=[loss2], scope=other2)
    assert got.tobytes() == want.tobytes()
    # a value set into a parameter's variable is read; a variable added bumps the scope
    w = scope.find_var("fc_0.w_0").get_tensor()
    w.set(np.zeros_like(w.value))
    scope.var("something_else")
    exe.run(main, feed=FEEDS[1], fetch_list=[loss], scope=scope)
    assert replays[-1] is False
    exe.run(main, feed=FEEDS[1], fetch_list=[loss], scope=scope)
    exe.run(main, feed=FEEDS[1], fetch_list=[loss], scope=scope)
    assert replays[-1] is True
    w.set(np.zeros_like(w.value))  # a new value, same variable and scope: still prepared
    (zero_w,) = exe.run(main, feed=FEEDS[2], fetch_list=["fc_0.tmp_0"], scope=scope)
    assert not zero_w.any()


def test_an_edited_program_runs_the_general_way(replays):
    main, exe, scope, loss = _mlp("float32")
    for feed in FEEDS:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert replays == [True, True]
    old_plan = exe.prepare(main)
    with fd.program_guard(main):
        extra = fd.scale(loss, scale=3.0)
    assert exe.prepare(main) is not old_plan and exe.prepare(main).prepared_run is None
    loss_a, tripled = exe.run(main, feed=FEEDS[0], fetch_list=[loss, extra], scope=scope)
    assert replays[-1:] == [True] and len(replays) == 2  # the new plan had none to try
    assert tripled == np.float32(3) * loss_a


def test_a_debugger_session_holding_values_changes_nothing(replays):
    steps = [_plain(f) for f in FEEDS * 2]
    main, exe, scope, loss = _mlp("float32")
    out = []
    for k, step in enumerate(steps):
        if k == 2:  # a session stopped half way, holding its values, while plain runs go on
            sess = exe.debug(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
            for _ in range(12):
                sess.step()
            held = {n: np.array(sess.tensor(n).value, copy=True)
                    for n in ("fc_0.tmp_2", "fc_1.tmp_2")}
        out.append([np.asarray(v).tobytes() for v in step(main, exe, scope, loss)])
    for name, value in held.items():  # nothing a plain run did wrote into them
        assert sess.tensor(name).value.tobytes() == value.tobytes()
    assert all(replays)
    _same((out, _params(main, scope)), _reference(steps))


def _error(exe, main, scope, loss, feed):
    with pytest.raises(ExecutionError) as info:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    return str(info.value)


def test_an_op_error_reads_the_same_prepared_or_not(replays):
    bad = dict(FEEDS[1], label=np.full_like(FEEDS[1]["label"], 7))  # 5 classes
    main, exe, scope, loss = _mlp("float32")
    exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
    before = _params(main, scope)
    prepared_message = _error(exe, main, scope, loss, bad)
    assert replays == [True]
    _same(([], _params(main, scope)), ([], before))  # nothing written back
    exe.prepare(main).prepared_run = None
    general_message = _error(exe, main, scope, loss, bad)
    assert replays == [True]
    assert prepared_message == general_message
    assert "softmax_with_cross_entropy" in prepared_message and "[72, 1]" in prepared_message
    # and the loop goes on, prepared again after a good general run
    exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
    exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
    assert replays[-1] is True


def test_a_parameter_unset_or_given_lod_behind_the_scopes_back_is_seen(replays):
    """Variable.set_value changes no Scope.generation: the prepared run reads each value."""
    from fluidscope.engine import LoDTensor
    main, exe, scope, loss = _mlp("float32")
    for feed in FEEDS:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    var = scope.find_var("fc_0.b_0")
    kept = var.get_tensor().value
    var.set_value(LoDTensor())
    with pytest.raises(ExecutionError, match="reads parameter 'fc_0.b_0', which nothing has set"):
        exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
    assert replays[-1] is False
    var.set_value(LoDTensor(kept, [[0, 16]]))  # LoD: the general path's slot list carries it
    exe.run(main, feed=FEEDS[0], fetch_list=[loss], scope=scope)
    assert replays[-1] is False
