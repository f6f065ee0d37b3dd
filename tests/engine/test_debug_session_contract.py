"""What the debugger session reports, exactly: positions' breadcrumbs and paths, each
breakpoint's description, stop reasons, the errors' words, tensors read from the scope and
from frames, fetch before the end (issue #17: mutants of engine/debug that the behaviour
tests of test_debugger.py let through)."""
import functools

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.debug.types import Breakpoint, Position
from fluidscope.engine.errors import FluidscopeError

from test_debugger import mlp_session, rnn_session

rng = np.random.default_rng(17)


# ------------------------------------------------------------------ positions
def test_breadcrumbs_and_paths_at_the_start_at_top_level_and_in_a_frame():
    start = Position(0, None, None, "forward")
    assert start.breadcrumb() == "block 0 › start" and start.path == [] and start.at_start
    top = Position(0, 5, "softmax", "forward")
    assert top.breadcrumb() == "block 0 › #5 softmax" and top.path == [(0, 5)]
    assert str(top) == "block 0 › #5 softmax (forward)" and not top.at_start
    inner = Position(1, 2, "mul", "backward", frame=3, parent=Position(0, 4, "recurrent", "forward"))
    assert inner.breadcrumb() == "block 0 › #4 recurrent › frame 3 › block 1 › #2 mul"
    assert inner.path == [(0, 4), (1, 2)]

    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    assert str(sess.position) == "block 0 › start (forward)"
    pos = sess.step_into()
    assert str(pos) == "block 0 › #0 recurrent › frame 0 › block 1 › #0 mul (forward)"
    assert pos.path == [(0, 0), (1, 0)]


# ---------------------------------------------------------------- breakpoints
def stop_here(session):
    return True


def test_a_breakpoint_describes_every_criterion_it_has():
    bp = Breakpoint(3, op_type="mul", op_index=2, var="v", frame=1, condition=stop_here,
                    nan_inf=True)
    assert bp.describe() == ("breakpoint 3: op_type=mul, op #2 of block 0, writes v, frame 1, "
                             "condition stop_here, NaN/Inf")
    assert Breakpoint(4, op_index=0, block=2).describe() == "breakpoint 4: op #0 of block 2"
    assert Breakpoint(5, frame=0).describe() == "breakpoint 5: frame 0"
    assert Breakpoint(6, condition=lambda s: True).describe() == "breakpoint 6: condition <lambda>"
    unnamed = functools.partial(stop_here)
    assert Breakpoint(7, condition=unnamed).describe() == "breakpoint 7: condition callable"
    assert Breakpoint(8, nan_inf=True).describe() == "breakpoint 8: NaN/Inf"
    assert Breakpoint(9, var="h").describe() == "breakpoint 9: writes h"


def test_a_breakpoint_needs_a_criterion_and_a_callable_condition():
    assert Breakpoint(1, op_index=0).block == 0  # op_index alone counts in block 0
    assert Breakpoint(1, op_index=0, block=3).block == 3
    assert Breakpoint(1, op_type="mul").block is None
    for falsy_but_given in ({"op_index": 0}, {"frame": 0}):
        Breakpoint(1, **falsy_but_given)  # index 0 and frame 0 are criteria
    with pytest.raises(FluidscopeError) as err:
        Breakpoint(1, condition=5)
    assert str(err.value) == "break_on: condition must be callable(session) -> bool, got int"
    with pytest.raises(FluidscopeError) as err:
        Breakpoint(1)
    assert str(err.value) == ("break_on needs at least one of op_type, op_index, var, frame, "
                              "condition or nan_inf=True")


def test_stop_reasons_and_breakpoint_bookkeeping():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.run_to(op_type="softmax")
    assert sess.stop_reason == "reached op_type=softmax"
    k = sess.position.op_index
    sess.restart()
    assert sess.stop_reason == "start"
    sess.run_to(op_index=k)
    assert sess.stop_reason == f"reached op #{k} of block 0"
    assert sess.position.op_index == k
    sess.step()
    assert sess.stop_reason == "step"
    bp = sess.break_on(op_type="mean")
    other = sess.break_on(var=loss.name)
    assert (bp.id, other.id) == (1, 2)
    sess.continue_()
    assert sess.stop_reason == "breakpoint 1: op_type=mean" and bp.hits == 1
    assert other.hits == 0  # the first breakpoint that matches is the one counted
    assert repr(sess) == (f"Session({sess.position}, 2 breakpoints, "
                          f"{sess.history_depth} events back)")
    with pytest.raises(FluidscopeError) as err:
        sess.remove_breakpoint(9)
    assert str(err.value) == "no breakpoint 9; there are [1, 2]"
    sess.remove_breakpoint(bp)
    sess.remove_breakpoint(2)
    assert sess.breakpoints == []
    sess.continue_()
    assert sess.finished and sess.stop_reason == "finished"
    sess.step()
    assert sess.stop_reason == "finished"
    sess.step_into()
    assert sess.stop_reason == "finished"


