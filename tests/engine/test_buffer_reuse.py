"""Buffer reuse in a plain run (engine/runtime/recycle.py): what it may and must not touch.

The rule: a step whose op has a ``kernel_into`` may write its output into the array its
slot got in the previous run only when nothing but the plan can reach that array. These
tests hold the promises a user relies on: a fetched array never changes after it is
returned, a value the debugger recorded is never overwritten (``back()`` restores
exactly), a parameter the scope holds is never written in place, and the numbers are
bit for bit those of the pure kernels. They also prove that reuse happens (else the
rule would be vacuous).
"""
import gc
import weakref

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import random as fluid_random
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import registry
from fluidscope.engine.runtime import plan as plan_module
from fluidscope.engine.runtime import recycle

pytestmark = pytest.mark.skipif(not recycle.ENABLED, reason="no reference counts here")

RNG = np.random.default_rng(5)


def build(dtype="float32", lr=0.1):
    """fc(16, relu) -> fc(3) -> softmax_with_cross_entropy -> mean, SGD: every op that
    recycles (mul, elementwise_add, relu, their grads, sgd) is in it."""
    fluid_random.seed(3)
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 6], dtype)
        label = fd.data("label", [None, 1], "int64")
        h = fd.fc(x, 16, act="relu", name="hidden")
        logits = fd.fc(h, 3, name="out")
        loss = fd.mean(fd.softmax_with_cross_entropy(logits, label))
        fd.optimizer.SGD(lr).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(7)
    feeds = [{"x": rng.standard_normal((8, 6)).astype(dtype),
              "label": rng.integers(0, 3, (8, 1))} for _ in range(3)]
    return main, exe, scope, feeds, loss, h


def param_names(main):
    return [p.name for p in main.all_parameters()]


def snapshot(scope, names):
    return {n: np.array(scope.find_var(n).get_tensor().value, copy=True) for n in names}


def pure(exe, main):
    """Rebind every step of ``main``'s plan on ``exe`` to its pure kernel (no reuse)."""
    p = exe.prepare(main)
    for step in p.steps:
        if step.spare is not None:
            step.run, step.spare = plan_module._bind(step, step.kernel, p.place.xp), None
    return p


def test_the_mlp_steps_recycle_and_others_do_not():
    main, exe, *_ = build()
    kinds = {s.type for s in exe.prepare(main).steps if s.spare is not None}
    assert kinds == {"mul", "elementwise_add", "relu", "mul_grad", "relu_grad", "sgd"}


def test_reuse_happens_when_nobody_holds_the_previous_output():
    main, exe, scope, feeds, loss, h = build()
    (first,) = exe.run(main, feed=feeds[0], fetch_list=[h], scope=scope)
    ref = weakref.ref(first)
    del first
    gc.collect()
    assert ref() is not None  # the plan kept it for the next run
    (second,) = exe.run(main, feed=feeds[1], fetch_list=[h], scope=scope)
    assert second is ref(), "the next run wrote its hidden layer into the same array"


def test_a_fetched_array_never_changes_after_it_is_returned():
    main, exe, scope, feeds, loss, h = build()
    names = param_names(main)
    fetched = exe.run(main, feed=feeds[0], fetch_list=[h, loss] + names, scope=scope)
    copies = [np.array(a, copy=True) for a in fetched]
    for feed in feeds[1:] * 3:
        later = exe.run(main, feed=feed, fetch_list=[h, loss] + names, scope=scope)
        assert all(a is not b for a, b in zip(fetched, later))
    for kept, copy in zip(fetched, copies):
        np.testing.assert_array_equal(kept, copy)


def test_a_view_of_a_fetched_array_keeps_it_from_reuse():
    main, exe, scope, feeds, loss, h = build()
    (hidden,) = exe.run(main, feed=feeds[0], fetch_list=[h], scope=scope)
    row = hidden[1]  # a view: it references the array that owns the memory
    copy = row.copy()
    del hidden
    for feed in feeds[1:]:
        exe.run(main, feed=feed, fetch_list=[h], scope=scope)
    np.testing.assert_array_equal(row, copy)


def test_parameters_read_from_the_scope_are_never_written_in_place():
    main, exe, scope, feeds, loss, h = build()
    names = param_names(main)
    held = {n: scope.find_var(n).get_tensor().value for n in names}
    copies = {n: v.copy() for n, v in held.items()}
    for feed in feeds * 2:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    for n in names:
        np.testing.assert_array_equal(held[n], copies[n])
        assert scope.find_var(n).get_tensor().value is not held[n]


