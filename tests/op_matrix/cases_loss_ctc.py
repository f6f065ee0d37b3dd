"""Cases for ``warpctc`` (kernels/loss_ctc.py), the CTC loss of paddle.nn.CTCLoss.

The reference enumerates every alignment path (C^T of them, so the cases stay tiny) and
keeps those that collapse to the label: loss = -log of their total probability, and
WarpCTCGrad = softmax - (probability of the paths through class k at step t) / total.
It shares nothing with the kernel's alpha-beta recursions.

The ``paddle_*`` cases port test/legacy_test/test_warpctc_op.py: its sequence and label
lengths (including a 3-step sequence with 4 labels, which warp-ctc scores 0 with no
gradient), blank = C - 1, the LoD and the padded forms, float64; fewer classes.

Checked against PaddlePaddle 3.3.1 itself (warpctc appended directly to a legacy static
program, float64): Loss, WarpCTCGrad and the Logits gradient matched to 2e-15 in the
padded form (blank 0, Loss@GRAD 0.5, 1 and per-sequence seeds, with and without
norm_by_times), in the LoD form with blank 3 and norm_by_times, and with an infeasible
sequence (loss 0, gradient 0); the padded cases run in float32 matched to rtol 2e-5
(outputs and gradients). Kept from Paddle: norm_by_times scales by 1 / T_n computed
in float32 for LoD input (float64 runs too) but in the gradient's dtype for padded input.
"""
import itertools
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import ExecutionError, ShapeError
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase


def _softmax(row):
    e = np.exp(row - row.max())
    return e / e.sum()


def _collapse(path, blank):
    out, prev = [], None
    for k in path:
        if k != prev and k != blank:
            out.append(k)
        prev = k
    return out


def _brute_force(logits, label, blank):
    """(loss, d loss / d logits) of one sequence [T, C] by enumerating alignments."""
    steps, classes = logits.shape
    probs = np.array([_softmax(r) for r in logits])
    total, through = 0.0, np.zeros_like(probs)
    for path in itertools.product(range(classes), repeat=steps):
        if _collapse(path, blank) != list(label):
            continue
        p = math.prod(probs[t, k] for t, k in enumerate(path))
        total += p
        for t, k in enumerate(path):
            through[t, k] += p
    if total == 0:  # too short for its labels: warp-ctc scores 0, no gradient
        return 0.0, np.zeros_like(probs)
    return -math.log(total), probs - through / total


def _sequences(i):
    """[(logits [T_n, C], label list)] of either input form."""
    logits, label = i["Logits"], i["Label"]
    if i.get("LogitsLength") is None:
        t_off, l_off = logits.lod()[-1], label.lod()[-1]
        x, y = logits.numpy(), label.numpy().reshape(-1)
        return [(x[a:b], y[c:d]) for a, b, c, d in zip(t_off, t_off[1:], l_off, l_off[1:])]
    return [(logits[:t, n], label[n, :l_n])
            for n, (t, l_n) in enumerate(zip(i["LogitsLength"], i["LabelLength"]))]


def _ctc_ref(i, a):
    seqs = _sequences(i)
    t_max = max(len(x) for x, _ in seqs)
    classes = seqs[0][0].shape[1]
    loss = np.zeros((len(seqs), 1))
    grad = np.zeros((t_max, len(seqs), classes))
    for n, (x, y) in enumerate(seqs):
        loss[n, 0], g = _brute_force(x, y, a.get("blank", 0))
        grad[:len(x), n] = g
    return {"Loss": loss, "WarpCTCGrad": grad}


def _lod_case(name, logit_lengths, label_lengths, classes, blank, norm_by_times=False):
    # norm_by_times scales the gradient only: not d Loss / d Logits, so no gradient check
    gen = np.random.default_rng(len(name) + 1000)
    logits = gen.uniform(0.1, 1.0, (sum(logit_lengths), classes))
    labels = gen.choice([k for k in range(classes) if k != blank],
                        (sum(label_lengths), 1)).astype(np.int32)
    return OpCase("warpctc", {"Logits": LoDTensor(logits, [list(np.cumsum([0] + logit_lengths))]),
                              "Label": LoDTensor(labels, [list(np.cumsum([0] + label_lengths))])},
                  _ctc_ref, attrs={"blank": blank, "norm_by_times": norm_by_times},
                  grad_outputs=("Loss",), grad=() if norm_by_times else "auto", name=name)


