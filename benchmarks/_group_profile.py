"""Where one call of a recurrent-group benchmark peer spends its time (``--profile``).

Shared by ``lstm.py`` and ``recurrent_groups.py``. A peer has ``exe``, ``main``, ``feed``
(with the LoD input ``x``) and ``step()``. Every prepared step of the main block and of
the recurrent sub-blocks is wrapped with a clock for ``calls`` calls:

* ``main_ms``: main-block op types, inclusive (a ``recurrent`` op includes its frames);
* ``step_blocks_ms``: op types inside the step block and the grad block, over all frames;
  A grad-block step whose parameter gradient is batched over the frames runs as
  ``<type> (batched)`` in a plain run (its per-frame part: dX only, or nothing), one
  that a plain run calls without its kernel's dispatch as ``<type> (direct)``;
* ``frame_phases_ms``: the frame-driven runs' own phases (``start``: the run's
  ``__init__``, which reorders the in-links into batch order; ``FrameRun.begin_frame``,
  ``end_frame``, ``finish``: binding a frame, keeping what it produced, and after the
  last frame reordering and the batched gradients' GEMMs), forward and backward apart;
* ``<op>_overhead_ms`` and ``..._per_frame_us``: a recurrent op's own time (the op minus
  its block's ops): the phases above and the drive loop, less what the clock wrapped
  around each of its block's steps costs outside the step's own window
  (``wrapper_us_per_call``, measured on a wrapped no-op; about 0.5-1 us, which
  otherwise shows up as ~20 us of "overhead" per frame of a 13-op step block);
* ``backward_keep``: what each backward frame keeps for the parameter gradients taken
  over all frames: the operands it copies into buffers of all rows, and the gate
  gradients it reads as columns of the in-link gradient buffer instead.

The clock is this process's CPU time (``time.process_time``) unless ``clock="wall"``:
on a loaded 2-core machine the wall clock also counts other processes' time slices.
Reading the clock costs about 0.3 us a step, which the per-op figures include.
"""
import time

import numpy as np

