"""A product of an in-link in a recurrent group's step (``x_t @ W``) is made once over all
frames' rows in every driver (engine/recurrent/hoist.py): a plain run, the debugger
(stepping op by op, and back) and the NaN guard each bind frame ``t``'s rows of that one
product, so all three hold the same bits in every value of every frame, and those bits
are the product of all rows taken in one call. Checked for ``lstmemory_group``,
``gru_group`` and general groups (``mul`` of an fc with and without a bias of its own,
``matmul_v2``), in float32 and float64, over sequences of unequal lengths."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper
from recurrent_programs import (forward_control, group_feed, group_program, gru_over, lstm_over,
                                same_bytes_every_frame, stand_after)

LOD = [0, 7, 9, 22, 30, 31, 43]  # six sequences of 7, 2, 13, 8, 1, 12 rows
WIDTH, HIDDEN = 16, 24


def _build(kind, dtype):
    def general(x):
        def step(x_t):
            h_pre = fd.memory("h", size=HIDDEN)
            if kind == "fc":  # mul + sum + bias: the mul of x_t is hoisted
                return fd.fc([x_t, h_pre], HIDDEN, act="tanh", name="h")
            if kind == "fc_bias":  # x_t's own fc with a bias: mul, then its bias add
                part = fd.fc(x_t, HIDDEN, name="xin")
            else:  # "matmul": matmul_v2 of x_t by a weight matrix
                weight = LayerHelper("matmul").create_parameter(
                    fd.ParamAttr(name="w_m"), [WIDTH, HIDDEN], dtype)
                part = fd.matmul(x_t, weight)
            rec = fd.fc(h_pre, HIDDEN, bias_attr=False, name="rec")
            return fd.tanh(fd.elementwise_add(part, rec), name="h")
        return fd.recurrent_group(step, x)

    library = {"lstm": lstm_over, "gru": gru_over}.get(kind)
    main, startup, h = group_program(
        (lambda x: library(x, HIDDEN)) if library else general, WIDTH, HIDDEN, dtype)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    params = [p.name for p in main.global_block().all_parameters()]
    scopes = next(op.output("step_scopes")[0] for op in main.global_block().ops
                  if op.type == "recurrent")
    fetch = [h.name, "x@GRAD"] + [p + "@GRAD" for p in params]
    return main, scope, exe, fetch, scopes


def _feed(dtype, seed=5):
    return group_feed(LOD, WIDTH, HIDDEN, dtype, seed)


def _product_names(exe, main):
    """Output names of the hoisted products of the group's step block."""
    control = forward_control(exe, main)
    return [control.fwd.names[control.fwd.steps[p].output_slots()[0]]
            for p in control.hoisted if control.fwd.steps[p].type in ("mul", "matmul_v2")]


KINDS = ["lstm", "gru", "fc", "fc_bias", "matmul"]


@pytest.mark.parametrize("kind,products", [
    ("lstm", 0), ("gru", 0),  # their in-link is projected outside the group
    ("fc", 1), ("fc_bias", 1), ("matmul", 1)])
def test_products_of_an_in_link_by_a_parameter_are_hoisted(kind, products):
    main, scope, exe, fetch, _ = _build(kind, "float64")
    assert len(_product_names(exe, main)) == products
    if kind == "fc_bias":  # the bias add reads the product's rows only: hoisted too
        control = forward_control(exe, main)
        assert [control.fwd.steps[p].type for p in control.hoisted] == ["mul", "elementwise_add"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
def test_plain_run_debugger_and_nan_guard_hold_the_same_bits_in_every_frame(kind, dtype):
    main, scope, exe, fetch, scopes = _build(kind, dtype)
    feed = _feed(dtype)
    *plain, plain_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    *guarded, guarded_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes],
                                       scope=scope, check_nan_inf=True)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stepped = None
    for pos in sess.events():  # every op of every frame, one at a time
        if pos.frame is None and pos.op_type == "recurrent":
            stepped = sess.tensor(scopes)
    for name, a, b, c in zip(fetch, plain, guarded, sess.fetch()):
        assert a.dtype == b.dtype == c.dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(a, b, err_msg=f"nan guard: {name}")
        np.testing.assert_array_equal(a, c, err_msg=f"debugger: {name}")
    same_bytes_every_frame(plain_frames, guarded_frames, max(np.diff(LOD)), "nan guard")
    same_bytes_every_frame(plain_frames, stepped, max(np.diff(LOD)), "debugger")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["fc", "fc_bias", "matmul"])
