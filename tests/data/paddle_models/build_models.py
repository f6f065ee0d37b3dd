"""Runs under .venv-paddle (paddlepaddle 3.3.1): builds real Paddle models, saves them in
the legacy ProgramDesc format and records Paddle's own results on fixed inputs.

    FLAGS_enable_pir_api=0 python build_models.py OUT_DIR [MODEL ...]
    FLAGS_enable_pir_api=0 python build_models.py --rerun OUT_DIR   # see rerun()

One Paddle process builds every model (importing Paddle takes seconds). Models are
built under ``paddle.static`` directly from ``paddle.nn`` / ``paddle.vision`` layers in
eval mode, so the saved programs are exactly what ``save_inference_model`` writes for
users. Per model, ``OUT_DIR/<name>/`` gets:

* inference models: ``model.pdmodel`` + ``model.pdiparams`` (save_inference_model),
  ``inputs.npz`` (feed name -> array), ``outputs.npz`` (``"0"``, ``"1"``.. in fetch
  order, from the *reloaded* files, so they describe the files on disk);
* training models: ``forward.pdmodel`` (the program up to the loss, no backward ops),
  ``backward.pdmodel`` (the same after ``paddle.static.append_backward``),
  ``params.npz`` (persistable name -> value after init), ``inputs.npz``, ``outputs.npz``
  (``"loss"``) and ``grads.npz`` (parameter name -> ``<name>@GRAD`` as Paddle computes it).

``OUT_DIR/manifest.json`` lists each model: kind, feeds, fetches, op-type counts (all
blocks), build seconds. Random batch-norm statistics and affine parameters replace the
(0, 1) initial ones so inference batch norm is not an identity.
"""
import collections
import contextlib
import json
import os
import sys
import time
import warnings

os.environ["FLAGS_enable_pir_api"] = "0"

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn as nn  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle.base.layer_helper import LayerHelper  # noqa: E402
from paddle.vision import models as vm  # noqa: E402

paddle.enable_static()
warnings.filterwarnings("ignore")  # deprecation notes on paddle.static.nn, ccache
RNG = np.random.default_rng(2024)


def images(shape):
    return RNG.standard_normal(shape).astype("float32")


# ---------------------------------------------------------------- model builders
# Each returns (feeds: [(static var, array)], fetches: [static var], loss or None);
# called inside a program_guard, so layers put their parameters in that startup program.
def vision(factory, shape, train=False, **kw):
    def build():
        x = paddle.static.data("x", shape, "float32")
        model = factory(pretrained=False, **kw) if factory is not vm.LeNet else factory(**kw)
        if not train:
            model.eval()
            return [(x, images(shape))], [model(x)], None
        for layer in model.sublayers():  # Paddle's and our dropout masks differ
            if isinstance(layer, nn.Dropout):
                layer.p = 0.0
        label = paddle.static.data("label", [shape[0], 1], "int64")
        loss = paddle.mean(F.cross_entropy(model(x), label))
        classes = kw.get("num_classes", 1000)
        return ([(x, images(shape)), (label, RNG.integers(0, classes, (shape[0], 1)))],
                [loss], loss)
    return build


def static_cnn(train=False):
    """The classic paddle.static.nn CNN: conv2d + batch_norm + pool2d + fc (+ loss)."""
    def build():
        x = paddle.static.data("img", [4, 1, 12, 12], "float32")
        # no bias before batch_norm (its gradient is 0 in training: only float noise)
        h = paddle.static.nn.conv2d(x, 6, 3, padding=1, bias_attr=False)
        h = paddle.static.nn.batch_norm(h, act="relu", is_test=not train)
        h = F.max_pool2d(h, 2, 2)
        h = paddle.static.nn.conv2d(h, 8, 3, act="relu")
        h = F.avg_pool2d(h, 2, 2)
        logits = paddle.static.nn.fc(h, 5)
        feeds = [(x, images([4, 1, 12, 12]))]
        if not train:
            return feeds, [F.softmax(logits)], None
        label = paddle.static.data("label", [4, 1], "int64")
        loss = paddle.mean(F.cross_entropy(logits, label))
        return feeds + [(label, RNG.integers(0, 5, (4, 1)).astype("int64"))], [loss], loss
    return build


class LSTMText(nn.Layer):
    """embedding -> bidirectional 2-layer LSTM -> mean over time -> fc."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, direction="bidirect")
        self.fc = nn.Linear(24, 3)

    def forward(self, ids):
        out, _ = self.lstm(self.emb(ids))
        return self.fc(paddle.mean(out, axis=1))


class GRUText(nn.Layer):
    """embedding -> GRU over padded batches with sequence_length -> last state -> fc."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.gru = nn.GRU(8, 10)
        self.fc = nn.Linear(10, 4)

    def forward(self, ids, lengths):
        _, h = self.gru(self.emb(ids), sequence_length=lengths)
        return self.fc(h[-1])


