"""Real PaddlePaddle 3.3.1 reads what we write, and we read what it writes.

Paddle lives in its own virtual environment, ``.venv-paddle`` (``bash
scripts/setup_paddle_venv.sh``); these tests skip when it is absent. Paddle runs in a
subprocess (``data/io/paddle_runner.py``, argv list, paths as arguments).
"""
import json
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from data.io.programs import (HERE, add_op, add_var, fc_program, fc_scope,
                              fc_training_program, netron_minimal_program)
from fluidscope.engine import Executor, Scope
from fluidscope.engine import io as fio
from fluidscope.engine.ir.proto import framework_pb2 as pb
from paddle_oracle import needs_paddle, run_paddle_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNNER = HERE / "paddle_runner.py"

pytestmark = needs_paddle


def paddle(command, prefix, x_path, out_path):
    """Run paddle_runner.py under .venv-paddle; fail with its stderr if it fails."""
    run_paddle_file(RUNNER, command, prefix, x_path, out_path, cwd=x_path.parent)
    return np.load(str(out_path))


def mlp_program():
    """x[-1, 4] -> matmul_v2(w1[4, 8]) + b1 -> tanh -> matmul_v2(w2[8, 3]) -> softmax."""
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    add_var(b, "x", [-1, 4])
    for name, dims in (("w1", [4, 8]), ("b1", [8]), ("w2", [8, 3])):
        add_var(b, name, dims, persistable=True, is_parameter=True)
    for name, dims in (("h0", [-1, 8]), ("h1", [-1, 8]), ("h2", [-1, 8]), ("z", [-1, 3]),
                       ("prob", [-1, 3])):
        add_var(b, name, dims)
    add_op(b, "matmul_v2", {"X": ["x"], "Y": ["w1"]}, {"Out": ["h0"]})
    add_op(b, "elementwise_add", {"X": ["h0"], "Y": ["b1"]}, {"Out": ["h1"]}, axis=-1)
    add_op(b, "tanh", {"X": ["h1"]}, {"Out": ["h2"]})
    add_op(b, "matmul_v2", {"X": ["h2"], "Y": ["w2"]}, {"Out": ["z"]})
    add_op(b, "softmax", {"X": ["z"]}, {"Out": ["prob"]}, axis=-1)
    return desc


def mlp_scope():
    rng = np.random.default_rng(11)
    scope = Scope()
    for name, shape in (("w1", (4, 8)), ("b1", (8,)), ("w2", (8, 3))):
        scope.var(name).get_tensor().set(rng.standard_normal(shape).astype("float32"))
    return scope


MODELS = {
    "fc_relu_scale": (fc_program, fc_scope, "out"),
    "pruned_training_program": (fc_training_program, fc_scope, "out"),
    "mlp_matmul_tanh_softmax": (mlp_program, mlp_scope, "prob"),
}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_paddle_runs_our_inference_model(tmp_path, model):
    build, make_scope, fetch = MODELS[model]
    desc, scope = build(), make_scope()
    x = np.random.default_rng(2).standard_normal((5, 4)).astype("float32")
    prefix = tmp_path / "model"
    pruned = fio.save_inference_model_files(prefix, desc, ["x"], [fetch], scope)
    ours = Executor().run(pruned, feed={"x": x}, scope=scope)[0]
    np.save(str(tmp_path / "x.npy"), x)
    theirs = paddle("run", prefix, tmp_path / "x.npy", tmp_path / "out.npy")
    assert theirs.shape == ours.shape and theirs.dtype == ours.dtype
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)


