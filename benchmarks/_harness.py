"""Shared plumbing of the benchmark scripts: BLAS threads, interleaved timing, one JSON line.

A script calls :func:`start` before it imports numpy (BLAS libraries read their thread
count once, when they load), measures its peers with :func:`measure` and hands the
figures to :func:`emit`, which prints exactly one JSON line on stdout.

``--threads 2`` asks for a second measurement at two BLAS threads. It runs in a child
process started with the thread variables set to 2, so that every library (OpenBLAS
under numpy, MKL and OpenMP under PyTorch) starts at that count as it would for a
user; the child's figures become the ``secondary`` field of the parent's JSON line.
This module imports only the standard library at import time, for the same reason.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def start(description, default_repeats=9):
    """Parse the command line and pin the BLAS thread count. Call before importing numpy.

    Returns the argparse namespace: ``threads`` (the secondary measurement's thread
    count, or None), ``blas_threads`` (this process's count), ``repeats``.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, choices=(1, 2), default=1,
                        help="2: also measure at two BLAS threads (reported as 'secondary')")
    parser.add_argument("--repeats", type=int, default=default_repeats,
                        help="timed repeats per peer; the median is reported")
    parser.add_argument("--profile", action="store_true",
                        help="add fluidscope's time per op type to the JSON line")
    parser.add_argument("--blas-threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    for name in THREAD_VARIABLES:
        os.environ[name] = str(args.blas_threads)
    # The child measures one thread count only; the parent asks for the second one.
    args.threads = args.threads if args.threads != 1 and args.blas_threads == 1 else None
    return args


def limit_threads(count):
    """Also cap the thread pools through threadpoolctl when it is installed (a library
    loaded before :func:`start` would otherwise keep its own count). Returns the
    context object to keep alive, or None."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=count)


def blas_description():
    """'openblas 0.3.31 x1' for each BLAS pool numpy loaded (threadpoolctl), else numpy's
    own name of its BLAS."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        import numpy as np
        return str(np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {})
                   .get("name", "unknown"))
    pools = [f"{p['internal_api']} {p.get('version') or ''} x{p['num_threads']}".replace("  ", " ")
             for p in threadpool_info() if p.get("user_api") == "blas"]
    return ", ".join(pools) or "none"


def measure(peers, calls, repeats, warmup_calls, settle_s=0.0):
    """Median seconds per call of each peer, timed in interleaved rounds.

    peers: name -> zero-argument callable (one call = one unit of work). Each peer is
    warmed up with ``warmup_calls`` calls; then each of ``repeats`` rounds times
    ``calls`` back-to-back calls of every peer in turn, so that slow drifts of the
    machine (frequency, other load) touch all peers alike. Each round starts at another
    peer, so none always follows the same one; ``settle_s`` is slept before each timed
    block so that the worker threads a peer leaves spinning (OpenMP, OpenBLAS) go idle
    before the next peer runs. Returns name -> {"median": s, "min": s, "max": s,
    "cpu_median": s} per call; ``cpu_median`` is the median CPU time of this process
    (``time.process_time``), which other processes' load moves far less than the wall
    clock (at one BLAS thread it is the time the peer's own work took).
    """
    for fn in peers.values():
        for _ in range(warmup_calls):
            fn()
    samples = {name: [] for name in peers}
    cpu = {name: [] for name in peers}
    clock, cpu_clock = time.perf_counter, time.process_time
    order = list(peers.items())
    for round_index in range(repeats):
        shift = round_index % len(order)
        for name, fn in order[shift:] + order[:shift]:
            if settle_s:
                time.sleep(settle_s)
            fn()  # one untimed call brings this peer's data back into the caches
            begin, cpu_begin = clock(), cpu_clock()
            for _ in range(calls):
                fn()
            samples[name].append((clock() - begin) / calls)
            cpu[name].append((cpu_clock() - cpu_begin) / calls)
    return {name: {"median": statistics.median(s), "min": min(s), "max": max(s),
                   "cpu_median": statistics.median(cpu[name])}
            for name, s in samples.items()}


def profile_ops(executor, program, run_once, calls):
    """Milliseconds per run spent in each op type of ``program``, and in the executor.

    Wraps the ``run`` of every step of the executor's cached plan of ``program`` with a
    timer, calls ``run_once`` (one ``executor.run`` of it) ``calls`` times, then puts the
    steps back. ``"(executor)"`` is the rest of each run: feed checks, binding inputs
    from the scope, writing persistable outputs back and fetching. Sorted, largest first.
    """
    plan = executor.prepare(program)
    spent = {}
    clock = time.perf_counter
    originals = [step.run for step in plan.steps]

    def timed(run, op_type):
        def run_timed(vals):
            begin = clock()
            run(vals)
            spent[op_type] = spent.get(op_type, 0.0) + clock() - begin
        return run_timed

    for step in plan.steps:
        step.run = timed(step.run, step.type)
    try:
        begin = clock()
        for _ in range(calls):
            run_once()
        total = clock() - begin
    finally:
        for step, run in zip(plan.steps, originals):
            step.run = run
    spent["(executor)"] = total - sum(spent.values())
    return {name: rounded(seconds / calls, "ms")
            for name, seconds in sorted(spent.items(), key=lambda item: -item[1])}


def page_faults(peers, calls=20):
    """Minor page faults per call of each peer ({name: step()}; None where getrusage is
    missing): a fresh page costs the kernel a clearing and its accounting, which a peer
    that keeps its buffers never pays (``engine/runtime/heap.py``)."""
    try:
        import resource
    except ImportError:
        return None
    out = {}
    for name, step in peers.items():
        step()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(calls):
            step()
        out[name] = round((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls, 2)
    return out


def settle_time(args):
    """Seconds to sleep before each timed block: 0.2 s when BLAS runs several threads (so
    that spinning workers of the previous peer go to sleep first), else none."""
    return 0.2 if args.blas_threads > 1 else 0.0


def secondary(script, args, threads):
    """Figures of ``script`` rerun in a child process at ``threads`` BLAS threads."""
    env = dict(os.environ)
    for name in THREAD_VARIABLES:
        env[name] = str(threads)
    command = [sys.executable, script, "--blas-threads", str(threads),
               "--repeats", str(args.repeats)]
    done = subprocess.run(command, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"the {threads}-thread run of {script} failed "
                           f"(exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def emit(result):
    """Print ``result`` as the script's one line of stdout."""
    sys.stdout.write(json.dumps(result, sort_keys=False) + "\n")
    sys.stdout.flush()


def rounded(seconds, unit):
    """``seconds`` in ``unit`` ('ms' or 'us') to 4 significant digits."""
    scale = {"ms": 1e3, "us": 1e6}[unit]
    return float(f"{seconds * scale:.4g}")
