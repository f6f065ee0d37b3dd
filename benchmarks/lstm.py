"""LSTM forward + backward over variable-length sequences: fluidscope vs numpy vs PyTorch.

The model: an input projection ``x @ W_x`` (no bias) to the four gate blocks, then an
LSTM without peepholes (h_0 = c_0 = 0), loss = sum(h * fixed random weights). One call
is forward + backward with the gradients of every parameter (W_x, W, b) and of the
input, float32. Two configurations: input 64 -> hidden 128 over 32 sequences, and
64 -> 512 over 64 sequences; lengths uniform in 5..50 (fixed seed).

Peers, timed in one process at one BLAS thread (``--threads 2`` adds a two-thread run
as the ``secondary`` field):

* ``lstmemory_group``: fluidscope's LSTM as a recurrent group of ordinary ops
  (``fd.fc`` + ``fd.lstmemory_group``), run by ``Executor.run``;
* ``dynamic_lstm``: fluidscope's fused ``lstm`` op (``fd.fc`` + ``fd.dynamic_lstm``);
* ``floor``: the same math written by hand with numpy, sequence-to-batch with fused
  gate math and hand-written BPTT (``_lstm_floor.py``);
* ``torch_padded``: PyTorch ``nn.LSTM`` on the zero-padded batch (padding done once,
  outside the timing; the padded steps' outputs get weight 0), when torch is importable;
* ``torch_packed``: the same ``nn.LSTM`` on ``pack_padded_sequence`` of that batch
  (packing inside the timing; the loss reads the packed output directly).

Every peer gets the same weights (PyTorch's gate blocks permuted to its i, f, g, o
order, its ``bias_hh`` zero). Before timing the script checks that every peer's loss
and gradients match the floor's. ``--profile`` adds where fluidscope's time goes: per
op type of the main block, per op type inside the recurrent group's step and grad
blocks, and the recurrent ops' own per-frame overhead. Prints one JSON line.

    python benchmarks/lstm.py [--threads 2] [--repeats 5] [--profile]
"""
import os
import sys

import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=5)

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from _group_profile import profile  # noqa: E402
from _lstm_floor import NumpyLSTM  # noqa: E402

CONFIGS = (  # name, input size, hidden size, sequences, calls per timed block
    ("64x128_n32", 64, 128, 32, 4),
    ("64x512_n64", 64, 512, 64, 1),
)
MIN_LEN, MAX_LEN = 5, 50
WARMUP_CALLS = 2
TOLERANCE = 2e-4  # largest |difference| / largest |value|, per gradient (float32)
TARGETS = {"lstmemory_group_over_floor": 1.3, "dynamic_lstm_over_floor": 1.1}
GRAD_KEYS = ("x", "w_x", "w", "b")


