"""The BLAS thread policy (engine/runtime/threads.py): set_num_threads, the automatic
one-thread runs of plans whose products are small, and what a run measures."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.engine.runtime import threads

pytest.importorskip("threadpoolctl")


@pytest.fixture(autouse=True)
def automatic_policy_after():
    yield
    fd.set_num_threads(None)


def _mlp(width, batch):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], "float32")
        loss = fd.mean(fd.fc(x, width))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((batch, width), np.float32)}
    return exe, main, scope, feed, loss


def test_set_num_threads_caps_and_none_gives_the_count_back():
    before = fd.get_num_threads()
    assert fd.set_num_threads(1) == before
    assert fd.get_num_threads() == 1
    assert fd.set_num_threads(None) == 1
    assert fd.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_set_num_threads_refuses_what_is_not_a_count(bad):
    with pytest.raises(FluidscopeError, match="positive int or None"):
        fd.set_num_threads(bad)


def test_a_run_measures_its_largest_product_and_a_small_plan_is_marked_small():
    exe, main, scope, feed, loss = _mlp(16, 8)
    plan = exe.prepare(main)
    assert plan.small_products is None
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert plan.small_products is True
    run = exe.start(main, feed, scope)
    run.run_to_end()
    # mul: 8 rows x (16 x 16) weights; mul_grad the same operands
    assert threads.largest_product(plan, run.vals) == 8 * 16 * 16


def test_a_plan_with_a_large_product_keeps_the_librarys_count(monkeypatch):
    monkeypatch.setattr(threads, "SMALL_PRODUCT", 8 * 16 * 16)
    exe, main, scope, feed, loss = _mlp(16, 8)
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert exe.prepare(main).small_products is False


def test_small_plans_run_at_one_thread_and_give_the_count_back(monkeypatch):
    exe, main, scope, feed, loss = _mlp(16, 8)
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)  # measures: small
    seen, mean_kernel = [], exe.prepare(main).steps[1].run

    def spy(vals):  # the counts the ops of a run see
        seen.append(fd.get_num_threads())
        mean_kernel(vals)
    exe.prepare(main).steps[1].run = spy
    library = fd.get_num_threads()
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert seen == [1] and fd.get_num_threads() == library
    fd.set_num_threads(2)  # the user's count wins: no switch per run
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert seen == [1, 2]


def test_the_debugger_steps_follow_the_policy():
    exe, main, scope, feed, loss = _mlp(16, 8)
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)  # measures: small
    plan = exe.prepare(main)
    seen, mean_kernel = [], plan.steps[1].run

    def spy(vals):
        seen.append(fd.get_num_threads())
        mean_kernel(vals)
    plan.steps[1].run = spy
    library = fd.get_num_threads()
    sess = exe.debug(main, feed=feed, fetch_list=[loss], scope=scope)
    while not sess.finished:
        sess.step()
        assert fd.get_num_threads() == library  # between steps: the library's count
    assert seen == [1]
