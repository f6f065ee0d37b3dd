"""Sibling activations of one gate split run as one call in every driver
(engine/recurrent/siblings.py): an LSTM step's three gate sigmoids become one sigmoid over
the contiguous gate columns, each step binding its columns of it. Checked here: which
steps merge; a merged step's bytes are its own kernel call's (per op type, dtype and
width); a group's every frame value and every fetched gradient is byte-identical with
merging on and off, in a plain run, under the NaN guard and in the debugger; the debugger
still shows each step's own value appear at its own op, and stepping back and again
(over the split's producer too) gives the same bytes."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.ir import registry
from fluidscope.engine.recurrent import op as recurrent_op
from fluidscope.engine.recurrent.siblings import MERGEABLE
from recurrent_programs import (forward_control, group_feed, group_program, lstm_over,
                                same_bytes_every_frame, stand_after)

LOD = [0, 7, 9, 22, 30, 31, 43]  # six sequences of 7, 2, 13, 8, 1, 12 rows
WIDTH, HIDDEN = 16, 24


def _build(kind, dtype, merged=True, monkeypatch=None):
    def mixed(x):  # tanh on pieces 0, 1; sigmoid on 2 and 4 (not adjacent); relu on 3
        def step(x_t):
            h_pre = fd.memory("h", size=HIDDEN)
            z = fd.fc([x_t, h_pre], 5 * HIDDEN, name="z")
            p = fd.split(z, 5, dim=1)
            a, b = fd.tanh(p[0]), fd.tanh(p[1])
            s2, s4, r = fd.sigmoid(p[2]), fd.sigmoid(p[4]), fd.relu(p[3])
            mix = fd.elementwise_add(fd.elementwise_mul(a, s2), fd.elementwise_mul(b, s4))
            return fd.tanh(fd.elementwise_add(mix, fd.elementwise_mul(r, h_pre)), name="h")
        return fd.recurrent_group(step, x)

    build = (lambda x: lstm_over(x, HIDDEN)) if kind == "lstm" else mixed
    main, startup, h = group_program(build, WIDTH, HIDDEN, dtype)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(3)
    params = [p.name for p in main.global_block().all_parameters()]
    for name in params:  # the same weights in every build
        tensor = scope.find_var(name).get_tensor()
        tensor.set(rng.uniform(-0.6, 0.6, tensor.value.shape).astype(dtype))
    scopes = next(op.output("step_scopes")[0] for op in main.global_block().ops
                  if op.type == "recurrent")
    fetch = [h.name, "x@GRAD"] + [p + "@GRAD" for p in params]
    if not merged:  # prepared now, with no group found: every step runs its own op
        monkeypatch.setattr(recurrent_op, "merge_siblings", lambda plan, first, xp: [])
        exe.prepare(main)
        monkeypatch.undo()
    return main, scope, exe, fetch, scopes


def _feed(dtype, seed=5):
    return group_feed(LOD, WIDTH, HIDDEN, dtype, seed, scale=2)


def test_the_lstm_gate_sigmoids_are_one_group_and_the_odd_ones_out_are_not():
    main, scope, exe, fetch, _ = _build("lstm", "float32")
    (group,) = forward_control(exe, main).sibling_groups
    assert [s.type for s, _ in group.members] == ["sigmoid"] * 3
    assert (group.lo, group.hi, group.width, group.piece) == (HIDDEN, 4 * HIDDEN, 4 * HIDDEN,
                                                              HIDDEN)
    assert [k for _, k in group.members] == [0, 1, 2]
    main, scope, exe, fetch, _ = _build("mixed", "float32")
    groups = forward_control(exe, main).sibling_groups
    assert [([s.type for s, _ in g.members], g.lo, g.hi) for g in groups] == [
        (["tanh", "tanh"], 0, 2 * HIDDEN)]  # sigmoid on pieces 2 and 4: not adjacent


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op_type", sorted(MERGEABLE))
def test_a_step_s_columns_of_the_merged_call_are_its_own_call_s_bytes(op_type, dtype):
    kernel = registry.get(op_type).kernel_for("cpu", dtype)
    attrs = registry.get(op_type).parse_attrs({}, check=False)
    rng = np.random.default_rng(7)
    for width in (1, 3, 7, 8, 13, 16, 17, 31, 64, 100, 129):
        for rows in (1, 2, 5, 32):
            x = (6 * rng.standard_normal((rows, 4 * width))).astype(dtype)
            packed = np.ascontiguousarray(x[:, width:].reshape(rows, 3, width).transpose(1, 0, 2))
            merged = kernel(np, attrs, packed)  # what SiblingGroup.make calls
            for k in (1, 2, 3):
                own = kernel(np, attrs, x[:, k * width:(k + 1) * width])
                mine = merged[k - 1]
                assert mine.dtype == own.dtype and mine.shape == own.shape
                assert mine.flags.c_contiguous and own.flags.c_contiguous
                assert mine.tobytes() == own.tobytes(), (op_type, dtype, width, rows, k)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["lstm", "mixed"])
def test_every_frame_and_gradient_is_the_same_bytes_merged_or_not(kind, dtype, monkeypatch):
    feed = _feed(dtype)
    main, scope, exe, fetch, scopes = _build(kind, dtype)
    assert forward_control(exe, main).sibling_groups
    *merged, merged_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    control = forward_control(exe, main)
    for group in control.sibling_groups:  # each a contiguous array, as its own call gives
        for step, _ in group.members:
            name = control.fwd.names[step.outs[0]]
            assert all(merged_frames.tensor(t, name).flags.c_contiguous
                       for t in range(len(merged_frames))), name
    main, scope, exe, fetch, scopes = _build(kind, dtype, merged=False, monkeypatch=monkeypatch)
    assert not forward_control(exe, main).sibling_groups
    *own, own_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    for name, a, b in zip(fetch, merged, own):
        assert a.dtype == b.dtype == np.dtype(dtype) and a.tobytes() == b.tobytes(), name
    same_bytes_every_frame(merged_frames, own_frames, max(np.diff(LOD)), "merged vs own")


@pytest.mark.parametrize("kind", ["lstm", "mixed"])
def test_plain_run_nan_guard_and_debugger_hold_the_same_bytes(kind):
    main, scope, exe, fetch, scopes = _build(kind, "float32")
    feed = _feed("float32")
    *plain, plain_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    *guarded, guarded_frames = exe.run(main, feed=feed, fetch_list=fetch + [scopes],
                                       scope=scope, check_nan_inf=True)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stepped = None
    for pos in sess.events():
        if pos.frame is None and pos.op_type == "recurrent":
            stepped = sess.tensor(scopes)
    for name, a, b, c in zip(fetch, plain, guarded, sess.fetch()):
        assert a.tobytes() == b.tobytes() == c.tobytes(), name
    same_bytes_every_frame(plain_frames, guarded_frames, max(np.diff(LOD)), "nan guard")
    same_bytes_every_frame(plain_frames, stepped, max(np.diff(LOD)), "debugger")


def test_the_debugger_shows_each_gate_at_its_own_op_and_back_and_again_is_exact():
    main, scope, exe, fetch, scopes = _build("lstm", "float32")
    feed = _feed("float32")
    *_, plain = exe.run(main, feed=feed, fetch_list=fetch + [scopes], scope=scope)
    control = forward_control(exe, main)
    (group,) = control.sibling_groups
    names = [control.fwd.names[s.outs[0]] for s, _ in group.members]
    indexes = [s.index for s, _ in group.members]
    producer = next(s.index for s in control.fwd.steps if s.outs == (group.x_slot,))
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    sess.step_into()
    stand_after(sess, indexes[0], 3, sess.step_into)
    first = np.array(sess.tensor(names[0]).value)
    assert first.tobytes() == plain.tensor(3, names[0]).tobytes()
    for later in names[1:]:  # made already, but not shown before its own op runs
        assert sess.tensor(later) is None
    stand_after(sess, indexes[2], 3, sess.step_into)
    assert np.asarray(sess.tensor(names[2]).value).tobytes() == plain.tensor(3, names[2]).tobytes()
    while sess.position.op_index != producer:  # back over the gates and the split's X
        sess.back()
    sess.back()
    assert sess.tensor(names[0]) is None
    # X made again: a new array, the merged gates made again
    stand_after(sess, indexes[2], 3, sess.step_into)
    fvals = sess.stepper.cursor.fvals
    assert fvals[group.cache_slot][0] is fvals[group.x_slot]
    for name in names:
        assert np.asarray(sess.tensor(name).value).tobytes() == plain.tensor(3, name).tobytes()
    sess.continue_()
    for name, a in zip(fetch, exe.run(main, feed=feed, fetch_list=fetch, scope=scope)):
        assert np.asarray(a).tobytes() == np.asarray(sess.fetch()[fetch.index(name)]).tobytes()


def test_a_slot_list_without_the_cache_slot_runs_the_op_itself():
    main, scope, exe, fetch, _ = _build("lstm", "float64")
    control = forward_control(exe, main)
    (group,) = control.sibling_groups
    step, _ = group.members[1]
    fwd = control.fwd
    x = np.linspace(-3, 3, 10).reshape(2, 5)
    vals = [None] * len(fwd.names)  # what another driver of the block's plan passes
    vals[step.ins[0]] = x
    step.run(vals)
    assert vals[step.outs[0]].tobytes() == step.kernel(np, step.attrs, x).tobytes()
    np.testing.assert_allclose(vals[step.outs[0]], 1 / (1 + np.exp(-x)), rtol=1e-15)
