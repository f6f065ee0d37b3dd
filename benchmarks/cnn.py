"""A ResNet-18-style CNN, inference and one SGD training step: fluidscope vs numpy vs PyTorch.

The network (``_cnn_floor.py`` has its shape): a 3x3 conv stem with batch_norm, relu and
a 3x3 max pool, four stages of two basic blocks (64 / 128 / 256 / 512 channels, residual
``elementwise_add``, 1x1 conv shortcuts where the shape changes), global average
pool2d, fc to 10 classes; CIFAR-size input [32, 3, 32, 32], float32. Inference runs
batch_norm on the running statistics; a training step is forward with the batch
statistics, softmax cross entropy, mean, backward (no gradient for the images) and a
plain SGD update of every conv filter, batch_norm scale/bias and the fc weights.

Peers, timed in one process at one BLAS thread (``--threads 2`` adds a two-thread run
as the ``secondary`` field):

* ``fluidscope``: programs of ``conv2d``, ``batch_norm``, ``relu``, ``elementwise_add``,
  ``pool2d``, ``mul``, ``softmax_with_cross_entropy`` and ``mean`` appended with
  ``Block.append_op``; the training program gets its backward and ``sgd`` ops from
  ``fd.optimizer.SGD.minimize``, the inference program is the forward part cloned
  ``for_test`` (batch_norm ``is_test``). Parameters live in a Scope; ``Executor.run``.
* ``numpy``: the floor, the same math by hand (``_cnn_floor.NumpyResNet``: im2col GEMMs
  in the channel-major layout, fused batch-norm passes, hand-written backward).
* ``torch``: PyTorch eager on the CPU (``nn.Conv2d``/``nn.BatchNorm2d``/...,
  ``torch.optim.SGD``; inference in ``eval()`` under ``torch.inference_mode``), when
  it is importable (it is not a dependency of fluidscope: ``pip install torch``).

Every peer starts from the same weights and running statistics. Before timing the
script checks that they give the same inference logits and the same losses over a few
training steps. ``--profile`` adds fluidscope's time per op type (inference and
training) and the floor's time per part. Prints one JSON line.

    python benchmarks/cnn.py [--threads 2] [--repeats 5] [--profile]
"""
import os
import sys

import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=5)

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from _cnn_floor import (BN_SLOTS, CLASSES, EPSILON, IMAGE, MOMENTUM, NumpyResNet,  # noqa: E402
                        blocks, convs, make_weights, trainable)

BATCH = 32
LEARNING_RATE = 0.05
BATCHES = 4              # distinct mini-batches, cycled through
# Training steps compared between peers before timing. The second step's loss shows that
# the first step's gradients and update agree (peers agree to ~1e-6 there); later steps
# on the same batch amplify float32 rounding (to ~1e-3 by the third), so they prove less.
CHECK_STEPS = 2
CALLS_PER_REPEAT = {"inference": 2, "train_step": 1}
WARMUP_CALLS = 1
LOGITS_TOLERANCE = 1e-4  # largest |difference| / largest |logit| (float32, 18 layers)
LOSS_TOLERANCE = 1e-4    # relative difference of the losses
TARGETS = {"over_numpy": 1.10, "over_torch": 1.50}


