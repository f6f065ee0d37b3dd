"""Write notebooks/data/resnet_small.*: a small ResNet-style model saved by PaddlePaddle itself.

Notebook 07 opens this file to show that a model made by Paddle, not by fluidscope, reads
back as layers, draws, runs, and gives Paddle's numbers. Run it once with the Paddle oracle
(scripts/setup_paddle_venv.sh makes .venv-paddle); its outputs are committed::

    FLAGS_enable_pir_api=0 GLOG_minloglevel=3 .venv-paddle/bin/python scripts/make_resnet_model.py

Legacy static mode (``FLAGS_enable_pir_api=0``) so that ``save_inference_model`` writes a
ProgramDesc (``.pdmodel``) and combined parameters (``.pdiparams``); PIR would write JSON.

The network, for 3 x 16 x 16 images and 10 classes (5,410 weights and batch-norm statistics; 36 KB of files):

    stem:    conv 3x3 (8) - batch_norm - relu
    block 1: conv 3x3 (8) - bn - relu - conv 3x3 (8) - bn, + the input, relu
    block 2: conv 3x3 stride 2 (16) - bn - relu - conv 3x3 (16) - bn,
             + a 1x1 stride 2 projection (conv - bn) of the input, relu
    head:    global average pool - flatten - fc (10, softmax)

Random weights, and batch-norm scales, shifts and running statistics moved away from
their initial 1 / 0 so that every one of them changes the result. The files written:

    resnet_small.pdmodel / .pdiparams   the inference program and its parameters
    resnet_small_input.npy              a fixed input, float32 [4, 3, 16, 16]
    resnet_small_output.npy             Paddle's output for it, float32 [4, 10]
"""
from __future__ import annotations

import os

import numpy as np
import paddle
import paddle.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "notebooks", "data")
PREFIX = "resnet_small"


def conv_bn(x, filters, size, stride=1, act=True):
    """conv (no bias: the batch norm's shift is the bias) then batch_norm (inference)."""
    y = paddle.static.nn.conv2d(x, filters, size, stride=stride, padding=size // 2,
                                bias_attr=False)
    return paddle.static.nn.batch_norm(y, act="relu" if act else None, is_test=True)


def residual(x, filters, stride):
    """Two 3x3 conv-bn, added to the input (or to its 1x1 projection when the shape
    changes), then relu."""
    h = conv_bn(conv_bn(x, filters, 3, stride), filters, 3, act=False)
    shortcut = x if stride == 1 and x.shape[1] == filters else conv_bn(x, filters, 1, stride,
                                                                      act=False)
    return F.relu(paddle.add(h, shortcut))


def main():
    paddle.enable_static()
    paddle.seed(0)
    program, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(program, startup):
        image = paddle.static.data("image", [None, 3, 16, 16], "float32")
        h = conv_bn(image, 8, 3)
        h = residual(h, 8, 1)
        h = residual(h, 16, 2)
        h = paddle.flatten(F.adaptive_avg_pool2d(h, 1), 1)
        probs = paddle.static.nn.fc(h, 10, activation="softmax")
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    rng = np.random.default_rng(0)
    for var in program.list_vars():  # batch norm's scale/shift/mean/variance away from 1/0
        if var.persistable and "batch_norm" in var.name:
            tensor = scope.find_var(var.name).get_tensor()
            value = np.array(tensor)
            tensor.set((value + rng.uniform(0.1, 0.5, value.shape)).astype("float32"),
                       paddle.CPUPlace())
    os.makedirs(OUT, exist_ok=True)
    prefix = os.path.join(OUT, PREFIX)
    paddle.static.save_inference_model(prefix, [image], [probs], exe, program=program)
    x = rng.standard_normal((4, 3, 16, 16)).astype("float32")
    (out,) = exe.run(program.clone(for_test=True), feed={"image": x}, fetch_list=[probs])
    np.save(prefix + "_input.npy", x)
    np.save(prefix + "_output.npy", np.asarray(out, dtype="float32"))
    sizes = {ext: os.path.getsize(prefix + ext) for ext in (".pdmodel", ".pdiparams")}
    print(f"wrote {prefix}.* ({sizes}); output {out.shape}, rows sum to "
          f"{np.round(out.sum(axis=1), 5).tolist()}")


if __name__ == "__main__":
    main()
