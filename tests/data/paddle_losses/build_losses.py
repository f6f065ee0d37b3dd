"""Runs under .venv-paddle (paddlepaddle 3.3.1): builds the paddle.nn losses in legacy
static programs, saves them and records Paddle's loss and input gradients.

    FLAGS_enable_pir_api=0 python build_losses.py OUT_DIR [NAME ...]

One Paddle process builds every loss (importing Paddle takes seconds). Per loss,
``OUT_DIR/<name>/`` gets ``forward.pdmodel`` (the program up to the scalar loss),
``backward.pdmodel`` (the same after ``paddle.static.append_backward``), ``inputs.npz``
(feed name -> array; the manifest's ``lods`` gives the LoD of sequence feeds) and
``outputs.npz`` (``loss`` and ``<input>@GRAD`` for every input
in ``wrt``). Inputs are float64 (so the comparison can be tight) except the ``*_float32``
losses and log_loss, which Paddle computes in float32 only. ``OUT_DIR/manifest.json`` lists per loss: feeds, loss name, wrt, the op types
of the forward and of the backward program.

Paddle 3.3.1's generated paddle.sum / multiply / abs / exp / matmul and
paddle.nn.functional.sigmoid accept only dygraph
tensors and PIR values, so in legacy static mode BCELoss, L1Loss, MarginRankingLoss,
weighted CrossEntropyLoss, KLDivLoss('sum'/'batchmean'), MSELoss('sum'), sigmoid_focal_loss ... raise a
TypeError. While building, ``legacy_static_api`` stands in for those six with the ops
Paddle 2.x emitted for them (reduce_sum, elementwise_mul, abs, exp, matmul_v2, sigmoid), so the
saved programs are the ones a Paddle 2.x user saved.
"""
import collections
import contextlib
import json
import os
import sys
import warnings

os.environ["FLAGS_enable_pir_api"] = "0"

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn as nn  # noqa: E402
import paddle.nn.functional as F  # noqa: E402
from paddle.base.layer_helper import LayerHelper  # noqa: E402

paddle.enable_static()
warnings.filterwarnings("ignore")
RNG = np.random.default_rng(14)
N, C = 4, 5


# ------------------------------------------------------ Paddle 2.x static ops
def _append(op_type, inputs, attrs, dtype):
    helper = LayerHelper(op_type)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(type=op_type, inputs=inputs, outputs={"Out": out}, attrs=attrs)
    return out


def legacy_sum(x, axis=None, dtype=None, keepdim=False, name=None):
    if axis is None or axis == []:
        dims, reduce_all = [0], True
    else:
        dims, reduce_all = ([axis] if isinstance(axis, int) else list(axis)), False
    return _append("reduce_sum", {"X": x},
                   {"dim": dims, "keep_dim": keepdim, "reduce_all": reduce_all}, x.dtype)


def legacy_multiply(x, y, name=None):
    return _append("elementwise_mul", {"X": x, "Y": y}, {"axis": -1}, x.dtype)


def legacy_abs(x, name=None):
    return _append("abs", {"X": x}, {}, x.dtype)


def legacy_exp(x, name=None):
    return _append("exp", {"X": x}, {}, x.dtype)


def legacy_sigmoid(x, name=None):
    return _append("sigmoid", {"X": x}, {}, x.dtype)


def legacy_matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    return _append("matmul_v2", {"X": x, "Y": y},
                   {"trans_x": transpose_x, "trans_y": transpose_y}, x.dtype)


@contextlib.contextmanager
def legacy_static_api():
    names = {"sum": legacy_sum, "multiply": legacy_multiply, "abs": legacy_abs,
             "exp": legacy_exp, "matmul": legacy_matmul}
    saved = {n: getattr(paddle, n) for n in names}
    saved_sigmoid = F.sigmoid
    for n, fn in names.items():
        setattr(paddle, n, fn)
    F.sigmoid = legacy_sigmoid
    try:
        yield
    finally:
        for n, fn in saved.items():
            setattr(paddle, n, fn)
        F.sigmoid = saved_sigmoid


# --------------------------------------------------------------------- inputs
def data(name, value, grad=False):
    var = paddle.static.data(name, list(value.shape), str(value.dtype))
    var.stop_gradient = not grad
    return var, value