def test_a_disabled_breakpoint_does_not_stop():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    bp = sess.break_on(op_type="mean")
    bp.enabled = False
    sess.continue_()
    assert sess.finished and bp.hits == 0


# -------------------------------------------------------------------- reading
def test_a_program_variable_outside_the_plan_is_read_from_the_scope_with_its_lod():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float64", lod_level=1)
        fd.data("z", [None, 2], dtype="float64", lod_level=1)  # no op reads it
        loss = fd.mean(fd.fc(x, 3, name="f"))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((5, 4)), [[0, 2, 5]])}
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    assert sess.plan.slot.get("z") is None
    assert sess.tensor("z") is None  # declared, never set
    value = rng.standard_normal((3, 2))
    scope.var("z").get_tensor().set(value)
    assert sess.tensor("z").lod() == []
    scope.var("z").get_tensor().set_lod([[0, 1, 3]])
    t = sess.tensor("z")
    np.testing.assert_array_equal(t.numpy(), value)
    assert t.lod() == [[0, 1, 3]] and not t.numpy().flags.writeable
    sess.step()
    fed = sess.tensor("x")
    assert fed.lod() == [[0, 2, 5]] and not fed.numpy().flags.writeable
    with pytest.raises(FluidscopeError) as err:
        sess.tensor("zz")
    assert str(err.value) == "tensor: the program has no variable 'zz'; did you mean ['z']?"
    with pytest.raises(FluidscopeError) as err:
        sess.tensor("qqqqqqqq")
    assert str(err.value) == "tensor: the program has no variable 'qqqqqqqq'"


def test_frame_values_are_read_only_and_step_block_names_are_known():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    sess.step_into()
    inner = [n for n in sess.variables() if n not in sess.plan.names]
    assert inner  # the frame's own values are listed
    for name in inner:
        t = sess.tensor(name)
        if t is not None:
            assert not t.numpy().flags.writeable
            assert t.numpy().shape[0] == sess.frames[0].batch_size


def test_fetch_before_the_end_gives_the_values_so_far():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    assert sess.fetch() == [None] and sess.fetch(return_numpy=False) == [None]
    sess.run_to(op_type="mean")
    (as_array,), (as_tensor,) = sess.fetch(), sess.fetch(return_numpy=False)
    assert isinstance(as_array, np.ndarray)
    np.testing.assert_array_equal(as_tensor.numpy(), as_array)
    np.testing.assert_array_equal(as_array, sess.tensor(loss.name).numpy())
    sess.continue_()
    (final,), (final_tensor,) = sess.fetch(), sess.fetch(return_numpy=False)
    assert isinstance(final, np.ndarray) and not isinstance(final_tensor, np.ndarray)
    np.testing.assert_array_equal(final, as_array)
    np.testing.assert_array_equal(final_tensor.numpy(), as_array)


# -------------------------------------------------------------------- history
from fluidscope.engine.debug import history as hist  # noqa: E402


def record(nbytes):
    r = hist.UndoRecord(None, None, None)
    r.nbytes = nbytes
    return r


def test_history_keeps_the_newest_records_under_the_byte_limit():
    h = hist.History(100)
    a, b, c, d = record(60), record(30), record(20), record(500)
    h.push(a)
    h.push(b)
    assert (len(h), h.total_bytes, h.trimmed) == (2, 90, 0)
    h.push(record(10))  # exactly at the limit: nothing dropped
    assert (len(h), h.total_bytes, h.trimmed) == (3, 100, 0)
    h.push(c)  # 120 > 100: the oldest (60) goes
    assert (len(h), h.total_bytes, h.trimmed) == (3, 60, 1) and h.records[0] is b
    h.push(d)  # over the limit alone: kept, every older record dropped
    assert (len(h), h.total_bytes, h.trimmed) == (1, 500, 4)
    assert h.pop() is d and (len(h), h.total_bytes) == (0, 0)
    h.push(c)
    h.clear()
    assert (len(h), h.total_bytes, h.trimmed) == (0, 0, 0)


