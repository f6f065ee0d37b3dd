"""``warpctc``: the CTC loss of paddle.nn.CTCLoss / F.ctc_loss (Paddle wraps Baidu's
warp-ctc; this is the same forward-backward algorithm written against ``xp``).

Two input forms, as in Paddle: padded (``Logits`` [Tmax, N, C+1], ``Label`` [N, Lmax]
with ``LogitsLength`` / ``LabelLength`` [N]) or LoD (``Logits`` [T_total, C+1] and
``Label`` [L_total, 1] as sequences, no length inputs). Logits are unnormalised: the
softmax over C+1 classes happens inside. ``Loss`` is [N, 1]; ``WarpCTCGrad`` holds
d Loss_n / d Logits, padded to [Tmax, N, C+1] in both forms (zero past each sequence),
and ``warpctc_grad`` scales it by Loss@GRAD (and 1 / T_n with norm_by_times), unpadding
it back to the LoD rows in the LoD form.

The recursions run in log space over the time steps (a Python loop over T; every step is
one vectorised update of all N sequences and 2 Lmax + 1 states). -1e30 stands in for
log 0 so no -inf - -inf appears. As warp-ctc, a sequence too short for its labels
(T_n < L_n + the number of repeated neighbours) costs 0 and gets no gradient.
"""
import numpy as np

from ..errors import ExecutionError
from ..ir.names import grad_name
from ..ir.registry import (COMMON_ATTR_NAMES, Attr, AttrType, GradSpec, Slot, register,
                           standard_grad_maker)

_NEG = -1e30  # log 0


def _lse(xp, *terms):
    """log(sum(exp(terms))) element-wise, stable; all terms ~_NEG gives ~_NEG."""
    top = terms[0]
    for t in terms[1:]:
        top = xp.maximum(top, t)
    total = sum(xp.exp(t - top) for t in terms)
    return top + xp.log(total)


def _shift(xp, a, k):
    """``a`` [N, S] moved k states right along S, _NEG filling the first k."""
    pad = xp.full((a.shape[0], k), _NEG, dtype=a.dtype)
    return xp.concatenate([pad, a[:, :-k]], axis=1)


def _unshift(xp, a, k):
    pad = xp.full((a.shape[0], k), _NEG, dtype=a.dtype)
    return xp.concatenate([a[:, k:], pad], axis=1)


def _host_ints(values):
    return [int(v) for v in values.reshape(-1).tolist()]


def _padded(xp, lod, logits, label, logits_length, label_length):
    """(logits [Tmax, N, C+1], labels [N, Lmax] host ints, T_n list, L_n list, row index
    of each padded step in the LoD rows or None)."""
    if logits_length is None:
        t_off, l_off = lod.offsets(0), lod.offsets(1)
        lengths = [b - a for a, b in zip(t_off, t_off[1:])]
        label_lengths = [b - a for a, b in zip(l_off, l_off[1:])]
        t_max = max(lengths, default=0)
        rows = np.array([[t_off[n] + min(t, max(lengths[n] - 1, 0)) for n in range(len(lengths))]
                         for t in range(t_max)], dtype=np.int64).reshape(t_max, len(lengths))
        keep = (np.arange(t_max)[:, None] < np.array(lengths)[None, :])
        padded = logits[xp.asarray(rows)] * xp.asarray(keep[:, :, None], dtype=logits.dtype)
        flat = _host_ints(label)
        l_max = max(label_lengths, default=0)
        labels = np.zeros((len(lengths), l_max), dtype=np.int64)
        for n, (a, b) in enumerate(zip(l_off, l_off[1:])):
            labels[n, :b - a] = flat[a:b]
        return padded, labels, lengths, label_lengths, (rows, keep)
    lengths, label_lengths = _host_ints(logits_length), _host_ints(label_length)
    labels = np.asarray(_host_ints(label), dtype=np.int64).reshape(label.shape)
    return logits, labels, lengths, label_lengths, None


