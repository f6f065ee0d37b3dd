"""engine.runtime.run: a run as a public object, driven whole or one step at a time.

``Executor.run`` drives a ``Run`` to the end; the debugger drives the same object step by
step and frame by frame. Both must give the same values as each other and as exe.run.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import ExecutionError, FluidscopeError, Run
from fluidscope.engine.recurrent import StepScopes
from fluidscope.engine.runtime.frames import (FrameDrivenOp, FrameHistory, FrameRun,
                                              run_frame_ops)

from test_debugger import mlp_session, params, rnn_session


def _fresh_copy(scope):
    copy = fd.Scope()
    for name, value in params(scope).items():
        copy.var(name).get_tensor().set(value)
    return copy


def test_stepping_a_run_one_step_at_a_time_equals_exe_run():
    exe, main, scope, feed, loss = mlp_session()
    twin = _fresh_copy(scope)
    want = exe.run(main, feed=feed, fetch_list=[loss], scope=twin)
    run = exe.start(main, feed, scope)
    assert run.next_step == 0 and not run.finished
    ran = []
    while not run.finished:
        ran.append(run.step().index)
    assert ran == [s.index for s in run.plan.steps]
    run.write_back()
    np.testing.assert_array_equal(run.fetch([loss])[0], want[0])
    for name, value in params(twin).items():
        np.testing.assert_array_equal(params(scope)[name], value)


def test_seek_and_bind_start_again():
    exe, main, scope, feed, loss = mlp_session()
    run = Run(exe.prepare(main), scope, feed)
    run.run_to_end()
    first = run.fetch([loss])[0]
    run.bind()
    assert run.next_step == 0
    run.step()
    run.seek(0)
    run.run_to_end()
    np.testing.assert_array_equal(run.fetch([loss])[0], first)
    assert run.fetch_names([loss]) == [loss.name]


def test_a_failing_step_names_the_op_and_the_shapes_it_saw():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, dict(feed, x=np.ones((5, 4)) * np.nan), scope)
    first = run.plan.steps[0]
    message = str(run.error_at(first, ValueError("boom")))
    assert message.startswith(f"op #{first.index} {first.type}") and "ValueError: boom" in message
    assert "[5, 4]" in run.describe(first)


def test_frame_driven_steps_implement_the_declared_interface():
    exe, main, scope, feed, fetch = rnn_session()
    twin = _fresh_copy(scope)
    run = exe.start(main, feed, scope)
    driven = {s.type for s in run.plan.steps if isinstance(s.control, FrameDrivenOp)}
    assert driven == {"recurrent", "recurrent_grad"}
    while run.plan.steps[run.next_step].type != "recurrent":
        assert run.unroll_next() is None
        run.step()
    frames = run.unroll_next()
    assert isinstance(frames, FrameRun) and list(frames.frame_order) == [0, 1, 2, 3]
    for t in frames.frame_order:  # what the debugger does, op by op
        fvals = frames.begin_frame(t)
        run_frame_ops(frames, t, fvals)
        frames.end_frame(t, fvals)
    run.complete_frames(frames)
    scopes = next(v for v in run.vals if isinstance(v, StepScopes))
    assert isinstance(scopes, FrameHistory)
    assert scopes.frames_run() == [0, 1, 2, 3] and [scopes.batch_size(t) for t in range(4)] == [3, 2, 2, 1]  # lengths 3, 1, 4
    assert set(frames.frame_values(0)) == set(scopes.frame_values(0))
    run.run_to_end()
    run.write_back()
    stepped = run.fetch(fetch)
    whole = exe.run(main, feed=feed, fetch_list=fetch, scope=twin)
    for a, b in zip(stepped, whole):
        np.testing.assert_allclose(a, b, rtol=0, atol=0)


def test_run_frame_ops_names_the_frame_and_the_step_op_that_failed(monkeypatch):
    exe, main, scope, feed, fetch = rnn_session()
    run = exe.start(main, feed, scope)
    while run.plan.steps[run.next_step].type != "recurrent":
        run.step()
    frames = run.unroll_next()
    tanh = next(s for s in frames.plan.steps if s.type == "tanh")
    fvals = frames.begin_frame(0)
    run_frame_ops(frames, 0, fvals)
    frames.end_frame(0, fvals)

    def boom(vals):
        raise ValueError("boom")
    monkeypatch.setattr(tanh, "run", boom)
    with pytest.raises(ExecutionError) as err:
        run_frame_ops(frames, 1, frames.begin_frame(1))
    assert str(err.value) == (f"frame 1 of {frames.where}, step op #{tanh.index} tanh: "
                              "ValueError: boom")


def test_seek_outside_the_block_is_refused():
    exe, main, scope, feed, loss = mlp_session()
    run = exe.start(main, feed, scope)
    with pytest.raises(FluidscopeError, match="does not exist"):
        run.seek(len(run.plan.steps) + 1)


def test_an_input_nothing_set_is_an_execution_error():
    exe, main, scope, feed, loss = mlp_session()
    with pytest.raises(ExecutionError, match="which nothing has set: run the startup program"):
        exe.start(main, feed, fd.Scope())