def test_sgd_swaps_two_arrays_per_parameter_once_nobody_holds_the_old_one():
    main, exe, scope, feeds, loss, h = build()
    name = param_names(main)[0]
    tensor = scope.find_var(name).get_tensor()
    exe.run(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    a = weakref.ref(tensor.value)
    exe.run(main, feed=feeds[1], fetch_list=[loss], scope=scope)
    b = weakref.ref(tensor.value)
    exe.run(main, feed=feeds[2], fetch_list=[loss], scope=scope)
    assert tensor.value is a() and a() is not b()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_with_reuse_is_bit_for_bit_the_pure_kernels(dtype):
    runs = []
    for reuse in (True, False):
        main, exe, scope, feeds, loss, h = build(dtype)
        if not reuse:
            pure(exe, main)
        losses = [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0].item()
                  for f in feeds * 4]
        runs.append((losses, list(snapshot(scope, param_names(main)).values())))
    (losses, params), (pure_losses, pure_params) = runs
    assert losses == pure_losses
    for value, pure_value in zip(params, pure_params, strict=True):
        np.testing.assert_array_equal(value, pure_value)


def test_every_variable_fetched_is_exactly_what_the_pure_kernels_give():
    """Dead inputs are written into only when not fetched: fetch each variable in turn."""
    main, exe, scope, feeds, loss, h = build()
    ref_main, ref_exe, ref_scope, _, ref_loss, _ = build()
    pure(ref_exe, ref_main)
    names = [n for n in exe.prepare(main).names[1:]]
    ref_names = ref_exe.prepare(ref_main).names[1:]
    for i, (name, ref_name) in enumerate(zip(names, ref_names, strict=True)):
        feed = feeds[i % len(feeds)]
        got = exe.run(main, feed=feed, fetch_list=[name, loss], scope=scope)
        want = ref_exe.run(ref_main, feed=feed, fetch_list=[ref_name, ref_loss],
                           scope=ref_scope)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_ops_write_into_dead_inputs_like_the_hand_written_loop():
    """relu writes into the biased sum, which the bias add wrote into the product; sgd
    writes into the dead gradient: in the steady state each weight lives in two arrays."""
    main, exe, scope, feeds, loss, h = build()
    for feed in feeds:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    (hidden,) = exe.run(main, feed=feeds[0], fetch_list=[h], scope=scope)
    product = exe.prepare(main).steps[0]
    assert product.type == "mul" and product.spare[0] is hidden
    weight = scope.find_var(param_names(main)[0]).get_tensor()
    seen = set()
    for feed in feeds * 2:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        seen.add(id(weight.value))
    assert len(seen) == 2


def test_a_run_that_kept_only_its_fetches_refuses_to_fetch_the_rest():
    main, exe, scope, feeds, loss, h = build()
    run = exe.start(main, feeds[0], scope)
    run.run_to_end(keep=run.keep_slots([loss]))
    assert run.fetch([loss])[0].shape == ()
    with pytest.raises(FluidscopeError, match=r"cannot fetch \['hidden"):
        run.fetch([h])


def test_a_run_told_nothing_keeps_everything():
    main, exe, scope, feeds, loss, h = build()
    for feed in feeds:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    run = exe.start(main, feeds[0], scope)
    run.run_to_end()
    (hidden,) = run.fetch([h])
    (again,) = exe.run(main, feed=feeds[0], fetch_list=[h], scope=scope)
    np.testing.assert_array_equal(hidden, again)