def test_history_keeps_at_most_max_history_events(monkeypatch):
    monkeypatch.setattr(hist, "MAX_HISTORY_EVENTS", 3)
    h = hist.History(10**9)
    for _ in range(3):
        h.push(record(0))
    assert (len(h), h.trimmed) == (3, 0)
    h.push(record(0))
    assert (len(h), h.trimmed) == (3, 1)


def test_an_undo_record_counts_the_bytes_it_keeps_and_restores_the_oldest_value():
    first, second = np.zeros(4), np.ones(8)
    container = [first, None, "holder"]
    r = hist.UndoRecord(None, None, None)
    assert r.nbytes == 0 and r.writes == [] and r.finished_step is None
    r.save_slots(container, [0, 1, 2])
    assert r.nbytes == first.nbytes  # None and objects without nbytes count 0
    container[0] = second
    r.save_slots(container, [0])
    assert r.nbytes == first.nbytes + second.nbytes
    container[0], container[1], container[2] = np.full(2, 7.0), np.ones(1), "other"
    r.restore_slots()
    assert container[0] is first and container[1] is None and container[2] == "holder"


def test_scope_state_restores_a_tensor_a_plain_value_and_an_absent_variable():
    scope = fd.Scope()
    value = rng.standard_normal((3, 2))
    scope.var("t").get_tensor().set(value)
    scope.var("t").get_tensor().set_lod([[0, 1, 3]])
    scope.var("v").set_value(["a", "plain", "value"])
    saved = {n: hist.scope_state(scope, n) for n in ("t", "v", "absent")}
    assert saved["absent"] is None and saved["v"][0] == "value" and saved["t"][0] == "tensor"
    scope.var("t").get_tensor().set(np.zeros((2, 2)))
    scope.var("t").get_tensor().set_lod([[0, 2]])
    scope.var("v").set_value("changed")
    scope.var("absent").get_tensor().set(np.ones(1))
    for name, state in saved.items():
        hist.restore_scope_state(scope, name, state)
    t = scope.find_var("t").get_tensor()
    np.testing.assert_array_equal(t.numpy(), value)
    assert t.lod() == [[0, 1, 3]] and t.place == fd.CPUPlace()
    assert scope.find_var("v").get_value() == ["a", "plain", "value"]
    assert scope.find_var("absent") is None


def test_rng_state_round_trips_and_a_generator_without_state_gives_none(monkeypatch):
    from fluidscope.engine import random as fd_random
    fd_random.seed(4)
    state = hist.rng_state(np)
    gen = fd_random.generator(np)
    assert state[0] is gen and isinstance(state[1], dict)
    first = gen.random(3)
    hist.set_rng_state(state)
    np.testing.assert_array_equal(gen.random(3), first)
    hist.set_rng_state(None)  # nothing saved: nothing to do
    monkeypatch.setattr(fd_random, "generator", lambda xp: object())
    assert hist.rng_state(np) is None


# ------------------------------------------------- breakpoints after the first
def test_later_breakpoints_are_tried_when_earlier_ones_are_disabled_or_false():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    off = sess.break_on(op_type="softmax")
    off.enabled = False
    never = sess.break_on(op_type="softmax", condition=lambda s: False)
    on = sess.break_on(op_type="softmax")
    sess.continue_()
    assert sess.position.op_type == "softmax"
    assert sess.stop_reason == "breakpoint 3: op_type=softmax"
    assert (off.hits, never.hits, on.hits) == (0, 0, 1)
    sess.restart()
    sess.continue_()
    assert on.hits == 2  # counted again on the second run


def test_listeners_are_told_with_the_session_at_every_stop():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    told = []
    sess.listeners.append(lambda s: told.append((s, s.stop_reason)))
    sess.step()
    sess.back()
    sess.restart()
    assert told == [(sess, "step"), (sess, "back"), (sess, "start")]


