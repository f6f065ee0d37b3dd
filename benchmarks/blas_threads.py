"""A small training loop while another process keeps one core busy: BLAS thread policies.

The loop: an MLP 784-256-256-10 (relu, softmax_with_cross_entropy, mean, SGD), batch
128, float32, one ``Executor.run`` per step with the loss fetched (what a notebook's
training loop does). Peers, timed in interleaved rounds in one process:

* ``library_threads``: before fluidscope had a policy, every run used OpenBLAS's own
  count (one thread per core): ``set_num_threads(os.cpu_count())``;
* ``auto``: fluidscope's default (``set_num_threads(None)``): a plan whose products are
  small runs at one BLAS thread (engine/runtime/threads.py);
* ``one_thread``: ``set_num_threads(1)`` for the whole process.

Each is measured twice: with a busy process (a pure-Python ``while True`` loop in a
child process, started before and stopped after the timing) and on an idle machine.
The figures are ms per step (median of ``--repeats`` rounds) and the ratios
``library_threads / auto``. Needs threadpoolctl. Prints one JSON line.

    python benchmarks/blas_threads.py [--repeats 7]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

import _harness
import fluidscope.designer as fd
import fluidscope.engine.random as fluid_random

SIZES = (784, 256, 256, 10)
BATCH = 128
STEPS_PER_REPEAT = 20
WARMUP_STEPS = 5


def training_step():
    """A zero-argument function running one training step of the MLP."""
    fluid_random.seed(0)
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, SIZES[0]], "float32")
        label = fd.data("label", [None, 1], "int64")
        h = x
        for size in SIZES[1:-1]:
            h = fd.fc(h, size, act="relu")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(h, SIZES[-1]), label))
        fd.optimizer.SGD(0.05).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    feed = {"x": rng.random((BATCH, SIZES[0]), dtype=np.float32),
            "label": rng.integers(0, SIZES[-1], (BATCH, 1), dtype=np.int64)}
    return lambda: exe.run(main, feed=feed, fetch_list=[loss], scope=scope)


def busy_process():
    """A child process that keeps one core busy until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def measure(step, cores, repeats):
    policies = {"library_threads": cores, "auto": None, "one_thread": 1}

    def peer(n):
        def call():
            fd.set_num_threads(n)
            step()
        return call
    times = _harness.measure({k: peer(n) for k, n in policies.items()}, STEPS_PER_REPEAT,
                             repeats, WARMUP_STEPS, settle_s=0.2)
    fd.set_num_threads(None)
    ms = {k: _harness.rounded(t["median"], "ms") for k, t in times.items()}
    return {"ms_per_step": ms,
            "library_threads_over_auto": round(times["library_threads"]["median"]
                                               / times["auto"]["median"], 3),
            "auto_over_one_thread": round(times["auto"]["median"]
                                          / times["one_thread"]["median"], 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    if fd.get_num_threads() is None:
        raise SystemExit("blas_threads: threadpoolctl is not installed; nothing to measure")
    step = training_step()
    step()  # the first run measures the plan (its products are small)
    busy = busy_process()
    try:
        time.sleep(0.5)  # let the busy loop start
        loaded = measure(step, cores, args.repeats)
    finally:
        busy.kill()
        busy.wait()
    idle = measure(step, cores, args.repeats)
    _harness.emit({
        "benchmark": "blas_threads",
        "model": "MLP 784-256-256-10, batch 128, SGD; one Executor.run per step",
        "cores": cores, "blas": _harness.blas_description(),
        "library_threads": cores, "repeats": args.repeats,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "one_core_busy": loaded, "idle": idle,
    })


if __name__ == "__main__":
    sys.exit(main())
