"""Cost of the NaN/Inf guard: ``Executor.run`` with the guard off and on, per op.

The program is dispatch.py's: 1000 chained ``scale`` ops on a one-element float32
tensor, so the time is almost all per-op overhead, the worst case for a per-op check.
Peers, timed interleaved in one process:

* ``without_feature``: a run driven as ``Executor.run`` drove it before the guard
  existed (``start``, ``run_to_end``, ``write_back``, ``fetch``);
* ``off``: ``Executor.run`` with ``check_nan_inf`` left to the Executor's default, from
  the environment flag, unset (the plain run everyone pays);
* ``on``: ``Executor.run(..., check_nan_inf=True)``.

The same three peers also run one training step of an MLP (784-256-10, batch 64, SGD:
forward, backward and update, about 20 ops doing real work), where the guard's ``on``
cost is what a user debugging a real model pays: ``mlp_on_over_off``.

Reports microseconds per op (medians) and the ratios ``off_over_without`` (the guard's
cost when off: 1.0 within noise, since the hot loop is unchanged and the flag is read
when the Executor is made, so a run adds one attribute test) and ``on_over_off``. A cost
that small is below the drift between blocks of back-to-back calls on a shared machine,
so the peers are timed one call at a time in alternation (``pairs`` rounds, the order
rotating), each round seeing the same machine state. Ratios, not timed assertions.
Prints one JSON line.

    python benchmarks/nan_guard.py [--repeats 9]   (pairs = 40 x repeats)
"""
import os
import statistics
import sys
import time

import _harness

ARGS = _harness.start(__doc__.splitlines()[0])

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from fluidscope.engine.runtime.nan_guard import ENV_FLAG  # noqa: E402

OPS = 1000
SCALE = 1.0001
ROUNDS_PER_REPEAT = 40
WARMUP_RUNS = 5


def scale_chain():
    """(program, input name, output name) of OPS chained scale ops."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [1], "float32")
        out = x
        for _ in range(OPS):
            out = fd.scale(out, scale=SCALE)
    return main, x.name, out.name


def mlp_step():
    """(program, feed, fetch list, scope) of one SGD step of a 784-256-10 MLP."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 784], "float32")
        y = fd.data("y", [None, 1], "int64")
        hidden = fd.fc(x, 256, act="relu")
        loss = fd.mean(fd.cross_entropy(fd.fc(hidden, 10, act="softmax"), y))
        fd.optimizer.SGD(learning_rate=0.01).minimize(loss)
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((64, 784)).astype(np.float32),
            "y": rng.integers(0, 10, (64, 1))}
    return main, feed, [loss.name], scope


def peers_of(exe, program, feed, fetch, scope):
    """name -> callable of the three ways to run ``program``."""
    def without_feature():
        run = exe.start(program, feed, scope)
        run.run_to_end()
        run.write_back()
        return run.fetch(fetch)[0]

    def off():
        return exe.run(program, feed=feed, fetch_list=fetch, scope=scope)[0]

    def on():
        return exe.run(program, feed=feed, fetch_list=fetch, scope=scope, check_nan_inf=True)[0]

    return {"without_feature": without_feature, "off": off, "on": on}


def alternate(peers, rounds):
    """Median and min seconds per call of each peer, one call of each per round."""
    for fn in peers.values():
        for _ in range(WARMUP_RUNS):
            fn()
    order, clock = list(peers.items()), time.perf_counter
    samples = {name: [] for name in peers}
    for index in range(rounds):
        shift = index % len(order)
        for name, fn in order[shift:] + order[:shift]:
            begin = clock()
            fn()
            samples[name].append(clock() - begin)
    return {name: {"median": statistics.median(s), "min": min(s)} for name, s in samples.items()}


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    os.environ.pop(ENV_FLAG, None)  # "off" must mean the flag unset, as for most users
    program, x_name, out_name = scale_chain()  # (the Executor is made after the pop)
    exe, scope = fd.Executor(fd.CPUPlace()), fd.Scope()
    feed, fetch = {x_name: np.ones([1], dtype=np.float32)}, [out_name]

    peers = peers_of(exe, program, feed, fetch, scope)
    expected = peers["without_feature"]()
    for name in ("off", "on"):
        got = peers[name]()
        assert np.array_equal(got, expected), f"{name} gave {got!r}, the plain run {expected!r}"
    rounds = ROUNDS_PER_REPEAT * ARGS.repeats
    times = alternate(peers, rounds)
    median = {name: t["median"] for name, t in times.items()}
    mlp = alternate(peers_of(exe, *mlp_step()), max(rounds // 8, 10))
    _harness.emit({
        "benchmark": "nan_guard",
        "ops": OPS, "op": "scale", "tensor": "float32[1]",
        "threads": ARGS.blas_threads, "pairs": rounds,
        "without_feature_us_per_op": _harness.rounded(median["without_feature"] / OPS, "us"),
        "off_us_per_op": _harness.rounded(median["off"] / OPS, "us"),
        "on_us_per_op": _harness.rounded(median["on"] / OPS, "us"),
        "off_over_without": round(median["off"] / median["without_feature"], 3),
        "on_over_off": round(median["on"] / median["off"], 3),
        "off_over_without_min": round(times["off"]["min"] / times["without_feature"]["min"], 3),
        "mlp_step_off_ms": _harness.rounded(mlp["off"]["median"], "ms"),
        "mlp_step_on_ms": _harness.rounded(mlp["on"]["median"], "ms"),
        "mlp_off_over_without": round(mlp["off"]["median"] / mlp["without_feature"]["median"], 3),
        "mlp_on_over_off": round(mlp["on"]["median"] / mlp["off"]["median"], 3),
    })


if __name__ == "__main__":
    sys.exit(main())
