"""Real models saved by PaddlePaddle 3.3.1 load in fluidscope, equal Paddle, step in the debugger.

``data/paddle_models/build_models.py`` runs once per session under ``.venv-paddle`` (one
subprocess for every model: importing Paddle is slow) and writes, per model, the legacy
``.pdmodel`` / ``.pdiparams`` files Paddle saved, the inputs and Paddle's own outputs (and,
for the training models, Paddle's parameter gradients). These tests skip when
``.venv-paddle`` is absent (``bash scripts/setup_paddle_venv.sh``).

Per inference model: ``load_inference_model_files`` -> ``Executor.run`` equals Paddle's
output (rtol 1e-4, atol scaled to the output's magnitude), then a debugger ``Session``
steps the whole program and ends with exactly the values of the run; fluidscope writes it
back and Paddle runs that copy to the same values. Per training model:
fluidscope's own ``append_backward_desc`` on Paddle's forward program, and Paddle's own
backward program run by fluidscope, both give Paddle's loss and parameter gradients.
An op fluidscope does not register fails the test naming every missing op type.
"""
import json
import pathlib
import time

import numpy as np
import pytest

from fluidscope.engine import Executor, Scope, append_backward_desc, registry
from fluidscope.engine import io as fio

from paddle_oracle import needs_paddle, run_paddle_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILDER = ROOT / "tests" / "data" / "paddle_models" / "build_models.py"

INFERENCE = ["lenet", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_25",
             "squeezenet1_0", "vgg11_bn", "static_cnn", "lstm_text", "gru_text",
             "transformer_encoder", "tiny_unet", "mlp", "lenet_jit"]
TRAINING = ["static_cnn_train", "lstm_text_train", "gru_text_train", "mlp_train",
            "mobilenet_v3_small_train", "transformer_encoder_train", "tiny_unet_train"]

pytestmark = needs_paddle


def run_builder(*args, cwd):
    """build_models.py under .venv-paddle (argv list, no shell); fails with its stderr."""
    run_paddle_file(BUILDER, *args, cwd=cwd, timeout=600)


@pytest.fixture(scope="session")
def paddle_models(tmp_path_factory):
    """Folder of every model Paddle built, and the manifest (one Paddle process)."""
    out = tmp_path_factory.mktemp("paddle_models")
    run_builder(out, cwd=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest) == sorted(INFERENCE + TRAINING), "keep the lists above in step"
    return out, manifest


@pytest.fixture(scope="session")
def resaved(paddle_models):
    """fluidscope writes every inference model it can load back as ``<name>/resaved``;
    one Paddle process runs them all. Returns {name: why fluidscope could not}."""
    folder, _ = paddle_models
    failed = {}
    for name in INFERENCE:
        try:
            scope = Scope()
            desc, feeds, fetches = fio.load_inference_model_files(folder / name / "model", scope)
            fio.save_inference_model_files(folder / name / "resaved", desc, feeds, fetches, scope)
        except Exception as exc:  # noqa: BLE001  reported by that model's test
            failed[name] = f"{type(exc).__name__}: {exc}"
    run_builder("--rerun", folder, cwd=folder)
    return failed


def require_ops(name, *op_counts):
    """Fail naming every op type of the model fluidscope does not register."""
    missing = sorted({t for counts in op_counts for t in counts
                      if t not in ("feed", "fetch") and not registry.has(t)})
    if missing:
        pytest.fail(f"model '{name}' uses op types fluidscope does not register: "
                    f"{', '.join(missing)}", pytrace=False)


def assert_close(got, want, what, floor=0.0):
    """rtol 1e-4; atol 1e-5 of the largest magnitude (float32 sums over deep nets), at
    least ``floor``."""
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != Paddle's {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=max(1e-5 * max(scale, 1e-3), floor),
                               err_msg=f"{what} differs from Paddle's")


