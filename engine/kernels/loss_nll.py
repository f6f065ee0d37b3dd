"""Class-index losses of paddle.nn and the fluid layers: ``nll_loss`` (NLLLoss),
``cross_entropy`` (the v1 op of fluid.layers.cross_entropy: X holds probabilities) and
``label_smooth`` (F.label_smooth, which F.cross_entropy emits for label_smoothing > 0).

Hard labels are checked with loss.checked_labels (ignore_index rows cost 0, any other
label outside [0, C) raises); gathers and scatters go through loss.flat_positions so one
kernel serves numpy and cupy. Grad ops read the slots of Paddle 3.3.1's grad op descs.
"""
import numpy as np

from ..ir.names import grad_name
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register, standard_grad_maker
from .loss import checked_labels, flat_positions, register_grad

_APPROX_INF = 1e20  # Paddle's TolerableValue: log 0 = -1e20, not -inf


# ------------------------------------------------------------------ nll_loss
def _nll_pick(xp, op, x, label, weight, ignore_index):
    """(flat positions in X of each label, per-label weight with ignored rows 0, keep
    mask or None)."""
    label, keep = checked_labels(xp, op, label, x.shape[1], ignore_index)
    flat = flat_positions(xp, x.shape, 1, label.reshape(label.shape[:1] + (1,) + label.shape[1:]))
    w = xp.take(weight, label) if weight is not None else xp.ones(label.shape, dtype=x.dtype)
    if keep is not None:
        w = w * keep
    return flat.reshape(label.shape), w.astype(x.dtype), keep


def _nll(xp, attrs, x, label, weight):
    flat, w, _ = _nll_pick(xp, "nll_loss", x, label, weight, attrs["ignore_index"])
    losses = -xp.take(x, flat) * w
    if attrs["reduction"] == "none":
        return losses, xp.zeros((), dtype=x.dtype)  # Paddle leaves Total_weight 0 here
    total = w.sum()
    out = losses.sum()
    if attrs["reduction"] == "mean" and float(total) != 0:
        out = out / total  # Paddle: a mean over no weight stays the (zero) sum
    return xp.asarray(out, dtype=x.dtype).reshape(()), xp.asarray(total, dtype=x.dtype).reshape(())


def _nll_grad(xp, attrs, x, label, weight, total_weight, dout):
    flat, w, keep = _nll_pick(xp, "nll_loss_grad", x, label, weight, attrs["ignore_index"])
    dx = xp.zeros(x.shape, dtype=x.dtype)
    if attrs["reduction"] == "none":
        picked = -dout * w
    else:
        picked = -dout.reshape(()) * w
        if attrs["reduction"] == "mean":
            total = float(total_weight.reshape(()))
            if total != 0:
                picked = picked / total
            else:  # Paddle divides kept rows by a zero Total_weight too: nan there
                nan = xp.full(w.shape, float("nan"), dtype=x.dtype)
                picked = nan if keep is None else xp.where(keep, nan, 0)
    dx.reshape(-1)[flat.reshape(-1)] = picked.reshape(-1)  # one position per row
    return dx


def _infer_nll(ctx):
    x, label = ctx.input("X"), ctx.input("Label")
    if len(x.shape) not in (2, 4):
        ctx.fail(f"X {list(x.shape)} must be [N, C] or [N, C, H, W]", slot="X")
    want = [x.shape[0]] + list(x.shape[2:])
    if len(label.shape) != len(want) or any(
            a >= 0 and b >= 0 and a != b for a, b in zip(label.shape, want)):
        ctx.fail(f"Label {list(label.shape)} must be {want} for X {list(x.shape)}",
                 slot="Label")
    weight = ctx.input("Weight")
    if weight is not None and (len(weight.shape) != 1 or -1 not in (weight.shape[0], x.shape[1])
                               and weight.shape[0] != x.shape[1]):
        ctx.fail(f"Weight {list(weight.shape)} must be [C] = [{x.shape[1]}]", slot="Weight")
    out = want if ctx.attr("reduction") == "none" else []
    ctx.set_output("Out", out, like=x)
    ctx.set_output("Total_weight", [], like=x)


def _infer_nll_grad(ctx):
    x = ctx.input("X")
    ctx.set_output(grad_name("X"), x.shape, like=x)


_NLL_GRAD = GradSpec(_nll_grad, inputs=("X", "Label", "Weight"), outputs=("Total_weight",))
_nll_def = register(
    "nll_loss",
    inputs=[Slot("X", doc="log-probabilities [N, C] or [N, C, H, W]"),
            Slot("Label", no_grad=True, doc="int64 class ids [N] or [N, H, W]"),
            Slot("Weight", dispensable=True, no_grad=True, doc="per-class weight [C]")],
    outputs=[Slot("Out", doc="Label's shape with reduction 'none', else a scalar []"),
             Slot("Total_weight", doc="sum of the weights of the rows counted (0 for 'none')")],
    attrs=[Attr("ignore_index", AttrType.LONG, -100, doc="label whose rows cost 0"),
           Attr("reduction", AttrType.STRING, "mean", one_of("none", "mean", "sum"),
                doc="none | mean (weighted: sum / Total_weight) | sum")],
    infer_shape=_infer_nll, kernel=_nll,
    grad=standard_grad_maker(_NLL_GRAD, "nll_loss_grad"),
    share_lod=(),
    doc="Out = -Weight[Label] X[Label] per row, reduced: the negative log likelihood",
    category="loss")
register_grad(_nll_def, _NLL_GRAD, "nll_loss_grad", _infer_nll_grad)


