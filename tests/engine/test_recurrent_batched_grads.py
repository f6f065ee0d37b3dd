"""recurrent_grad takes parameter gradients once over all frames (engine/recurrent/batched_grads).

A plain run skips the per-frame ``dW = X^T @ dOut`` (and the per-frame bias column sum)
and makes one GEMM over the rows of every frame; the debugger still runs each op whole
so a frame shows its own contribution. Checked here, in float64: the gradients equal
the per-frame sum (the old way) and numeric differences of an explicit loop, a debugger
run ends with the plain run's bits while each frame's W@GRAD is that frame's product,
stepping back over a frame's end and forward again changes nothing, a frame whose
operands are not plain matrices runs the op whole and still sums right, and an operand
another buffer already took in the frame (the in-link gradient, another step's dOut) is
read from there rather than copied again.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper

from fluidscope.engine.recurrent.batched_grads import Sink
from test_recurrent import D, H, _build as build_rnn

rng = np.random.default_rng(5)


def _grad_control(exe, main):
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent_grad")


def _lstm_program(hidden=3, width=2):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], "float64", lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, hidden], "float64")
        proj = fd.fc(x, 4 * hidden, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
        h = fd.lstmemory_group(proj, hidden, name="lstm", use_peepholes=False,
                               param_attr=fd.ParamAttr(name="w"),
                               bias_attr=fd.ParamAttr(name="b"))
        loss = fd.reduce_sum(fd.elementwise_mul(h, wt))
        fd.append_backward(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    lod = [0, 3, 4, 9, 11]
    feed = {"x": fd.LoDTensor(rng.standard_normal((lod[-1], width)), [lod]),
            "wt": rng.standard_normal((lod[-1], hidden))}
    return exe, main, scope, feed, ["w@GRAD", "b@GRAD", "w_x@GRAD", "x@GRAD"]


def test_lstm_group_batches_its_weight_and_bias_and_matches_the_per_frame_sum():
    exe, main, scope, feed, fetch = _lstm_program()
    control = _grad_control(exe, main)
    found = {(b.step.type, b.kind, control.param_names[b.param]) for b in control.batched.values()}
    assert found == {("matmul_v2_grad", "matmul", "w"), ("elementwise_add_grad", "bias", "b")}
    batched = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    # The same op without batching: every frame's product summed, as before.
    saved = control.batched, control.batched_params
    control.batched, control.batched_params = {}, set()
    try:
        per_frame = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    finally:
        control.batched, control.batched_params = saved
    for name, a, b in zip(fetch, batched, per_frame):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)


def test_fc_inside_a_step_is_batched_and_gradients_match_numeric_differences():
    # test_recurrent's group: fc([x_t, h_pre]) = two mul ops and a bias add (axis 1); its
    # own tests compare every gradient with central differences of a loop.
    from test_recurrent import _run
    main, exe, scope, feed = _run([0, 3, 4, 8], boot=True)
    control = _grad_control(exe, main)
    names = sorted(control.param_names[b.param] for b in control.batched.values())
    assert names == ["b", "w0", "w1"]
    # x_t @ w0: its dX is only the in-link's gradient, also one GEMM after the loop
    inlinks = {control.param_names[b.param]: b.inlink for b in control.batched.values()}
    assert inlinks == {"b": None, "w0": 0, "w1": None}


def test_debugger_run_ends_with_the_plain_runs_bits_and_each_frame_shows_its_own_product():
    exe, main, scope, feed, fetch = _lstm_program()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    per_frame = {}
    for pos in sess.events():
        if pos.frame is not None and pos.op_type == "matmul_v2_grad" and pos.phase == "backward":
            x, dout = (np.array(sess.tensor(n)) for n in ("lstm_h@PRE_0", "matmul_v2_0.tmp_0@GRAD"))
            per_frame[pos.frame] = np.array(sess.tensor("w@GRAD"))
            np.testing.assert_allclose(per_frame[pos.frame], x.T @ dout, rtol=1e-12)
    assert sorted(per_frame) == list(range(5))  # the longest sequence has 5 steps
    for name, a, b in zip(fetch, ref, sess.fetch()):
        np.testing.assert_array_equal(a, b, err_msg=name)
    # per-frame products summed vs one GEMM: another summation order, so an element near 0
    # (1.6e-7 among values near 1e-2) may differ by 1e-12 of itself: an absolute floor too
    np.testing.assert_allclose(sum(per_frame.values()), ref[0], rtol=1e-12, atol=1e-14)


def test_stepping_back_over_a_frames_end_forgets_what_it_kept():
    exe, main, scope, feed, fetch = _lstm_program()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    # Into the backward's frames, past the end of frame 4 (the first grad frame), then
    # back before it and on again: frame 4's operands must be kept once, not twice.
    seen_grad_frame = False
    while not seen_grad_frame:
        pos = sess.step_into()
        seen_grad_frame = pos.frame == 3 and pos.phase == "backward"
    for _ in range(3):
        sess.back()
    while not sess.finished:
        sess.step_into()
    for name, a, b in zip(fetch, ref, sess.fetch()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def three_d_program(d=D, h=H):
    """A recurrent group whose x_t is [n, 2, d] per frame: matmul_v2(x_t, W) has a 3-D X,
    so no frame's matmul_v2_grad fits one GEMM; each runs whole and its dW joins the
    batched sum. (main, scope, exe) after the startup program ran."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2, d], "float64", lod_level=1)
        w = LayerHelper("w3").create_parameter(fd.ParamAttr(name="w3"), [d, h], "float64")

        def step(x_t):
            h_pre = fd.memory("h3", size=h)
            y = fd.reduce_sum(fd.matmul(x_t, w), dim=1)
            return fd.tanh(fd.elementwise_add(y, h_pre), name="h3")
        out = fd.recurrent_group(step, x)
        fd.append_backward(fd.reduce_sum(out))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, scope, exe


