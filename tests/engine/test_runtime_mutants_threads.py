"""The BLAS thread policy from a fresh process and without a BLAS library, and the products it
measures at the edges: a vector times a matrix, one input feature, an operand no step has
computed yet (issue #17: mutants of runtime/threads.py that test_threads let through)."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.engine.runtime import threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_counts():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


@pytest.mark.parametrize("start, cap", [(2, 1), (1, 2)])
def test_a_fresh_policy_caps_every_blas_pool_and_gives_the_counts_back(monkeypatch, start, cap):
    # The process-wide policy as a fresh process has it: pools not looked up yet.
    monkeypatch.setattr(threads, "_POLICY", threads._Policy())
    with threadpoolctl.threadpool_limits(limits=start, user_api="blas"):
        before = _blas_counts()
        assert before and fd.get_num_threads() == before[0]
        assert fd.set_num_threads(cap) == before[0]
        assert _blas_counts() == [cap] * len(before)
        assert fd.set_num_threads(None) == cap
        assert _blas_counts() == before


def test_without_a_blas_library_set_num_threads_says_what_to_do_instead(monkeypatch):
    monkeypatch.setattr(threads._POLICY, "pools", [])
    assert fd.get_num_threads() is None
    with pytest.raises(FluidscopeError) as err:
        fd.set_num_threads(2)
    assert str(err.value) == (
        "set_num_threads: threadpoolctl is not installed (pip install threadpoolctl), or numpy "
        "loaded no BLAS library it knows; set OPENBLAS_NUM_THREADS before starting Python "
        "instead")


def _vals(build, feed, steps=None):
    """(plan, slot values) of ``build``'s program after ``steps`` steps (None: all)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        build()
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    run = exe.start(main, feed, scope)
    if steps is None:
        run.run_to_end()
    for _ in range(steps or 0):
        run.step()
    return run.plan, run.vals


def test_a_vector_times_a_matrix_counts_one_row_times_the_matrix():
    def build():
        fd.matmul(fd.data("v", [4], "float32"), fd.data("m", [4, 5], "float32"))
    plan, vals = _vals(build, {"v": np.ones(4, np.float32), "m": np.ones((4, 5), np.float32)})
    assert threads.largest_product(plan, vals) == 4 * 5


def test_a_layer_of_one_input_feature_counts_every_row():
    plan, vals = _vals(lambda: fd.fc(fd.data("x", [None, 1], "float32"), 5),
                       {"x": np.ones((3, 1), np.float32)})
    assert threads.largest_product(plan, vals) == 3 * 1 * 5


@pytest.mark.parametrize("computed", ["X", "Y"])
def test_a_product_whose_operand_no_step_computed_yet_counts_nothing(computed):
    def build():
        x = fd.data("x", [2, 3], "float32")
        y = fd.data("y", [3, 4], "float32")
        fd.matmul(x, fd.relu(y)) if computed == "Y" else fd.matmul(fd.relu(x), y)
        fd.matmul(x, fd.data("z", [3, 2], "float32"))  # a later product, operands fed
    feed = {"x": np.ones((2, 3), np.float32), "y": np.ones((3, 4), np.float32),
            "z": np.ones((3, 2), np.float32)}
    plan, vals = _vals(build, feed, steps=0)
    assert threads.largest_product(plan, vals) == 2 * 3 * 2  # before the relu ran
    plan, vals = _vals(build, feed)
    assert threads.largest_product(plan, vals) == 2 * 3 * 4


def test_a_matrix_times_a_vector_counts_every_row():
    def build():
        fd.matmul(fd.data("m", [3, 4], "float32"), fd.data("v", [4], "float32"))
    plan, vals = _vals(build, {"m": np.ones((3, 4), np.float32), "v": np.ones(4, np.float32)})
    assert threads.largest_product(plan, vals) == 3 * 4


def test_a_convolution_of_one_input_channel_counts_every_window():
    def build():
        fd.conv2d(fd.data("img", [None, 1, 6, 6], "float32"), num_filters=4, filter_size=3)
    plan, vals = _vals(build, {"img": np.ones((2, 1, 6, 6), np.float32)})
    assert threads.largest_product(plan, vals) == (2 * 1 * 6 * 6) * (4 * 1 * 3 * 3)


def test_the_first_run_in_a_fresh_process_measures_its_plan(monkeypatch):
    # nothing has looked the BLAS pools up yet when the first run enters and leaves
    monkeypatch.setattr(threads, "_POLICY", threads._Policy())
    plan, vals = _vals(lambda: fd.fc(fd.data("x", [None, 3], "float32"), 2),
                       {"x": np.ones((4, 3), np.float32)})
    assert plan.small_products is True


def _small_plan_counts(runs=2, library=2):
    """BLAS counts the first op of a small plan sees in each run after the measuring one,
    and the counts after each run (under a count of ``library`` set around it)."""
    with threadpoolctl.threadpool_limits(limits=library, user_api="blas"):
        main, startup = fd.Program(), fd.Program()
        with fd.program_guard(main, startup):
            out = fd.fc(fd.data("x", [None, 3], "float32"), 2)
        scope, exe = fd.Scope(), fd.Executor()
        exe.run(startup, scope=scope)
        feed = {"x": np.ones((4, 3), np.float32)}
        exe.run(main, feed=feed, fetch_list=[out], scope=scope)  # measures: small
        plan, seen, after = exe.prepare(main), [], []
        first = plan.steps[0].run

        def spy(vals):
            seen.append(_blas_counts())
            first(vals)
        plan.steps[0].run = spy
        for _ in range(runs):
            exe.run(main, feed=feed, fetch_list=[out], scope=scope)
            after.append(_blas_counts())
    return seen, after


def test_a_fresh_process_starts_under_the_automatic_policy(monkeypatch):
    monkeypatch.setattr(threads, "_POLICY", threads._Policy())
    seen, after = _small_plan_counts(1)
    assert all(c == 1 for c in seen[0]) and all(c == 2 for c in after[0])


@pytest.mark.parametrize("library", [1, 2])
def test_a_small_plan_runs_at_one_thread_and_leaves_the_count_it_found(library):
    seen, after = _small_plan_counts(2, library)
    assert len(seen) == 2 and all(c == 1 for counts in seen for c in counts)
    assert all(c == library for counts in after for c in counts)
