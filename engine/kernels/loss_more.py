"""Element-wise losses of paddle.nn / paddle.nn.functional and the old fluid layers:
``sigmoid_cross_entropy_with_logits`` (BCEWithLogitsLoss), ``bce_loss`` (BCELoss),
``huber_loss`` (SmoothL1Loss), ``log_loss``, ``hinge_loss`` and ``kldiv_loss`` (KLDivLoss).

Each follows Paddle 3.3.1's phi kernel numerics, including its quirks (noted where they
are), because programs Paddle saved must give Paddle's numbers. Every grad op reads the
slots Paddle's grad op desc holds (checked with append_backward in Paddle 3.3.1).
"""
import numpy as np

from ..errors import ExecutionError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register, wanted


def _float_attr(value):
    """A FLOAT attribute as Paddle's kernels see it: rounded to float32 (0.1 is
    0.10000000149), so float64 results match Paddle's to the last bits."""
    return float(np.float32(value))


def _same_shape(ctx, a_slot, b_slot, optional=False):
    """``b_slot`` must have ``a_slot``'s shape (unknown -1 dims pass)."""
    a, b = ctx.input(a_slot), ctx.input(b_slot)
    if b is None:
        if optional:
            return
        ctx.fail(f"needs {b_slot}", slot=b_slot)
    if len(a.shape) != len(b.shape) or any(
            p >= 0 and q >= 0 and p != q for p, q in zip(a.shape, b.shape)):
        ctx.fail(f"{b_slot} {list(b.shape)} must have the shape of {a_slot} "
                 f"{list(a.shape)}", slot=b_slot)


def _column(ctx, slot):
    """Paddle's log_loss / hinge_loss take one value per row: [N, 1]."""
    meta = ctx.input(slot)
    if len(meta.shape) != 2 or meta.shape[1] not in (1, -1):
        ctx.fail(f"{slot} {list(meta.shape)} must be [N, 1] (one value per row)", slot=slot)


# ------------------------------------------------- sigmoid_cross_entropy_with_logits
def _sce_norm(xp, label, ignore_index):
    """normalize=True divides by the count of labels that are not ignore_index (Paddle
    compares within 1e-6). Paddle keeps that count in an int, so with every label ignored
    it divides 0 by 0: nan, kept here."""
    count = int((xp.abs(label - ignore_index) > 1e-6).sum())
    return count if count else float("nan")


def _sce(xp, attrs, x, label, pos_weight):
    # Paddle casts the float label to int to test it against ignore_index (truncation).
    keep = label.astype(xp.int64) != attrs["ignore_index"]
    if pos_weight is None:
        out = xp.maximum(x, 0) - x * label + xp.log1p(xp.exp(-xp.abs(x)))
    else:
        # (1 - l) x + w log(1 + e^-x), the log shifted by m = max(-x, 0) so exp never
        # overflows (Paddle 3.3.1's formula; equal to the above when w = 1)
        shift = xp.maximum(-x, 0)
        log_term = xp.log(xp.exp(-shift) + xp.exp(-x - shift)) + shift
        out = (1 - label) * x + pos_weight * log_term
    out = xp.where(keep, out, 0).astype(x.dtype)
    if attrs["normalize"]:
        out = (out / _sce_norm(xp, label, attrs["ignore_index"])).astype(x.dtype)
    return out


def _sce_grad(xp, attrs, x, label, pos_weight, dout):
    keep = label.astype(xp.int64) != attrs["ignore_index"]
    if pos_weight is None:
        dx = 1 / (1 + xp.exp(-x)) - label  # sigmoid(x) - label, Paddle's formula regrouped
    else:
        # Paddle's grad: w * (d/dx log(1 + e^-x)) + (1 - label), written with the max
        # shift so exp never overflows: the gradient of (1-l)x + w log(1+e^-x).
        shift = xp.maximum(-x, 0)
        down1, down2 = xp.exp(-shift), xp.exp(-x - shift)
        dx = pos_weight * (-down2 / (down1 + down2)) + (1 - label)
    dx = xp.where(keep, dx * dout, 0).astype(x.dtype)
    if attrs["normalize"]:
        dx = (dx / _sce_norm(xp, label, attrs["ignore_index"])).astype(x.dtype)
    return dx


def _infer_sce(ctx):
    _same_shape(ctx, "X", "Label")
    _same_shape(ctx, "X", "pos_weight", optional=True)
    x = ctx.input("X")
    ctx.set_output("Out", x.shape, like=x)


