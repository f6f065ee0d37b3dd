"""The MLP training step of benchmarks/mlp_step.py (issue #16 item 2), at a size where
every fast path of a plain run is taken (more than linalg.SMALL_M rows, two hidden
layers: mul_grad writes dX into its buffer, relu/add/relu_grad/sgd write into dead
inputs, the first layer's mul_grad has no dX), gives bit for bit what the pure kernels
give, in float32 and float64; and the debugger still stops at every op with exactly
the values a plain run fetches.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
import fluidscope.engine.random as fluid_random
from fluidscope.engine.kernels import linalg
from fluidscope.engine.runtime import plan as plan_module
from fluidscope.engine.runtime import recycle

ROWS = linalg.SMALL_M + 8


def _mlp(dtype):
    fluid_random.seed(11)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 20], dtype)
        label = fd.data("label", [None, 1], "int64")
        h = fd.fc(fd.fc(x, 16, act="relu"), 16, act="relu")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(h, 5), label))
        fd.optimizer.SGD(0.05).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.standard_normal((ROWS, 20)).astype(dtype),
              "label": rng.integers(0, 5, (ROWS, 1))} for _ in range(3)]
    return main, exe, scope, feeds, loss


def _params(main, scope):
    return [np.array(scope.find_var(p.name).get_tensor().value, copy=True)
            for p in main.all_parameters()]


def _pure(exe, main):
    """Every step of the plan bound to its pure kernel (fresh arrays, no reuse)."""
    plan = exe.prepare(main)
    for step in plan.steps:
        if step.spare is not None:
            step.run, step.spare = plan_module._bind(step, step.kernel, plan.place.xp), None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_plain_training_steps_are_the_pure_kernels_bit_for_bit(dtype):
    results = []
    for reuse in (True, False):
        main, exe, scope, feeds, loss = _mlp(dtype)
        if not reuse:
            _pure(exe, main)
        losses = [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0].item()
                  for f in feeds * 3]
        results.append((losses, _params(main, scope)))
        if reuse and recycle.ENABLED:
            # reuse did happen: these steps keep arrays for the next run (relu, the adds
            # and relu_grad wrote into their dead inputs, whose makers keep them)
            kept = {s.type for s in exe.prepare(main).steps
                    if s.spare is not None and any(a is not None for a in s.spare)}
            assert {"mul", "mul_grad", "sgd"} <= kept
    (losses, params), (pure_losses, pure_params) = results
    assert losses == pure_losses
    for got, want in zip(params, pure_params, strict=True):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_debugger_stops_at_every_op_with_what_a_plain_run_fetches(dtype):
    main, exe, scope, feeds, loss = _mlp(dtype)
    for feed in feeds:  # plain runs first: every step holds spares
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    ref_main, ref_exe, ref_scope, _, _ = _mlp(dtype)
    for feed in feeds:
        ref_exe.run(ref_main, feed=feed, fetch_list=[loss.name], scope=ref_scope)
    names = [n for n in exe.prepare(main).names[1:] if not n.endswith("@GRAD")]
    steps = len(exe.prepare(main).steps)
    sess = exe.debug(main, feed=feeds[0], fetch_list=[loss], scope=scope)
    stops = 0
    while not sess.finished:
        sess.step()
        stops += 1
    assert stops == steps
    stepped = {n: np.array(sess.tensor(n).value, copy=True) for n in names}
    fetched = ref_exe.run(ref_main, feed=feeds[0], fetch_list=names, scope=ref_scope)
    for name, value in zip(names, fetched, strict=True):
        assert stepped[name].tobytes() == np.asarray(value).tobytes(), name