def test_each_frame_holds_its_rows_of_the_product_of_all_rows(kind, dtype):
    main, scope, exe, fetch, scopes = _build(kind, dtype)
    feed = _feed(dtype)
    control = forward_control(exe, main)
    (name,) = _product_names(exe, main)
    step = next(control.fwd.steps[p] for p in control.hoisted
                if control.fwd.steps[p].type in ("mul", "matmul_v2"))
    weight = scope.find_var(control.fwd.names[step.ins[1]]).get_tensor().value
    *_, plain = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    stepped = sess.stepper.cursor.frames.frames  # the debugger's frames, while in the group
    sess.continue_()
    x = np.asarray(feed["x"].value)
    rows = np.concatenate([x[np.array(LOD[:-1])[np.argsort(-np.diff(LOD), kind="stable")]
                             [:n] + t] for t, n in enumerate(plain.seq.batch_sizes)])
    whole = rows @ weight  # one call over every frame's rows, in batch order
    for frames, label in ((plain, "plain"), (stepped, "debugger")):
        values = [plain.tensor(t, name) if label == "plain" else frames.tensor(t, name)
                  for t in range(len(plain))]
        base = values[0].base
        assert base is not None and all(v.base is base for v in values), label  # one array
        start = 0
        for t, value in enumerate(values):
            stop = start + len(value)
            assert value.tobytes() == whole[start:stop].tobytes(), (label, t)
            start = stop
        assert start == len(whole)


def test_stepping_back_and_again_over_a_hoisted_product_gives_the_same_bits():
    main, scope, exe, fetch, scopes = _build("fc_bias", "float32")
    feed = _feed("float32")
    (name,) = _product_names(exe, main)
    control = forward_control(exe, main)
    index = next(control.fwd.steps[p].index for p in control.hoisted
                 if control.fwd.steps[p].type == "mul")
    ref = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    stand_after(sess, index, 2, sess.step)
    first = np.array(sess.tensor(name).value)
    while sess.position.frame != 0:  # back across the starts of frames 2 and 1
        sess.back()
    stand_after(sess, index, 2, sess.step)
    assert np.asarray(sess.tensor(name).value).tobytes() == first.tobytes()
    while sess.position.frame is not None:  # back out of the group and into it again
        sess.back()
    assert sess.stepper.cursor is None
    sess.step_into()
    stand_after(sess, index, 2, sess.step)
    assert np.asarray(sess.tensor(name).value).tobytes() == first.tobytes()
    sess.continue_()
    for a, b in zip(ref, sess.fetch()):
        assert a.tobytes() == b.tobytes()


def test_a_slot_list_without_a_frame_runs_the_product_itself():
    main, scope, exe, fetch, _ = _build("fc", "float64")
    control = forward_control(exe, main)
    pos = next(p for p in control.hoisted if control.fwd.steps[p].type == "mul")
    step, fwd = control.fwd.steps[pos], control.fwd
    x, w = np.arange(6.0).reshape(3, 2), np.ones((2, 4))
    vals = [None] * len(fwd.names)  # what another driver of the block's plan passes
    vals[step.ins[0]], vals[step.ins[1]] = x, w
    step.run(vals)
    np.testing.assert_array_equal(vals[step.output_slots()[0]], x @ w)


def test_the_nan_guard_names_the_frame_whose_rows_of_the_hoisted_product_hold_a_nan():
    from fluidscope.engine.runtime.nan_guard import NonFiniteError
    main, scope, exe, fetch, _ = _build("fc", "float64")
    feed = _feed("float64")
    x = np.array(feed["x"].value)
    x[LOD[2] + 4, 3] = np.nan  # row 4 of the third sequence (13 rows): frame 4 only
    feed["x"] = fd.LoDTensor(x, [LOD])
    (name,) = _product_names(exe, main)
    with pytest.raises(NonFiniteError) as caught:
        exe.run(main, feed=feed, fetch_list=fetch, scope=scope, check_nan_inf=True)
    err = caught.value
    assert (err.frame, err.op_type, err.var) == (4, "mul", name)
    assert err.nans == HIDDEN  # one row of the frame's rows of the product
