"""recurrent_grad driven frame by frame through its FrameRun interface (engine/recurrent/
grad.py), as ``drive_frames`` and the debugger drive it:

* in-link gradient rows of a frame no gradient reached are zeros (the buffers start
  uninitialised), the other frames' rows are the plain run's;
* batched in-link rows are put in place span by span (``_place_rows``): rows of frames it
  did not cover keep what the buffer held;
* a frame's values read back are the forward frame's, then the grad block's when kept,
  never a nameless slot;
* gradients keep the group's dtype (float32), an out-link nobody differentiates gets no
  gradient and the others still match central differences; no step scopes is an error
  naming the op.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.recurrent.grad import BackUnroll
from fluidscope.engine.runtime.frames import run_frame_ops

LOD = [0, 3, 4, 8]  # frames of 3, 2, 2, 1 sequences
rng = np.random.default_rng(3)


def _running_sum(dtype="float64"):
    """acc_t = acc_{t-1} + x_t * 2, loss = sum(acc * wt)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], dtype=dtype, lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, 2], dtype=dtype)

        def step(x_t):
            return fd.elementwise_add(fd.scale(x_t, 2.0), fd.memory("acc", size=2), name="acc")
        out = fd.recurrent_group(step, x)
        loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
        fd.append_backward(loss)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2)).astype(dtype), [LOD]),
            "wt": rng.standard_normal((8, 2)).astype(dtype)}
    return main, feed


def _grad_run(main, feed):
    """The recurrent_grad op's BackUnroll over the slot values a real run gave it."""
    exe, scope = fd.Executor(), fd.Scope()
    plan = exe.prepare(main)
    step = next(s for s in plan.steps if s.type == "recurrent_grad")
    slots = step.input_slots()
    got = exe.run(main, feed=feed, fetch_list=[plan.names[s] for s in slots], scope=scope)
    vals = [None] * len(plan.names)
    for s, v in zip(slots, got):
        vals[s] = v
    ref, = exe.run(main, feed=feed, fetch_list=["x@GRAD"], scope=scope)
    return step.control, vals, plan, ref


def test_an_in_link_frame_no_gradient_reached_gets_zero_rows():
    main, feed = _running_sum()
    control, vals, plan, ref = _grad_run(main, feed)
    frames = control.unroll(vals, None)
    slot = control.in_grad_step[0]
    for t in frames.frame_order:
        gvals = frames.begin_frame(t)
        run_frame_ops(frames, t, gvals)
        if t == 1:
            gvals[slot] = None  # nothing reached x_t in frame 1
        frames.end_frame(t, gvals)
    frames.finish()
    got = vals[plan.slot["x@GRAD"]]
    start, stop = frames.seq.frame(1)
    rows = frames.seq.rows[start:stop]  # sequence-order rows of frame 1: 5 and 1
    assert sorted(rows.tolist()) == [1, 5]
    np.testing.assert_array_equal(got[rows], 0)
    others = np.setdiff1d(np.arange(8), rows)
    np.testing.assert_array_equal(got[others], ref[others])


def test_batched_in_link_rows_go_in_place_span_by_span():
    main, feed = _running_sum()
    control, vals, plan, ref = _grad_run(main, feed)
    frames = BackUnroll(control, vals, None)
    dx = np.arange(10.0).reshape(5, 2)
    placed = frames._place_rows(None, [(0, 3), (5, 7)], dx)  # frames 0 and 2 of 0:3, 3:5, 5:7
    assert placed.shape == (8, 2) and placed.dtype == dx.dtype
    np.testing.assert_array_equal(placed[0:3], dx[0:3])
    np.testing.assert_array_equal(placed[5:7], dx[3:5])
    held = np.full((8, 2), -1.0)
    assert frames._place_rows(held, [(3, 5), (7, 8)], dx[:3]) is held
    np.testing.assert_array_equal(held[3:5], dx[0:2])
    np.testing.assert_array_equal(held[7:8], dx[2:3])
    np.testing.assert_array_equal(held[[0, 1, 2, 5, 6]], -1.0)
    full = np.ones((8, 2))
    assert frames._place_rows(held, [(0, 8)], full) is full  # every row: dx itself
    three = frames._place_rows(None, [(0, 1), (2, 4), (6, 8)], dx)  # rows run on span by span
    np.testing.assert_array_equal(three[[0, 2, 3, 6, 7]], dx)
    middle = frames._place_rows(None, [(2, 6)], dx[:4].astype(np.float32))  # 2 + 6 == 8 rows
    assert middle.shape == (8, 2) and middle.dtype == np.float32
    np.testing.assert_array_equal(middle[2:6], dx[:4])