def lstm_text(train=False):
    def build():
        ids = paddle.static.data("ids", [3, 6], "int64")
        model = LSTMText()
        if not train:
            model.eval()
        logits = model(ids)
        feeds = [(ids, RNG.integers(0, 30, (3, 6)).astype("int64"))]
        if not train:
            return feeds, [logits], None
        label = paddle.static.data("label", [3, 1], "int64")
        loss = paddle.mean(F.cross_entropy(logits, label))
        return feeds + [(label, RNG.integers(0, 3, (3, 1)).astype("int64"))], [loss], loss
    return build


def gru_text(train=False):
    def build():
        ids = paddle.static.data("ids", [3, 6], "int64")
        lengths = paddle.static.data("lengths", [3], "int64")
        model = GRUText()
        if not train:
            model.eval()
        logits = model(ids, lengths)
        feeds = [(ids, RNG.integers(0, 30, (3, 6)).astype("int64")),
                 (lengths, np.array([6, 4, 2], "int64"))]
        if not train:
            return feeds, [logits], None
        label = paddle.static.data("label", [3, 1], "int64")
        loss = paddle.mean(F.cross_entropy(logits, label))
        return feeds + [(label, RNG.integers(0, 4, (3, 1)).astype("int64"))], [loss], loss
    return build


def legacy_matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """paddle.matmul as Paddle 2.x emitted it in static mode (a matmul_v2 op): 3.3.1's
    generated paddle.matmul accepts only dygraph tensors and PIR values."""
    helper = LayerHelper("matmul_v2")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(type="matmul_v2", inputs={"X": x, "Y": y}, outputs={"Out": out},
                     attrs={"trans_x": transpose_x, "trans_y": transpose_y})
    return out


@contextlib.contextmanager
def legacy_static_matmul():
    """paddle.matmul (and paddle.tensor.matmul, which nn.MultiHeadAttention calls) emit
    matmul_v2 while a static model is built."""
    tensor = sys.modules["paddle.tensor"]  # paddle.tensor is shadowed by a function
    saved = paddle.matmul, tensor.matmul
    paddle.matmul = tensor.matmul = legacy_matmul
    try:
        yield
    finally:
        paddle.matmul, tensor.matmul = saved


def transformer(train=False):
    def build():
        x = paddle.static.data("x", [2, 5, 16], "float32")
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0 if train else 0.1)
        if not train:
            layer.eval()
            return [(x, images([2, 5, 16]))], [layer(x)], None
        # a random projection: mean(out * out) of a layer-normed out is constant
        target = paddle.static.data("target", [2, 5, 16], "float32")
        loss = paddle.mean(layer(x) * target)
        return [(x, images([2, 5, 16])), (target, images([2, 5, 16]))], [loss], loss
    return build


