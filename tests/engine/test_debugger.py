"""The debugger session: positions, exact time travel, breakpoints, NaN stops, frames.

Every test compares the session with ``exe.run`` of the same program, feed and scope:
the session is the same execution, one op at a time.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import random as fd_random
from fluidscope.engine.errors import ExecutionError, FluidscopeError

from test_recurrent import D, H, _build as build_rnn

rng = np.random.default_rng(11)


def build_mlp(dropout=False, lr=0.1):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float64")
        y = fd.data("y", [None, 1], dtype="int64")
        h = fd.fc(x, 8, act="relu", name="hidden")
        if dropout:
            h = fd.dropout(h, 0.5)
        p = fd.fc(h, 3, act="softmax", name="out")
        loss = fd.mean(fd.cross_entropy(p, y))
        fd.optimizer.SGD(learning_rate=lr).minimize(loss)
    return main, startup, loss


def mlp_session(dropout=False, **options):
    main, startup, loss = build_mlp(dropout)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": rng.standard_normal((5, 4)), "y": rng.integers(0, 3, (5, 1))}
    return exe, main, scope, feed, loss


def params(scope):
    """Copies of every value in the scope (parameters, learning rate)."""
    return {n: np.array(scope.find_var(n).get_tensor()).copy() for n in scope.local_var_names()
            if scope.find_var(n).is_initialized()}


def weight(values, layer):
    return next(v for k, v in values.items() if k.startswith(layer) and ".w_" in k)


# --------------------------------------------------------------------------- MLP
def test_stepping_visits_every_op_in_order_and_ends_like_exe_run():
    exe, main, scope, feed, loss = mlp_session()
    before = params(scope)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    assert sess.position.at_start and sess.upcoming.op_index == sess.plan.steps[0].index
    seen = []
    while not sess.finished:
        seen.append(sess.step().op_index)
    assert seen == [s.index for s in sess.plan.steps]
    phases = [sess.position.phase]
    assert phases == ["optimize"]  # the last op is an SGD update
    got_loss = sess.fetch()[0]
    after_session = params(scope)

    scope2 = fd.Scope()
    for name, value in before.items():
        scope2.var(name).get_tensor().set(value)
    ref_loss = exe.run(main, feed=feed, fetch_list=[loss], scope=scope2)[0]
    np.testing.assert_array_equal(got_loss, ref_loss)
    for name, value in params(scope2).items():
        np.testing.assert_array_equal(after_session[name], value)


def test_phases_follow_op_roles():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    phases = [p.phase for p in sess.events()]
    first_backward = phases.index("backward")
    first_optimize = phases.index("optimize")
    assert set(phases[:first_backward]) == {"forward"}
    assert set(phases[first_backward:first_optimize]) == {"backward"}
    assert set(phases[first_optimize:]) == {"optimize"}


def test_back_restores_exactly_and_stepping_again_reproduces():
    exe, main, scope, feed, loss = mlp_session()
    start_params = params(scope)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    for _ in range(3):
        sess.step()
    here = sess.position
    name = sess.plan.names[sess.plan.steps[2].output_slots()[0]]
    value = sess.tensor(name).numpy().copy()
    sess.continue_()
    assert sess.finished
    final_params = params(scope)
    assert not np.array_equal(weight(final_params, "out"), weight(start_params, "out"))
    # back over the write-back and every op after `here`
    while sess.position != here:
        sess.back()
    for n, v in params(scope).items():
        np.testing.assert_array_equal(v, start_params[n])
    np.testing.assert_array_equal(sess.tensor(name).numpy(), value)
    sess.continue_()
    for n, v in params(scope).items():
        np.testing.assert_array_equal(v, final_params[n])


def test_back_before_a_random_op_replays_the_same_mask():
    fd_random.seed(3)
    exe, main, scope, feed, loss = mlp_session(dropout=True)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    pos = sess.run_to(op_type="dropout")
    out_name = sess.plan.names[sess.plan.steps[pos_index(sess, pos)].output_slots()[0]]
    first = sess.tensor(out_name).numpy().copy()
    sess.back()
    assert sess.tensor(out_name) is None
    sess.step()
    np.testing.assert_array_equal(sess.tensor(out_name).numpy(), first)


def pos_index(sess, pos):
    return next(k for k, s in enumerate(sess.plan.steps) if s.index == pos.op_index)


def test_restart_undoes_the_write_back_and_repeats_the_run():
    exe, main, scope, feed, loss = mlp_session()
    start = params(scope)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.continue_()
    first = sess.fetch()[0]
    sess.restart()
    assert sess.position.at_start and not sess.finished
    for n, v in params(scope).items():
        np.testing.assert_array_equal(v, start[n])
    sess.continue_()
    np.testing.assert_array_equal(sess.fetch()[0], first)


def test_restart_rewinds_the_random_generator():
    """A run with dropout, restarted and run to the end again, draws the same mask: the
    same dropout output, the same loss, the same updated weights."""
    fd_random.seed(5)
    exe, main, scope, feed, loss = mlp_session(dropout=True)
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    pos = sess.run_to(op_type="dropout")
    out_name = sess.plan.names[sess.plan.steps[pos_index(sess, pos)].output_slots()[0]]
    first_mask = sess.tensor(out_name).numpy() != 0
    assert 0 < first_mask.mean() < 1  # a real draw: some units dropped, some kept
    sess.continue_()
    first_loss, first_params = sess.fetch()[0], params(scope)
    sess.restart()
    sess.run_to(op_type="dropout")
    np.testing.assert_array_equal(sess.tensor(out_name).numpy() != 0, first_mask)
    sess.continue_()
    np.testing.assert_array_equal(sess.fetch()[0], first_loss)
    for n, v in params(scope).items():
        np.testing.assert_array_equal(v, first_params[n])


def test_tensors_are_read_only_and_unknown_names_are_named():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.step()
    t = sess.tensor("x")
    with pytest.raises(ValueError):
        t.numpy()[0, 0] = 1.0
    assert sess.tensor(loss.name) is None  # not computed yet
    hidden_w = next(n for n in params(scope) if n.startswith("hidden") and ".w_" in n)
    with pytest.raises(FluidscopeError, match=f"no variable 'hiden.*{hidden_w}"):
        sess.tensor("hiden" + hidden_w[6:])
    assert sess.fetch() == [None]


def test_back_at_the_start_and_step_out_at_top_level_say_why():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    with pytest.raises(FluidscopeError, match="already at the start"):
        sess.back()
    with pytest.raises(FluidscopeError, match="not inside a recurrent op"):
        sess.step_out()
    with pytest.raises(FluidscopeError, match="run_to needs"):
        sess.run_to()


def test_history_is_bounded_by_bytes():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope, history_bytes=1)
    sess.continue_()
    assert sess.history_depth < len(sess.plan.steps)
    with pytest.raises(FluidscopeError, match="dropped to keep the history"):
        for _ in range(len(sess.plan.steps) + 1):
            sess.back()


# ------------------------------------------------------------------ breakpoints
def test_breakpoints_by_type_index_var_and_condition():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    bp = sess.break_on(op_type="softmax")
    assert sess.continue_().op_type == "softmax"
    assert sess.stop_reason.startswith("breakpoint 1") and bp.hits == 1
    sess.remove_breakpoint(bp)
    grad_op = next(s for s in sess.plan.steps if s.type == "mul_grad")
    sess.break_on(op_index=grad_op.index)
    assert sess.continue_().op_index == grad_op.index
    sess.clear_breakpoints()
    hidden_w = next(n for n in params(scope) if n.startswith("hidden") and ".w_" in n)
    sess.break_on(var=hidden_w)  # written by the SGD update
    pos = sess.continue_()
    assert pos.op_type == "sgd" and pos.phase == "optimize"
    sess.restart()
    sess.clear_breakpoints()
    sess.break_on(condition=lambda s: s.position.phase == "backward")
    assert sess.continue_().phase == "backward"
    with pytest.raises(FluidscopeError, match="at least one"):
        sess.break_on()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's own log(0) / inf * 0 notes
def test_nan_breakpoint_stops_at_the_first_op_writing_a_nan():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64")
        p = fd.relu(fd.scale(x, scale=-1.0))    # exact zeros
        lg = fd.log(p)                           # -inf
        loss = fd.mean(fd.elementwise_mul(lg, p))  # -inf * 0 = nan
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    sess = exe.debug(main, feed={"x": np.array([[0.0, -1.0, 2.0]])}, fetch_list=[loss],
                     scope=scope)
    sess.break_on(nan_inf=True)
    pos = sess.continue_()
    assert pos.op_type == "log"
    assert sess.stop_var == lg.name
    assert "Inf" in sess.stop_reason and lg.name in sess.stop_reason and "#" in sess.stop_reason
    pos = sess.continue_()
    assert pos.op_type == "elementwise_mul" and "2 NaN" in sess.stop_reason


def test_a_failing_op_leaves_the_session_where_it_was():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64")
        y = fd.data("y", [None, -1], dtype="float64")  # its width is known only at run time
        out = fd.elementwise_add(fd.relu(x), y)
    exe = fd.Executor()
    sess = exe.debug(main, feed={"x": np.ones((2, 3)), "y": np.ones((2, 2))},
                     fetch_list=[out], scope=fd.Scope())
    first = sess.step()
    with pytest.raises(ExecutionError, match="elementwise_add"):
        sess.step()
    assert sess.position == first and sess.tensor(out.name) is None
    sess.back()
    assert sess.position.at_start


# -------------------------------------------------------------------- recurrent
def rnn_session(lod=(0, 3, 4, 8), reverse=False):
    main, startup, out, loss = build_rnn(reverse=reverse, boot=True)
    lod = list(lod)
    n, total = len(lod) - 1, lod[-1]
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((total, D)), [lod]),
            "wt": rng.standard_normal((total, H)), "h0": rng.standard_normal((n, H))}
    fetch = [out, "w0@GRAD", "w1@GRAD", "x@GRAD", "h0@GRAD"]
    return exe, main, scope, feed, fetch


def test_step_into_walks_frames_forward_then_backward_in_reverse():
    exe, main, scope, feed, fetch = rnn_session()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    positions = list(sess.events())
    fwd = [p.frame for p in positions if p.frame is not None and p.phase == "forward"]
    bwd = [p.frame for p in positions if p.frame is not None and p.phase == "backward"]
    assert _runs(fwd) == [0, 1, 2, 3]       # the longest sequence has 4 steps
    assert _runs(bwd) == [3, 2, 1, 0]
    assert all(p.parent.op_type in ("recurrent", "recurrent_grad")
               for p in positions if p.frame is not None)
    for a, b in zip(ref, sess.fetch()):
        np.testing.assert_array_equal(a, b)


def stop_before(sess, op_type):
    """From the start, run (ops whole) to just before the first op of ``op_type``."""
    sess.restart()
    k = next(k for k, s in enumerate(sess.plan.steps) if s.type == op_type)
    sess.run_to(op_index=sess.plan.steps[k - 1].index)
    assert sess.upcoming.op_type == op_type


def _runs(frames):
    out = []
    for f in frames:
        if not out or out[-1] != f:
            out.append(f)
    return out


def test_memory_in_each_frame_is_the_previous_frames_state():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    assert sess.position.frame == 0 and sess.position.parent.op_type == "recurrent"
    op = sess.plan.steps[0].desc
    ex_state = next(a.strings for a in op.attrs if a.name == "ex_states")[0]
    state = next(a.strings for a in op.attrs if a.name == "states")[0]
    # frame 0's memory is the boot layer, rows in length-sorted order
    order = sess.frames[0].sequences
    np.testing.assert_array_equal(sess.tensor(ex_state).numpy(),
                                  np.asarray(feed["h0"])[order])
    states = []
    while sess.position.frame is not None:
        if sess.upcoming.frame != sess.position.frame or sess.upcoming.parent is None:
            states.append(sess.tensor(state).numpy().copy())
        sess.step()
    frames = sess.frames
    assert [f.t for f in frames] == [0, 1, 2, 3]
    assert [f.batch_size for f in frames] == [3, 2, 2, 1]
    for t in range(1, 4):
        n = frames[t].batch_size
        np.testing.assert_array_equal(frames[t].tensor(ex_state), states[t - 1][:n])
        sess.view_frame(t)
        np.testing.assert_array_equal(sess.tensor(ex_state).numpy(), states[t - 1][:n])
    with pytest.raises(FluidscopeError, match="frame 9 has not run"):
        sess.view_frame(9)


def test_step_out_back_across_frames_and_step_over_a_recurrent_op():
    exe, main, scope, feed, fetch = rnn_session()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.run_to(frame=2)
    assert sess.position.frame == 2 and sess.position.op_index == 0
    sess.back()
    assert sess.position.frame == 1
    assert [f.t for f in sess.frames] == [0, 1]
    sess.step_out()
    assert sess.position.frame is None and sess.position.op_type == "recurrent"
    out_name = fetch[0].name
    np.testing.assert_array_equal(sess.tensor(out_name).numpy(), ref[0])
    assert len(sess.frames) == 4
    while not sess.position.at_start:
        sess.back()
    sess.step()  # over the whole recurrent op
    assert sess.position.op_type == "recurrent" and sess.position.frame is None
    np.testing.assert_array_equal(sess.tensor(out_name).numpy(), ref[0])
    grad = sess.run_to(op_type="recurrent_grad")
    assert grad.frame is None  # it ran frame by frame, then completed
    sess.back()
    assert sess.position.frame == 0  # back into its last frame
    stop_before(sess, "recurrent_grad")
    sess.step_into()
    assert sess.position.frame == 3 and sess.position.phase == "backward"
    sess.run_to(frame=0, op_type="mul_grad")
    assert sess.position.frame == 0
    while sess.upcoming.frame == 0:
        sess.step()
    assert sess.tensor("w0@GRAD").numpy().shape == (D, H)
    sess.continue_()
    for a, b in zip(ref, sess.fetch()):
        np.testing.assert_array_equal(a, b)


def test_backward_frame_gradients_appear_frame_by_frame_and_back_is_exact():
    exe, main, scope, feed, fetch = rnn_session()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stop_before(sess, "recurrent_grad")
    sess.step_into()
    seen = {}
    while sess.position.frame is not None:
        t = sess.position.frame
        g = sess.tensor("w0@GRAD")
        if g is not None:
            seen[t] = g.numpy().copy()
        sess.step()
    assert sorted(seen) == [0, 1, 2, 3]
    # the parameter gradient is the sum of the per-frame gradients
    np.testing.assert_allclose(sum(seen.values()), ref[1], rtol=1e-12, atol=1e-12)
    # back into the last frame and out again: the same sums, bit for bit
    for _ in range(9):
        sess.back()
    assert sess.position.frame is not None
    sess.step_out()
    np.testing.assert_array_equal(sess.tensor("w0@GRAD").numpy(), ref[1])
    np.testing.assert_array_equal(sess.tensor("x@GRAD").numpy(), ref[3])


def test_breakpoint_inside_a_frame_stops_continue_and_step():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.break_on(op_type="tanh", frame=2)
    pos = sess.step()  # steps over the recurrent op but stops at the breakpoint inside
    assert (pos.op_type, pos.frame, pos.phase) == ("tanh", 2, "forward")
    assert sess.stop_reason.startswith("breakpoint")
    pos = sess.continue_()
    assert pos.frame is None or pos.op_type != "tanh"
    assert sess.finished


def test_a_scalar_output_reads_as_a_read_only_zero_d_array():
    exe, main, scope, feed, loss = mlp_session()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    sess.run_to(op_type="mean")
    value = sess.tensor(loss.name).numpy()
    assert value.shape in ((), (1,)) and np.isfinite(value).all()
    with pytest.raises(ValueError):
        value[...] = 0


def test_frames_of_a_recurrent_op_stepped_over_whole_are_readable():
    exe, main, scope, feed, fetch = rnn_session()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step()
    assert sess.position.op_type == "recurrent"
    assert [f.t for f in sess.frames] == [0, 1, 2, 3]
    op = sess.plan.steps[0].desc
    state = next(a.strings for a in op.attrs if a.name == "states")[0]
    sess.view_frame(2)
    assert sess.tensor(state).numpy().shape == (sess.frames[2].batch_size, H)