def make_problem(size_in, hidden, seqs, seed):
    """Lengths, input rows (LoD order), loss weights and the shared initial parameters."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, seqs)
    total = int(lengths.sum())
    f32 = np.float32
    return {
        "lengths": lengths,
        "x": rng.standard_normal((total, size_in), dtype=f32),
        "loss_weights": rng.standard_normal((total, hidden), dtype=f32),
        "w_x": rng.uniform(-1, 1, (size_in, 4 * hidden)).astype(f32) / f32(np.sqrt(size_in)),
        "w": rng.uniform(-1, 1, (hidden, 4 * hidden)).astype(f32) / f32(np.sqrt(hidden)),
        "b": rng.uniform(-0.1, 0.1, 4 * hidden).astype(f32),
    }


# ------------------------------------------------------------------ fluidscope
class FluidscopeLSTM:
    """The designer program (``fused`` False: lstmemory_group, True: dynamic_lstm)."""

    def __init__(self, problem, fused):
        size_in, hidden = problem["w_x"].shape[0], problem["w"].shape[0]
        self.main, startup = fd.Program(), fd.Program()
        with fd.program_guard(self.main, startup), fd.unique_name.guard():
            x = fd.data("x", [None, size_in], "float32", lod_level=1)
            x.stop_gradient = False
            weights = fd.data("loss_weights", [None, hidden], "float32")
            proj = fd.fc(x, 4 * hidden, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
            w, b = fd.ParamAttr(name="w"), fd.ParamAttr(name="b")
            if fused:
                h, _ = fd.dynamic_lstm(proj, 4 * hidden, use_peepholes=False, param_attr=w,
                                       bias_attr=b)
            else:
                h = fd.lstmemory_group(proj, hidden, name="lstm", use_peepholes=False,
                                       param_attr=w, bias_attr=b)
            loss = fd.reduce_sum(fd.elementwise_mul(h, weights))
            fd.append_backward(loss)
        self.scope, self.exe = fd.Scope(), fd.Executor(fd.CPUPlace())
        self.exe.run(startup, scope=self.scope)
        for name in ("w_x", "w", "b"):
            tensor = self.scope.find_var(name).get_tensor()
            tensor.set(problem[name].reshape(tensor.value.shape))
        offsets = np.concatenate([[0], np.cumsum(problem["lengths"])]).tolist()
        self.feed = {"x": fd.LoDTensor(problem["x"], [offsets]),
                     "loss_weights": problem["loss_weights"]}
        self.fetch = [loss.name] + [f"{k}@GRAD" for k in GRAD_KEYS]

    def step(self):
        return self.exe.run(self.main, feed=self.feed, fetch_list=self.fetch, scope=self.scope)

    def result(self):
        loss, *grads = self.step()
        grads = dict(zip(GRAD_KEYS, grads))
        grads["b"] = grads["b"].reshape(-1)
        return float(loss), grads


# ----------------------------------------------------------------------- torch
def torch_peers(problem, threads):
    """(torch version, {name: (step, result)}) or (None, {}) when torch is not importable."""
    try:
        import torch
        from torch.nn.utils.rnn import pack_padded_sequence
    except ImportError:
        return None, {}
    torch.set_num_threads(threads)
    size_in, hidden = problem["w_x"].shape[0], problem["w"].shape[0]
    lengths = problem["lengths"]
    seqs, longest = len(lengths), int(lengths.max())
    # fluidscope's gate blocks [c~, i, f, o] -> PyTorch's [i, f, g, o].
    perm = np.concatenate([np.arange(k * hidden, (k + 1) * hidden) for k in (1, 2, 0, 3)])
    lstm = torch.nn.LSTM(size_in, hidden, batch_first=True)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(problem["w_x"][:, perm].T.copy()))
        lstm.weight_hh_l0.copy_(torch.from_numpy(problem["w"][:, perm].T.copy()))
        lstm.bias_ih_l0.copy_(torch.from_numpy(problem["b"][perm].copy()))
        lstm.bias_hh_l0.zero_()
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    valid = np.zeros((seqs, longest), bool)
    for k, n in enumerate(lengths):
        valid[k, :n] = True
    padded_x = np.zeros((seqs, longest, size_in), np.float32)
    padded_x[valid] = problem["x"]
    padded_w = np.zeros((seqs, longest, hidden), np.float32)
    padded_w[valid] = problem["loss_weights"]
    x = torch.from_numpy(padded_x).requires_grad_()
    weights = torch.from_numpy(padded_w)
    length_tensor = torch.from_numpy(lengths.astype(np.int64))
    packed_weights = pack_padded_sequence(weights, length_tensor, batch_first=True,
                                          enforce_sorted=False).data

    def padded():
        lstm.zero_grad(set_to_none=True)
        x.grad = None
        out, _ = lstm(x)
        loss = (out * weights).sum()
        loss.backward()
        return loss

    def packed():
        lstm.zero_grad(set_to_none=True)
        x.grad = None
        out, _ = lstm(pack_padded_sequence(x, length_tensor, batch_first=True,
                                           enforce_sorted=False))
        loss = (out.data * packed_weights).sum()
        loss.backward()
        return loss

    def result(step):
        def run():
            loss = float(step().item())
            inverse = np.argsort(perm)
            return loss, {
                "x": x.grad.numpy()[valid].copy(),
                "w_x": lstm.weight_ih_l0.grad.numpy().T[:, inverse].copy(),
                "w": lstm.weight_hh_l0.grad.numpy().T[:, inverse].copy(),
                "b": lstm.bias_ih_l0.grad.numpy()[inverse].copy()}
        return run

    assert offsets[-1] == len(problem["x"])
    return torch.__version__, {"torch_padded": (padded, result(padded)),
                               "torch_packed": (packed, result(packed))}


# ---------------------------------------------------------------------- checks
def check(results):
    """Assert every peer's loss and gradients match the floor's; name -> worst rel diff."""
    ref_loss, ref = results["floor"]
    worst = {}
    for name, (loss, grads) in results.items():
        if name == "floor":
            continue
        diffs = {"loss": abs(loss - ref_loss) / max(abs(ref_loss), 1e-30)}
        for k in GRAD_KEYS:
            assert grads[k].shape == ref[k].shape, (
                f"{name}: gradient of {k} has shape {grads[k].shape}, the floor's {ref[k].shape}")
            diffs[k] = float(np.abs(grads[k] - ref[k]).max() / np.abs(ref[k]).max())
        bad = {k: v for k, v in diffs.items() if not v <= TOLERANCE}
        assert not bad, (f"{name} disagrees with the numpy floor from the same weights: relative "
                         f"differences {bad} (tolerance {TOLERANCE})")
        worst[name] = float(f"{max(diffs.values()):.3g}")
    return worst


# ------------------------------------------------------------------------ main
def run_config(name, size_in, hidden, seqs, calls, seed):
    problem = make_problem(size_in, hidden, seqs, seed)
    floor = NumpyLSTM(problem["lengths"], problem["w_x"].copy(), problem["w"].copy(),
                      problem["b"].copy())
    fluid = {"lstmemory_group": FluidscopeLSTM(problem, fused=False),
             "dynamic_lstm": FluidscopeLSTM(problem, fused=True)}
    steps = {k: p.step for k, p in fluid.items()}
    steps["floor"] = lambda: floor.step(problem["x"], problem["loss_weights"])
    checks = {k: p.result for k, p in fluid.items()}
    checks["floor"] = lambda: (lambda r: (r[0], {k: v.copy() for k, v in r[1].items()}))(
        steps["floor"]())
    torch_version, torch_ = torch_peers(problem, ARGS.blas_threads)
    for k, (step, result) in torch_.items():
        steps[k], checks[k] = step, result
    agreement = check({k: fn() for k, fn in checks.items()})

    times = _harness.measure(steps, calls, ARGS.repeats, WARMUP_CALLS, _harness.settle_time(ARGS))
    med = {k: t["median"] for k, t in times.items()}
    ratios = {f"{a}_over_{b}": round(med[a] / med[b], 3)
              for a in fluid for b in ("floor", "torch_packed", "torch_padded") if b in med}
    ratios["lstmemory_group_over_floor_best"] = round(
        times["lstmemory_group"]["min"] / times["floor"]["min"], 3)
    ratios["dynamic_lstm_over_floor_best"] = round(
        times["dynamic_lstm"]["min"] / times["floor"]["min"], 3)
    for a in fluid:  # CPU time of this process: what a loaded machine moves least
        ratios[f"{a}_over_floor_cpu"] = round(
            times[a]["cpu_median"] / times["floor"]["cpu_median"], 3)
    meets = {k: ratios[k] <= v for k, v in TARGETS.items()}
    if "torch_packed" in med:
        meets["lstmemory_group_faster_than_torch_packed"] = (
            med["lstmemory_group"] < med["torch_packed"])
    if hidden >= 512 and "torch_padded" in med:
        for a in fluid:
            meets[f"{a}_faster_than_torch_padded"] = med[a] < med["torch_padded"]
    result = {
        "config": name, "input": size_in, "hidden": hidden, "sequences": seqs,
        "rows": int(problem["lengths"].sum()), "frames": int(problem["lengths"].max()),
        "calls_per_repeat": calls,
        "ms": {k: _harness.rounded(v, "ms") for k, v in med.items()},
        "ratios": ratios, "meets": meets, "rel_diff_vs_floor": agreement,
        "page_faults_per_call": _harness.page_faults(steps),
    }
    if ARGS.profile:
        result["profile"] = {k: profile(p, max(3, 3 * calls)) for k, p in fluid.items()}
    return result, torch_version


def heap_policy():
    """fluidscope's heap policy (None from a fluidscope older than it, timed for a before
    and after)."""
    return fd.heap_policy() if hasattr(fd, "heap_policy") else None


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    configs, torch_version = [], None
    for seed, config in enumerate(CONFIGS):
        result, torch_version = run_config(*config, seed=seed)
        configs.append(result)
    result = {
        "benchmark": "lstm",
        "model": "x @ W_x (no bias) -> LSTM without peepholes, loss = sum(h * fixed weights); "
                 "forward + backward, gradients of W_x, W, b and x",
        "lengths": f"uniform {MIN_LEN}..{MAX_LEN}", "dtype": "float32",
        "threads": ARGS.blas_threads, "blas": _harness.blas_description(),
        "numpy_version": np.__version__, "torch_version": torch_version,
        "repeats": ARGS.repeats, "targets": TARGETS, "heap": heap_policy(),
        "configs": configs,
    }
    if ARGS.threads:
        second = _harness.secondary(os.path.abspath(__file__), ARGS, ARGS.threads)
        result["secondary"] = {"threads": second["threads"], "blas": second["blas"],
                               "configs": [{k: c[k] for k in ("config", "ms", "ratios", "meets")}
                                           for c in second["configs"]]}
    _harness.emit(result)


if __name__ == "__main__":
    sys.exit(main())
