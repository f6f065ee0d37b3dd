"""The backward of a recurrent group (engine/recurrent/grad.py, batched_grads.py): a plain
run and the debugger, stepping every op of every backward frame, end with the same bytes
in every gradient, for ``lstmemory_group``, ``gru_group`` and a general group (reverse
too), in float32 and float64. A frame's product dX = dOut @ W^T is taken against a copy
of W^T made once per run, or by the op's kernel for a large W (``Batched.dx_of``): each
frame the debugger shows has that product's value, and a parameter rewritten in place between runs (what runtime.recycle
does to the parameter array of the step before last) is read afresh, also after a debug
session left the backward half-way."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.recurrent import batched_grads

from test_recurrent_hoist_bits import LODS, _build, _feed

CASES = [("lstm", False), ("gru", False), ("rnn", False), ("rnn", True)]
PRODUCTS = ("mul_grad", "matmul_v2_grad")


def _grad_control(exe, main):
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent_grad")


def _bytes(values):
    return [(np.asarray(v).dtype, np.asarray(v).shape, np.asarray(v).tobytes()) for v in values]


@pytest.mark.parametrize("copied_wt_max", [None, 0], ids=["copied_wt", "kernel"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,reverse", CASES)
def test_the_debuggers_backward_frames_end_with_the_plain_runs_bytes(kind, reverse, dtype,
                                                                    copied_wt_max, monkeypatch):
    """Both ways of a frame's dX (``dx_of``): against the copied W^T, and by the op's
    kernel (a parameter above COPIED_WT_MAX; made 0 here)."""
    if copied_wt_max is not None:
        monkeypatch.setattr(batched_grads, "COPIED_WT_MAX", copied_wt_max)
    main, scope, exe, fetch = _build(kind, dtype, reverse)
    feed = _feed(LODS["unequal"], dtype)
    plain = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    control = _grad_control(exe, main)
    products = {pos: b for pos, b in control.batched.items() if b.kind == "matmul"}
    assert products  # every group here multiplies by a parameter in its step
    names = control.grad.names
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    checked = 0
    for pos in sess.events():
        if pos.frame is None or pos.phase != "backward" or pos.op_type not in PRODUCTS:
            continue
        b = next((b for b in products.values() if b.step.index == pos.op_index), None)
        if b is None or not b.dx_slot:
            continue
        dout, w, dx = (np.asarray(sess.tensor(names[s]))
                       for s in (b.dout_slot, b.y_slot, b.dx_slot))
        assert dx.dtype == np.dtype(dtype) and dx.flags.c_contiguous
        tol = 1e-5 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(dx, dout @ w.T, rtol=tol, atol=tol)
        checked += 1
    assert checked >= max(np.diff(LODS["unequal"]))  # at least one product a frame
    assert _bytes(sess.fetch()) == _bytes(plain)


def _scale_parameters_in_place(scope, names, factor):
    for name in names:
        value = scope.find_var(name).get_tensor().value
        np.multiply(value, factor, out=value)


@pytest.mark.parametrize("kind", ["gru", "rnn"])
@pytest.mark.parametrize("abandon_debugger", [False, True])
def test_a_parameter_rewritten_in_place_between_runs_is_read_afresh(kind, abandon_debugger):
    main, scope, exe, fetch = _build(kind, "float64")
    feed = _feed(LODS["unequal"], "float64")
    exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    if abandon_debugger:  # into the backward's frames, past a product, then dropped
        sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
        for pos in sess.events():
            if pos.frame is not None and pos.phase == "backward" and pos.op_type in PRODUCTS:
                break
        del sess
    params = [n[:-len("@GRAD")] for n in fetch[2:]]
    _scale_parameters_in_place(scope, params, 1.5)
    got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    fresh = fd.Executor().run(main, feed=feed, fetch_list=fetch, scope=scope)
    assert _bytes(got) == _bytes(fresh)


def test_no_product_step_holds_a_parameter_after_a_run():
    """A held parameter array would keep runtime.recycle from reusing it (its reference
    count), so the next training step would page-fault a fresh one in."""
    main, scope, exe, fetch = _build("gru", "float32")
    exe.run(main, feed=_feed(LODS["unequal"], "float32"), fetch_list=fetch, scope=scope)
    batched = _grad_control(exe, main).products.values()
    assert [b for b in batched if b.kind == "matmul"]
    assert all(b.wt_of is None for b in batched)


def _pass_through_group(dtype, width=3):
    """h_t = x_t + h_{t-1}: dX of the add is its dOut, so x@GRAD holds every frame's seed
    (the out-link gradient plus the memory gradient handed on) byte for byte."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], dtype, lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, width], dtype)

        def step(x_t):
            return fd.elementwise_add(x_t, fd.memory("h", size=width), name="h")
        h = fd.recurrent_group(step, x)
        fd.append_backward(fd.reduce_sum(fd.elementwise_mul(h, wt)))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, scope, exe


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seeds_with_the_memory_gradient_added_in_place_keep_the_sign_of_zero(dtype):
    """A plain run adds a frame's memory gradient into the previous frame's rows of the
    out-link gradient in place; the debugger adds the zero-padded memory gradient. A row
    whose sequence ends in that frame gets og + 0 both ways: a -0.0 out-link gradient
    there turns +0.0, as it always did (x@GRAD rows 3 and 6-8 below: -0.0 fed)."""
    main, scope, exe = _pass_through_group(dtype)
    lod = [0, 3, 4, 9]  # lengths 3, 1, 5: frames of 3, 2, 2, 1, 1 rows
    wt = np.full((9, 3), -0.0, dtype)
    wt[5] = 1.5
    feed = {"x": fd.LoDTensor(np.ones((9, 3), dtype), [lod]), "wt": wt}
    plain = exe.run(main, feed=feed, fetch_list=["x@GRAD"], scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=["x@GRAD"], scope=scope)
    stops = list(sess.events())  # op by op, into every frame
    assert sum(p.frame is not None for p in stops) > 9  # the frames ran one by one
    assert _bytes(plain) == _bytes(sess.fetch())
    grad = plain[0]
    # the single step of sequence 1 (row 3) and sequence 0's last step (row 2) end in a
    # frame where the next one has fewer rows: +0.0; sequence 2's rows after row 5 get
    # nothing from later steps but are in the last frames of their own: -0.0 + (its
    # next frame's carry, where there is one)
    assert not np.signbit(grad[3]).any() and not np.signbit(grad[2]).any()
    np.testing.assert_array_equal(grad[4:6], np.full((2, 3), 1.5, dtype))
    assert np.signbit(grad[8]).all()  # the very last frame: its seed is og itself
