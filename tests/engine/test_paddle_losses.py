"""The paddle.nn losses, as PaddlePaddle 3.3.1 saves them in static programs, run in
fluidscope to Paddle's loss values and input gradients.

``data/paddle_losses/build_losses.py`` runs once per session under ``.venv-paddle`` (one
subprocess for every loss: importing Paddle is slow). It builds each paddle.nn loss
(CrossEntropyLoss with hard/soft labels, weight, ignore_index, label_smoothing, axis 1,
use_softmax=False and the three reductions; MSELoss, L1Loss, SmoothL1Loss,
MarginRankingLoss, BCELoss, BCEWithLogitsLoss with weight and pos_weight, NLLLoss 2-D and
4-D, KLDivLoss with each reduction and log_target, CTCLoss and the LoD warpctc of
fluid-era programs; F.sigmoid_focal_loss, F.log_loss, F.label_smooth with a prior; the
``op_*`` ones append a loss op directly, as fluid-era layers did: cross_entropy (v1),
hinge_loss, label_smooth, huber_loss, sigmoid_cross_entropy_with_logits with pos_weight,
nll_loss) on
float64 inputs (a few on float32) and saves the forward program, the program after
Paddle's append_backward, the inputs and Paddle's loss and input gradients. (Paddle 3.3.1
cannot build several of them in legacy static mode; the builder stands in Paddle 2.x's
static versions of paddle.sum & co, see its docstring.) These tests skip when
``.venv-paddle`` is absent.

Per loss: Paddle's backward program (its grad op types, slots and attributes) runs in
fluidscope to Paddle's numbers, and fluidscope's own append_backward_desc on Paddle's
forward program gives them too. An op fluidscope does not register fails the test
naming every missing op type.
"""
import json
import pathlib

import numpy as np
import pytest

from fluidscope.engine import Executor, Scope, append_backward_desc, registry
from fluidscope.engine import io as fio
from fluidscope.engine.runtime.tensor import LoDTensor

from paddle_oracle import needs_paddle, run_paddle_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILDER = ROOT / "tests" / "data" / "paddle_losses" / "build_losses.py"

LOSSES = [
    "ce_hard", "ce_hard_flat_label", "ce_none", "ce_sum", "ce_soft", "ce_soft_sum",
    "ce_weight_mean", "ce_weight_sum", "ce_weight_none", "ce_soft_weight", "ce_ignore_index",
    "ce_weight_ignore_index", "ce_label_smoothing", "ce_axis1", "ce_axis1_weight",
    "ce_use_softmax_false", "mse_mean", "mse_sum", "mse_none", "l1_mean", "l1_sum", "l1_none",
    "smooth_l1_mean", "smooth_l1_sum_delta", "smooth_l1_none", "margin_ranking_mean",
    "margin_ranking_sum", "margin_ranking_none", "bce_mean", "bce_sum", "bce_none",
    "bce_weight", "bce_logits_mean", "bce_logits_sum", "bce_logits_none",
    "bce_logits_weight_pos_weight", "nll_mean", "nll_sum", "nll_none", "nll_weight",
    "nll_ignore_index_none", "nll_4d", "nll_4d_weight_none", "kl_mean", "kl_batchmean",
    "kl_sum", "kl_none", "kl_log_target", "log_loss_float32", "label_smooth_prior",
    "ce_float32", "bce_logits_float32", "mse_float32", "ctc_mean", "ctc_sum",
    "ctc_none_norm_by_times", "warpctc_lod", "warpctc_lod_norm_by_times",
    "sigmoid_focal_mean", "sigmoid_focal_sum_normalizer", "op_cross_entropy_hard",
    "op_cross_entropy_soft", "op_hinge_loss", "op_label_smooth", "op_huber_loss",
    "op_sigmoid_ce_pos_weight", "op_nll_loss_ignore_first_row",
]

pytestmark = needs_paddle


@pytest.fixture(scope="session")
def paddle_losses(tmp_path_factory):
    """Folder of every loss Paddle built, and the manifest (one Paddle process, argv list)."""
    out = tmp_path_factory.mktemp("paddle_losses")
    run_paddle_file(BUILDER, out, cwd=out, timeout=600)
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest) == sorted(LOSSES), "keep LOSSES in step with build_losses.py"
    return out, manifest


def npz(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def feeds(folder, name, entry):
    """The inputs Paddle was fed; sequence inputs as LoDTensors with their LoD."""
    inputs = npz(folder / name / "inputs.npz")
    for feed, offsets in entry.get("lods", {}).items():
        inputs[feed] = LoDTensor(inputs[feed], [offsets])
    return inputs


def require_ops(name, counts):
    missing = sorted(t for t in counts if not registry.has(t))
    if missing:
        pytest.fail(f"loss '{name}' uses op types fluidscope does not register: "
                    f"{', '.join(missing)}", pytrace=False)


def check(name, entry, got, want):
    """Loss and every input gradient: float64 to rtol 1e-9, float32 to rtol 1e-5."""
    names = ["loss"] + [f"{v}@GRAD" for v in entry["wrt"]]
    for key, value in zip(names, got):
        expected = want[key]
        assert np.shape(value) == np.shape(expected), f"{name}: {key} shape"
        assert np.asarray(value).dtype == expected.dtype, f"{name}: {key} dtype"
        tight = expected.dtype == np.float64
        np.testing.assert_allclose(value, expected, rtol=1e-9 if tight else 1e-5,
                                   atol=1e-12 if tight else 1e-6,
                                   err_msg=f"{name}: {key} differs from Paddle's")


def fetches(entry):
    return [entry["loss"]] + [f"{v}@GRAD" for v in entry["wrt"]]


@pytest.mark.parametrize("name", LOSSES)
def test_paddle_backward_program_runs_in_fluidscope(paddle_losses, name):
    folder, manifest = paddle_losses
    entry = manifest[name]
    require_ops(name, entry["backward_ops"])
    desc = fio.load_program(folder / name / "backward.pdmodel")
    got = Executor().run(desc, feed=feeds(folder, name, entry),
                         fetch_list=fetches(entry), scope=Scope())
    check(name, entry, got, npz(folder / name / "outputs.npz"))


@pytest.mark.parametrize("name", LOSSES)
def test_fluidscope_backward_of_paddle_forward_program(paddle_losses, name):
    folder, manifest = paddle_losses
    entry = manifest[name]
    require_ops(name, entry["ops"])
    desc = fio.load_program(folder / name / "forward.pdmodel")
    append_backward_desc(desc, entry["loss"])
    got = Executor().run(desc, feed=feeds(folder, name, entry),
                         fetch_list=fetches(entry), scope=Scope())
    check(name, entry, got, npz(folder / name / "outputs.npz"))
