"""GRU and plain-RNN recurrent groups forward + backward: fluidscope vs their numpy floors.

The companions of ``benchmarks/lstm.py`` (which measures ``lstmemory_group``), on the
same two configurations (input 64 -> hidden 128 over 32 sequences, 64 -> 512 over 64
sequences, lengths uniform in 5..50, float32, one BLAS thread):

* ``gru_group``: ``fd.fc(x, 3H, bias_attr=False)`` + ``fd.gru_group`` (ordinary ops in a
  recurrent group), loss = sum(h * fixed random weights), gradients of the input and of
  every parameter; its floor is ``_group_floors.NumpyGRU``;
* ``recurrent_group``: a general group with a memory, the step
  ``fd.fc([x_t, memory("h")], H, act="tanh", name="h")`` (two products, a sum, a bias
  add and tanh per frame), the same loss; its floor is ``_group_floors.NumpyRNN``.

Every peer gets the same weights; before timing the script checks that each group's
loss and gradients match its floor's. One call = forward + backward; peers are timed in
interleaved rounds in one process (``_harness.measure``). Targets: each group <= 1.3x
its floor (issue #16). Prints one JSON line.

    python benchmarks/recurrent_groups.py [--repeats 5] [--profile]

``--profile`` adds each group's time per op type, in and out of its frames, and the
recurrent ops' own overhead per frame (``_group_profile``).
"""
import sys

import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=5)

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from _group_floors import NumpyGRU, NumpyRNN  # noqa: E402
from _group_profile import profile  # noqa: E402

CONFIGS = (  # name, input size, hidden size, sequences, calls per timed block
    ("64x128_n32", 64, 128, 32, 4),
    ("64x512_n64", 64, 512, 64, 1),
)
MIN_LEN, MAX_LEN = 5, 50
WARMUP_CALLS = 2
TOLERANCE = 2e-4  # largest |difference| / largest |value|, per gradient (float32)
TARGET = 1.3
# per model: fluidscope parameter name -> the floor's gradient name, and their shapes
PARAMS = {
    "gru": {"w_x": ("I", "3H"), "w_ur": ("H", "2H"), "w_c": ("H", "H"), "b": ("3H",)},
    "rnn": {"w_0": ("I", "H"), "w_1": ("H", "H"), "b": ("H",)},
}


def make_problem(model, size_in, hidden, seqs, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, seqs)
    total = int(lengths.sum())
    dims = {"I": size_in, "H": hidden, "2H": 2 * hidden, "3H": 3 * hidden}
    f32 = np.float32
    problem = {"lengths": lengths, "x": rng.standard_normal((total, size_in), dtype=f32),
               "loss_weights": rng.standard_normal((total, hidden), dtype=f32)}
    for name, shape in PARAMS[model].items():
        fan_in = dims[shape[0]] if len(shape) == 2 else 100
        problem[name] = (rng.uniform(-1, 1, [dims[d] for d in shape]) / np.sqrt(fan_in)).astype(f32)
    return problem