import _harness
from fluidscope.engine.recurrent import grad as recurrent_grad
from fluidscope.engine.recurrent import op as recurrent_op

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def profile(peer, calls, clock="cpu"):
    """The breakdown above, in ms (and us per frame), averaged over ``calls`` calls."""
    plan = peer.exe.prepare(peer.main)
    now, spent, inner, wrapped, wrapped_runs = CLOCKS[clock], {}, {}, [], []

    counts = {}  # key -> calls

    def timed_run(run, table, key):
        def timed(*args):
            begin = now()
            run(*args)
            table[key] = table.get(key, 0.0) + now() - begin
            counts[key] = counts.get(key, 0) + 1
        return timed

    def wrap(step, table, key):
        wrapped.append((step, step.run))
        step.run = timed_run(step.run, table, key)

    wrapper_cost = _wrapper_cost(now, timed_run)

    for step in plan.steps:
        wrap(step, spent, step.type)
    for block_idx, sub in plan.sub_plans.items():
        for step in sub.steps:
            wrap(step, inner, f"block {block_idx}: {step.type}")
    for step in plan.steps:  # the batched grad steps' plain-run calls
        runs = getattr(step.control, "batched_runs", None) or {}
        grad_idx = step.attrs.get("sub_block") if step.type == "recurrent_grad" else None
        for pos, run in list(runs.items()):
            wrapped_runs.append((runs, pos, run))
            runs[pos] = _timed(now, run, inner,
                               f"block {grad_idx}: {step.control.grad.steps[pos].type} (batched)")
        # the steps a plain run calls without their kernels (pass_through, direct_grads):
        # their closures timed, paired with the step's wrapped run so the run still calls them
        runs = getattr(step.control, "pass_runs", None) or {}
        for pos, pair in list(runs.items()):
            own = step.control.grad.steps[pos]
            wrapped_runs.append((runs, pos, pair))
            label = f"block {grad_idx}: {own.type} (direct)"
            runs[pos] = (own.run, timed_run(pair[1], inner, label))
    phases, patched, keeping = {}, [], {}
    finish = recurrent_grad.BackUnroll.finish
    patched.append((recurrent_grad.BackUnroll, "finish", finish))
    recurrent_grad.BackUnroll.finish = _reading_keep(finish, keeping)
    for cls, side in ((recurrent_op.Unroll, "forward"), (recurrent_grad.BackUnroll, "backward")):
        for name in ("__init__", "begin_frame", "end_frame", "finish"):
            method = getattr(cls, name)
            if (cls, name) != (recurrent_grad.BackUnroll, "finish"):
                patched.append((cls, name, method))
            label = "start" if name == "__init__" else name
            setattr(cls, name, _timed(now, method, phases, f"{side} {label}"))
    counts.clear()
    try:
        begin = now()
        for _ in range(calls):
            peer.step()
        total = now() - begin
    finally:
        for step, run in reversed(wrapped):
            step.run = run
        for runs, pos, run in wrapped_runs:
            runs[pos] = run
        for cls, name, method in reversed(patched):
            setattr(cls, name, method)
    spent["(executor)"] = total - sum(spent.values())
    frames = int(np.max(np.diff(peer.feed["x"].lod()[0]))) if inner else 0
    out = {"clock": clock, "total_ms": _harness.rounded(total / calls, "ms"),
           "main_ms": {k: _harness.rounded(v / calls, "ms")
                       for k, v in sorted(spent.items(), key=lambda kv: -kv[1])}}
    if inner:
        out["step_blocks_ms"] = {k: _harness.rounded(v / calls, "ms")
                                 for k, v in sorted(inner.items(), key=lambda kv: -kv[1])}
        for op, block in (("recurrent", min(plan.sub_plans)),
                          ("recurrent_grad", max(plan.sub_plans))):
            keys = [k for k in inner if k.startswith(f"block {block}:")]
            ops = sum(inner[k] for k in keys)
            wrapping = wrapper_cost * sum(counts.get(k, 0) for k in keys)
            own = spent.get(op, 0.0) - ops - wrapping
            out[f"{op}_overhead_ms"] = _harness.rounded(own / calls, "ms")
            out[f"{op}_overhead_per_frame_us"] = _harness.rounded(own / calls / frames, "us")
        out["frame_phases_ms"] = {k: _harness.rounded(v / calls, "ms") for k, v in phases.items()}
        out["frames"] = frames
        if keeping:
            out["backward_keep"] = keeping
        out["wrapper_us_per_call"] = _harness.rounded(wrapper_cost, "us")
    return out


def _wrapper_cost(now, timed_run, calls=20000):
    """Seconds a clock-wrapped step costs its caller beyond the window it measures: a
    wrapped no-op's time per call less the time the wrapper itself records."""
    table = {}
    timed = timed_run(lambda *args: None, table, "nop")
    begin = now()
    for _ in range(calls):
        timed(None)
    total = now() - begin
    return max(total - table["nop"], 0.0) / calls


def _reading_keep(finish, keeping):
    """``BackUnroll.finish`` noting in ``keeping`` how the run kept its frames' operands
    for the batched parameter gradients (``engine/recurrent/frame_keep``): how many
    operands each frame its recipe keeps copies, and how many gate gradients it reads as
    columns of an in-link gradient buffer instead (``row_writers.lend_columns``)."""
    def reading(self):
        recipe = self.recipe
        if recipe is not None:
            keeping.update({
                "operands_copied_per_frame": recipe.copies,
                "columns_lent": len(recipe.columns)})
        return finish(self)
    return reading


def _timed(now, fn, table, key):
    """``fn`` adding its time to ``table[key]``."""
    def timed(*args):
        begin = now()
        result = fn(*args)
        table[key] = table.get(key, 0.0) + now() - begin
        return result
    return timed
