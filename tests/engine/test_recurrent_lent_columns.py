"""A gate gradient that ``split_grad`` concatenated into an in-link's gradient buffer is
read from that buffer's columns when a parameter gradient is taken over all frames
(engine/recurrent/row_writers.py ``lend_columns``, frame_keep.py): a ``gru_group``'s
products by w_ur and w_c copy no dOut per frame, and every gradient keeps the bytes of a
run that copies them, in a plain run and in the debugger, float32 and float64."""
import numpy as np
import pytest

from fluidscope.engine.recurrent import grad as recurrent_grad
from fluidscope.engine.recurrent.batched_grads import Sink

from test_recurrent_hoist_bits import LODS, _build, _feed


def _bytes(values):
    return [(np.asarray(v).dtype, np.asarray(v).shape, np.asarray(v).tobytes()) for v in values]


def _recipes(monkeypatch):
    """The recipe each backward run finished with, and the operands ``Sink.put`` copied."""
    seen, copied = [], []
    finish, put = recurrent_grad.BackUnroll.finish, Sink.put

    def recording_finish(self):
        seen.append(self.recipe)
        return finish(self)

    def counting_put(self, start, stop, arrays, lent):
        copied.append(sum(id(a) not in lent for a in arrays))
        return put(self, start, stop, arrays, lent)

    monkeypatch.setattr(recurrent_grad.BackUnroll, "finish", recording_finish)
    monkeypatch.setattr(Sink, "put", counting_put)
    return seen, copied


def _without_columns(monkeypatch, exe, main):
    """The prepared recurrent_grad of ``main`` lending no columns (every dOut copied)."""
    plan = exe.prepare(main)
    control = next(s.control for s in plan.steps if s.type == "recurrent_grad")
    monkeypatch.setattr(control, "split_parts", {})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_grus_gate_gradients_are_read_from_the_in_link_buffer_with_the_bytes_of_copies(
        dtype, monkeypatch):
    main, scope, exe, fetch = _build("gru", dtype)
    feed = _feed(LODS["unequal"], dtype)
    seen, copied = _recipes(monkeypatch)
    lent = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    recipe = seen[-1]
    # the update-and-reset and the candidate gate gradients: two column spans of the
    # in-link gradient (3 x HIDDEN wide), read for w_ur's and w_c's products
    assert sorted((width, dt) for _, width, dt in recipe.columns) == [
        (4, np.dtype(dtype)), (8, np.dtype(dtype))]
    lent_copies = recipe.copies
    first_frame_copies = sum(copied)
    _without_columns(monkeypatch, exe, main)
    seen.clear()
    copied.clear()
    copying = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    assert seen[-1].columns == ()
    assert seen[-1].copies == lent_copies + 2  # both dOuts copied every frame
    assert sum(copied) == first_frame_copies + 2
    for name, a, b in zip(fetch, lent, copying):
        assert a == b, name


def test_the_debugger_reads_the_same_columns_with_the_plain_runs_bytes(monkeypatch):
    main, scope, exe, fetch = _build("gru", "float64")
    feed = _feed(LODS["unequal"], "float64")
    plain = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    seen, _ = _recipes(monkeypatch)
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    # into the backward's frame 2, back over some frame ends (their kept frames undone),
    # then on to the end
    pos = sess.step_into()
    while not (pos.phase == "backward" and pos.frame == 2):
        assert not sess.finished, "the run ended before the backward's frame 2"
        pos = sess.step_into()
    for _ in range(30):
        sess.back()
    while not sess.finished:
        sess.step_into()
    assert sorted(w for _, w, _ in seen[-1].columns) == [4, 8]
    assert _bytes(sess.fetch()) == plain


def test_a_frame_whose_split_output_is_not_the_in_link_gradient_copies_its_parts(monkeypatch):
    # the in-link gradient of frame 1 is a copy of the split's output (same values,
    # another array): its gate gradients are not read from the in-link buffer but copied,
    # the recipe keeps the other frames, and the bytes stay those of the plain run
    main, scope, exe, fetch = _build("gru", "float64")
    feed = _feed(LODS["unequal"], "float64")
    plain = _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope))
    end_frame, broken = recurrent_grad.BackUnroll.end_frame, []

    def copying_end_frame(self, t, gvals):
        if t == 1:
            (_, slot), = self.in_grad_pairs
            gvals[slot] = gvals[slot].copy()
            broken.append(t)
        return end_frame(self, t, gvals)

    monkeypatch.setattr(recurrent_grad.BackUnroll, "end_frame", copying_end_frame)
    seen, copied = _recipes(monkeypatch)
    assert _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope)) == plain
    assert broken == [1]
    recipe = seen[-1]
    # frame 1 kept operand by operand: its two gate gradients and the bias's dOut (the
    # split's output, no longer the in-link gradient) copied, besides what every frame
    # copies (the first frame too)
    assert sum(copied) == 2 * recipe.copies + 3
