"""Where the MLP step's time over its numpy floor goes: op by op, inside real steps.

``mlp_step.py`` gives one ratio (fluidscope's step over the hand-written floor's). This
script splits it: it times each op of fluidscope's plan while real training steps run
(each ``step.run`` wrapped with a clock, as ``_harness.profile_ops`` does) and the
floor's matching lines (the same math as ``mlp_step.NumpyMLP.step``, with a clock read
between the lines that stand for each op), in alternating blocks of steps in one
process. Each op's ``excess_us`` is fluidscope's time minus the floor's lines for it;
``around_ops_us`` is the time of a step outside its ops (for fluidscope: ``Executor.run``
binding the feed and parameters, writing back and fetching). Some ops have no lines of
their own in the floor, which fuses them: ``mean`` of the losses is computed with the
softmax there, and ``fill_constant`` and ``mean_grad`` (the loss gradient 1/N) are the
``z *= 1/N`` of the softmax gradient; read ``softmax_with_cross_entropy`` + ``mean`` and
the three ops of the loss gradient together.

Before timing, the timed floor is checked to give the floor's losses bit for bit, so the
two cannot drift apart. The clocks cost both peers alike (one read per op). Prints one
JSON line: ``ops`` (index, type, fluidscope_us, floor_us, excess_us), the totals, and
``excess_by_type_us``.

    python benchmarks/mlp_step_ops.py [--repeats 40]
"""
import sys
import time

import mlp_step  # parses the command line and pins the BLAS threads before numpy loads

import numpy as np  # noqa: E402

import _harness  # noqa: E402

STEPS_PER_BLOCK = 20
CHECK_STEPS = 3


class TimedNumpyMLP(mlp_step.NumpyMLP):
    """``NumpyMLP.step`` with a clock read after the lines of each op of fluidscope's plan
    (27 ops: forward, loss, loss gradient, backward, six sgd updates); the times add up
    in ``spent`` (seconds per op index, over all calls)."""

    OPS = 27

    def __init__(self, batches, weights):
        super().__init__(batches, weights)
        self.spent = np.zeros(self.OPS)
        self.calls = 0

    def step(self, i):
        clock = time.perf_counter
        x, label = self.batches[i % len(self.batches)]
        w1, b1, w2, b2, w3, b3 = self.params
        labels = label[:, 0]
        t = [clock()]
        mark = t.append
        h1 = x @ w1; mark(clock())                       # noqa: E702  mul
        h1 += b1; mark(clock())                          # noqa: E702  elementwise_add
        np.maximum(h1, 0, out=h1); mark(clock())         # noqa: E702  relu
        h2 = h1 @ w2; mark(clock())                      # noqa: E702  mul
        h2 += b2; mark(clock())                          # noqa: E702  elementwise_add
        np.maximum(h2, 0, out=h2); mark(clock())         # noqa: E702  relu
        z = h2 @ w3; mark(clock())                       # noqa: E702  mul
        z += b3; mark(clock())                           # noqa: E702  elementwise_add
        z -= z.max(axis=1, keepdims=True)                # softmax_with_cross_entropy
        picked = z[self.rows, labels]
        np.exp(z, out=z)
        total = z.sum(axis=1); mark(clock())             # noqa: E702
        loss = (np.log(total) - picked).mean(); mark(clock())  # noqa: E702  mean
        mark(clock())                                    # fill_constant (fused below)
        mark(clock())                                    # mean_grad (fused below)
        z /= total[:, None]                              # softmax_with_cross_entropy_grad
        z[self.rows, labels] -= 1
        z *= np.float32(1.0 / x.shape[0]); mark(clock())  # noqa: E702
        db3 = z.sum(axis=0); mark(clock())               # noqa: E702  elementwise_add_grad
        dw3 = h2.T @ z                                   # mul_grad
        dh2 = z @ w3.T; mark(clock())                    # noqa: E702
        dh2 *= h2 > 0; mark(clock())                     # noqa: E702  relu_grad
        db2 = dh2.sum(axis=0); mark(clock())             # noqa: E702  elementwise_add_grad
        dw2 = h1.T @ dh2                                 # mul_grad
        dh1 = dh2 @ w2.T; mark(clock())                  # noqa: E702
        dh1 *= h1 > 0; mark(clock())                     # noqa: E702  relu_grad
        db1 = dh1.sum(axis=0); mark(clock())             # noqa: E702  elementwise_add_grad
        dw1 = x.T @ dh1; mark(clock())                   # noqa: E702  mul_grad
        rate = np.float32(mlp_step.LEARNING_RATE)
        for param, grad in zip(self.params, (dw1, db1, dw2, db2, dw3, db3)):
            grad *= rate                                 # sgd, one per parameter
            param -= grad
            mark(clock())
        self.spent += np.diff(t)
        self.calls += 1
        return float(loss)