register(
    "sigmoid_cross_entropy_with_logits",
    inputs=[Slot("X", doc="logits"),
            Slot("Label", no_grad=True, doc="targets in [0, 1], X's shape"),
            Slot("pos_weight", dispensable=True, no_grad=True,
                 doc="weight of the positive term, X's shape")],
    outputs=[Slot("Out", doc="element-wise loss, X's shape")],
    attrs=[Attr("normalize", AttrType.BOOLEAN, False,
                doc="divide by the number of labels that are not ignore_index"),
           Attr("ignore_index", AttrType.INT, -100, doc="label whose elements cost 0")],
    infer_shape=_infer_sce, kernel=_sce,
    grad=GradSpec(_sce_grad, inputs=("X", "Label", "pos_weight")),
    doc="Out = max(X, 0) - X * Label + log(1 + exp(-|X|)): binary cross entropy on logits",
    category="loss")


# ------------------------------------------------------------------- bce_loss
def _floored_log(xp, p):
    """max(log p, -100), with log 0 never evaluated (no divide-by-zero warning)."""
    positive = p > 0
    return xp.where(positive, xp.maximum(xp.log(xp.where(positive, p, 1)), -100), -100)


def _bce(xp, attrs, x, label):
    if x.size and (float(x.min()) < 0 or float(x.max()) > 1):
        raise ExecutionError(
            f"op bce_loss: slot X {list(x.shape)} must hold probabilities in [0, 1], "
            f"got values in [{float(x.min())}, {float(x.max())}]")
    # Paddle floors each log at -100: a probability of exactly 0 or 1 costs 100, not inf.
    log_x, log_1mx = _floored_log(xp, x), _floored_log(xp, 1 - x)
    return ((label - 1) * log_1mx - label * log_x).astype(x.dtype)


def _bce_grad(xp, attrs, x, label, dout):
    # Paddle: dout * (x - label) / max(x (1 - x), 1e-12)
    return (dout * (x - label) / xp.maximum((1 - x) * x, 1e-12)).astype(x.dtype)


def _infer_bce(ctx):
    _same_shape(ctx, "X", "Label")
    ctx.set_output("Out", ctx.input("X").shape, like=ctx.input("X"))


register(
    "bce_loss",
    inputs=[Slot("X", doc="probabilities in [0, 1]"),
            Slot("Label", no_grad=True, doc="targets, X's shape")],
    outputs=[Slot("Out", doc="element-wise loss, X's shape")],
    infer_shape=_infer_bce, kernel=_bce,
    grad=GradSpec(_bce_grad, inputs=("X", "Label")),
    doc="Out = -(Label log X + (1 - Label) log(1 - X)), each log floored at -100",
    category="loss")


# ----------------------------------------------------------------- huber_loss
def _huber(xp, attrs, x, y):
    delta = _float_attr(attrs["delta"])
    residual = y - x
    size = xp.abs(residual)
    out = xp.where(size <= delta, 0.5 * residual * residual, delta * (size - 0.5 * delta))
    return out.astype(x.dtype), residual


def _huber_grad(xp, attrs, residual, dout):
    # Only Residual (= Y - X) and Out@GRAD reach Paddle's grad op.
    delta = _float_attr(attrs["delta"])
    d = xp.clip(residual, -delta, delta) * dout  # r inside [-delta, delta], else +-delta
    dx = None if not wanted(attrs, 0) else (-d).astype(residual.dtype)
    dy = None if not wanted(attrs, 1) else d.astype(residual.dtype)
    return dx, dy


def _infer_huber(ctx):
    _same_shape(ctx, "X", "Y")
    x = ctx.input("X")
    ctx.set_output("Out", x.shape, like=x)
    ctx.set_output("Residual", x.shape, like=x)


register(
    "huber_loss",
    inputs=[Slot("X", doc="predictions"), Slot("Y", doc="targets, X's shape")],
    outputs=[Slot("Out", doc="element-wise loss, X's shape"),
             Slot("Residual", intermediate=True, doc="Y - X, kept for backward")],
    attrs=[Attr("delta", AttrType.FLOAT, doc="where the loss turns from square to linear "
                "(Paddle gives it no default)")],
    infer_shape=_infer_huber, kernel=_huber,
    grad=GradSpec(_huber_grad, inputs=(), outputs=("Residual",), in_grads=("X", "Y")),
    doc="Out = r^2 / 2 where |r| <= delta, else delta (|r| - delta / 2), r = Y - X",
    category="loss")


# ------------------------------------------------------------------- log_loss
def _log_loss(xp, attrs, pred, labels):
    eps = _float_attr(attrs["epsilon"])
    loss = -labels * xp.log(pred + eps) - (1 - labels) * xp.log(1 - pred + eps)
    return loss.astype(pred.dtype)


def _log_loss_grad(xp, attrs, pred, labels, dloss):
    eps = _float_attr(attrs["epsilon"])
    d = dloss * (-labels / (pred + eps) + (1 - labels) / (1 - pred + eps))
    return d.astype(pred.dtype)


