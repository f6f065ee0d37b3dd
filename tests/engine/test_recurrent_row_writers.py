"""A plain run of recurrent_grad lets the split_grad whose output is an in-link's
gradient (LSTM and GRU groups: the gate gradients joined) write straight into that
in-link's buffer of all rows (engine/recurrent/row_writers.py): every frame's in-link
gradient is then the frame's rows of the buffer, not a copy, and the gradients have the
debugger's bytes (f32, f64). When an op after the split_grad hands on another array, the
in-link moves to a buffer of its own (the rows written stay what the frame's other
values read) and the results still have the debugger's bytes."""
import numpy as np
import pytest

from fluidscope.engine.recurrent import grad as recurrent_grad

from test_recurrent_hoist_bits import LODS, _build, _feed


def _grad_control(exe, main):
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent_grad")


def _bytes(values):
    return [(np.asarray(v).dtype, np.asarray(v).shape, np.asarray(v).tobytes()) for v in values]


def _debugger_fetch(exe, main, feed, fetch, scope):
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stops = list(sess.events())  # op by op, into every frame
    assert any(p.frame is not None for p in stops)
    return sess.fetch()


@pytest.fixture
def in_place_frames(monkeypatch):
    """Per frame of a plain run: whether each in-link gradient was the frame's rows."""
    seen = []
    end_frame = recurrent_grad.BackUnroll.end_frame

    def watched(self, t, gvals):
        for i, s in self.in_grad_pairs:
            views = self.row_views
            if gvals[s] is not None and self.grad_frames is None:
                seen.append(views is not None and gvals[s] is views[i])
        return end_frame(self, t, gvals)
    monkeypatch.setattr(recurrent_grad.BackUnroll, "end_frame", watched)
    return seen


@pytest.mark.parametrize("kind,expected", [("lstm", True), ("gru", True), ("rnn", False)])
def test_the_split_grad_of_an_in_links_gradient_is_found(kind, expected):
    main, scope, exe, fetch = _build(kind, "float64")
    control = _grad_control(exe, main)
    writers = control.row_writers
    assert bool(writers) == expected
    for pos, i in writers.items():
        assert control.grad.steps[pos].type == "split_grad" and i == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_every_frame_writes_its_in_link_rows_in_place_with_the_debuggers_bytes(
        kind, dtype, in_place_frames):
    main, scope, exe, fetch = _build(kind, dtype)
    feed = _feed(LODS["unequal"], dtype)
    plain = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    assert in_place_frames == [True] * max(np.diff(LODS["unequal"]))
    assert _bytes(_debugger_fetch(exe, main, feed, fetch, scope)) == _bytes(plain)
    # and a second run (the buffer handed back as a spare) gives the same bytes again
    assert _bytes(exe.run(main, feed=feed, fetch_list=fetch, scope=scope)) == _bytes(plain)


def _hand_on_another_array(control, monkeypatch):
    """Make the op that writes the in-link gradient hand on twice it in frames of more
    than one row, in every driver: in those a frame's in-link gradient is another array
    than the rows the split_grad wrote (the last two frames, which run first, have one
    row), while the frame's other values (the product's and the bias's dOut) still are
    those rows."""
    slot = control.in_grad_step[0]
    pos = next(p for p, s in enumerate(control.grad.steps) if slot in s.output_slots())
    step = control.grad.steps[pos]

    def copying(run):
        def wrapped(vals):
            run(vals)
            if len(vals[slot]) > 1:  # frames of one row (the two processed first) as they are
                vals[slot] = vals[slot] * 2
        return wrapped
    monkeypatch.setattr(step, "run", copying(step.run))
    if pos in control.batched_runs:
        monkeypatch.setitem(control.batched_runs, pos, copying(control.batched_runs[pos]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_an_in_link_gradient_that_is_not_the_written_rows_moves_to_its_own_buffer(
        kind, dtype, monkeypatch, in_place_frames):
    main, scope, exe, fetch = _build(kind, dtype)
    feed = _feed(LODS["unequal"], dtype)
    # a run on other values first: the buffers it hands back hold none of the bytes wanted
    exe.run(main, feed=_feed(LODS["unequal"], dtype, seed=11), fetch_list=fetch, scope=scope)
    control = _grad_control(exe, main)
    _hand_on_another_array(control, monkeypatch)
    in_place_frames.clear()
    got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    assert in_place_frames == [True, True] + [False] * (len(in_place_frames) - 2)
    control.spares.held.clear()  # the debugger's buffers fresh: none of the runs' rows
    assert _bytes(got) == _bytes(_debugger_fetch(exe, main, feed, fetch, scope))
