"""Per-op dispatch cost: 1000 chained ``scale`` ops on a one-element float32 tensor.

The work per op is one multiply of one number, so the time is almost all overhead:
what the executor spends to take an op from the plan, gather its inputs, call its
kernel and store its output. Peers, timed in one process at one BLAS thread
(``--threads 2`` adds a two-thread run as the ``secondary`` field):

* ``fluidscope``: ``Executor.run`` of one program holding the 1000 ops (feed and fetch
  included, amortised over the ops).
* ``numpy``: the floor, ``x = x * s`` 1000 times in a Python loop.
* ``torch``: ``torch.mul(x, s)`` 1000 times, eager, when PyTorch is importable.

Two breakdowns of fluidscope's time are reported too: ``fluidscope_steps_us`` runs
the prepared plan's steps alone (no feed, scope or fetch) and
``fluidscope_kernel_us`` calls the registered ``scale`` kernel alone. Prints one
JSON line.

    python benchmarks/dispatch.py [--threads 2] [--repeats 9]
"""
import os
import sys

import _harness

ARGS = _harness.start(__doc__.splitlines()[0])

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from fluidscope.engine import registry  # noqa: E402

OPS = 1000
SCALE = 1.0001
RUNS_PER_REPEAT = 20
WARMUP_RUNS = 5
TARGET_US_PER_OP = 2.0


def fluidscope_chain():
    """(program, input name, output name) of OPS chained scale ops."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [1], "float32")
        out = x
        for _ in range(OPS):
            out = fd.scale(out, scale=SCALE)
    return main, x.name, out.name


def torch_chain(threads):
    """(torch version, zero-argument callable) or (None, None) without torch."""
    try:
        import torch
    except ImportError:
        return None, None
    torch.set_num_threads(threads)
    start = torch.ones(1, dtype=torch.float32)

    def run():
        y = start
        for _ in range(OPS):
            y = torch.mul(y, SCALE)
        return y

    return torch.__version__, run


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    program, x_name, out_name = fluidscope_chain()
    exe, scope = fd.Executor(fd.CPUPlace()), fd.Scope()
    start = np.ones([1], dtype=np.float32)
    feed, fetch = {x_name: start}, [out_name]

    def fluidscope_run():
        return exe.run(program, feed=feed, fetch_list=fetch, scope=scope)[0]

    def numpy_run():
        y = start
        for _ in range(OPS):
            y = y * SCALE
        return y

    # The plan's steps alone: what Executor.run adds around them is the difference.
    plan = exe.prepare(program)
    steps = [step.run for step in plan.steps]
    vals = [None] * len(plan.names)
    first = plan.slot[x_name]

    def steps_run():
        vals[first] = start
        for run in steps:
            run(vals)

    # The kernel alone, called as the plan calls it, with the attributes it parsed.
    kernel = registry.get("scale").kernel_for("cpu", "float32")
    attrs, xp = plan.steps[0].attrs, np

    def kernel_run():
        y = start
        for _ in range(OPS):
            y = kernel(xp, attrs, y, None, None)
        return y

    expected = numpy_run()
    for name, got in (("Executor.run", fluidscope_run()), ("the kernel", kernel_run())):
        assert got.dtype == np.float32 and np.allclose(got, expected, rtol=1e-6), (
            f"{name} of {OPS} scale ops gave {got!r}, numpy gives {expected!r}")

    peers = {"fluidscope": fluidscope_run, "fluidscope_steps": steps_run,
             "fluidscope_kernel": kernel_run, "numpy": numpy_run}
    torch_version, torch_run = torch_chain(ARGS.blas_threads)
    if torch_run is not None:
        got = torch_run().numpy()
        assert np.allclose(got, expected, rtol=1e-5), f"torch gave {got!r}, numpy {expected!r}"
        peers["torch"] = torch_run
    times = _harness.measure(peers, RUNS_PER_REPEAT, ARGS.repeats, WARMUP_RUNS,
                             _harness.settle_time(ARGS))
    us = {name: _harness.rounded(t["median"] / OPS, "us") for name, t in times.items()}
    per_op = times["fluidscope"]["median"] / OPS * 1e6
    result = {
        "benchmark": "dispatch",
        "ops": OPS, "op": "scale", "tensor": "float32[1]",
        "threads": ARGS.blas_threads, "blas": _harness.blas_description(),
        "numpy_version": np.__version__, "torch_version": torch_version,
        "runs_per_repeat": RUNS_PER_REPEAT, "repeats": ARGS.repeats,
        "fluidscope_us_per_op": us["fluidscope"], "numpy_us_per_op": us["numpy"],
        "torch_us_per_op": us.get("torch"),
        "fluidscope_steps_us": us["fluidscope_steps"],
        "fluidscope_kernel_us": us["fluidscope_kernel"],
        "fluidscope_over_numpy": round(times["fluidscope"]["median"] / times["numpy"]["median"], 3),
        "fluidscope_over_torch": (round(times["fluidscope"]["median"] / times["torch"]["median"], 3)
                                  if "torch" in times else None),
        "target_us_per_op": TARGET_US_PER_OP,
        "meets_target": per_op <= TARGET_US_PER_OP,
    }
    if ARGS.threads:
        second = _harness.secondary(os.path.abspath(__file__), ARGS, ARGS.threads)
        result["secondary"] = {k: second[k] for k in (
            "threads", "blas", "fluidscope_us_per_op", "numpy_us_per_op", "torch_us_per_op",
            "fluidscope_over_numpy", "meets_target")}
    _harness.emit(result)


if __name__ == "__main__":
    sys.exit(main())