def timed_plan(fluid):
    """Wrap each step of ``fluid``'s plan with a clock; returns (plan, seconds per step
    index over all calls: a list of floats, which the wrapper adds to for ~0.05 us where
    a numpy array's element costs ~0.4 us, time that would show as fluidscope's work
    around its ops; the floor's clock is a list append)."""
    plan = fluid.exe.prepare(fluid.main)
    spent = [0.0] * len(plan.steps)
    clock = time.perf_counter

    def timed(run, k):
        def run_timed(vals):
            begin = clock()
            run(vals)
            spent[k] += clock() - begin
        return run_timed

    for k, step in enumerate(plan.steps):
        step.run = timed(step.run, k)
    return plan, spent


def main():
    mlp_step.pin_allocator()
    keep_limit = _harness.limit_threads(mlp_step.ARGS.blas_threads)  # noqa: F841
    rng = np.random.default_rng(0)
    batches = [(rng.random((mlp_step.BATCH, mlp_step.SIZES[0]), dtype=np.float32),
                rng.integers(0, mlp_step.SIZES[-1], (mlp_step.BATCH, 1), dtype=np.int64))
               for _ in range(mlp_step.BATCHES)]
    fluid = mlp_step.FluidscopeMLP(batches)
    weights = fluid.weights()
    floor, plain = TimedNumpyMLP(batches, weights), mlp_step.NumpyMLP(batches, weights)
    for i in range(CHECK_STEPS):
        a, b = floor.step(i), plain.step(i)
        assert a == b, f"the timed floor's loss {a} differs from the floor's {b} at step {i}"
    plan, spent = timed_plan(fluid)
    types = [step.type for step in plan.steps]
    assert len(types) == TimedNumpyMLP.OPS, f"the plan has {len(types)} ops: {types}"
    floor.spent[:] = 0
    floor.calls = 0
    clock = time.perf_counter
    totals = {"fluidscope": 0.0, "numpy": 0.0}
    steps = 0
    for block in range(mlp_step.ARGS.repeats + 1):  # the first block warms up
        if block == 1:
            spent[:], floor.spent[:], totals = [0.0] * len(spent), 0, {
                "fluidscope": 0.0, "numpy": 0.0}
            steps = 0
        for name, step in (("fluidscope", fluid.step), ("numpy", floor.step)):
            begin = clock()
            for i in range(STEPS_PER_BLOCK):
                step(i)
            totals[name] += clock() - begin
        steps += STEPS_PER_BLOCK
    us = 1e6 / steps
    fs, fl = np.array(spent) * us, floor.spent * us
    by_type = {}
    for kind, a, b in zip(types, fs, fl):
        by_type[kind] = by_type.get(kind, 0.0) + a - b
    fs_step, fl_step = totals["fluidscope"] * us, totals["numpy"] * us
    _harness.emit({
        "benchmark": "mlp_step_ops",
        "steps": steps, "repeats": mlp_step.ARGS.repeats,
        "fluidscope_step_us": round(fs_step, 1), "numpy_step_us": round(fl_step, 1),
        "fluidscope_over_numpy": round(fs_step / fl_step, 3),
        "ops_excess_us": round(float(fs.sum() - fl.sum()), 1),
        "around_ops_us": {"fluidscope": round(fs_step - float(fs.sum()), 1),
                          "numpy": round(fl_step - float(fl.sum()), 1)},
        "excess_by_type_us": {k: round(v, 1) for k, v in
                              sorted(by_type.items(), key=lambda item: -item[1])},
        "ops": [{"index": k, "type": kind, "fluidscope_us": round(float(a), 1),
                 "floor_us": round(float(b), 1), "excess_us": round(float(a - b), 1)}
                for k, (kind, a, b) in enumerate(zip(types, fs, fl))],
    })


if __name__ == "__main__":
    sys.exit(main())