# ------------------------------------------------------------------ fluidscope
class FluidscopeResNet:
    """The training and inference programs, their executor and scope."""

    def __init__(self, weights):
        self.main, startup = fd.Program(), fd.Program()
        with fd.program_guard(self.main, startup), fd.unique_name.guard():
            block = self.main.global_block()
            self.block = block
            images = fd.data("images", [None, *IMAGE], "float32")
            label = fd.data("label", [None, 1], "int64")
            for name, value in weights.items():
                if trainable(name):
                    block.create_parameter(name, list(value.shape))
                else:  # running statistics: persistable, updated by batch_norm in place
                    block.create_var(name=name, shape=list(value.shape), persistable=True,
                                     stop_gradient=True)
            x = self._conv_bn(images, "stem", 1, 1, relu=True)
            x = self._op("pool2d", {"X": x}, {"ksize": [3, 3], "strides": [2, 2],
                                              "paddings": [1, 1], "pooling_type": "max"})
            for name, _, _, stride, shortcut in blocks():
                h = self._conv_bn(x, f"{name}.1", stride, 1, relu=True)
                h = self._conv_bn(h, f"{name}.2", 1, 1, relu=False)
                s = self._conv_bn(x, f"{name}.sc", stride, 0, relu=False) if shortcut else x
                x = self._op("relu", {"X": self._op("elementwise_add", {"X": h, "Y": s})})
            x = self._op("pool2d", {"X": x}, {"ksize": [1, 1], "pooling_type": "avg",
                                              "global_pooling": True})
            x = self._op("mul", {"X": x, "Y": "fc.w"}, {"x_num_col_dims": 1})
            self.logits = self._op("elementwise_add", {"X": x, "Y": "fc.b"}, {"axis": 1})
            self.inference = self.main.clone(for_test=True)
            loss = self._op("softmax_with_cross_entropy", {"Logits": self.logits, "Label": label},
                            out_slot="Loss", outputs={"Softmax": None})
            self.loss = self._op("mean", {"X": loss})
            fd.optimizer.SGD(LEARNING_RATE).minimize(self.loss)
        self.scope, self.exe = fd.Scope(), fd.Executor(fd.CPUPlace())
        self.exe.run(startup, scope=self.scope)  # the learning rate
        for name, value in weights.items():
            self.scope.var(name).get_tensor().set(value.copy())

    def _op(self, op_type, inputs, attrs=None, out_slot="Out", outputs=None):
        """Append ``op_type``; a fresh variable for ``out_slot`` and for each slot of
        ``outputs`` given as None (others name existing variables). Returns ``out_slot``'s."""
        outputs = dict(outputs or {})
        outputs.setdefault(out_slot, None)
        outputs = {slot: self.block.create_var(name=fd.unique_name.generate(op_type))
                   if var is None else var for slot, var in outputs.items()}
        self.block.append_op(op_type, inputs, outputs, attrs or {})
        return outputs[out_slot]

    def _conv_bn(self, x, prefix, stride, pad, relu):
        """conv2d (no bias) + batch_norm (+ relu) with the parameters named ``prefix.*``."""
        y = self._op("conv2d", {"Input": x, "Filter": f"{prefix}.w"},
                     {"strides": [stride, stride], "paddings": [pad, pad]}, out_slot="Output")
        mean, variance = f"{prefix}.mean", f"{prefix}.variance"
        # MeanOut/VarianceOut are the running statistics themselves, as in Paddle programs.
        y = self._op("batch_norm",
                     {"X": y, "Scale": f"{prefix}.scale", "Bias": f"{prefix}.bias",
                      "Mean": mean, "Variance": variance},
                     {"momentum": MOMENTUM, "epsilon": EPSILON}, out_slot="Y",
                     outputs={"MeanOut": mean, "VarianceOut": variance, "SavedMean": None,
                              "SavedVariance": None})
        return self._op("relu", {"X": y}) if relu else y

    def forward(self, images):
        (logits,) = self.exe.run(self.inference, feed={"images": images},
                                 fetch_list=[self.logits.name], scope=self.scope)
        return logits

    def step(self, images, labels):
        (loss,) = self.exe.run(self.main, feed={"images": images, "label": labels[:, None]},
                               fetch_list=[self.loss.name], scope=self.scope)
        return float(loss)


