"""Batched parameter gradients of recurrent groups (engine/recurrent/batched_grads.py): which
frames a plain run batches, and that whatever it cannot batch still sums right.

* a plain run keeps every fitting frame's operands in buffers of all rows (reused by the next
  run): each batchable step of an LSTM group holds them after the run, shaped by its rows;
* a bias whose shape is not one row of dOut (``[1, H]``, ``[1]``) is not a column sum: those
  frames run the grad op whole, and the gradient keeps the bias's shape (central
  differences in float64);
* a frame run whole adds its gradient to a partial sum that the debugger's stepping back
  over a frame's end restores: back and forth over every backward frame ends with the plain
  run's bits.
"""
import numpy as np

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from test_recurrent_batched_grads import _grad_control, _lstm_program, three_d_program

D, H = 2, 3
rng = np.random.default_rng(11)


def test_a_plain_run_keeps_each_batchable_steps_operands_in_buffers_of_all_rows():
    exe, main, scope, feed, fetch = _lstm_program(hidden=3, width=2)
    control = _grad_control(exe, main)
    assert all(b.spare is None for b in control.batched.values())
    exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    rows = feed["x"].numpy().shape[0]
    shapes = {b.kind: [s.shape for s in b.spare] for b in control.batched.values()}
    # matmul: h_{t-1} [rows, 3] and dOut [rows, 12]; bias: dOut [rows, 12]
    assert shapes == {"matmul": [(rows, 3), (rows, 12)], "bias": [(rows, 12)]}
    spare = [list(b.spare) for b in control.batched.values()]
    exe.run(main, feed=feed, fetch_list=fetch, scope=scope)  # the same rows: buffers reused
    for b, before in zip(control.batched.values(), spare):
        assert all(a is c for a, c in zip(b.spare, before))


def _broadcast_bias_program(bias_shape):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, D], "float64", lod_level=1)
        w = LayerHelper("w").create_parameter(fd.ParamAttr(name="w"), [D, H], "float64")
        b = LayerHelper("b").create_parameter(fd.ParamAttr(name="b"), bias_shape, "float64")

        def step(x_t):
            h_pre = fd.memory("h", size=H)
            y = fd.elementwise_add(fd.matmul(x_t, w), b)
            return fd.tanh(fd.elementwise_add(y, h_pre), name="h")
        out = fd.recurrent_group(step, x)
        wt = fd.data("wt", [None, H], "float64")
        loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
    return main, startup, loss


def test_a_bias_broadcast_from_one_row_or_one_value_keeps_its_shape_and_gradient():
    lod = [0, 2, 5, 6]
    for bias_shape in ([1, H], [1]):
        main, startup, loss = _broadcast_bias_program(bias_shape)
        scope, exe = fd.Scope(), fd.Executor()
        exe.run(startup, scope=scope)
        scope.find_var("b").get_tensor().set(rng.standard_normal(bias_shape))
        feed = {"x": fd.LoDTensor(rng.standard_normal((6, D)), [lod]),
                "wt": rng.standard_normal((6, H))}
        check_program_grad(main.desc, loss.name, feed, ["b", "w", "x"], scope, rtol=1e-6)
        grad_prog = main.clone()
        with fd.program_guard(grad_prog, fd.Program()):
            fd.append_backward(grad_prog.global_block().var(loss.name))
        g, = exe.run(grad_prog, feed=feed, fetch_list=["b@GRAD"], scope=scope)
        assert g.shape == tuple(bias_shape)


def _three_d_program():
    main, scope, exe = three_d_program(D, H)
    feed = {"x": fd.LoDTensor(rng.standard_normal((7, 2, D)), [[0, 3, 4, 7]])}
    return main, scope, exe, feed


def test_stepping_back_over_frames_run_whole_restores_their_partial_sum():
    main, scope, exe, feed = _three_d_program()
    fetch = ["w3@GRAD"]
    ref, = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    assert all(b.spare is None for b in _grad_control(exe, main).batched.values())
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    ends = 0
    while not sess.finished:
        pos = sess.step_into()
        # after each backward frame's last op: back over it, then on again
        if pos.phase == "backward" and pos.frame is not None and pos.op_type == "tanh_grad":
            for _ in range(2):
                sess.back()
            for _ in range(2):
                sess.step_into()
            ends += 1
    assert ends == 3  # the longest sequence has 3 steps
    got, = sess.fetch()
    np.testing.assert_array_equal(got, ref)
