"""An error inside a frame of a recurrent op, in a plain run and in a run under the NaN/Inf
guard: the message names the parent op, the frame (time step) and the step op that failed,
and the guard still raises an ExecutionError, not a crash of its own (issue #17: mutants of
runtime/frames.py and runtime/nan_guard.py)."""
import numpy as np
import pytest

from fluidscope.engine import ExecutionError, NonFiniteError

from test_debugger import rnn_session


def _fail_in_frame(monkeypatch, exe, main, frame, op_type="tanh", block=1):
    """Make ``op_type`` of the recurrent op's ``block`` (1: the step block, whose frames
    run 0, 1, 2, 3; 2: the grad block, whose frames run 3, 2, 1, 0) raise ValueError in
    the ``frame``-th call of it (one call of the op per frame)."""
    step_plan = exe.prepare(main).sub_plans[block]
    step = next(s for s in step_plan.steps if s.type == op_type)
    real, calls = step.run, []

    def failing(fvals):
        calls.append(len(calls))
        if calls[-1] == frame:
            raise ValueError("boom")
        real(fvals)
    monkeypatch.setattr(step, "run", failing)
    return step


@pytest.mark.parametrize("guarded", [False, True])
def test_an_error_in_a_frame_names_the_recurrent_op_the_frame_and_the_step_op(
        monkeypatch, guarded):
    exe, main, scope, feed, fetch = rnn_session()
    step = _fail_in_frame(monkeypatch, exe, main, frame=2)
    with pytest.raises(ExecutionError) as err:
        exe.run(main, feed=feed, fetch_list=fetch, scope=scope, check_nan_inf=guarded)
    assert not isinstance(err.value, NonFiniteError)
    message = str(err.value)
    assert message.startswith("op #0 recurrent in layer recurrent_group_")
    assert "(inputs: x [8, 3], initial_states: h0 [3, 4]," in message
    assert message.endswith(
        f"frame 2 of op #0 recurrent, step op #{step.index} tanh: ValueError: boom")


@pytest.mark.parametrize("guarded", [False, True])
def test_an_error_in_a_backward_frame_names_recurrent_grad_the_frame_and_the_grad_op(
        monkeypatch, guarded):
    # a plain run drives recurrent_grad's frames through runtime.frames.drive_frames, the
    # guarded one through nan_guard's loop: both say which frame (the grad block runs 3, 2, 1)
    exe, main, scope, feed, fetch = rnn_session()
    step = _fail_in_frame(monkeypatch, exe, main, frame=2, op_type="tanh_grad", block=2)
    with pytest.raises(ExecutionError) as err:
        exe.run(main, feed=feed, fetch_list=fetch, scope=scope, check_nan_inf=guarded)
    assert not isinstance(err.value, NonFiniteError)
    assert str(err.value).endswith(
        f"recurrent_grad, grad op #{step.index} tanh_grad: ValueError: boom")
    assert "frame 1 of op #" in str(err.value)


def test_a_finite_guarded_run_of_a_recurrent_program_equals_the_plain_run():
    exe, main, scope, feed, fetch = rnn_session()
    plain = exe.run(main, feed=feed, fetch_list=fetch[:1], scope=scope)
    guarded = exe.run(main, feed=feed, fetch_list=fetch[:1], scope=scope, check_nan_inf=True)
    np.testing.assert_array_equal(plain[0], guarded[0])