# ----------------------------------------------------------------------- torch
def torch_peer(weights, threads):
    """(torch version, forward, step) or (None, None, None) when torch is not importable."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None, None, None
    torch.set_num_threads(threads)
    layers = torch.nn.ModuleDict()
    for prefix, cout, cin, k, stride, pad in convs():
        key = prefix.replace(".", "_")
        layers[f"{key}_conv"] = torch.nn.Conv2d(cin, cout, k, stride, pad, bias=False)
        layers[f"{key}_bn"] = torch.nn.BatchNorm2d(cout, eps=EPSILON, momentum=1 - MOMENTUM)
    layers["fc"] = torch.nn.Linear(weights["fc.w"].shape[0], CLASSES)
    with torch.no_grad():
        for prefix, *_ in convs():
            key = prefix.replace(".", "_")
            layers[f"{key}_conv"].weight.copy_(torch.from_numpy(weights[f"{prefix}.w"]))
            bn = layers[f"{key}_bn"]
            for slot, tensor in zip(BN_SLOTS, (bn.weight, bn.bias, bn.running_mean,
                                               bn.running_var)):
                tensor.copy_(torch.from_numpy(weights[f"{prefix}.{slot}"]))
        layers["fc"].weight.copy_(torch.from_numpy(weights["fc.w"].T.copy()))
        layers["fc"].bias.copy_(torch.from_numpy(weights["fc.b"]))
    optimizer = torch.optim.SGD(layers.parameters(), lr=LEARNING_RATE)

    def conv_bn(x, prefix, relu):
        key = prefix.replace(".", "_")
        y = layers[f"{key}_bn"](layers[f"{key}_conv"](x))
        return F.relu(y, inplace=True) if relu else y

    def net(x):
        x = F.max_pool2d(conv_bn(x, "stem", True), 3, 2, 1)
        for name, _, _, _, shortcut in blocks():
            h = conv_bn(conv_bn(x, f"{name}.1", True), f"{name}.2", False)
            x = F.relu(h + (conv_bn(x, f"{name}.sc", False) if shortcut else x), inplace=True)
        return layers["fc"](F.adaptive_avg_pool2d(x, 1).flatten(1))

    def forward(images):
        layers.eval()
        with torch.inference_mode():
            return net(torch.from_numpy(images)).numpy()

    def step(images, labels):
        layers.train()
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(torch.from_numpy(images)), torch.from_numpy(labels))
        loss.backward()
        optimizer.step()
        return loss.item()

    return torch.__version__, forward, step


# ---------------------------------------------------------------------- checks
def check_agreement(forwards, steps, images, labels):
    """Assert that every peer's inference logits and its losses over CHECK_STEPS training
    steps on one batch match fluidscope's, and that the losses fall (SGD on the same
    batch). Inference is checked first, while the running statistics are the shared
    initial ones. Returns {"logits": name -> diff, "loss": name -> diff}."""
    logits = {name: forward(images) for name, forward in forwards.items()}
    reference = logits["fluidscope"]
    worst = {"logits": {}, "loss": {}}
    for name, values in logits.items():
        if name == "fluidscope":
            continue
        diff = float(np.max(np.abs(values - reference)) / np.max(np.abs(reference)))
        assert diff < LOGITS_TOLERANCE, (
            f"fluidscope and {name} disagree on the inference logits from the same weights: "
            f"largest difference {diff:.3g} of the largest logit (tolerance "
            f"{LOGITS_TOLERANCE}); first row {reference[0]} vs {values[0]}")
        worst["logits"][name] = float(f"{diff:.3g}")
    losses = {name: [step(images, labels) for _ in range(CHECK_STEPS)]
              for name, step in steps.items()}
    reference = np.array(losses["fluidscope"])
    assert reference[-1] < reference[0], (
        f"fluidscope's loss did not fall over {CHECK_STEPS} SGD steps: {losses['fluidscope']}")
    for name, values in losses.items():
        if name == "fluidscope":
            continue
        diff = float(np.max(np.abs(np.array(values) - reference) / np.abs(reference)))
        assert diff < LOSS_TOLERANCE, (
            f"fluidscope and {name} disagree on the training losses from the same weights: "
            f"{losses['fluidscope']} (fluidscope) and {values} ({name}); largest relative "
            f"difference {diff:.3g}")
        worst["loss"][name] = float(f"{diff:.3g}")
    return worst


# ------------------------------------------------------------------------ main
def _time(functions, batches, calls, with_labels):
    """Median seconds per call of each peer over the cycled batches (harness.measure)."""
    counters = {name: iter(range(1, 10**9)) for name in functions}

    def bound(function, counter):
        def call():
            images, labels = batches[next(counter) % len(batches)]
            return function(images, labels) if with_labels else function(images)
        return call

    peers = {name: bound(f, counters[name]) for name, f in functions.items()}
    return _harness.measure(peers, calls, ARGS.repeats, WARMUP_CALLS, _harness.settle_time(ARGS))


def _figures(times):
    """ms per call of each peer and fluidscope's ratios (median and best) to the others."""
    out = {f"{name}_ms": _harness.rounded(t["median"], "ms") for name, t in times.items()}
    for peer in ("numpy", "torch"):
        if peer not in times:
            out[f"fluidscope_over_{peer}"] = None
            continue
        out[f"fluidscope_over_{peer}"] = round(
            times["fluidscope"]["median"] / times[peer]["median"], 3)
        # Fastest repeat over fastest repeat: less moved by other processes' load.
        out[f"fluidscope_over_{peer}_best"] = round(
            times["fluidscope"]["min"] / times[peer]["min"], 3)
    out["meets_targets"] = all(
        out[f"fluidscope_over_{peer}"] is None or out[f"fluidscope_over_{peer}"] <= target
        for peer, target in (("numpy", TARGETS["over_numpy"]), ("torch", TARGETS["over_torch"])))
    return out


