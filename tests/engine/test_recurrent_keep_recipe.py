"""What ``recurrent_grad`` keeps of each frame for its batched parameter gradients is
decided in the first frame kept and repeated for the others (engine/recurrent/frame_keep.py):
the gradients have the bytes of a run deciding operand by operand every frame
(``Sink.put``), in a plain run and in the debugger, for ``lstmemory_group``, ``gru_group``
and a general group (reverse too), float32 and float64; a frame whose arrays do not stand
in the observed relations is kept the general way."""
import numpy as np
import pytest

from fluidscope.engine.recurrent import frame_keep, grad as recurrent_grad
from fluidscope.engine.recurrent.batched_grads import Sink

from test_recurrent_hoist_bits import CASES, LODS, _build, _feed


def _bytes(values):
    return [(np.asarray(v).dtype, np.asarray(v).shape, np.asarray(v).tobytes()) for v in values]


def _counting(monkeypatch):
    """Count the frames kept by a recipe, and those decided by ``Sink.put``."""
    counts = {"recipe": 0, "put": 0}
    keep, put = frame_keep.KeepRecipe.keep, Sink.put

    def counting_keep(self, *args):
        kept = keep(self, *args)
        counts["recipe"] += kept
        return kept

    def counting_put(self, *args):
        counts["put"] += 1
        return put(self, *args)

    monkeypatch.setattr(frame_keep.KeepRecipe, "keep", counting_keep)
    monkeypatch.setattr(Sink, "put", counting_put)
    return counts


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,reverse", CASES)
def test_frames_kept_by_the_recipe_give_the_bytes_of_deciding_every_frame(
        kind, reverse, dtype, monkeypatch):
    main, scope, exe, fetch = _build(kind, dtype, reverse)
    feed = _feed(LODS["unequal"], dtype)
    counts = _counting(monkeypatch)
    by_recipe = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    frames = max(np.diff(LODS["unequal"]))
    # every frame after the first is kept by the recipe, none operand by operand
    assert counts["recipe"] == frames - 1
    sinks = counts["put"]
    assert sinks >= 1  # the first frame, one put per batched step
    monkeypatch.setattr(frame_keep.KeepRecipe, "observe", classmethod(lambda cls, *a: None))
    counts.update(recipe=0, put=0)
    deciding = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    assert counts == {"recipe": 0, "put": sinks * frames}
    for name, a, b in zip(fetch, by_recipe, deciding):
        assert a == b, name


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_the_debuggers_frames_are_kept_by_the_recipe_with_the_plain_runs_bytes(kind, monkeypatch):
    main, scope, exe, fetch = _build(kind, "float64")
    feed = _feed(LODS["unequal"], "float64")
    plain = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    counts = _counting(monkeypatch)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    # into the backward's frames, back over two frame ends, then on to the end: every
    # frame (kept again after the undo) by the recipe but the first
    steps, pos = 0, sess.step_into()
    while not (pos.phase == "backward" and pos.frame == 3):
        assert not sess.finished, "the run ended before the backward's frame 3"
        steps += 1
        pos = sess.step_into()
    assert steps > 0 and pos.parent.op_type == "recurrent_grad"
    for _ in range(25):
        sess.back()
    while not sess.finished:
        sess.step_into()
    assert counts["recipe"] >= max(np.diff(LODS["unequal"])) - 1
    assert _bytes(sess.fetch()) == plain


def test_a_frame_whose_operand_is_not_the_observed_array_is_kept_the_general_way(monkeypatch):
    # the recipe saw the bias's dOut handed on as one array to the products; a frame
    # where it is a copy (same values, another array) is not kept by the recipe but
    # operand by operand, and the gradients stay the same bytes
    main, scope, exe, fetch = _build("rnn", "float64")
    feed = _feed(LODS["unequal"], "float64")
    plain = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    end_frame, broken = recurrent_grad.BackUnroll.end_frame, []

    def copying_end_frame(self, t, gvals):
        recipe = self.recipe
        if recipe and t == 2:  # a borrowed operand of this frame becomes a copy of itself
            slot = next(s for s, forward, _ in recipe.same if not forward)
            gvals[slot] = gvals[slot].copy()
            broken.append(t)
        return end_frame(self, t, gvals)

    monkeypatch.setattr(recurrent_grad.BackUnroll, "end_frame", copying_end_frame)
    counts = _counting(monkeypatch)
    assert _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope)) == plain
    frames = max(np.diff(LODS["unequal"]))
    assert broken == [2]
    assert counts["recipe"] == frames - 2  # all but the first and the broken frame


def _batched_bias(kind):
    main, scope, exe, fetch = _build(kind, "float32")
    plan = exe.prepare(main)
    control = next(s.control for s in plan.steps if s.type == "recurrent_grad")
    return next(b for b in control.batched.values() if b.kind == "bias")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_a_plain_runs_bias_dx_is_what_the_ops_kernel_returns(kind, dtype):
    # the plain run's bias add hands dOut on as dX itself (no kernel call): the kernel's
    # array, same bytes; a frame that does not fit runs the op whole
    bias = _batched_bias(kind)
    rng = np.random.default_rng(5)
    width = 4 if kind == "rnn" else (16 if kind == "lstm" else 12)
    x, y, g = (rng.standard_normal(shape).astype(dtype)
               for shape in ((3, width), (width,), (3, width)))
    gvals = [None] * 64
    gvals[bias.x_slot], gvals[bias.y_slot], gvals[bias.dout_slot] = x, y, g
    bias.run(np)(gvals)
    kernel_dx = bias.step.kernel(np, bias.attrs, x, y, g)[0]
    assert gvals[bias.dx_slot] is g
    assert _bytes([gvals[bias.dx_slot]]) == _bytes([kernel_dx])
    ran_whole = []
    bias.step.run, run = (lambda vals: ran_whole.append(vals)), bias.step.run
    try:
        gvals[bias.x_slot] = x[:, :2]  # X no longer dOut's shape: the op whole
        bias.run(np)(gvals)
    finally:
        bias.step.run = run
    assert ran_whole == [gvals]