def logits(shape=(N, C)):
    return RNG.standard_normal(shape)


def probs(shape=(N, C)):
    return RNG.uniform(0.05, 0.95, shape)


def hard(shape=(N, 1), classes=C, ignore=None):
    label = RNG.integers(0, classes, shape).astype("int64")
    if ignore is not None:
        label.reshape(-1)[1::3] = ignore
    return label


def soft(shape=(N, C)):
    p = RNG.uniform(0.1, 1.0, shape)
    return p / p.sum(axis=-1, keepdims=True)


# --------------------------------------------------------------- the losses
# Each builder returns (feeds [(var, array)], the loss, wrt [vars whose gradient is kept]).
def pair(layer, x_value, y_value, y_grad=False, **feeds_more):
    def build():
        x, xv = data("x", x_value, grad=True)
        y, yv = data("y", y_value, grad=y_grad)
        more = [data(k, v) for k, v in feeds_more.items()]
        out = layer()(x, y, *[m for m, _ in more])
        return [(x, xv), (y, yv)] + more, out, [x] + ([y] if y_grad else [])
    return build


def ce(shape=(N, C), label=None, weight=False, **kw):
    def build():
        x, xv = data("x", logits(shape), grad=True)
        lab, lv = data("label", hard() if label is None else label)
        feeds = [(x, xv), (lab, lv)]
        w = None
        if weight:
            w, wv = data("weight", RNG.uniform(0.2, 1.5, shape[kw.get("axis", -1)]))
            feeds.append((w, wv))
        return feeds, nn.CrossEntropyLoss(weight=w, **kw)(x, lab), [x]
    return build


def ce_probs():
    def build():
        p, pv = data("p", probs(), grad=True)
        lab, lv = data("label", hard())
        return [(p, pv), (lab, lv)], F.cross_entropy(p, lab, use_softmax=False), [p]
    return build


def ranking(reduction):
    def build():
        a, av = data("x", logits((N, 1)), grad=True)
        b, bv = data("other", logits((N, 1)), grad=True)
        lab, lv = data("label", RNG.choice([-1.0, 1.0], (N, 1)))
        loss = nn.MarginRankingLoss(margin=0.3, reduction=reduction)(a, b, lab)
        return [(a, av), (b, bv), (lab, lv)], loss, [a, b]
    return build


def weighted_bce(layer_cls, x_value, **kw):
    def build():
        x, xv = data("x", x_value, grad=True)
        y, yv = data("y", RNG.integers(0, 2, (N, C)).astype("float64"))
        w, wv = data("weight", RNG.uniform(0.2, 1.5, (N, C)))
        extra = {}
        feeds = [(x, xv), (y, yv), (w, wv)]
        if layer_cls is nn.BCEWithLogitsLoss:
            pw, pwv = data("pos_weight", RNG.uniform(0.5, 2.0, (C,)))
            feeds.append((pw, pwv))
            extra["pos_weight"] = pw
        return feeds, layer_cls(weight=w, **extra, **kw)(x, y), [x]
    return build


def nll(shape=(N, C), weight=False, **kw):
    def build():
        x, xv = data("x", np.log(soft(shape)), grad=True)
        lab, lv = data("label", hard((shape[0],) + tuple(shape[2:]), shape[1],
                                     kw.get("ignore_index")))
        feeds = [(x, xv), (lab, lv)]
        w = None
        if weight:
            w, wv = data("weight", RNG.uniform(0.2, 1.5, (shape[1],)))
            feeds.append((w, wv))
        return feeds, nn.NLLLoss(weight=w, **kw)(x, lab), [x]
    return build


def kl(reduction, log_target=False):
    target = np.log(soft()) if log_target else soft()
    return pair(lambda: nn.KLDivLoss(reduction, log_target=log_target),
                np.log(soft()), target)


def log_loss():
    def build():  # Paddle registers log_loss for float32 only
        p, pv = data("p", probs((N, 1)).astype("float32"), grad=True)
        y, yv = data("y", RNG.integers(0, 2, (N, 1)).astype("float32"))
        return [(p, pv), (y, yv)], F.log_loss(p, y, epsilon=1e-4), [p]
    return build