def test_debugger_back_restores_exactly_after_and_between_plain_runs():
    main, exe, scope, feeds, loss, h = build()
    for feed in feeds:  # every step has a spare now
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    sess = exe.debug(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    seen = []  # (position, name -> copy of every value the session shows)
    while not sess.finished:
        sess.step()
        values = {n: sess.tensor(n) for n in sess.variables()}
        seen.append({n: np.array(t.value, copy=True) for n, t in values.items()
                     if t is not None and hasattr(t, "value")})
    # plain runs of the same plan while the session holds its history
    for feed in feeds:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    for expected in reversed(seen):
        for name, value in expected.items():
            np.testing.assert_array_equal(sess.tensor(name).value, value, err_msg=name)
        sess.back()
    assert sess.position.at_start


def test_a_failed_run_leaves_the_scope_as_it_was():
    main, exe, scope, feeds, loss, h = build()
    names = param_names(main)
    exe.run(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    before = snapshot(scope, names)
    bad = dict(feeds[1], label=np.full((8, 1), 7))  # a class outside [0, 3)
    with pytest.raises(Exception, match="outside"):
        exe.run(main, feed=bad, fetch_list=[loss], scope=scope)
    after = snapshot(scope, names)
    for n in names:
        np.testing.assert_array_equal(after[n], before[n])
    exe.run(main, feed=feeds[2], fetch_list=[loss], scope=scope)  # and training goes on


def test_release_buffers_drops_the_spares():
    main, exe, scope, feeds, loss, h = build()
    exe.run(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    p = exe.prepare(main)
    assert any(x is not None for s in p.steps if s.spare for x in s.spare)
    p.release_buffers()
    assert all(x is None for s in p.steps if s.spare for x in s.spare)


def test_take_offers_only_arrays_nobody_else_holds():
    owned = np.zeros(4)
    assert recycle.take([owned], 0) is None  # ``owned`` holds it here
    assert recycle.take([np.zeros(4)], 0) is not None
    base = np.zeros(4)
    view = base[1:]
    spare = [base]
    del base
    assert recycle.take(spare, 0) is None and spare == [None]  # the view holds it
    assert recycle.take([view.copy()[::2]], 0) is None  # a view owns no memory
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    spare = [frozen]
    del frozen
    assert recycle.take(spare, 0) is None


# ------------------------------------------------------------- kernel_into contract
def _cases():
    """(op type, attrs, inputs) for every op with a kernel_into, in both dtypes."""
    for dt in (np.float32, np.float64):
        x, w = RNG.standard_normal((70, 5)).astype(dt), RNG.standard_normal((5, 4)).astype(dt)
        d = RNG.standard_normal((70, 4)).astype(dt)
        small = (x[:3], w, d[:3])  # few rows: mul_grad's other product form
        yield "mul", {}, (x, w)
        yield "mul_grad", {}, (x, w, d)
        yield "mul_grad", {}, small
        yield "mul_grad", {registry.OUTPUTS_WANTED: (False, True)}, (x, w, d)
        yield "elementwise_add", {"axis": 1}, (d, RNG.standard_normal(4).astype(dt))
        yield "elementwise_add", {"axis": -1}, (d, d[::-1].copy())
        yield "elementwise_add", {"axis": 0}, (d[:, :1].copy(), d)  # Y grows X: no buffer
        yield "relu", {}, (d,)
        yield "relu_grad", {}, (np.maximum(d, 0), x[:, :4].copy())
        lr = np.array([0.05], dt)
        yield "sgd", {}, (w, lr, RNG.standard_normal((5, 4)).astype(dt), None)


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_kernel_into_is_the_kernel_bit_for_bit_with_or_without_a_buffer(case):
    op_type, given, inputs = case
    opdef = registry.get(op_type)
    attrs = opdef.parse_attrs({k: v for k, v in given.items() if k != registry.OUTPUTS_WANTED})
    if registry.OUTPUTS_WANTED in given:
        attrs[registry.OUTPUTS_WANTED] = given[registry.OUTPUTS_WANTED]
    expected = opdef.kernel_for("cpu")(np, attrs, *inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    inputs_before = [None if a is None else a.copy() for a in inputs]
    aliased = {_index(opdef.outputs, o): _index(opdef.inputs, i) for i, o in opdef.inplace}
    for kind in ("none", "fitting", "wrong shape", "wrong dtype", "its input"):
        if kind == "its input" and not aliased:
            continue
        bufs = []
        args = [None if a is None else a.copy() for a in inputs]  # "its input" writes them
        for k, e in enumerate(expected):
            if kind == "its input":
                bufs.append(args[aliased[k]] if k in aliased else None)
            elif kind == "none" or e is None:
                bufs.append(None)
            elif kind == "fitting":
                bufs.append(np.full(e.shape, np.nan, e.dtype))
            elif kind == "wrong shape":
                bufs.append(np.full(e.shape + (1,), np.nan, e.dtype))
            else:
                bufs.append(np.full(e.shape, np.nan, np.float16))
        spare_copies = [None if b is None else b.copy() for b in bufs]
        got = opdef.kernel_into(np, attrs, tuple(bufs), *args)
        got = got if isinstance(got, tuple) else (got,)
        for g, e, b, c in zip(got, expected, bufs, spare_copies):
            if e is None:
                assert g is None
                continue
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(g, e)
            if kind == "its input":  # used when it has the output's shape and dtype
                fits = b is not None and b.shape == e.shape and b.dtype == e.dtype
                assert (g is b) == fits, "the op writes into its dead input's array if it fits"
            elif kind != "fitting":  # a buffer that does not fit is left alone
                assert g is not b
                if b is not None:
                    np.testing.assert_array_equal(b, c)
        for a, before in zip(inputs, inputs_before):  # the caller's inputs are untouched
            if a is not None:
                np.testing.assert_array_equal(a, before)
        if kind != "its input":  # only a buffer handed over is written
            for a, before in zip(args, inputs_before):
                if a is not None:
                    np.testing.assert_array_equal(a, before)


def _index(slots, name):
    return next(i for i, slot in enumerate(slots) if slot.name == name)


def test_an_edited_program_lets_its_older_plan_go_of_its_buffers():
    main, exe, scope, feeds, loss, h = build()
    exe.run(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    old = exe.prepare(main)
    main.bump_revision()  # what every edit of a designer Program does
    assert exe.prepare(main) is not old
    assert all(x is None for s in old.steps if s.spare for x in s.spare)