def test_we_run_paddles_inference_model_and_paddle_reads_our_copy(tmp_path):
    x = np.random.default_rng(4).standard_normal((6, 4)).astype("float32")
    np.save(str(tmp_path / "x.npy"), x)
    theirs = paddle("make", tmp_path / "paddle", tmp_path / "x.npy", tmp_path / "out.npy")
    scope = Scope()
    desc, feeds, fetches = fio.load_inference_model_files(tmp_path / "paddle", scope)
    assert feeds == ["x"]
    ours = Executor().run(desc, feed={"x": x}, fetch_list=fetches, scope=scope)[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    # And back: our re-export of Paddle's program runs in Paddle with the same result.
    fio.save_inference_model_files(tmp_path / "again", desc, feeds, fetches, scope)
    params = (tmp_path / "paddle.pdiparams").read_bytes()
    assert (tmp_path / "again.pdiparams").read_bytes() == params
    again = paddle("run", tmp_path / "again", tmp_path / "x.npy", tmp_path / "out2.npy")
    np.testing.assert_allclose(again, theirs, rtol=1e-5, atol=1e-6)


def test_paddle_runs_a_designer_model_after_training(tmp_path):
    import fluidscope.designer as fd
    from fluidscope.designer import io as fdio

    main, startup, scope = fd.Program(), fd.Program(), fd.Scope()
    x_data = np.random.default_rng(8).standard_normal((7, 4)).astype("float32")
    with fd.unique_name.guard(), fd.program_guard(main, startup), fd.scope_guard(scope):
        x = fd.data("x", [None, 4])
        hidden = fd.dropout(fd.fc(x, 6, act="relu"), 0.25)
        prob = fd.softmax(fd.fc(hidden, 3))
        loss = fd.mean(prob)
        fd.optimizer.SGD(0.5).minimize(loss)
        exe = fd.Executor()
        exe.run(startup)
        for _ in range(3):
            exe.run(main, feed={"x": x_data}, fetch_list=[loss])
        fdio.save_inference_model(str(tmp_path / "model"), [x], [prob], exe)
        ours = exe.run(main.clone(for_test=True), feed={"x": x_data}, fetch_list=[prob])[0]
    np.save(str(tmp_path / "x.npy"), x_data)
    theirs = paddle("run", tmp_path / "model", tmp_path / "x.npy", tmp_path / "out.npy")
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- Netron
NETRON_DIRS = sorted(ROOT.glob(".venv-paddle/lib/python*/site-packages/netron"))
NODE = shutil.which("node")


def netron(model_path):
    """What Netron 9.3.3's own loaders make of ``model_path`` (data/io/netron_open.mjs)."""
    if not NETRON_DIRS or NODE is None:
        pytest.skip("needs node and the netron package in .venv-paddle "
                    "(bash scripts/setup_paddle_venv.sh)")
    done = subprocess.run([NODE, str(HERE / "netron_open.mjs"), str(NETRON_DIRS[-1]),
                           str(model_path)], capture_output=True, text=True, timeout=120)
    result = json.loads(done.stdout or "{}")
    assert done.returncode == 0 and "error" not in result, (result, done.stderr[-2000:])
    return result


def test_netron_shows_our_inference_model_with_its_weights(tmp_path):
    scope = fc_scope()
    fio.save_inference_model_files(tmp_path / "model", fc_training_program(), ["x"], ["out"],
                                   scope)
    seen = netron(tmp_path / "model.pdmodel")
    assert seen["format"] == "PaddlePaddle v3.3.1"
    (graph,) = seen["graphs"]
    assert (graph["inputs"], graph["outputs"]) == (["x"], ["out"])
    assert [n["type"] for n in graph["nodes"]] == ["mul", "elementwise_add", "dropout", "scale"]
    weights = {v["name"]: v["init"] for n in graph["nodes"] for vs in n["inputs"].values()
               for v in vs if v["init"]}
    assert sorted(weights) == ["fc_0.b_0", "fc_0.w_0"]
    for name, init in weights.items():
        value = np.asarray(scope.find_var(name).get_tensor())
        assert init["dtype"] == "float32" and init["shape"] == list(value.shape)
        np.testing.assert_array_equal(np.float32(init["values"]), value.reshape(-1))


@pytest.mark.parametrize("suffix", [".pdmodel", ".pbtxt"])
def test_netron_opens_our_program_files(tmp_path, suffix):
    path = tmp_path / f"train{suffix}"
    desc = fc_training_program()
    fio.save_program(desc, path)
    (graph,) = netron(path)["graphs"]
    assert [n["type"] for n in graph["nodes"]] == [op.type for op in desc.blocks[0].ops]
    minimal = tmp_path / f"minimal{suffix}"
    fio.save_program(netron_minimal_program(), minimal)
    seen = netron(minimal)
    assert seen["format"] == "PaddlePaddle v2.2"
    assert [n["type"] for n in seen["graphs"][0]["nodes"]] == ["mul", "elementwise_add"]


def test_paddle_runs_what_the_design_canvas_exports(tmp_path):
    """A model composed with the canvas's gestures (the calls the mouse makes) and written
    by its export action: Paddle loads model.pdmodel + model.pdiparams (the canvas's
    initialised weights) and computes what our executor computes."""
    from fluidscope.widgets import DesignCanvas

    canvas = DesignCanvas()
    x = canvas.add_node("data", 0, 0, attrs={"shape": [None, 4]})
    canvas.set_attr(x, "id", "x")
    hidden = canvas.add_node("fc", 200, 0, source="x", attrs={"size": 8, "act": "tanh"})
    prob = canvas.add_node("fc", 400, 0, source=hidden, attrs={"size": 3, "act": "softmax"})
    assert not canvas.design.build().errors
    assert canvas.receive({"action": "export", "folder": str(tmp_path)}), canvas.message

    xs = np.random.default_rng(6).standard_normal((5, 4)).astype("float32")
    np.save(str(tmp_path / "x.npy"), xs)
    scope = Scope()
    desc, feeds, fetches = fio.load_inference_model_files(tmp_path / "model", scope)
    assert feeds == ["x"] and len(fetches) == 1
    ours = Executor().run(desc, feed={"x": xs}, fetch_list=fetches, scope=scope)[0]
    theirs = paddle("run", tmp_path / "model", tmp_path / "x.npy", tmp_path / "out.npy")
    assert theirs.shape == ours.shape == (5, 3) and prob in canvas.design.nodes
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)