def test_step_over_a_recurrent_op_with_a_breakpoint_elsewhere_stops_right_after_it():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    bp = sess.break_on(op_type="no_such_op")
    pos = sess.step()
    assert (pos.op_type, pos.frame, pos.block, sess.stop_reason) == ("recurrent", None, 0, "step")
    assert pos.op_index == sess.plan.steps[0].index and bp.hits == 0
    assert sess.upcoming.op_index == sess.plan.steps[1].index


# ------------------------------------------------------------- inside frames
def test_upcoming_inside_a_frame_is_the_position_step_into_reaches():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    assert sess.stop_reason == "step"
    for _ in range(6):  # across the end of a frame into the next one too
        ahead = sess.upcoming
        assert (ahead.block, ahead.frame) == (1, ahead.frame) and ahead.parent is not None
        assert sess.step_into() == ahead
        assert sess.stop_reason == "step"


def test_step_out_and_run_to_an_op_of_the_step_block():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    pos = sess.run_to(op_index=1, block=1)
    assert (pos.block, pos.op_index, pos.frame) == (1, 1, 0)
    assert sess.stop_reason == "reached op #1 of block 1"
    pos = sess.step_out()
    assert (pos.block, pos.op_type, pos.frame) == (0, "recurrent", None)
    assert sess.stop_reason == "stepped out"
    sess.restart()
    sess.run_to(op_index=1, block=1)
    sess.break_on(op_type="tanh", frame=2)
    pos = sess.step_out()  # a breakpoint inside the rest of the op stops it
    assert (pos.op_type, pos.frame) == ("tanh", 2)
    assert sess.stop_reason == "breakpoint 1: op_type=tanh, frame 2"


def test_repr_of_a_finished_session():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.continue_()
    assert repr(sess) == f"Session(finished, 0 breakpoints, {sess.history_depth} events back)"


def test_an_op_failing_inside_a_frame_is_named_with_its_frame_and_the_session_stays():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    sess.step_into()
    sess.step_into()  # frame 0, op #2
    plan = sess.stepper.cursor.frames.plan
    here, depth = sess.position, sess.history_depth
    k = here.op_index + 1
    failing, kept = plan.steps[k], plan.steps[k].run

    def boom(vals):
        raise ValueError("boom")

    failing.run = boom
    try:
        with pytest.raises(FluidscopeError) as err:
            sess.step_into()
    finally:
        failing.run = kept
    assert str(err.value) == (f"frame {here.frame} of op #0 recurrent, step op #{k} "
                              f"{failing.type}: ValueError: boom")
    assert sess.position == here and sess.history_depth == depth
    assert sess.step_into().op_index == k