def test_a_frame_that_is_not_plain_matrices_runs_the_op_whole():
    main, scope, exe = three_d_program()
    lod = [0, 2, 5]
    xv = rng.standard_normal((5, 2, D))
    wv = np.array(scope.find_var("w3").get_tensor())
    control = _grad_control(exe, main)
    assert [control.param_names[b.param] for b in control.batched.values()] == ["w3"]
    got = exe.run(main, feed={"x": fd.LoDTensor(xv, [lod])}, fetch_list=["w3@GRAD"],
                  scope=scope)[0]

    def loss_of(w_):
        total = 0.0
        for s, e in zip(lod, lod[1:]):
            h = np.zeros(H)
            for r in range(s, e):
                h = np.tanh((xv[r] @ w_).sum(axis=0) + h)
                total += h.sum()
        return total

    numeric = np.zeros_like(wv)
    for idx in np.ndindex(wv.shape):
        for sign in (1, -1):
            probe = wv.copy()
            probe[idx] += sign * 1e-6
            numeric[idx] += sign * loss_of(probe) / 2e-6
    np.testing.assert_allclose(got, numeric, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_reverse_groups_batch_the_same_way(reverse):
    main, startup, out, loss = build_rnn(reverse=reverse)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    lod = [0, 4, 5, 7]
    feed = {"x": fd.LoDTensor(rng.standard_normal((7, D)), [lod]),
            "wt": rng.standard_normal((7, H))}
    fetch = ["w0@GRAD", "w1@GRAD", "b@GRAD"]
    batched = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stops = sum(1 for _ in sess.events())  # the debugger's path: every op of every frame
    assert stops > 7 and sess.finished
    for name, a, b in zip(fetch, batched, sess.fetch()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_undoing_the_end_of_recurrent_grad_and_finishing_again_sums_once():
    exe, main, scope, feed, fetch = _lstm_program()
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    pos = sess.step_into()
    while not (pos.frame is None and pos.op_type == "recurrent_grad"):
        pos = sess.step_into()  # ... the last op of frame 0, then the op completes
    sess.back()   # before the completion again
    sess.step_into()  # completes it a second time
    while not sess.finished:
        sess.step_into()
    for name, a, b in zip(fetch, ref, sess.fetch()):
        np.testing.assert_array_equal(a, b, err_msg=name)


def _bias_step():
    exe, main, _, _, _ = _lstm_program()
    return next(b for b in _grad_control(exe, main).batched.values() if b.kind == "bias")


def test_an_operand_another_buffer_took_in_the_frame_is_read_from_it_not_copied():
    bias = _bias_step()
    g0, g1 = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    lender = np.empty((5, 4))
    lender[0:3], lender[3:5] = g0, g1
    sink, copied = Sink(bias, np, 5), {id(g0): (g0, lender)}
    sink.put(0, 3, (g0,), copied)
    sink.put(3, 5, (g1,), {id(g1): (g1, lender)})
    assert sink.operands()[0] is lender  # every frame's rows are in the lender's buffer
    assert not np.shares_memory(sink.buffers[0], lender)
    # an operand copied into the sink's own buffer is offered to the sinks after it
    g2, later = rng.standard_normal((2, 4)), {}
    other = Sink(bias, np, 2)
    other.put(0, 2, (g2,), later)
    assert later[id(g2)][1] is other.buffers[0]


def test_frames_read_from_a_lender_and_frames_copied_give_every_row_once():
    bias = _bias_step()
    g0, g1, g2 = (rng.standard_normal((n, 4)) for n in (3, 2, 1))
    lender = np.full((6, 4), np.nan)
    lender[0:3] = g0
    sink = Sink(bias, np, 6)
    sink.put(0, 3, (g0,), {id(g0): (g0, lender)})
    sink.put(3, 5, (g1,), {})
    # the id of another array (a freed one's id reused) is not taken for this one
    sink.put(5, 6, (g2,), {id(g2): (g2.copy(), lender)})
    np.testing.assert_array_equal(sink.operands()[0], np.concatenate([g0, g1, g2]))
    np.testing.assert_array_equal(bias.total(sink), np.concatenate([g0, g1, g2]).sum(axis=0))
    # the debugger undoing the last two frames' ends forgets where they were read from
    state = (1, None)
    sink.reset(state)
    assert len(sink.borrowed) == 1
    np.testing.assert_array_equal(sink.operands()[0], g0)
