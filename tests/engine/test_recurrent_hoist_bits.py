"""A plain run of a recurrent group runs the step ops that read no memory once over all
rows (engine/recurrent/hoist.py) and binds each frame's rows of their outputs; the
debugger runs every op in every frame (a hoisted product binds its frame's rows of the
one all-rows product there too: test_recurrent_frame_products.py). Checked here for ``lstmemory_group``,
``gru_group`` and a general ``recurrent_group`` (reverse too), in float32 and float64,
over sequences of unequal lengths: which steps are hoisted, that every fetched value and
gradient of a plain run has the debugger's bits, and that every value of every frame's
step scope (the hoisted ops' outputs included) has the bits, shape and strides of the
debugger's."""
import numpy as np
import pytest

import fluidscope.designer as fd
from recurrent_programs import forward_control, group_feed, group_program, gru_over, lstm_over

LODS = {"unequal": [0, 3, 4, 9, 11, 11, 18], "one": [0, 5]}
WIDTH, HIDDEN = 3, 4


def _build(kind, dtype, reverse=False):
    def general(x):
        def step(x_t):
            h_pre = fd.memory("h", size=HIDDEN)
            # row-wise, reads no memory: hoisted ("rnn_direct": x_t itself)
            scaled = x_t if kind == "rnn_direct" else fd.elementwise_mul(x_t, x_t)
            return fd.fc([scaled, h_pre], HIDDEN, act="tanh", name="h",
                         param_attr=[fd.ParamAttr("w_0"), fd.ParamAttr("w_1")],
                         bias_attr=fd.ParamAttr("b"))
        return fd.recurrent_group(step, x, reverse=reverse)

    library = {"lstm": lstm_over, "gru": gru_over}.get(kind)
    main, startup, h = group_program(
        (lambda x: library(x, HIDDEN)) if library else general, WIDTH, HIDDEN, dtype)
    params = {"lstm": ["w_x", "w", "b"], "gru": ["w_x", "w_ur", "w_c", "b"]}.get(
        kind, ["w_0", "w_1", "b"])
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    fetch = [h.name, "x@GRAD"] + [p + "@GRAD" for p in params]
    return main, scope, exe, fetch


def _feed(lod, dtype, seed=3):
    return group_feed(lod, WIDTH, HIDDEN, dtype, seed)


def _hoisted_types(exe, main):
    control = forward_control(exe, main)
    return [control.fwd.steps[p].type for p in control.hoisted]


CASES = [("lstm", False), ("gru", False), ("rnn", False), ("rnn", True)]


@pytest.mark.parametrize("kind,expected", [
    ("lstm", ["elementwise_add"]),  # the bias added to the projection; the rest reads
    # h_{t-1} or c_{t-1}, or a product of one
    ("gru", ["elementwise_add", "split"]),  # the bias added to the projection, its split
    # x_t * x_t, then x_t @ w_0: a product, bound in every driver (hoist.py)
    ("rnn", ["elementwise_mul", "mul"]),
])
def test_the_ops_that_read_no_memory_and_round_row_by_row_are_hoisted(kind, expected):
    main, scope, exe, fetch = _build(kind, "float64")
    assert _hoisted_types(exe, main) == expected


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,reverse", CASES)
@pytest.mark.parametrize("lod", sorted(LODS))
def test_a_plain_run_has_the_debuggers_bits_in_every_result_and_every_frame(kind, reverse,
                                                                            dtype, lod):
    main, scope, exe, fetch = _build(kind, dtype, reverse)
    feed = _feed(LODS[lod], dtype)
    scopes_name = next(op.output("step_scopes")[0] for op in main.global_block().ops
                       if op.type == "recurrent")
    plain = exe.run(main, feed=feed, fetch_list=fetch + [scopes_name], scope=scope)
    frames = plain.pop()
    sess = exe.debug(main, feed=feed, fetch_list=fetch, scope=scope)
    stepped = None
    for pos in sess.events():
        if pos.frame is None and pos.op_type == "recurrent":  # the forward op completed
            stepped = sess.tensor(scopes_name)
    for name, a, b in zip(fetch, plain, sess.fetch()):
        assert a.dtype == b.dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert len(frames) == len(stepped.frames) == max(np.diff(LODS[lod]))
    hoisted = {n for p in forward_control(exe, main).hoisted
               for n in (main.block(1).ops[p].output_arg_names)}
    for t in range(len(frames)):
        ours, theirs = frames.frame_values(t), stepped.frame_values(t)
        assert sorted(ours) == sorted(theirs) and hoisted <= set(ours)
        for name, value in ours.items():
            other = theirs[name]
            assert value.shape == other.shape and value.strides == other.strides, (t, name)
            np.testing.assert_array_equal(value, other, err_msg=f"frame {t}: {name}")


class _Step:
    """A stand-in step: ``run`` writes ``value`` (or raises it) into slot 1."""

    def __init__(self, value):
        self.value = value

    def run(self, vals):
        if isinstance(self.value, Exception):
            raise self.value
        vals[1] = self.value

    def output_slots(self):
        return [1]


@pytest.mark.parametrize("value,hoisted", [
    (np.zeros((5, 2)), True),
    (np.zeros((4, 2)), False),  # not one row per row of the frames: per frame instead
    (np.float64(1.0), False),  # no rows at all
    (ValueError("shapes"), False),  # a failing op fails again in its frame, with its message
])
def test_hoisted_steps_run_over_all_rows_or_leave_the_frames_to_run_them(value, hoisted):
    from types import SimpleNamespace
    from fluidscope.engine.recurrent.hoist import run_hoisted
    plan = SimpleNamespace(steps=[_Step(value)])
    outs = run_hoisted(plan, [0], [None, None], total=5)
    assert (outs is not None) == hoisted
    if hoisted:
        assert outs[0][0] == 1 and outs[0][1] is value


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_backward_reads_in_link_rows_of_a_batched_product_where_the_forward_put_them(
        monkeypatch, dtype):
    # x_t @ w_0 in the general group: its dW takes X = x_t of every frame; those rows are
    # the forward's batch-ordered in-link already, so no frame copies them again, and
    # the gradients keep the bits of a run that copies them.
    from fluidscope.engine.recurrent import op as recurrent_op
    from fluidscope.engine.recurrent.batched_grads import Sink
    from fluidscope.engine.recurrent.frame_keep import KeepRecipe
    main, scope, exe, fetch = _build("rnn_direct", dtype)
    feed = _feed(LODS["unequal"], dtype)
    copies = []
    put = Sink.put

    def counting_put(self, start, stop, arrays, copied):
        copies.append(sum(id(a) not in copied for a in arrays))
        return put(self, start, stop, arrays, copied)

    keep = KeepRecipe.keep

    def counting_keep(self, *args):  # the frames after the first kept by its recipe
        kept = keep(self, *args)
        if kept:
            copies.append(self.copies)
        return kept

    monkeypatch.setattr(Sink, "put", counting_put)
    monkeypatch.setattr(KeepRecipe, "keep", counting_keep)
    borrowing = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    borrowed_copies = sum(copies)
    init = recurrent_op.Unroll.__init__

    def without_rows(self, *args):
        init(self, *args)
        self.frames.inlink_rows = []

    monkeypatch.setattr(recurrent_op.Unroll, "__init__", without_rows)
    copies.clear()
    copying = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    frames = max(np.diff(LODS["unequal"]))
    assert sum(copies) == borrowed_copies + frames  # one in-link copy per frame saved
    for name, a, b in zip(fetch, borrowing, copying):
        np.testing.assert_array_equal(a, b, err_msg=name)