class TinyUNet(nn.Layer):
    """A small segmentation net touring paddle.nn layers that emit legacy static ops:
    group/instance norm, PReLU, ELU/SiLU/Mish, pooling with indices, reflect padding,
    a transposed conv, bilinear and nearest upsampling, concat, log_softmax."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.GroupNorm(2, 8),
                                  nn.PReLU(8))
        self.pad = nn.Pad2D(1, mode="reflect")
        self.mid = nn.Sequential(nn.Conv2D(8, 8, 3), nn.InstanceNorm2D(8), nn.ELU())
        self.up = nn.Conv2DTranspose(8, 8, 2, stride=2)
        self.side = nn.Sequential(nn.Conv2D(8, 4, 1), nn.Silu())
        self.head = nn.Sequential(nn.Conv2D(20, 8, 3, padding=1), nn.Mish(), nn.Conv2D(8, 3, 1))

    def forward(self, x):
        d = self.down(x)
        m = self.mid(self.pad(F.max_pool2d(d, 2, return_mask=True)[0]))
        side = F.interpolate(self.side(F.adaptive_max_pool2d(d, 4)), scale_factor=4,
                             mode="bilinear")
        near = F.interpolate(m, scale_factor=2, mode="nearest")
        return F.log_softmax(self.head(paddle.concat([self.up(m), near, side], 1)), 1)


def unet(train=False):
    def build():
        x = paddle.static.data("x", [2, 3, 16, 16], "float32")
        model = TinyUNet()
        feeds = [(x, images([2, 3, 16, 16]))]
        if not train:
            model.eval()
            return feeds, [model(x)], None
        target = paddle.static.data("target", [2, 3, 16, 16], "float32")
        onehot = np.eye(3, dtype="float32")[RNG.integers(0, 3, (2, 16, 16))].transpose(0, 3, 1, 2)
        loss = paddle.mean(model(x) * target) * -3.0  # cross entropy with one-hot targets
        return feeds + [(target, np.ascontiguousarray(onehot))], [loss], loss
    return build


def mlp():
    # No Tanh/Sigmoid/GELU: in 3.3.1 those only accept dygraph tensors or PIR values,
    # not legacy static Variables.
    x = paddle.static.data("x", [-1, 10], "float32")
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 16),
                          nn.LeakyReLU(0.1), nn.Linear(16, 4), nn.Softmax())
    model.eval()
    return [(x, images([5, 10]))], [model(x)], None


def mlp_train():
    x = paddle.static.data("x", [6, 10], "float32")
    label = paddle.static.data("label", [6, 1], "int64")
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    loss = paddle.mean(F.cross_entropy(model(x), label))
    return ([(x, images([6, 10])), (label, RNG.integers(0, 4, (6, 1)).astype("int64"))],
            [loss], loss)


MODELS = {
    "lenet": vision(vm.LeNet, [2, 1, 28, 28], num_classes=10),
    "resnet18": vision(vm.resnet18, [1, 3, 32, 32], num_classes=10),
    "mobilenet_v2": vision(vm.mobilenet_v2, [1, 3, 32, 32], scale=0.25, num_classes=10),
    "mobilenet_v3_small": vision(vm.mobilenet_v3_small, [1, 3, 32, 32], scale=0.5,
                                 num_classes=10),
    "shufflenet_v2_x0_25": vision(vm.shufflenet_v2_x0_25, [1, 3, 32, 32], num_classes=10),
    "squeezenet1_0": vision(vm.squeezenet1_0, [1, 3, 48, 48], num_classes=10),
    # num_classes=0 drops VGG's 25088x4096 classifier (400 MB): the features and the
    # adaptive 7x7 pool stay.
    "vgg11_bn": vision(vm.vgg11, [1, 3, 32, 32], batch_norm=True, num_classes=0),
    "static_cnn": static_cnn(),
    "lstm_text": lstm_text(),
    "gru_text": gru_text(),
    "transformer_encoder": transformer(),
    "tiny_unet": unet(),
    "mlp": mlp,
    "static_cnn_train": static_cnn(train=True),
    "lstm_text_train": lstm_text(train=True),
    "mlp_train": mlp_train,
    "gru_text_train": gru_text(train=True),
    "mobilenet_v3_small_train": vision(vm.mobilenet_v3_small, [4, 3, 64, 64], train=True,
                                       scale=0.5, num_classes=10),
    "transformer_encoder_train": transformer(train=True),
    "tiny_unet_train": unet(train=True),
}
# Saved the way most users save: a dygraph model through paddle.jit.save (dy2static),
# which writes the legacy files under FLAGS_enable_pir_api=0.
JIT = {"lenet_jit": (vm.LeNet, [2, 1, 28, 28])}


# ---------------------------------------------------------------- saving
def op_counts(program):
    counts = collections.Counter(op.type for block in program.blocks for op in block.ops)
    return dict(sorted(counts.items()))


def randomize_batch_norm(program, scope):
    """Random running statistics and affine parameters for every batch_norm op."""
    for op in program.global_block().ops:
        if op.type != "batch_norm":
            continue
        for slot, low, high in (("Mean", -0.3, 0.3), ("Variance", 0.5, 1.5),
                                ("Scale", 0.5, 1.5), ("Bias", -0.3, 0.3)):
            tensor = scope.find_var(op.input(slot)[0]).get_tensor()
            shape = np.array(tensor).shape
            tensor.set(RNG.uniform(low, high, shape).astype("float32"), paddle.CPUPlace())


def save_inference(folder, main, exe, scope, feeds, fetches):
    prefix = os.path.join(folder, "model")
    paddle.static.save_inference_model(prefix, [v for v, _ in feeds], fetches, exe, program=main)
    return record_inference(folder, exe, {v.name: a for v, a in feeds})


def record_inference(folder, exe, inputs):
    """Reload the saved files and record what Paddle computes with them."""
    program, feed_names, fetch_vars = paddle.static.load_inference_model(
        os.path.join(folder, "model"), exe)
    outs = exe.run(program, feed=inputs, fetch_list=fetch_vars)
    np.savez(os.path.join(folder, "inputs.npz"), **inputs)
    np.savez(os.path.join(folder, "outputs.npz"), **{str(i): o for i, o in enumerate(outs)})
    return {"kind": "inference", "feeds": feed_names, "fetches": [v.name for v in fetch_vars],
            "ops": op_counts(program)}


def build_jit(name, folder):
    factory, shape = JIT[name]
    paddle.disable_static()
    try:
        paddle.seed(7)
        model = factory()
        model.eval()
        spec = paddle.static.InputSpec(shape, "float32", "x")
        paddle.jit.save(model, os.path.join(folder, "model"), input_spec=[spec])
    finally:
        paddle.enable_static()
    with paddle.static.scope_guard(paddle.static.Scope()):
        return record_inference(folder, paddle.static.Executor(paddle.CPUPlace()),
                                {"x": images(shape)})


def save_training(folder, main, exe, scope, feeds, loss):
    forward = main.clone()
    with open(os.path.join(folder, "forward.pdmodel"), "wb") as f:
        f.write(forward.desc.serialize_to_string())
    pairs = paddle.static.append_backward(loss)
    with open(os.path.join(folder, "backward.pdmodel"), "wb") as f:
        f.write(main.desc.serialize_to_string())
    persist = sorted(v.name for v in forward.list_vars()
                     if v.persistable and scope.find_var(v.name) is not None
                     and scope.find_var(v.name).get_tensor()._is_initialized())
    params = {n: np.array(scope.find_var(n).get_tensor()) for n in persist}
    inputs = {v.name: a for v, a in feeds}
    grad_names = [g.name for _, g in pairs]
    outs = exe.run(main, feed=inputs, fetch_list=[loss] + grad_names)
    np.savez(os.path.join(folder, "params.npz"), **params)
    np.savez(os.path.join(folder, "inputs.npz"), **inputs)
    np.savez(os.path.join(folder, "outputs.npz"), loss=outs[0])
    np.savez(os.path.join(folder, "grads.npz"), **{p.name: g for (p, _), g in zip(pairs, outs[1:])})
    return {"kind": "training", "feeds": list(inputs), "fetches": [loss.name],
            "loss": loss.name, "params": [p.name for p, _ in pairs],
            "ops": op_counts(forward), "backward_ops": op_counts(main)}


def build(name, out_dir):
    start = time.perf_counter()
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    if name in JIT:
        entry = build_jit(name, folder)
        entry["seconds"] = round(time.perf_counter() - start, 2)
        return entry
    paddle.seed(7)
    main, startup = paddle.static.Program(), paddle.static.Program()
    scope = paddle.static.Scope()
    # unique_name.guard: names do not depend on which models were built before
    with paddle.static.scope_guard(scope), paddle.static.program_guard(main, startup), \
            paddle.utils.unique_name.guard(), legacy_static_matmul():
        feeds, fetches, loss = MODELS[name]()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        randomize_batch_norm(main, scope)
        if loss is None:
            entry = save_inference(folder, main, exe, scope, feeds, fetches)
        else:
            entry = save_training(folder, main, exe, scope, feeds, loss)
    entry["seconds"] = round(time.perf_counter() - start, 2)
    return entry


def main(out_dir, names):
    manifest = {name: build(name, out_dir) for name in names or [*MODELS, *JIT]}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    for name, entry in manifest.items():
        print(f"{name}: {entry['seconds']} s, {sum(entry['ops'].values())} ops")


def rerun(out_dir):
    """Run every ``OUT_DIR/<name>/resaved`` inference model (written back by fluidscope) on
    that model's inputs: ``resaved_outputs.npz``, or ``resaved_error.txt`` saying why not."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    for name in sorted(os.listdir(out_dir)):
        folder = os.path.join(out_dir, name)
        if not os.path.exists(os.path.join(folder, "resaved.pdmodel")):
            continue
        try:
            with paddle.static.scope_guard(paddle.static.Scope()):
                program, feeds, fetches = paddle.static.load_inference_model(
                    os.path.join(folder, "resaved"), exe)
                with np.load(os.path.join(folder, "inputs.npz")) as data:
                    outs = exe.run(program, feed={n: data[n] for n in feeds},
                                   fetch_list=fetches)
            np.savez(os.path.join(folder, "resaved_outputs.npz"),
                     **{str(i): o for i, o in enumerate(outs)})
        except Exception as exc:  # noqa: BLE001  recorded for the test to report per model
            with open(os.path.join(folder, "resaved_error.txt"), "w") as f:
                f.write(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    if sys.argv[1] == "--rerun":
        rerun(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2:])
