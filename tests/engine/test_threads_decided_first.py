"""The BLAS thread policy decides a plan's thread count before its first run
(engine/runtime/threads.py ``decide``), so the first run, later runs and the debugger all
run at one count and agree bit for bit.

It used to be measured after the first run, which ran at the library's count while every
later run and the debugger ran at one thread: on a 2-core AMD EPYC, stepping Paddle's
ResNet-18 after a run differed from the run by 3e-5 (test_paddle_models)."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.runtime import threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _two_layers(width, hidden, out_width):
    """fc(hidden) -> fc(out_width) over x [-1, width]: the second product's X is computed."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], "float32")
        out = fd.fc(fd.fc(x, hidden, act="relu"), out_width)
        loss = fd.mean(out)
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return exe, main, scope, loss


def test_the_decision_counts_computed_operands_by_their_declared_shape_at_the_feeds_batch():
    exe, main, scope, _ = _two_layers(4, 24, 30)
    plan = exe.prepare(main)
    run = exe.start(main, {"x": np.ones((5, 4), np.float32)}, scope)
    # before any step: the hidden activation [-1, 24] is read as [5, 24]
    assert threads.largest_product(plan, run.vals) == 5 * 4 * 24  # fed operands only
    assert threads.largest_product(plan, run.vals, batch=5) == 5 * 24 * 30
    assert threads.largest_product(plan, run.vals, batch=7) == 7 * 24 * 30
    threads.decide(plan, run.vals)
    assert plan.small_products is True


@pytest.mark.parametrize("limit, small", [(5 * 24 * 30, False), (5 * 24 * 30 + 1, True)])
def test_the_decision_is_made_before_the_first_run_at_the_threshold(monkeypatch, limit, small):
    monkeypatch.setattr(threads, "SMALL_PRODUCT", limit)
    exe, main, scope, loss = _two_layers(4, 24, 30)
    plan = exe.prepare(main)
    seen, first = [], plan.steps[0].run

    def spy(vals):  # the count the first op of the very first run sees
        seen.append(fd.get_num_threads())
        first(vals)
    plan.steps[0].run = spy
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        exe.run(main, feed={"x": np.ones((5, 4), np.float32)}, fetch_list=[loss], scope=scope)
    assert plan.small_products is small
    assert seen == [2 if not small else 1]


def test_stepping_after_a_first_run_reproduces_it_bit_for_bit():
    exe, main, scope, loss = _two_layers(64, 200, 64)
    feed = {"x": np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)}
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        twin = scope.new_scope()  # the run writes parameters: step from the same start
        names = [n for n in scope.local_var_names() if ".w_" in n or ".b_" in n]
        for n in names:
            twin.var(n).get_tensor().set(np.array(scope.find_var(n).get_tensor()), exe.place)
        hidden = main.global_block().ops[1].output("Out")[0]  # relu's input: the product
        ran = exe.run(main, feed=feed, fetch_list=[loss, hidden], scope=scope)
        sess = exe.debug(main, feed=feed, fetch_list=[loss, hidden], scope=twin)
        while not sess.finished:
            sess.step()
        stepped = sess.fetch()
    for got, want in zip(stepped, ran):
        np.testing.assert_array_equal(got, want)