def label_smooth_prior():
    def build():  # F.label_smooth marks its output stop_gradient: labels only
        x, xv = data("x", logits(), grad=True)
        one_hot, one_hot_value = data("one_hot", np.eye(C)[RNG.integers(0, C, N)])
        prior, prior_value = data("prior", soft((1, C)))
        label = F.label_smooth(one_hot, prior_dist=prior, epsilon=0.2)
        loss = F.cross_entropy(x, label, soft_label=True)
        return [(x, xv), (one_hot, one_hot_value), (prior, prior_value)], loss, [x]
    return build


def ctc(reduction, norm_by_times=False):
    def build():  # F.ctc_loss: warpctc on padded [T, N, C+1] logits, lengths per sequence
        lp, lpv = data("log_probs", RNG.standard_normal((6, 3, C)), grad=True)
        lab, labv = data("labels", RNG.integers(1, C, (3, 3)).astype("int32"))
        il, ilv = data("input_lengths", np.array([6, 4, 5], "int64"))
        ll, llv = data("label_lengths", np.array([3, 1, 2], "int64"))
        loss = nn.CTCLoss(blank=0, reduction=reduction)(lp, lab, il, ll,
                                                        norm_by_times=norm_by_times)
        return [(lp, lpv), (lab, labv), (il, ilv), (ll, llv)], loss, [lp]
    return build


class Seq:
    """A fed value with one LoD level: ``value`` rows split by ``offsets``."""
    def __init__(self, value, lengths):
        self.value, self.offsets = value, [int(v) for v in np.cumsum([0] + lengths)]


def ctc_lod(norm_by_times):
    def build():  # the warpctc of fluid-era programs: sequences (LoD), no length inputs
        logit_lengths, label_lengths = [5, 3, 4], [2, 1, 3]
        lp = paddle.static.data("logits", [-1, C], "float64", lod_level=1)
        lp.stop_gradient = False
        lab = paddle.static.data("label", [-1, 1], "int32", lod_level=1)
        helper = LayerHelper("warpctc")
        loss = helper.create_variable_for_type_inference("float64")
        grad = helper.create_variable_for_type_inference("float64")
        helper.append_op(type="warpctc", inputs={"Logits": lp, "Label": lab},
                         outputs={"Loss": loss, "WarpCTCGrad": grad},
                         attrs={"blank": C - 1, "norm_by_times": norm_by_times})
        logits_value = RNG.standard_normal((sum(logit_lengths), C))
        label_value = RNG.integers(0, C - 1, (sum(label_lengths), 1)).astype("int32")
        return ([(lp, Seq(logits_value, logit_lengths)), (lab, Seq(label_value, label_lengths))],
                loss, [lp])
    return build


def focal(reduction, normalizer=False):
    def build():  # F.sigmoid_focal_loss: sigmoid_cross_entropy_with_logits inside
        x, xv = data("x", logits(), grad=True)
        y, yv = data("y", RNG.integers(0, 2, (N, C)).astype("float64"))
        feeds = [(x, xv), (y, yv)]
        norm = None
        if normalizer:
            norm, normv = data("normalizer", np.array([3.0]))
            feeds.append((norm, normv))
        loss = F.sigmoid_focal_loss(x, y, normalizer=norm, alpha=0.3, gamma=1.5,
                                    reduction=reduction)
        return feeds, loss, [x]
    return build


def raw(op_type, inputs, out_slot, attrs=None, extra_outputs=()):
    """One loss op appended directly, as fluid-era layers emitted it (no paddle.nn API
    emits it in 3.3.1): ``inputs`` slot -> (value, takes a gradient)."""
    def build():
        feeds, slots, wrt = [], {}, []
        for slot, (value, grad) in inputs.items():
            var, value = data(slot.lower(), value, grad=grad)
            feeds.append((var, value))
            slots[slot] = var
            if grad:
                wrt.append(var)
        dtype = next(v.dtype for v, _ in feeds if v.dtype in (paddle.float32, paddle.float64))
        helper = LayerHelper(op_type)
        outputs = {s: helper.create_variable_for_type_inference(dtype)
                   for s in (out_slot,) + tuple(extra_outputs)}
        helper.append_op(type=op_type, inputs=slots, outputs=outputs, attrs=attrs or {})
        return feeds, outputs[out_slot], wrt
    return build


