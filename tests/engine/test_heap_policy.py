"""The heap policy (engine/runtime/heap.py): by default a step's freed temporaries stay in
the C heap for the next step instead of being faulted in again; "system" leaves glibc's
malloc as it is; the environment's malloc settings win over the default.

The page-fault tests run a small program in a fresh interpreter (the thresholds are
process-wide and glibc's adaptive state depends on what the process did before)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.engine.runtime import heap

GLIBC = sys.platform.startswith("linux") and heap.heap_policy()["glibc"]

# Two [1024, 256] float32 inputs (1 MiB each): tanh, multiply and reduce make fresh
# 1 MiB arrays every step and free them at its end. Prints page faults per step, then
# the heap policy.
PROBE = """
import resource, sys
import numpy as np
import fluidscope.designer as fd
if sys.argv[1] != "default":
    fd.set_heap_policy(sys.argv[1])
main, startup = fd.Program(), fd.Program()
with fd.program_guard(main, startup):
    x = fd.data("x", [None, 256], "float32")
    w = fd.data("w", [None, 256], "float32")
    loss = fd.reduce_sum(fd.elementwise_mul(fd.tanh(x), w))
exe, scope = fd.Executor(), fd.Scope()
exe.run(startup, scope=scope)
feed = {"x": np.ones((1024, 256), np.float32), "w": np.ones((1024, 256), np.float32)}
for _ in range(5):
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
print(fd.heap_policy()["thresholds"])
"""


def _probe(policy, **env):
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")}
    environment.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE, policy], capture_output=True,
                         text=True, env=environment, timeout=120, check=True).stdout.split("\n")
    return float(out[0]), out[1]


@pytest.mark.skipif(not GLIBC, reason="the policy changes glibc's malloc only")
def test_by_default_a_step_takes_no_page_faults_for_what_the_step_before_freed():
    faults, thresholds = _probe("default")
    assert thresholds == str((heap.KEEP_MMAP_THRESHOLD, heap.KEEP_TRIM_THRESHOLD))
    assert faults < 5
    # the same program with glibc's malloc as it runs by itself faults its temporaries in
    # every step (what the default saves; if glibc stops doing this, the policy can go)
    faults, thresholds = _probe("system")
    assert thresholds == "None"
    assert faults > 100


@pytest.mark.skipif(not GLIBC, reason="the policy changes glibc's malloc only")
def test_the_environments_malloc_settings_win_over_the_default():
    faults, thresholds = _probe("default", MALLOC_TRIM_THRESHOLD_="131072")
    assert thresholds == "None"
    faults, thresholds = _probe("keep", MALLOC_TRIM_THRESHOLD_="131072")  # asked for
    assert thresholds == str((heap.KEEP_MMAP_THRESHOLD, heap.KEEP_TRIM_THRESHOLD))
    assert faults < 5


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, option, value):
        self.calls.append((option, value))
        return 1


@pytest.fixture
def fresh_heap(monkeypatch):
    """A heap state of its own with a recording mallopt (the process's malloc untouched)."""
    state = heap._Heap()
    state.mallopt = _Recorder()
    monkeypatch.setattr(heap, "_HEAP", state)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    return state


def test_the_first_run_settles_the_heap_once(fresh_heap):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        out = fd.scale(fd.data("x", [None, 2], "float32"), 2.0)
    exe = fd.Executor()
    feed = {"x": np.ones((3, 2), np.float32)}
    exe.run(main, feed=feed, fetch_list=[out], scope=fd.Scope())
    exe.run(main, feed=feed, fetch_list=[out], scope=fd.Scope())
    assert fresh_heap.mallopt.calls == [(-3, 32 << 20), (-1, 64 << 20)]
    assert fd.heap_policy() == {"policy": "keep", "thresholds": (32 << 20, 64 << 20),
                                "glibc": True}


def test_system_after_keep_sets_glibcs_starting_values_and_before_any_run_nothing(fresh_heap):
    assert fd.set_heap_policy("system") == "keep"
    heap.settle()
    assert fresh_heap.mallopt.calls == []  # chosen before the first run: malloc untouched
    assert fd.set_heap_policy("keep") == "system"
    assert fd.set_heap_policy("system") == "keep"
    assert fresh_heap.mallopt.calls == [(-3, 32 << 20), (-1, 64 << 20),
                                        (-3, 128 << 10), (-1, 128 << 10)]
    assert fd.heap_policy()["thresholds"] is None


def test_without_glibc_the_policy_changes_nothing(fresh_heap):
    fresh_heap.mallopt = False
    heap.settle()
    assert fd.heap_policy() == {"policy": "keep", "thresholds": None, "glibc": False}
    assert fd.set_heap_policy("keep") == "keep"
    assert fd.heap_policy()["thresholds"] is None


@pytest.mark.parametrize("bad", ["Keep", None, 1, "fast"])
def test_a_policy_that_is_not_one_is_refused_naming_the_choices(bad, fresh_heap):
    with pytest.raises(FluidscopeError, match=r"one of \['keep', 'system'\]"):
        fd.set_heap_policy(bad)
    assert fresh_heap.policy == "keep" and fresh_heap.mallopt.calls == []