# -------------------------------------------------------------- label_smooth
def _label_smooth(xp, attrs, x, prior):
    # Paddle computes 1 - epsilon and epsilon / C in float32 and casts them to T, so
    # float64 results carry float32's rounding (0.9 is 0.899999976); kept to match them.
    eps = np.float32(attrs["epsilon"])
    keep = float(np.float32(1) - eps)
    if prior is None:
        return (keep * x + float(eps / np.float32(x.shape[-1]))).astype(x.dtype)
    return (keep * x + float(eps) * prior.reshape(-1)).astype(x.dtype)


def _label_smooth_grad(xp, attrs, dout):
    return (float(np.float32(1) - np.float32(attrs["epsilon"])) * dout).astype(dout.dtype)


def _infer_label_smooth(ctx):
    x, prior = ctx.input("X"), ctx.input("PriorDist")
    if prior is not None:
        size = 1
        for d in prior.shape:
            size = -1 if d < 0 or size < 0 else size * d
        if size >= 0 and x.shape[-1] >= 0 and size != x.shape[-1]:
            ctx.fail(f"PriorDist {list(prior.shape)} must hold one value per class "
                     f"({x.shape[-1]}, X's last dim)", slot="PriorDist")
    ctx.set_output("Out", x.shape, like=x)


register(
    "label_smooth",
    inputs=[Slot("X", doc="one-hot labels [..., C]"),
            Slot("PriorDist", dispensable=True, no_grad=True,
                 doc="prior over the C classes ([1, C]); uniform when absent")],
    outputs=[Slot("Out", doc="smoothed labels, X's shape")],
    attrs=[Attr("epsilon", AttrType.FLOAT, 0.0, doc="weight of the prior")],
    infer_shape=_infer_label_smooth, kernel=_label_smooth,
    grad=GradSpec(_label_smooth_grad, inputs=()),
    doc="Out = (1 - epsilon) X + epsilon PriorDist (uniform 1/C without PriorDist)",
    category="loss")


# ------------------------------------------------------- cross_entropy (v1)
def _tolerable_log(xp, values):
    """log with log 0 = -1e20 (Paddle's TolerableValue), log 0 never evaluated."""
    positive = values > 0
    return xp.where(positive, xp.maximum(xp.log(xp.where(positive, values, 1)), -_APPROX_INF),
                    -_APPROX_INF)


def _ce_hard(xp, op, x, label, ignore_index):
    """(flat positions of each row's label in X, keep mask or None), label [..., 1]."""
    label = label.reshape(x.shape[:-1] + (1,))
    label, keep = checked_labels(xp, op, label, x.shape[-1], ignore_index)
    return flat_positions(xp, x.shape, x.ndim - 1, label), keep


def _cross_entropy(xp, attrs, x, label):
    if attrs["soft_label"]:
        return -(label * _tolerable_log(xp, x)).sum(axis=-1, keepdims=True).astype(x.dtype)
    # a Label one rank lower than X (no trailing 1) gives Y its shape, as in Paddle
    y_shape = label.shape if label.ndim == x.ndim - 1 else x.shape[:-1] + (1,)
    flat, keep = _ce_hard(xp, "cross_entropy", x, label, attrs["ignore_index"])
    picked = xp.take(x, flat)
    y = -_tolerable_log(xp, picked if keep is None else xp.where(keep, picked, 1))
    return y.reshape(y_shape).astype(x.dtype)


def _cross_entropy_grad(xp, attrs, x, label, dy):
    if attrs["soft_label"]:
        return (-label * dy.reshape(x.shape[:-1] + (1,)) / x).astype(x.dtype)
    flat, keep = _ce_hard(xp, "cross_entropy_grad", x, label, attrs["ignore_index"])
    dy = dy.reshape(flat.shape)
    if keep is not None:
        dy = dy * keep
    picked = xp.take(x, flat)
    if keep is not None:
        picked = xp.where(keep, picked, 1)
    dx = xp.zeros(x.shape, dtype=x.dtype)
    dx.reshape(-1)[flat.reshape(-1)] = (-dy / picked).reshape(-1)
    return dx


def _infer_cross_entropy(ctx):
    x, label = ctx.input("X"), ctx.input("Label")
    soft = ctx.attr("soft_label")
    lead = list(x.shape[:-1])
    if not soft and len(label.shape) == len(x.shape) - 1:
        want, y = lead, list(label.shape)
    else:
        want, y = lead + [x.shape[-1] if soft else 1], lead + [1]
    if len(label.shape) != len(want) or any(
            a >= 0 and b >= 0 and a != b for a, b in zip(label.shape, want)):
        kind = "soft" if soft else "hard"
        ctx.fail(f"{kind} Label {list(label.shape)} does not fit X {list(x.shape)} "
                 f"(expected {want})", slot="Label")
    ctx.set_output("Y", y, like=x)


register(
    "cross_entropy",
    inputs=[Slot("X", doc="probabilities [..., C]"),
            Slot("Label", no_grad=True,
                 doc="int64 class ids [..., 1] (or [...]); soft labels [..., C]")],
    outputs=[Slot("Y", doc="-log X[Label] per row, [..., 1]")],
    attrs=[Attr("soft_label", AttrType.BOOLEAN, False, doc="Label holds distributions"),
           Attr("ignore_index", AttrType.INT, -100, doc="hard label whose rows cost 0")],
    infer_shape=_infer_cross_entropy, kernel=_cross_entropy,
    grad=GradSpec(_cross_entropy_grad, inputs=("X", "Label"), out_grads=("Y",)),
    share_lod=(("X", "Y"),),
    doc="Y = -log X[Label] (hard) or -sum Label log X (soft); X holds probabilities",
    category="loss")

__all__ = []