LOSSES = {
    "ce_hard": ce(),
    "ce_hard_flat_label": ce(label=hard((N,))),
    "ce_none": ce(reduction="none"),
    "ce_sum": ce(reduction="sum"),
    "ce_soft": ce(label=soft(), soft_label=True),
    "ce_soft_sum": ce(label=soft(), soft_label=True, reduction="sum"),
    "ce_weight_mean": ce(weight=True),
    "ce_weight_sum": ce(weight=True, reduction="sum"),
    "ce_weight_none": ce(weight=True, reduction="none"),
    "ce_soft_weight": ce(label=soft(), soft_label=True, weight=True),
    "ce_ignore_index": ce(label=hard(ignore=2), ignore_index=2),
    "ce_weight_ignore_index": ce(label=hard(ignore=2), ignore_index=2, weight=True),
    "ce_label_smoothing": ce(label=hard((N,)), label_smoothing=0.1),
    "ce_axis1": ce(shape=(N, C, 3), label=hard((N, 1, 3)), axis=1),
    "ce_axis1_weight": ce(shape=(N, C, 3), label=hard((N, 1, 3)), axis=1, weight=True),
    "ce_use_softmax_false": ce_probs(),
    "mse_mean": pair(nn.MSELoss, logits(), logits(), y_grad=True),
    "mse_sum": pair(lambda: nn.MSELoss("sum"), logits(), logits(), y_grad=True),
    "mse_none": pair(lambda: nn.MSELoss("none"), logits(), logits(), y_grad=True),
    "l1_mean": pair(nn.L1Loss, logits(), logits(), y_grad=True),
    "l1_sum": pair(lambda: nn.L1Loss("sum"), logits(), logits(), y_grad=True),
    "l1_none": pair(lambda: nn.L1Loss("none"), logits(), logits(), y_grad=True),
    "smooth_l1_mean": pair(nn.SmoothL1Loss, 2 * logits(), logits(), y_grad=True),
    "smooth_l1_sum_delta": pair(lambda: nn.SmoothL1Loss("sum", delta=0.5), 2 * logits(),
                                logits(), y_grad=True),
    "smooth_l1_none": pair(lambda: nn.SmoothL1Loss("none"), 2 * logits(), logits(),
                           y_grad=True),
    "margin_ranking_mean": ranking("mean"),
    "margin_ranking_sum": ranking("sum"),
    "margin_ranking_none": ranking("none"),
    "bce_mean": pair(nn.BCELoss, probs(), RNG.integers(0, 2, (N, C)).astype("float64")),
    "bce_sum": pair(lambda: nn.BCELoss(reduction="sum"), probs(), probs()),
    "bce_none": pair(lambda: nn.BCELoss(reduction="none"), probs(), probs()),
    "bce_weight": weighted_bce(nn.BCELoss, probs()),
    "bce_logits_mean": pair(nn.BCEWithLogitsLoss, logits(), probs()),
    "bce_logits_sum": pair(lambda: nn.BCEWithLogitsLoss(reduction="sum"), logits(), probs()),
    "bce_logits_none": pair(lambda: nn.BCEWithLogitsLoss(reduction="none"), logits(),
                            probs()),
    "bce_logits_weight_pos_weight": weighted_bce(nn.BCEWithLogitsLoss, logits()),
    "nll_mean": nll(),
    "nll_sum": nll(reduction="sum"),
    "nll_none": nll(reduction="none"),
    "nll_weight": nll(weight=True),
    "nll_ignore_index_none": nll(weight=True, ignore_index=1, reduction="none"),
    "nll_4d": nll(shape=(2, C, 2, 3)),
    "nll_4d_weight_none": nll(shape=(2, C, 2, 3), weight=True, reduction="none"),
    "kl_mean": kl("mean"),
    "kl_batchmean": kl("batchmean"),
    "kl_sum": kl("sum"),
    "kl_none": kl("none"),
    "kl_log_target": kl("mean", log_target=True),
    "log_loss_float32": log_loss(),
    "label_smooth_prior": label_smooth_prior(),
    "ce_float32": pair(nn.CrossEntropyLoss, logits().astype("float32"), hard()),
    "bce_logits_float32": pair(nn.BCEWithLogitsLoss, logits().astype("float32"),
                               probs().astype("float32")),
    "ctc_mean": ctc("mean"),
    "ctc_sum": ctc("sum"),
    "ctc_none_norm_by_times": ctc("none", norm_by_times=True),
    "sigmoid_focal_mean": focal("mean"),
    "sigmoid_focal_sum_normalizer": focal("sum", normalizer=True),
    "op_cross_entropy_hard": raw("cross_entropy", {"X": (soft(), True),
                                                    "Label": (hard(ignore=2), False)},
                                 "Y", {"ignore_index": 2}),
    "op_cross_entropy_soft": raw("cross_entropy", {"X": (soft(), True), "Label": (soft(), False)},
                                 "Y", {"soft_label": True}),
    "op_hinge_loss": raw("hinge_loss", {"Logits": (logits((N, 1)).astype("float32"), True),
                                        "Labels": (RNG.integers(0, 2, (N, 1)).astype("float32"),
                                                   False)}, "Loss"),
    "op_label_smooth": raw("label_smooth", {"X": (probs(), True), "PriorDist": (soft((1, C)),
                                                                               False)},
                           "Out", {"epsilon": 0.1}),
    "op_huber_loss": raw("huber_loss", {"X": (logits(), True), "Y": (logits(), True)}, "Out",
                         {"delta": 0.7}, extra_outputs=("Residual",)),
    "op_sigmoid_ce_pos_weight": raw(
        "sigmoid_cross_entropy_with_logits",
        {"X": (logits(), True), "Label": (hard((N, C), 2, -1).astype("float64"), False),
         "pos_weight": (RNG.uniform(0.5, 2.0, (N, C)), False)},
        "Out", {"ignore_index": -1, "normalize": True}),
    "op_nll_loss_ignore_first_row": raw(
        "nll_loss", {"X": (np.log(soft()), True), "Label": (np.array([3, 0, 4, 1]), False),
                     "Weight": (RNG.uniform(0.2, 1.5, (C,)), False)},
        "Out", {"ignore_index": 3}, extra_outputs=("Total_weight",)),
    "warpctc_lod": ctc_lod(False),
    "warpctc_lod_norm_by_times": ctc_lod(True),
    "mse_float32": pair(nn.MSELoss, logits().astype("float32"), logits().astype("float32"),
                        y_grad=True),
}