def _ctc(xp, logits, labels, lengths, label_lengths, blank):
    """(loss [N], d loss / d logits [T, N, C+1]) for padded logits."""
    steps, batch, classes = logits.shape
    if any(not 0 < t <= steps for t in lengths) or any(
            not 0 <= l_n <= labels.shape[1] for l_n in label_lengths):
        raise ExecutionError(f"op warpctc: lengths {lengths} / label lengths {label_lengths} "
                             f"do not fit Logits {list(logits.shape)} / Label {list(labels.shape)}")
    states = 2 * labels.shape[1] + 1
    ext = np.full((batch, states), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    last = np.array([2 * l_n for l_n in label_lengths])  # index of the final blank
    valid = xp.asarray(np.arange(states)[None, :] <= last[:, None])
    skip_next = xp.asarray(np.concatenate([skip[:, 2:], np.zeros((batch, 2), bool)], axis=1))
    skip = xp.asarray(skip)

    shifted = logits - logits.max(axis=2, keepdims=True)
    log_norm = xp.log(xp.exp(shifted).sum(axis=2, keepdims=True))
    log_probs = shifted - log_norm
    lp = log_probs[:, xp.arange(batch)[:, None], xp.asarray(ext)]  # [T, N, S]

    alpha = xp.full((steps, batch, states), _NEG, dtype=logits.dtype)
    alpha[0, :, 0] = lp[0, :, 0]
    if states > 1:
        alpha[0, :, 1] = xp.where(xp.asarray(last > 0), lp[0, :, 1], _NEG)
    for t in range(1, steps):
        prev = alpha[t - 1]
        two = xp.where(skip, _shift(xp, prev, 2), _NEG) if states > 2 else prev * 0 + _NEG
        alpha[t] = _lse(xp, prev, _shift(xp, prev, 1), two) + lp[t]

    n_idx, t_last = xp.arange(batch), xp.asarray(np.array(lengths) - 1)
    end = alpha[t_last, n_idx, xp.asarray(last)]
    end2 = xp.where(xp.asarray(last > 0),
                    alpha[t_last, n_idx, xp.asarray(np.maximum(last - 1, 0))], _NEG)
    loss = -_lse(xp, end, end2)

    beta = xp.full((steps, batch, states), _NEG, dtype=logits.dtype)
    lengths_x = xp.asarray(np.array(lengths))
    first_final = xp.asarray((np.arange(states)[None, :] == last[:, None])
                             | ((np.arange(states)[None, :] == last[:, None] - 1)
                                & (last[:, None] > 0)))
    for t in range(steps - 1, -1, -1):
        init = xp.where(first_final, lp[t], _NEG)
        if t == steps - 1:
            step = init
        else:
            nxt = beta[t + 1]
            two = xp.where(skip_next, _unshift(xp, nxt, 2), _NEG) if states > 2 else nxt * 0 + _NEG
            rec = _lse(xp, nxt, _unshift(xp, nxt, 1), two) + lp[t]
            step = xp.where((lengths_x - 1 == t)[:, None], init, rec)
        beta[t] = xp.where(valid & (t < lengths_x)[:, None], step, _NEG)

    # occupancy of each state, summed per class: (1 / p) sum_{s: ext_s = k} alpha beta / y
    post = xp.exp(alpha + beta - lp + loss[None, :, None])
    one_hot = xp.asarray(np.eye(classes, dtype=np.float64)[ext], dtype=logits.dtype)
    occupancy = xp.einsum("tns,nsk->tnk", post, one_hot)
    in_time = (np.arange(steps)[:, None] < np.array(lengths)[None, :])
    # warp-ctc gives a sequence too short for its labels (T_n < L_n + repeated pairs)
    # loss 0 and gradient 0 rather than an infinite loss
    repeats = [int(np.sum(labels[n, 1:l_n] == labels[n, :max(l_n - 1, 0)]))
               for n, l_n in enumerate(label_lengths)]
    feasible = np.array([t >= l_n + r for t, l_n, r in zip(lengths, label_lengths, repeats)])
    in_time = xp.asarray((in_time & feasible[None, :])[:, :, None])
    grad = xp.where(in_time, xp.exp(log_probs) - occupancy, 0).astype(logits.dtype)
    loss = xp.where(xp.asarray(feasible), loss, 0)
    return loss.astype(logits.dtype), grad


def _warpctc(xp, attrs, lod, logits, label, logits_length, label_length):
    padded, labels, lengths, label_lengths, _ = _padded(xp, lod, logits, label, logits_length,
                                                        label_length)
    blank = attrs["blank"]
    if not 0 <= blank < padded.shape[2]:
        raise ExecutionError(f"op warpctc: blank {blank} is not a class of Logits "
                             f"{list(logits.shape)}")
    loss, grad = _ctc(xp, padded, labels, lengths, label_lengths, blank)
    return loss.reshape(-1, 1), grad


def _warpctc_grad(xp, attrs, lod, logits, logits_length, wgrad, dloss):
    if logits_length is None:
        t_off = lod.offsets(0)
        lengths = [b - a for a, b in zip(t_off, t_off[1:])]
    else:
        lengths = _host_ints(logits_length)
    scale = dloss.reshape(1, -1, 1)
    if attrs["norm_by_times"]:
        # Paddle scales by 1 / T_n: in float32 for LoD input (its ScaleLoDTensor functor,
        # float64 runs too), in the gradient's dtype for padded input
        lengths_np = np.array(lengths, dtype=np.float32 if logits_length is None else np.float64)
        inverse = lengths_np.dtype.type(1) / lengths_np
        scale = scale * xp.asarray(inverse, dtype=wgrad.dtype).reshape(1, -1, 1)
    grad = (wgrad * scale).astype(wgrad.dtype)
    if logits_length is not None:
        return grad
    # LoD form: row r of Logits is step r - t_off[n] of sequence n
    seq = np.repeat(np.arange(len(lengths)), lengths)
    step = np.arange(t_off[-1]) - np.asarray(t_off[:-1])[seq]
    return grad[xp.asarray(step), xp.asarray(seq)]


def _infer_warpctc(ctx):
    logits, label = ctx.input("Logits"), ctx.input("Label")
    padded = ctx.input("LogitsLength") is not None
    if padded:
        if len(logits.shape) != 3:
            ctx.fail(f"Logits {list(logits.shape)} must be [Tmax, N, C+1] with LogitsLength",
                     slot="Logits")
        if ctx.input("LabelLength") is None or len(label.shape) != 2:
            ctx.fail(f"padded Label {list(label.shape)} must be [N, Lmax] with LabelLength",
                     slot="Label")
        batch, grad_shape = logits.shape[1], logits.shape
    else:
        if len(logits.shape) != 2:
            ctx.fail(f"Logits {list(logits.shape)} must be [T_total, C+1] sequences (LoD) "
                     "or [Tmax, N, C+1] with LogitsLength", slot="Logits")
        batch, grad_shape = -1, [-1, -1, logits.shape[1]]
    classes = logits.shape[-1]
    blank = ctx.attr("blank")
    if classes >= 0 and not 0 <= blank < classes:
        ctx.fail(f"blank {blank} is not a class of Logits {list(logits.shape)}")
    ctx.set_output("Loss", [batch, 1], like=logits, lod_level=0)
    ctx.set_output("WarpCTCGrad", grad_shape, like=logits, lod_level=0)


def _infer_warpctc_grad(ctx):
    logits = ctx.input("Logits")
    ctx.set_output(grad_name("Logits"), logits.shape, like=logits)


_GRAD = GradSpec(_warpctc_grad, inputs=("Logits", "LogitsLength"), outputs=("WarpCTCGrad",),
                 out_grads=("Loss",), in_grads=("Logits",))
_def = register(
    "warpctc",
    inputs=[Slot("Logits", doc="unnormalised scores [Tmax, N, C+1] or sequences [T, C+1]"),
            Slot("Label", no_grad=True, doc="int32 labels [N, Lmax] or sequences [L, 1]"),
            Slot("LogitsLength", dispensable=True, no_grad=True, doc="int64 T_n [N] (padded)"),
            Slot("LabelLength", dispensable=True, no_grad=True, doc="int64 L_n [N] (padded)")],
    outputs=[Slot("Loss", doc="-log p(label | logits) per sequence [N, 1]"),
             Slot("WarpCTCGrad", intermediate=True,
                  doc="d Loss / d Logits, padded [Tmax, N, C+1], for backward")],
    attrs=[Attr("blank", AttrType.INT, 0, doc="class index of the CTC blank"),
           Attr("norm_by_times", AttrType.BOOLEAN, False,
                doc="divide each sequence's gradient by its length (gradient only)")],
    infer_shape=_infer_warpctc, kernel=_warpctc, lod=True,
    grad=standard_grad_maker(_GRAD, "warpctc_grad"), share_lod=(),
    doc="Loss = CTC loss of each sequence (softmax over C+1 classes inside)",
    category="loss")
register("warpctc_grad",
         inputs=[Slot("Logits", dispensable=True), Slot("LogitsLength", dispensable=True),
                 Slot("WarpCTCGrad", dispensable=True), Slot(grad_name("Loss"), dispensable=True)],
         outputs=[Slot(grad_name("Logits"), dispensable=True)],
         attrs=[a for a in _def.attrs if a.name not in COMMON_ATTR_NAMES],
         infer_shape=_infer_warpctc_grad, kernel=_warpctc_grad, lod=True,
         doc="gradient of warpctc", category="gradient",
         share_lod=(("Logits", grad_name("Logits")),), grad_of="warpctc")

__all__ = []