def npz(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def step_to_end(exe, desc, feed, fetches, scope):
    """Step every op of block 0 in a debugger Session; returns (fetched values, the phase
    of each event)."""
    sess = exe.debug(desc, feed=feed, fetch_list=fetches, scope=scope)
    phases = []
    while not sess.finished:
        phases.append(sess.step().phase)
    assert len(phases) == len(sess.plan.steps)
    return sess.fetch(), phases


def assert_same(name, stepped, ran, fetches):
    for value, expected, fetch in zip(stepped, ran, fetches):
        np.testing.assert_array_equal(value, expected,
                                      err_msg=f"{name}: stepping {fetch} differs from the run")


def assert_forward_then_backward(name, phases):
    first = phases.index("backward")
    assert set(phases[:first]) == {"forward"} and set(phases[first:]) == {"backward"}, \
        f"{name}: debugger phases out of order: {phases}"


@pytest.mark.parametrize("name", INFERENCE)
def test_paddle_inference_model(paddle_models, name):
    folder, manifest = paddle_models
    entry = manifest[name]
    require_ops(name, entry["ops"])
    scope, exe = Scope(), Executor()
    desc, feeds, fetches = fio.load_inference_model_files(folder / name / "model", scope)
    assert feeds == entry["feeds"] and fetches == entry["fetches"]
    inputs = npz(folder / name / "inputs.npz")
    want = npz(folder / name / "outputs.npz")
    start = time.perf_counter()
    got = exe.run(desc, feed=inputs, fetch_list=fetches, scope=scope)
    seconds = time.perf_counter() - start
    for i, fetch in enumerate(fetches):
        assert_close(got[i], want[str(i)], f"{name}: fetch {fetch}")
    stepped, phases = step_to_end(exe, desc, inputs, fetches, scope)
    assert_same(name, stepped, got, fetches)
    assert set(phases) == {"forward"}
    print(f"{name}: run {seconds:.2f} s, {len(phases)} ops stepped")


@pytest.mark.parametrize("name", INFERENCE)
def test_paddle_runs_fluidscopes_copy(paddle_models, resaved, name):
    """fluidscope writes the loaded model back; Paddle loads that copy and computes what it
    computed with its own files. Parameters are written byte for byte as Paddle wrote them."""
    folder, manifest = paddle_models
    require_ops(name, manifest[name]["ops"])
    assert name not in resaved, f"fluidscope could not write {name} back: {resaved[name]}"
    error = folder / name / "resaved_error.txt"
    assert not error.exists(), f"Paddle cannot run fluidscope's copy of {name}: {error.read_text()}"
    assert ((folder / name / "resaved.pdiparams").read_bytes()
            == (folder / name / "model.pdiparams").read_bytes())
    want, got = npz(folder / name / "outputs.npz"), npz(folder / name / "resaved_outputs.npz")
    assert sorted(got) == sorted(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{name}: fetch {key}")


def training_setup(folder, name, program_file):
    desc = fio.load_program(folder / name / program_file)
    scope = Scope()
    for pname, value in npz(folder / name / "params.npz").items():
        scope.var(pname).get_tensor().set(value)
    return desc, scope, npz(folder / name / "inputs.npz")


def check_gradients(name, entry, got, want_loss, want_grads, how):
    """Loss and every parameter gradient. A gradient that is 0 in exact arithmetic (a
    bias before a normalization) is float noise: 1e-6 of the model's largest gradient
    bounds it (seen: 5e-8 of it)."""
    assert_close(got[0], want_loss, f"{name} ({how}): loss")
    floor = 1e-6 * max(float(np.max(np.abs(g))) for g in want_grads.values())
    for pname, grad in zip(entry["params"], got[1:]):
        assert_close(grad, want_grads[pname], f"{name} ({how}): gradient of {pname}", floor)


@pytest.mark.parametrize("name", TRAINING)
def test_fluidscope_backward_of_paddle_forward_program(paddle_models, name):
    """fluidscope's append_backward on the forward program Paddle saved gives Paddle's
    gradients; stepping the whole forward + backward program ends with the same values."""
    folder, manifest = paddle_models
    entry = manifest[name]
    require_ops(name, entry["ops"])
    no_grad = sorted({t[:-len("_grad")] for t in entry["backward_ops"] if t.endswith("_grad")}
                     - {t for t in entry["ops"] if registry.get(t).has_grad})
    if no_grad:
        pytest.fail(f"model '{name}': fluidscope has no gradient for {', '.join(no_grad)}",
                    pytrace=False)
    desc, scope, inputs = training_setup(folder, name, "forward.pdmodel")
    pairs = dict(append_backward_desc(desc, entry["loss"]))
    assert sorted(pairs) == sorted(entry["params"]), "parameters with a gradient differ"
    fetches = [entry["loss"]] + [pairs[p] for p in entry["params"]]
    want = npz(folder / name / "grads.npz")
    loss = npz(folder / name / "outputs.npz")["loss"]
    got = Executor().run(desc, feed=inputs, fetch_list=fetches, scope=scope)
    check_gradients(name, entry, got, loss, want, "fluidscope backward")
    desc, scope, inputs = training_setup(folder, name, "forward.pdmodel")
    append_backward_desc(desc, entry["loss"])
    stepped, phases = step_to_end(Executor(), desc, inputs, fetches, scope)
    assert_same(name, stepped, got, fetches)
    assert_forward_then_backward(name, phases)


@pytest.mark.parametrize("name", TRAINING)
def test_paddle_backward_program_runs_in_fluidscope(paddle_models, name):
    """Paddle's own backward ops (its grad op types, slots and attributes) run in fluidscope;
    the debugger steps them in the phases Paddle's op_role attributes give."""
    folder, manifest = paddle_models
    entry = manifest[name]
    require_ops(name, entry["backward_ops"])
    desc, scope, inputs = training_setup(folder, name, "backward.pdmodel")
    fetches = [entry["loss"]] + [f"{p}@GRAD" for p in entry["params"]]
    got = Executor().run(desc, feed=inputs, fetch_list=fetches, scope=scope)
    check_gradients(name, entry, got, npz(folder / name / "outputs.npz")["loss"],
                    npz(folder / name / "grads.npz"), "Paddle's backward ops")
    desc, scope, inputs = training_setup(folder, name, "backward.pdmodel")
    stepped, phases = step_to_end(Executor(), desc, inputs, fetches, scope)
    assert_same(name, stepped, got, fetches)
    assert_forward_then_backward(name, phases)