# ---------------------------------------------------------------- build + save
def op_types(program):
    return dict(collections.Counter(op.type for op in program.global_block().ops))


def build(name, out_dir):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), legacy_static_api():
        feeds, loss, wrt = LOSSES[name]()
        if len(loss.shape):  # reduction 'none': the scalar backward starts from
            loss = paddle.mean(loss)
    forward = main.clone()
    with open(os.path.join(folder, "forward.pdmodel"), "wb") as f:
        f.write(forward.desc.serialize_to_string())
    with paddle.static.program_guard(main, startup):
        paddle.static.append_backward(loss)
    with open(os.path.join(folder, "backward.pdmodel"), "wb") as f:
        f.write(main.desc.serialize_to_string())
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    inputs = {var.name: getattr(value, "value", value) for var, value in feeds}
    lods = {var.name: value.offsets for var, value in feeds if isinstance(value, Seq)}
    feed = {name: value for name, value in inputs.items()}
    for name, offsets in lods.items():
        tensor = paddle.base.core.LoDTensor()
        tensor.set(inputs[name], paddle.CPUPlace())
        tensor.set_lod([offsets])
        feed[name] = tensor
    grads = [f"{v.name}@GRAD" for v in wrt]
    outs = exe.run(main, feed=feed, fetch_list=[loss.name] + grads, return_numpy=False)
    outs = [np.array(t) for t in outs]  # a sequence input's gradient carries its LoD
    np.savez(os.path.join(folder, "inputs.npz"), **inputs)
    np.savez(os.path.join(folder, "outputs.npz"), loss=outs[0],
             **dict(zip(grads, outs[1:])))
    return {"feeds": list(inputs), "lods": lods, "loss": loss.name,
            "wrt": [v.name for v in wrt], "ops": op_types(forward),
            "backward_ops": op_types(main)}


def main(out_dir, names):
    manifest = {name: build(name, out_dir) for name in names or LOSSES}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
