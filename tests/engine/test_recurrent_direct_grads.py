"""Element-wise product and difference gradients, split_grad concatenations and sums run
without their kernels' dispatch in a plain run of ``recurrent_grad``
(engine/recurrent/direct_grads.py): which steps are found, that each closure stores the
kernel's bytes (and the very dOut array where the kernel returns it; it calls the
kernels' own functions), runs the op itself where operands broadcast, follows the wanted outputs, and that a plain run with the
closures has the bytes of one without them."""
import numpy as np
import pytest

from fluidscope.engine.ir.registry import OUTPUTS_WANTED
from fluidscope.engine.recurrent.direct_grads import direct_run

from test_recurrent_hoist_bits import LODS, _build, _feed


def _grad_control(exe, main):
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent_grad")


def _bytes(values):
    return [(np.asarray(v).dtype, np.asarray(v).shape, np.asarray(v).tobytes()) for v in values]


@pytest.mark.parametrize("kind,expected", [
    # the gates' products and c - h_prev; the reset and update gates' split (the gate
    # block's split_grad writes the in-link's rows: row_writers); h_{t-1}'s four gradients
    ("gru", ["elementwise_mul_grad", "elementwise_sub_grad", "elementwise_mul_grad",
             "split_grad", "sum"]),
    # f * c_prev, i * c~, o * tanh(c); c's two gradients
    ("lstm", ["elementwise_mul_grad", "sum", "elementwise_mul_grad", "elementwise_mul_grad"]),
    ("rnn", ["elementwise_mul_grad", "sum"]),  # the test group's x_t * x_t: x_t used twice
])
def test_the_steps_run_without_dispatch_are_found(kind, expected):
    main, scope, exe, fetch = _build(kind, "float64")
    control = _grad_control(exe, main)
    assert [control.grad.steps[p].type for p in sorted(control.direct)] == expected
    assert not set(control.direct) & (set(control.products) | set(control.row_writers)
                                      | set(control.pass_throughs))


def _run_both(step, kind, values):
    """(by the kernel, by the closure): the step's outputs from ``values`` (slot -> array)."""
    by_kernel, gvals = [None] * 64, [None] * 64
    for vals in (by_kernel, gvals):
        for slot, value in values.items():
            vals[slot] = value
    step.run(by_kernel)
    direct_run(step, kind)(gvals)
    return by_kernel, gvals


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_each_product_and_difference_stores_its_kernels_bytes_for_every_wanted_output(dtype):
    main, scope, exe, fetch = _build("gru", dtype)
    control = _grad_control(exe, main)
    rng = np.random.default_rng(7)
    checked = set()
    for pos, kind in control.direct.items():
        step = control.grad.steps[pos]
        if kind in ("concat", "sum"):
            continue
        (xs, ys, gs), (dxs, dys) = step.ins, step.outs
        saved = step.attrs.get(OUTPUTS_WANTED)
        for y_shape in ((3, 4), (4,)):  # same shapes; Y broadcast (the op run whole)
            x, g = (rng.standard_normal((3, 4)).astype(dtype) for _ in range(2))
            y = rng.standard_normal(y_shape).astype(dtype)
            for want in ((True, True), (True, False), (False, True)):
                step.attrs[OUTPUTS_WANTED] = want
                try:
                    by_kernel, gvals = _run_both(step, kind, {xs: x, ys: y, gs: g})
                finally:
                    step.attrs[OUTPUTS_WANTED] = saved
                for slot in (dxs, dys):
                    a, b = gvals[slot], by_kernel[slot]
                    assert (a is None) == (b is None), (step.type, want, slot)
                    if a is not None:
                        assert _bytes([a]) == _bytes([b]), (step.type, want, y_shape)
                if kind == "sub" and want[0] and y_shape == (3, 4):
                    assert gvals[dxs] is g  # dX is dOut itself, as the kernel returns it
        checked.add(kind)
    assert checked == {"mul", "sub"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_concatenation_stores_its_kernels_bytes_and_other_parts_run_the_op(dtype):
    main, scope, exe, fetch = _build("gru", dtype)
    control = _grad_control(exe, main)
    pos = next(p for p, k in control.direct.items() if k == "concat")
    step = control.grad.steps[pos]
    parts, (out,) = step.ins[1], step.outs
    rng = np.random.default_rng(8)
    pieces = {slot: rng.standard_normal((3, 2 + k)).astype(dtype)
              for k, slot in enumerate(parts)}
    by_kernel, gvals = _run_both(step, "concat", pieces)
    assert _bytes([gvals[out]]) == _bytes([by_kernel[out]])
    # 3-D parts: the kernel's own axis rule, the op's bytes
    pieces = {slot: rng.standard_normal((3, 2 + k, 2)).astype(dtype)
              for k, slot in enumerate(parts)}
    by_kernel, gvals = _run_both(step, "concat", pieces)
    assert gvals[out].shape == by_kernel[out].shape
    assert _bytes([gvals[out]]) == _bytes([by_kernel[out]])
    # a part that is not a numpy array (here: missing): the op runs as the plan runs it
    ran_whole, run = [], step.run
    step.run = lambda vals: ran_whole.append(vals)
    try:
        gvals = [None] * 64
        for slot in parts[1:]:
            gvals[slot] = pieces[slot]
        direct_run(step, "concat")(gvals)
    finally:
        step.run = run
    assert ran_whole == [gvals]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_a_plain_run_with_the_closures_has_the_bytes_of_one_with_the_kernels(kind, dtype):
    main, scope, exe, fetch = _build(kind, dtype)
    feed = _feed(LODS["unequal"], dtype)
    control = _grad_control(exe, main)
    direct = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    control.pass_runs = {p: r for p, r in control.pass_runs.items() if p not in control.direct}
    by_kernels = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    for name, a, b in zip(fetch, _bytes(direct), _bytes(by_kernels)):
        assert a == b, name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_sum_stores_its_kernels_bytes_and_mixed_operands_run_the_op(dtype):
    main, scope, exe, fetch = _build("gru", dtype)
    control = _grad_control(exe, main)
    pos = next(p for p, k in control.direct.items() if k == "sum")
    step = control.grad.steps[pos]
    (parts,), (out,) = step.ins, step.outs
    assert len(parts) == 4
    rng = np.random.default_rng(9)
    terms = {slot: rng.standard_normal((3, 4)).astype(dtype) for slot in parts}
    by_kernel, gvals = _run_both(step, "sum", terms)
    assert _bytes([gvals[out]]) == _bytes([by_kernel[out]])
    assert all(gvals[slot] is terms[slot] for slot in parts)  # no term written into
    # the first two of other shapes: the kernel's other path, run as the op
    terms[parts[1]] = rng.standard_normal((1, 4)).astype(dtype)
    by_kernel, gvals = _run_both(step, "sum", terms)
    assert _bytes([gvals[out]]) == _bytes([by_kernel[out]])