def _infer_log_loss(ctx):
    _column(ctx, "Predicted")
    _same_shape(ctx, "Predicted", "Labels")
    pred = ctx.input("Predicted")
    ctx.set_output("Loss", pred.shape, like=pred)


register(
    "log_loss",
    inputs=[Slot("Predicted", doc="probabilities [N, 1]"),
            Slot("Labels", no_grad=True, doc="targets [N, 1]")],
    outputs=[Slot("Loss", doc="[N, 1]")],
    attrs=[Attr("epsilon", AttrType.FLOAT, doc="added inside each log (Paddle gives it "
                "no default; paddle.nn.functional.log_loss passes 1e-4)")],
    infer_shape=_infer_log_loss, kernel=_log_loss,
    grad=GradSpec(_log_loss_grad, inputs=("Predicted", "Labels"), out_grads=("Loss",),
                  in_grads=("Predicted",)),
    share_lod=(("Predicted", "Loss"),),
    doc="Loss = -Labels log(Predicted + eps) - (1 - Labels) log(1 - Predicted + eps)",
    category="loss")


# ----------------------------------------------------------------- hinge_loss
def _hinge(xp, attrs, logits, labels):
    return xp.maximum(1 - logits * (2 * labels - 1), 0).astype(logits.dtype)


def _hinge_grad(xp, attrs, logits, labels, dloss):
    sign = 2 * labels - 1
    return xp.where(logits * sign < 1, -sign * dloss, 0).astype(logits.dtype)


def _infer_hinge(ctx):
    _column(ctx, "Logits")
    _same_shape(ctx, "Logits", "Labels")
    logits = ctx.input("Logits")
    ctx.set_output("Loss", logits.shape, like=logits)


register(
    "hinge_loss",
    inputs=[Slot("Logits", doc="scores [N, 1]"),
            Slot("Labels", no_grad=True, doc="0 or 1 [N, 1]")],
    outputs=[Slot("Loss", doc="[N, 1]")],
    infer_shape=_infer_hinge, kernel=_hinge,
    grad=GradSpec(_hinge_grad, inputs=("Logits", "Labels"), out_grads=("Loss",),
                  in_grads=("Logits",)),
    share_lod=(("Logits", "Loss"),),
    doc="Loss = max(0, 1 - Logits (2 Labels - 1))", category="loss")


# ----------------------------------------------------------------- kldiv_loss
def _kldiv(xp, attrs, x, target):
    if attrs["log_target"]:
        loss = xp.exp(target) * (target - x)
    else:
        # a target <= 0 contributes 0 (Paddle), which also keeps log(0) out
        safe = xp.where(target > 0, target, 1)
        loss = xp.where(target > 0, target * (xp.log(safe) - x), 0)
    loss = loss.astype(x.dtype)
    reduction = attrs["reduction"]
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "mean":
        total = total / max(loss.size, 1)
    elif reduction == "batchmean" and loss.ndim:
        total = total / loss.shape[0]
    return xp.asarray(total, dtype=x.dtype).reshape(())


def _kldiv_grad(xp, attrs, x, target, dloss):
    if attrs["log_target"]:
        dx = -xp.exp(target) * dloss
    else:
        dx = xp.where(target > 0, -target * dloss, 0)
    reduction = attrs["reduction"]
    if reduction == "mean":
        dx = dx / max(x.size, 1)
    elif reduction == "batchmean" and x.ndim:
        dx = dx / x.shape[0]
    return dx.astype(x.dtype)


def _infer_kldiv(ctx):
    _same_shape(ctx, "X", "Target")
    x = ctx.input("X")
    ctx.set_output("Loss", x.shape if ctx.attr("reduction") == "none" else [], like=x)


register(
    "kldiv_loss",
    inputs=[Slot("X", doc="log-probabilities"),
            Slot("Target", no_grad=True, doc="probabilities (log-probabilities with "
                 "log_target), X's shape")],
    outputs=[Slot("Loss", doc="X's shape with reduction 'none', else a scalar []")],
    attrs=[Attr("reduction", AttrType.STRING, "mean",
                one_of("none", "batchmean", "mean", "sum"),
                doc="none | batchmean (sum / dim 0) | mean (sum / numel) | sum"),
           Attr("log_target", AttrType.BOOLEAN, False, doc="Target holds log-probabilities")],
    infer_shape=_infer_kldiv, kernel=_kldiv,
    grad=GradSpec(_kldiv_grad, inputs=("X", "Target"), out_grads=("Loss",)),
    share_lod=(),
    doc="Loss = Target (log Target - X), reduced: the Kullback-Leibler divergence",
    category="loss")

__all__ = []