def test_restart_and_back_erase_a_persistable_the_run_created():
    """A persistable variable the run writes but the scope did not hold before: restart()
    and back() over the write-back take it out of the scope again."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64")
        y = fd.scale(x, 2.0)
        kept = main.global_block().create_var(name="kept", shape=[-1, 2], dtype="float64",
                                              persistable=True)
        fd.assign(y, output=kept)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    sess = exe.debug(main, feed={"x": np.ones((3, 2))}, fetch_list=[y], scope=scope)
    assert scope.find_var("kept") is None
    sess.continue_()
    np.testing.assert_array_equal(np.array(scope.find_var("kept").get_tensor()), 2 * np.ones((3, 2)))
    sess.restart()
    assert scope.find_var("kept") is None
    sess.continue_()
    assert scope.find_var("kept") is not None
    sess.back()  # over the write-back
    assert scope.find_var("kept") is None


def test_exact_words_of_run_to_and_the_state_after_back():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    with pytest.raises(FluidscopeError) as err:
        sess.run_to()
    assert str(err.value) == "run_to needs op_index, op_type or frame"
    sess.step()
    sess.back()
    assert sess.stop_var is None and sess.stop_reason == "back"
    bp = sess.break_on(op_index=1, block=1)
    assert bp.block == 1 and bp.describe() == f"breakpoint {bp.id}: op #1 of block 1"


def test_unknown_names_offer_at_most_three_close_ones_and_step_block_names_are_known():
    import difflib
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    step_plan = next(iter(sess.plan.sub_plans.values()))
    inner = [n for n in step_plan.names[1:] if n not in sess.plan.slot
             and n not in sess.plan.var_descs]
    assert inner
    for name in inner:  # a step block's variable, read outside its frames: no value, no error
        assert sess.tensor(name) is None
    known = sorted(set(sess.plan.names[1:]) | set(sess.plan.var_descs) | set(inner))
    wrong = "w0@GRAD_"
    assert len(difflib.get_close_matches(wrong, known, n=10)) > 3
    with pytest.raises(FluidscopeError) as err:
        sess.tensor(wrong)
    close = difflib.get_close_matches(wrong, known, n=3)
    assert str(err.value) == f"tensor: the program has no variable '{wrong}'; did you mean {close}?"


# ------------------------------------------------------- more exact behaviour
def test_stop_var_is_none_after_every_kind_of_stop_and_back_keeps_every_parameter():
    from test_debugger import params
    exe, main, scope, feed, loss = mlp_session()
    start = params(scope)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.step()
    assert sess.stop_var is None
    sess.run_to(op_type="softmax")
    assert sess.stop_var is None
    sess.continue_()
    assert sess.stop_var is None and sess.finished
    sess.back()  # over the write-back: every parameter back, none erased
    after = params(scope)
    assert set(after) == set(start)
    for name, value in start.items():
        np.testing.assert_array_equal(after[name], value)
    sess.restart()
    assert sess.stop_var is None


def test_only_ops_taking_a_seed_draw_random_numbers():
    from types import SimpleNamespace
    from fluidscope.engine import registry
    from fluidscope.engine.debug.stepper import draws_random
    exe, main, scope, feed, loss = mlp_session(dropout=True)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    assert [s.type for s in sess.plan.steps if draws_random(s)] == ["dropout"]
    by_attr = registry.get("uniform_random")  # a seed attribute, no Seed input
    assert "seed" in by_attr.attr_by_name and not any(s.name == "Seed" for s in by_attr.inputs)
    assert draws_random(SimpleNamespace(opdef=by_attr))
    assert not draws_random(SimpleNamespace(opdef=registry.get("mul")))


def test_a_generator_whose_bit_generator_has_no_state_gives_none(monkeypatch):
    from fluidscope.engine import random as fd_random
    from fluidscope.engine.debug import history as hist
    from types import SimpleNamespace
    monkeypatch.setattr(fd_random, "generator", lambda xp: SimpleNamespace(bit_generator=object()))
    assert hist.rng_state(np) is None


def test_a_nan_breakpoint_that_finds_nothing_lets_the_next_breakpoint_stop():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    nan = sess.break_on(op_type="softmax", nan_inf=True)
    plain = sess.break_on(op_type="softmax")
    pos = sess.continue_()
    assert pos.op_type == "softmax" and (nan.hits, plain.hits) == (0, 1)
    assert sess.stop_reason == f"breakpoint {plain.id}: op_type=softmax"


def test_step_inside_a_frame_with_a_breakpoint_elsewhere_moves_one_op():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    first = sess.step_into()
    sess.break_on(op_type="no_such_op")
    pos = sess.step()
    assert (pos.block, pos.frame, pos.op_index) == (1, 0, first.op_index + 1)



def test_tensors_carry_the_place_they_live_on():
    """What tensor() returns is on the session's place (the very object: a CUDAPlace
    run's tensors say so), a scope value on its own tensor's place."""
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    sess.step_into()
    inner = next(n for n in sess.variables() if n not in sess.plan.names
                 and sess.tensor(n) is not None)
    assert sess.tensor(inner).place is sess.plan.place  # a frame's value
    assert sess.tensor("x").place is sess.plan.place  # a slot of the plan
    main2, startup2 = fd.Program(), fd.Program()
    with fd.program_guard(main2, startup2):
        x = fd.data("x", [None, 2], dtype="float64")
        fd.data("z", [None, 2], dtype="float64")  # no op reads it
        y = fd.scale(x, 2.0)
    scope2 = fd.Scope()
    sess2 = exe.debug(main2, feed={"x": np.ones((2, 2))}, fetch_list=[y], scope=scope2)
    scope2.var("z").get_tensor().set(np.ones((1, 2)))
    assert sess2.tensor("z").place is scope2.find_var("z").get_tensor().place


def test_a_finished_session_continued_again_has_no_stop_var_and_plan_reads_carry_its_place():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.step()
    assert sess.tensor("x").place is sess.plan.place
    sess.continue_()
    assert sess.tensor(loss.name).place is sess.plan.place
    sess.continue_()  # nothing left to run
    assert sess.finished and sess.stop_var is None and sess.stop_reason == "finished"