def test_a_grad_frames_values_are_the_forward_frames_then_the_grad_blocks():
    main, feed = _running_sum()
    control, vals, plan, ref = _grad_run(main, feed)
    plain = control.unroll(vals, None)
    kept = control.unroll(vals, None)
    kept.keep_frames()
    for frames in (plain, kept):
        for t in frames.frame_order:
            gvals = frames.begin_frame(t)
            run_frame_ops(frames, t, gvals)
            frames.end_frame(t, gvals)
    forward = vals[control.scopes_slot]
    fresh = control.unroll(vals, None)
    fresh.keep_frames()
    bound = fresh.begin_frame(3)  # bound, no op run yet: only the bound names show
    assert set(fresh.frame_values(3)) == set(forward.frame_values(3)) | {
        n for i, n in enumerate(control.grad.names) if i and bound[i] is not None}
    for t in range(4):
        assert plain.batch_size(t) == forward.batch_size(t)
        assert plain.sequences(t) == forward.sequences(t)
        assert plain.frame_values(t).keys() == forward.frame_values(t).keys()
        seen = kept.frame_values(t)
        assert None not in seen
        assert set(seen) == set(forward.frame_values(t)) | {
            n for i, n in enumerate(control.grad.names) if i and kept.grad_frames[t][i] is not None}
        np.testing.assert_array_equal(seen["x"], forward.tensor(t, "x"))
        assert "x@GRAD" in seen and seen["x@GRAD"].shape == seen["x"].shape
    kept.undo_begin(0)  # the debugger stepping back over frame 0's start
    assert "x@GRAD" not in kept.frame_values(0) and "x@GRAD" in kept.frame_values(1)
    kept.undo_begin(0)  # again: nothing kept for it any more, nothing to forget
    plain.undo_begin(1)  # a plain run keeps no grad frames
    assert "x@GRAD" not in plain.frame_values(1)


def test_stepping_back_over_a_frames_end_restores_the_parameter_sums():
    """A parameter whose gradient is not batched (elementwise_mul's) is summed frame by
    frame; back over a frame's end and on again ends with the plain run's bits."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        s = LayerHelper("s").create_parameter(fd.ParamAttr(name="s"), [2], "float64")

        def step(x_t):
            return fd.tanh(fd.elementwise_add(fd.elementwise_mul(x_t, s),
                                              fd.memory("h", size=2)), name="h")
        fd.append_backward(fd.reduce_sum(fd.recurrent_group(step, x)))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD])}
    ref, = exe.run(main, feed=feed, fetch_list=["s@GRAD"], scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=["s@GRAD"], scope=scope)
    ends = 0
    while not sess.finished:
        pos = sess.step_into()
        if pos.phase == "backward" and pos.frame is not None and pos.op_type == "tanh_grad":
            for _ in range(2):  # back over the previous frame's end, then on again
                sess.back()
            for _ in range(2):
                sess.step_into()
            ends += 1
    assert ends == 4
    np.testing.assert_array_equal(sess.fetch()[0], ref)


def test_recurrent_grad_without_step_scopes_is_an_error_naming_the_op():
    main, feed = _running_sum()
    control, vals, plan, ref = _grad_run(main, feed)
    vals[control.scopes_slot] = None
    with pytest.raises(ExecutionError, match=r"op #\d+ recurrent_grad: step_scopes holds no "
                                             "frames; run the forward recurrent op first"):
        control.unroll(vals, None)


def test_float32_group_gradients_stay_float32():
    main, feed = _running_sum("float32")
    got, = fd.Executor().run(main, feed=feed, fetch_list=["x@GRAD"], scope=fd.Scope())
    assert got.dtype == np.float32
    # d loss / d x_r = 2 * (sum of wt over rows r.. of its sequence)
    wt, expected = feed["wt"].astype(np.float64), np.zeros((8, 2))
    for a, b in zip(LOD, LOD[1:]):
        expected[a:b] = 2 * np.cumsum(wt[a:b][::-1], axis=0)[::-1]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_an_out_link_nobody_differentiates_gets_no_gradient_and_the_others_still_do():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        wt = fd.data("wt", [None, 2], dtype="float64")

        def step(x_t):
            acc = fd.elementwise_add(fd.tanh(x_t), fd.memory("acc", size=2), name="acc")
            return [acc, fd.scale(acc, 3.0)]
        used, unused = fd.recurrent_group(step, x)
        loss = fd.reduce_sum(fd.elementwise_mul(used, wt))
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD]),
            "wt": rng.standard_normal((8, 2))}
    check_program_grad(main.desc, loss.name, feed, ["x"], fd.Scope(), rtol=1e-6)


def test_a_debugger_run_gives_the_in_link_gradient_its_lod():
    main, feed = _running_sum()
    sess = fd.Executor().debug(main, feed=feed, fetch_list=["x@GRAD"], scope=fd.Scope())
    while not sess.finished:
        sess.step_into()
    got, = sess.fetch(return_numpy=False)
    assert got.lod() == [LOD]
