"""Our fused ``lstm`` / ``gru`` against real PaddlePaddle 3.3.1: forward and gradients.

Paddle runs in its own virtual environment (``.venv-paddle``) in a subprocess, as in
test_paddle_compat.py; the script it runs is written to a temporary folder, and arrays
go both ways as .npz files (no pickle). Skipped when the venv is absent.
"""
import json

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import analytic_grads, run_op
from fluidscope.engine.runtime.tensor import LoDTensor
from paddle_oracle import needs_paddle, run_paddle

pytestmark = needs_paddle

LOD = [0, 3, 4, 9, 11]  # lengths 3, 1, 5, 2: no ties, one sequence of length 1
D = 3

# name: (op, attrs, input slots given)
CASES = {
    "lstm_peepholes_h0_c0": ("lstm", {}, ("H0", "C0")),
    "lstm_no_peepholes": ("lstm", {"use_peepholes": False}, ()),
    "lstm_peepholes_reverse": ("lstm", {"is_reverse": True}, ("C0",)),
    "gru_default_h0": ("gru", {}, ("H0",)),
    "gru_origin_mode_reverse": ("gru", {"origin_mode": True, "is_reverse": True}, ()),
}

PADDLE_SCRIPT = r'''
import json, sys
import numpy as np
import paddle
from paddle.base import core

paddle.enable_static()
spec, data = json.loads(sys.argv[1]), dict(np.load(sys.argv[2]))
op_type, attrs, lod = spec["op"], spec["attrs"], spec["lod"]
outs = ["Hidden", "Cell", "BatchGate", "BatchCellPreAct"] if op_type == "lstm" else [
    "BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"]
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    block = main.global_block()
    ins = {}
    for slot in spec["slots"]:
        var = block.create_var(name=slot.lower(), shape=list(data[slot].shape), dtype="float64",
                               lod_level=1 if slot == "Input" else 0)
        var.stop_gradient = False
        ins[slot] = var
    out_vars = {s: block.create_var(name=s.lower(), dtype="float64") for s in outs}
    block.append_op(type=op_type, inputs=ins, outputs=out_vars, attrs=attrs)
    seed = block.create_var(name="seed", shape=list(data["seed"].shape), dtype="float64")
    weighted = block.create_var(name="weighted", dtype="float64")
    loss = block.create_var(name="loss", shape=[], dtype="float64")
    # raw ops: paddle.sum / paddle.multiply take only PIR values in 3.3.1
    block.append_op(type="elementwise_mul", inputs={"X": out_vars["Hidden"], "Y": seed},
                    outputs={"Out": weighted}, attrs={"axis": -1})
    block.append_op(type="reduce_sum", inputs={"X": weighted}, outputs={"Out": loss},
                    attrs={"reduce_all": True, "dim": [], "keep_dim": False})
    paddle.static.append_backward(loss)
feed = {}
for slot in spec["slots"] + ["seed"]:
    tensor = core.DenseTensor()
    tensor.set(data[slot], paddle.CPUPlace())
    if slot == "Input":
        tensor.set_lod([lod])
    feed[slot.lower() if slot != "seed" else "seed"] = tensor
names = ["hidden"] + [s.lower() + "@GRAD" for s in spec["slots"]]
got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=names,
                                                    return_numpy=False)
np.savez(sys.argv[3], **{n: np.array(v) for n, v in zip(["Hidden"] + spec["slots"], got)})
'''


def _inputs(op, attrs, states, rng):
    k = 4 if op == "lstm" else 3
    inputs = {"Input": rng.uniform(-1, 1, (LOD[-1], k * D)),
              "Weight": rng.uniform(-0.7, 0.7, (D, k * D))}
    peep = op == "lstm" and attrs.get("use_peepholes", True)
    inputs["Bias"] = rng.uniform(-0.5, 0.5, (1, (7 if peep else k) * D))
    for slot in states:
        inputs[slot] = rng.uniform(-1, 1, (len(LOD) - 1, D))
    return inputs


def _paddle(tmp_path, op, attrs, inputs, seed):
    data_path, out_path = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(data_path, seed=seed, **inputs)
    spec = {"op": op, "attrs": attrs, "lod": LOD, "slots": list(inputs)}
    run_paddle(PADDLE_SCRIPT, tmp_path, json.dumps(spec), data_path, out_path,
               name="run_paddle_rnn.py")
    with np.load(out_path) as got:
        return {k: got[k] for k in got.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_gradients_equal_paddles(tmp_path, name):
    op, attrs, states = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    inputs = _inputs(op, attrs, states, rng)
    seed = rng.uniform(0.5, 1.5, (LOD[-1], D))
    paddle = _paddle(tmp_path, op, attrs, inputs, seed)

    ours_in = dict(inputs, Input=LoDTensor(inputs["Input"], [LOD]))
    hidden = run_op(op, ours_in, attrs)["Hidden"]
    np.testing.assert_allclose(hidden, paddle["Hidden"], rtol=1e-5, atol=1e-8,
                               err_msg=f"{name}: Hidden")
    grads = analytic_grads(op, ours_in, attrs, {"Hidden": seed}, list(inputs))
    for slot in inputs:
        np.testing.assert_allclose(grads[slot], paddle[slot], rtol=1e-5, atol=1e-8,
                                   err_msg=f"{name}: gradient of {slot}")