class FluidscopeGroup:
    """The designer program of ``model`` ("gru": gru_group, "rnn": a general group)."""

    def __init__(self, model, problem):
        size_in, hidden = problem["x"].shape[1], problem["loss_weights"].shape[1]
        self.main, startup = fd.Program(), fd.Program()
        with fd.program_guard(self.main, startup), fd.unique_name.guard():
            x = fd.data("x", [None, size_in], "float32", lod_level=1)
            x.stop_gradient = False
            weights = fd.data("loss_weights", [None, hidden], "float32")
            if model == "gru":
                proj = fd.fc(x, 3 * hidden, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
                h = fd.gru_group(proj, hidden, name="gru",
                                 param_attr=[fd.ParamAttr(name="w_ur"), fd.ParamAttr(name="w_c")],
                                 bias_attr=fd.ParamAttr(name="b"))
            else:
                def step(x_t):
                    h_pre = fd.memory("h", size=hidden)
                    return fd.fc([x_t, h_pre], hidden, act="tanh", name="h",
                                 param_attr=[fd.ParamAttr("w_0"), fd.ParamAttr("w_1")],
                                 bias_attr=fd.ParamAttr("b"))
                h = fd.recurrent_group(step, x)
            loss = fd.reduce_sum(fd.elementwise_mul(h, weights))
            fd.append_backward(loss)
        self.scope, self.exe = fd.Scope(), fd.Executor(fd.CPUPlace())
        self.exe.run(startup, scope=self.scope)
        self.grad_keys = ["x"] + list(PARAMS[model])
        for name in PARAMS[model]:
            tensor = self.scope.find_var(name).get_tensor()
            tensor.set(problem[name].reshape(tensor.value.shape))
        offsets = np.concatenate([[0], np.cumsum(problem["lengths"])]).tolist()
        self.feed = {"x": fd.LoDTensor(problem["x"], [offsets]),
                     "loss_weights": problem["loss_weights"]}
        self.fetch = [loss.name] + [f"{k}@GRAD" for k in self.grad_keys]

    def step(self):
        return self.exe.run(self.main, feed=self.feed, fetch_list=self.fetch, scope=self.scope)

    def result(self):
        loss, *grads = self.step()
        return float(loss), {k: g.reshape(-1) if k == "b" else g
                             for k, g in zip(self.grad_keys, grads)}


def make_floor(model, problem):
    args = [problem["lengths"]] + [problem[k].copy() for k in PARAMS[model]]
    return NumpyGRU(*args) if model == "gru" else NumpyRNN(*args)


def check(name, got, ref):
    """Assert ``got`` (loss, grads) matches the floor's ``ref``; the worst relative diff."""
    diffs = {"loss": abs(got[0] - ref[0]) / max(abs(ref[0]), 1e-30)}
    for k, g in got[1].items():
        assert g.shape == ref[1][k].shape, f"{name}: gradient of {k} has shape {g.shape}, " \
                                           f"the floor's {ref[1][k].shape}"
        diffs[k] = float(np.abs(g - ref[1][k]).max() / np.abs(ref[1][k]).max())
    bad = {k: v for k, v in diffs.items() if not v <= TOLERANCE}
    assert not bad, f"{name} disagrees with its numpy floor: relative differences {bad}"
    return float(f"{max(diffs.values()):.3g}")


def run_config(name, size_in, hidden, seqs, calls, seed):
    steps, agreement, frames, groups = {}, {}, 0, {}
    for model, label in (("gru", "gru_group"), ("rnn", "recurrent_group")):
        problem = make_problem(model, size_in, hidden, seqs, seed)
        group, floor = FluidscopeGroup(model, problem), make_floor(model, problem)
        x, weights = problem["x"], problem["loss_weights"]
        ref = floor.step(x, weights)
        agreement[label] = check(label, group.result(),
                                 (ref[0], {k: v.copy() for k, v in ref[1].items()}))
        steps[label] = group.step
        groups[label] = group
        steps[f"{label}_floor"] = lambda f=floor, x=x, w=weights: f.step(x, w)
        frames = int(problem["lengths"].max())
    times = _harness.measure(steps, calls, ARGS.repeats, WARMUP_CALLS, _harness.settle_time(ARGS))
    med = {k: t["median"] for k, t in times.items()}
    ratios = {}
    for label in ("gru_group", "recurrent_group"):
        ratios[f"{label}_over_floor"] = round(med[label] / med[f"{label}_floor"], 3)
        ratios[f"{label}_over_floor_best"] = round(
            times[label]["min"] / times[f"{label}_floor"]["min"], 3)
        # CPU time of this process: what a loaded machine moves least (see _harness)
        ratios[f"{label}_over_floor_cpu"] = round(
            times[label]["cpu_median"] / times[f"{label}_floor"]["cpu_median"], 3)
    result = {"config": name, "input": size_in, "hidden": hidden, "sequences": seqs,
              "frames": frames, "calls_per_repeat": calls,
              "ms": {k: _harness.rounded(v, "ms") for k, v in med.items()}, "ratios": ratios,
              "meets": {k: v <= TARGET for k, v in ratios.items() if k.endswith("_floor")},
              "rel_diff_vs_floor": agreement}
    if ARGS.profile:
        result["profile"] = {k: profile(g, max(3, 3 * calls)) for k, g in groups.items()}
    return result


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    configs = [run_config(*config, seed=seed) for seed, config in enumerate(CONFIGS)]
    _harness.emit({
        "benchmark": "recurrent_groups",
        "models": {"gru_group": "x @ W_x (no bias) -> gru_group; loss = sum(h * weights)",
                   "recurrent_group": "group with memory h, step fc([x_t, h], tanh)"},
        "lengths": f"uniform {MIN_LEN}..{MAX_LEN}", "dtype": "float32",
        "threads": ARGS.blas_threads, "blas": _harness.blas_description(),
        "numpy_version": np.__version__, "repeats": ARGS.repeats, "target": TARGET,
        "configs": configs})


if __name__ == "__main__":
    sys.exit(main())