def _profiles(fluid, floor, batches):
    """fluidscope's ms per op type (inference and training) and the floor's ms per part."""
    images, labels = batches[0]
    calls = 3
    profile = {
        "fluidscope_inference_ms": _harness.profile_ops(
            fluid.exe, fluid.inference, lambda: fluid.forward(images), calls),
        "fluidscope_train_step_ms": _harness.profile_ops(
            fluid.exe, fluid.main, lambda: fluid.step(images, labels), calls),
    }
    floor.profile = True
    for key, run in (("numpy_inference_ms", lambda: floor.forward(images)),
                     ("numpy_train_step_ms", lambda: floor.step(images, labels))):
        floor.spent = {}
        for _ in range(calls):
            run()
        profile[key] = {part: _harness.rounded(seconds / calls, "ms") for part, seconds in
                        sorted(floor.spent.items(), key=lambda item: -item[1])}
    floor.profile = False
    return profile


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((BATCH, *IMAGE), dtype=np.float32),
                rng.integers(0, CLASSES, BATCH, dtype=np.int64)) for _ in range(BATCHES)]
    weights = make_weights()
    fluid = FluidscopeResNet(weights)
    floor = NumpyResNet(weights, LEARNING_RATE)
    forwards = {"fluidscope": fluid.forward, "numpy": floor.forward}
    steps = {"fluidscope": fluid.step, "numpy": floor.step}
    torch_version, torch_forward, torch_step = torch_peer(weights, ARGS.blas_threads)
    if torch_step is not None:
        forwards["torch"], steps["torch"] = torch_forward, torch_step
    agreement = check_agreement(forwards, steps, *batches[0])

    inference = _time(forwards, batches, CALLS_PER_REPEAT["inference"], with_labels=False)
    training = _time(steps, batches, CALLS_PER_REPEAT["train_step"], with_labels=True)
    result = {
        "benchmark": "cnn",
        "model": "ResNet-18-style: 3x3 conv stem + bn + relu + max pool 3/2, 4 stages x 2 "
                 "basic blocks (64-128-256-512), global avg pool, fc 10; softmax cross "
                 "entropy, mean, SGD",
        "batch": BATCH, "image": list(IMAGE), "dtype": "float32",
        "threads": ARGS.blas_threads, "blas": _harness.blas_description(),
        "numpy_version": np.__version__, "torch_version": torch_version,
        "repeats": ARGS.repeats, "calls_per_repeat": CALLS_PER_REPEAT,
        "inference": _figures(inference),
        "train_step": _figures(training),
        "targets": TARGETS,
        "agreement_vs_fluidscope": agreement,
    }
    if ARGS.profile:
        result["profile"] = _profiles(fluid, floor, batches)
    if ARGS.threads:
        second = _harness.secondary(os.path.abspath(__file__), ARGS, ARGS.threads)
        result["secondary"] = {k: second[k] for k in ("threads", "blas", "inference",
                                                        "train_step")}
    _harness.emit(result)


if __name__ == "__main__":
    sys.exit(main())
