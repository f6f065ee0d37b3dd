"""Grad-block steps that hand a gradient on unchanged (engine/recurrent/pass_through.py):
a plain run of ``recurrent_grad`` stores what their kernels return (the very arrays, so
the bytes too) without calling the kernels, runs the op itself where operands broadcast,
and leaves a step whose run someone wrapped as wrapped."""
import numpy as np
import pytest

from fluidscope.engine.ir.registry import OUTPUTS_WANTED
from fluidscope.engine.recurrent.pass_through import find_pass_throughs, pass_through_run

from test_recurrent_hoist_bits import LODS, _build, _feed


def _grad_control(exe, main):
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent_grad")


@pytest.mark.parametrize("kind,expected", [
    ("lstm", ["elementwise_add_grad", "elementwise_add_grad"]),  # c's sum, the gates' sum
    ("rnn", ["scale", "scale"]),  # the gradient of fc's sum of two products
])
def test_the_steps_that_hand_a_gradient_on_are_found(kind, expected):
    main, scope, exe, fetch = _build(kind, "float64")
    control = _grad_control(exe, main)
    assert [control.grad.steps[p].type for p in control.pass_throughs] == expected
    assert not set(control.pass_throughs) & set(control.products)  # the bias has its own


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["lstm", "rnn"])
def test_each_pass_through_stores_the_arrays_its_kernel_returns(kind, dtype):
    main, scope, exe, fetch = _build(kind, dtype)
    control = _grad_control(exe, main)
    rng = np.random.default_rng(2)
    for pos, found in control.pass_throughs.items():
        step = control.grad.steps[pos]
        gvals = [None] * (len(control.grad.names) + 1)
        ins = [rng.standard_normal((3, 4)).astype(dtype) for _ in step.ins]
        for slot, value in zip(step.ins, ins):
            if slot:
                gvals[slot] = value
        by_kernel = list(gvals)
        step.run(by_kernel)
        pass_through_run(step, found)(gvals)
        for slot in step.outs:
            assert gvals[slot] is by_kernel[slot] is not None  # the same array, not a copy


def test_an_add_whose_operands_broadcast_or_want_one_output_runs_as_the_kernel_does():
    main, scope, exe, fetch = _build("lstm", "float64")
    control = _grad_control(exe, main)
    pos = next(p for p, k in control.pass_throughs.items() if k == "add")
    step = control.grad.steps[pos]
    (xs, ys, gs), (dxs, dys) = step.ins, step.outs
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    saved = step.attrs.get(OUTPUTS_WANTED)
    for y in (rng.standard_normal((4,)), rng.standard_normal((3, 4))):
        for want in ((True, False), (False, True), (True, True)):
            step.attrs[OUTPUTS_WANTED] = want
            try:
                gvals, by_kernel = [None] * 64, [None] * 64
                for vals in (gvals, by_kernel):
                    vals[xs], vals[ys], vals[gs] = x, y, g
                step.run(by_kernel)
                pass_through_run(step, "add")(gvals)
            finally:
                step.attrs[OUTPUTS_WANTED] = saved
            for slot in (dxs, dys):
                a, b = gvals[slot], by_kernel[slot]
                assert (a is None) == (b is None)
                if a is not None:
                    assert a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_wrapped_pass_through_step_runs_as_wrapped_in_a_plain_run(monkeypatch):
    main, scope, exe, fetch = _build("lstm", "float32")
    feed = _feed(LODS["unequal"], "float32")
    plain = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    control = _grad_control(exe, main)
    calls = []
    for pos in control.pass_throughs:
        step = control.grad.steps[pos]

        def wrapped(vals, run=step.run, pos=pos):
            calls.append(pos)
            run(vals)
        monkeypatch.setattr(step, "run", wrapped)
    again = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    frames = max(np.diff(LODS["unequal"]))
    assert sorted(calls) == sorted(list(control.pass_throughs) * frames)
    for name, a, b in zip(fetch, plain, again):
        assert a.tobytes() == b.tobytes(), name