def _padded_case(name, logit_lengths, label_lengths, classes, blank, norm_by_times=False,
                 check=None):
    gen = np.random.default_rng(len(name) + 1100)
    batch = len(logit_lengths)
    logits = np.zeros((max(logit_lengths), batch, classes))
    labels = np.zeros((batch, max(label_lengths)), np.int32)
    for n, (t, l_n) in enumerate(zip(logit_lengths, label_lengths)):
        logits[:t, n] = gen.uniform(0.1, 1.0, (t, classes))
        labels[n, :l_n] = gen.choice([k for k in range(classes) if k != blank], l_n)
    return OpCase("warpctc", {"Logits": logits, "Label": labels,
                              "LogitsLength": np.array(logit_lengths, np.int64),
                              "LabelLength": np.array(label_lengths, np.int64)},
                  _ctc_ref, attrs={"blank": blank, "norm_by_times": norm_by_times},
                  grad_outputs=("Loss",), grad=() if norm_by_times else "auto", check=check,
                  name=name)


def _check_errors(outs, i, a):
    with pytest.raises(ShapeError, match="warpctc: blank 4 is not a class"):
        run_op("warpctc", i, dict(a, blank=i["Logits"].shape[2]))
    with pytest.raises(ExecutionError, match="op warpctc: lengths"):
        run_op("warpctc", dict(i, LogitsLength=i["LogitsLength"] + 9), a)


def _check_norm_by_times(outs, i, a):
    """Logits@GRAD = WarpCTCGrad * Loss@GRAD / T_n (padded input: 1 / T_n in float64)."""
    dloss = np.arange(1.0, 1.0 + len(i["LogitsLength"])).reshape(-1, 1)
    got = run_op("warpctc_grad", {"Logits": i["Logits"], "LogitsLength": i["LogitsLength"],
                                  "WarpCTCGrad": outs["WarpCTCGrad"], "Loss@GRAD": dloss},
                 a)["Logits@GRAD"]
    inverse = 1.0 / i["LogitsLength"]
    want = outs["WarpCTCGrad"] * (dloss.reshape(1, -1, 1) * inverse.reshape(1, -1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-15)


CASES = [
    # TestWarpCTCOp: LoD [4, 1, 3, 3] / labels [3, 1, 4, 4] (the third is infeasible)
    _lod_case("paddle_TestWarpCTCOp", [4, 1, 3, 3], [3, 1, 4, 4], 4, 3),
    # TestWarpCTCOpWithPadding: the same lengths, padded
    _padded_case("paddle_WithPadding", [4, 1, 3, 3], [3, 1, 4, 4], 4, 3,
                 check=_check_errors),
    # TestWarpCTCOpFp64: [4, 1, 5, 5] / [3, 1, 4, 2], padded
    _padded_case("paddle_Fp64", [4, 1, 5, 5], [3, 1, 4, 2], 3, 2),
    _padded_case("blank_0_norm_by_times", [3, 4, 2], [1, 2, 1], 4, 0, norm_by_times=True,
                 check=_check_norm_by_times),
    _lod_case("lod_norm_by_times_repeats", [4, 3], [2, 2], 3, 0, norm_by_times=True),
    _padded_case("empty_label", [3, 2], [0, 1], 3, 0),
]


def _float32(case):
    case.inputs["Logits"] = case.inputs["Logits"].astype(np.float32)
    case.grad, case.rtol, case.atol, case.name = (), 1e-5, 1e-6, case.name + "_float32"
    case.check = _check_float32_kept
    return case


def _check_float32_kept(outs, i, a):
    assert outs["Loss"].dtype == np.float32 and outs["WarpCTCGrad"].dtype == np.float32


CASES.append(_float32(_padded_case("paddle_Fp64", [4, 1, 5, 5], [3, 1, 4, 2], 3, 2)))

NOT_PORTED = {
    "TestWarpCTCOpCase1": "num_classes = CUDA_BLOCK_SIZE + 2 sizes the CUDA kernel's block; "
                          "the CPU path is TestWarpCTCOp's (ported), and the brute-force "
                          "reference needs few classes",
    "TestWarpCTCOpWithPaddingCase1": "as TestWarpCTCOpCase1, padded",
    "TestWarpCTCOpError": "Python API type errors of paddle.nn.functional.ctc_loss "
                          "(numpy arrays instead of variables)",
    "TestCTCLossAPICase": "paddle.nn.CTCLoss dygraph API (its reductions are elementwise ops "
                          "around warpctc)",
}
