"""Losses: ``softmax_with_cross_entropy`` (fused, log-sum-exp) and ``cross_entropy2``.

Hard labels are integer class ids shaped like the scores with the class axis of size 1
(``[N, 1]`` for ``[N, C]`` scores). A row whose label equals ``ignore_index`` gets loss
0 and gradient 0. Both grad ops follow Paddle's slots, which do not read the scores
themselves, so their shape functions are written here rather than by ``GradSpec``.
"""
import numpy as np

from ..errors import ExecutionError
from ..ir.registry import COMMON_ATTR_NAMES, Attr, VarMeta, AttrType, GradSpec, Slot, register, standard_grad_maker
from ..ir.names import grad_name


# ------------------------------------------------------------------ helpers
def norm_axis(axis, ndim):
    """``axis`` counted from the front (Paddle allows negative axes)."""
    return axis + ndim if axis < 0 else axis


_ROW_STARTS = {}  # (xp, rows, stride) -> read-only [rows, 1] int64 column: 0, stride, ...


def _row_starts(xp, pre, stride):
    """The flat position of each row's first entry, as a column; made once per shape (a
    training loop asks for the same one every step, forward and backward)."""
    key = (xp, pre, stride)
    col = _ROW_STARTS.get(key)
    if col is None:
        if len(_ROW_STARTS) >= 64:
            _ROW_STARTS.clear()
        col = (xp.arange(pre, dtype=xp.int64) * stride)[:, None]
        if xp is np:  # shared by every call: nobody may write into it (cupy has no such flag)
            col.flags.writeable = False
        _ROW_STARTS[key] = col
    return col


def flat_positions(xp, shape, axis, index):
    """Flat C-order positions, in an array of ``shape``, of the entries ``index`` picks
    along ``axis``. ``index`` has ``shape`` except ``k`` entries along ``axis``; the
    result has ``index``'s shape. Lets a kernel gather or scatter with one fancy index
    on ``a.reshape(-1)`` on numpy and cupy alike (no put_along_axis needed)."""
    pre = 1
    for d in shape[:axis]:
        pre *= d
    post = 1
    for d in shape[axis + 1:]:
        post *= d
    n, k = shape[axis], index.shape[axis]
    if post == 1:  # the common case: classes on the last axis
        rows = _row_starts(xp, pre, n)
        if index.shape == (pre, k):
            return index + rows
        return (index.reshape(pre, k) + rows).reshape(index.shape)
    rows = xp.arange(pre, dtype=xp.int64) * (n * post)
    inner = xp.arange(post, dtype=xp.int64)
    flat = index.reshape(pre, k, post) * post + rows[:, None, None] + inner[None, None, :]
    return flat.reshape(index.shape)


_UNSIGNED = {}  # signed int dtype -> the unsigned one of its size ('<i8' -> '<u8')
# numpy's ndarray.max/.sum are Python functions around these: the hot kernels call them
# directly on numpy arrays (the same reductions, one interpreter frame less each)
_max_reduce, _add_reduce, _ndarray = np.maximum.reduce, np.add.reduce, np.ndarray


def checked_labels(xp, op, label, classes, ignore_index):
    """(labels safe to index with, keep mask or None) for hard labels.

    Rows labelled ``ignore_index`` are pointed at class 0 and flagged in the mask; any
    other label outside [0, classes) raises, naming the op and the offending value."""
    if not label.size:
        return label, None
    if label.dtype.kind == "i" and not 0 <= ignore_index < classes:
        # One reduction for the usual case: seen as unsigned, a negative label is huge,
        # so every label is in [0, classes) (and none is ignore_index) when the max is.
        unsigned = _UNSIGNED.get(label.dtype)
        if unsigned is None:
            unsigned = _UNSIGNED[label.dtype] = label.dtype.str.replace("i", "u")
        seen = label.view(unsigned)
        top = _max_reduce(seen, axis=None) if seen.__class__ is _ndarray else seen.max()
        if int(top) < classes:
            return label, None
    low, high = int(label.min()), int(label.max())
    if 0 <= low and high < classes and not low <= ignore_index <= high:
        return label, None  # the usual case (ignore_index=-100): two reductions, no mask
    ignored = label == ignore_index
    keep = None
    if bool(ignored.any()):
        keep = ~ignored
        label = xp.where(ignored, 0, label)
        low, high = int(label.min()), int(label.max())
    if low < 0 or high >= classes:
        bad = low if low < 0 else high
        raise ExecutionError(
            f"op {op}: slot Label holds class {bad}, outside [0, {classes}) "
            f"(ignore_index={ignore_index})")
    return label, keep


def register_grad(fwd, spec: GradSpec, grad_type, infer_shape):
    """Register ``grad_type`` for forward OpDef ``fwd`` with the slots ``spec`` declares
    and its own ``infer_shape`` (for grad ops that do not read the input they
    differentiate). The forward op must have been registered with
    ``grad=standard_grad_maker(spec, grad_type)``."""
    in_slots = [Slot(s, dispensable=True) for s in spec.inputs + spec.outputs]
    in_slots += [Slot(grad_name(s), dispensable=True) for s in spec.out_grads]
    out_slots = [Slot(grad_name(s), dispensable=True) for s in spec.in_grads]
    register(grad_type, inputs=in_slots, outputs=out_slots,
             attrs=[a for a in fwd.attrs if a.name not in COMMON_ATTR_NAMES],
             infer_shape=infer_shape, kernel=spec.kernel, doc=f"gradient of {fwd.type}",
             category="gradient", share_lod=(), grad_of=fwd.type)


def _check_label_shape(ctx, scores, label, axis, soft):
    """Label must have the scores' rank, the class dim 1 (hard) or equal (soft)."""
    if label is None:
        ctx.fail("needs a Label", slot="Label")
    if len(label.shape) != len(scores.shape):
        ctx.fail(f"Label {list(label.shape)} must have the rank of the scores "
                 f"{list(scores.shape)}", slot="Label")
    for i, (a, b) in enumerate(zip(scores.shape, label.shape)):
        want = a if (soft or i != axis) else 1
        if b >= 0 and want >= 0 and b != want:
            kind = "soft" if soft else "hard"
            ctx.fail(f"{kind} Label {list(label.shape)} does not fit scores "
                     f"{list(scores.shape)} (axis {axis} must be {want})", slot="Label")


# ------------------------------------------------- softmax_with_cross_entropy
_SHIFT_FLOOR = -64.0  # phi's ValueClip threshold on max-shifted logits
_APPROX_INF = 1e20    # phi's kApproInf: TolerableValue's stand-in for infinity
# numpy reduces a row of a few classes slowly (the loop over 128 rows of 10 classes costs
# ~10 us, as much as the rest of the loss): with at least _MANY_ROWS rows of at most
# _FEW_CLASSES classes, the row max is taken down the columns of a transposed copy
# (~2.5 us). A max is exact in any order, so the bits are the same.
_MANY_ROWS, _FEW_CLASSES = 32, 32


def _row_max(logits):
    """The max of each row of a 2-D numpy array, as a column [N, 1]."""
    rows, classes = logits.shape
    if rows >= _MANY_ROWS and classes <= _FEW_CLASSES:
        return _max_reduce(logits.T.copy(), axis=0)[:, None]
    return _max_reduce(logits, axis=1, keepdims=True)


def _plain_rows(attrs, scores, label):
    """True for the usual case, which the kernels below take without the general
    machinery: 2-D numpy scores with classes on the last axis, a softmax, hard labels
    [N, 1]."""
    return (scores.__class__ is _ndarray and scores.ndim == 2 and attrs["axis"] in (-1, 1)
            and attrs["use_softmax"] and not attrs["soft_label"]
            and label.__class__ is _ndarray and label.shape == (scores.shape[0], 1))


def _swce_rows(attrs, logits, label):
    """``_swce`` for ``_plain_rows``: the same numpy calls on the same values (the
    flat positions of flat_positions' common case written out), the row max as
    ``_row_max`` takes it."""
    rows, classes = logits.shape
    shifted = logits - _row_max(logits)
    np.maximum(shifted, _SHIFT_FLOOR, out=shifted)
    label, keep = checked_labels(np, "softmax_with_cross_entropy", label, classes,
                                 attrs["ignore_index"])
    picked = shifted.take(label + _row_starts(np, rows, classes))
    np.exp(shifted, out=shifted)
    total = _add_reduce(shifted, axis=1, keepdims=True)
    shifted /= total
    loss = np.log(total)
    loss -= picked
    if keep is not None:
        loss *= keep
    return shifted, loss


def _swce(xp, attrs, logits, label):
    if _plain_rows(attrs, logits, label):
        return _swce_rows(attrs, logits, label)
    axis = norm_axis(attrs["axis"], logits.ndim)
    if not attrs["use_softmax"]:
        return logits, _cross_entropy_of_probs(xp, attrs, logits, label, axis)
    # log-sum-exp: shift by the row max so exp never overflows; the shifted copy is
    # the only full-size temporary and becomes the softmax in place. Paddle clips the
    # shifted logits at -64 (phi's softmax ValueClip), so no probability falls below
    # exp(-64) of the largest and no loss exceeds 64 + log(classes): a class 1000 below
    # the maximum loses 64, not 1000 (checked against Paddle 3.3.1, both dtypes).
    numpy = logits.__class__ is _ndarray
    shifted = logits - (_max_reduce(logits, axis=axis, keepdims=True) if numpy
                        else logits.max(axis=axis, keepdims=True))
    xp.maximum(shifted, _SHIFT_FLOOR, out=shifted)
    if attrs["soft_label"]:
        dot = (label * shifted).sum(axis=axis, keepdims=True)
    else:
        label, keep = checked_labels(xp, "softmax_with_cross_entropy", label,
                                     logits.shape[axis], attrs["ignore_index"])
        picked = xp.take(shifted, flat_positions(xp, shifted.shape, axis, label))
    xp.exp(shifted, out=shifted)
    total = (_add_reduce(shifted, axis=axis, keepdims=True) if numpy
             else shifted.sum(axis=axis, keepdims=True))
    shifted /= total
    log_total = xp.log(total)
    if attrs["soft_label"]:
        loss = log_total * label.sum(axis=axis, keepdims=True)
        loss -= dot
    else:
        loss = log_total
        loss -= picked
        if keep is not None:
            loss *= keep
    return shifted, loss


def _tolerable_log(xp, probs):
    """log(probs) with -inf as -1e20, as Paddle's TolerableValue: a zero probability
    costs 1e20, and a soft label of 0 on it costs 0 (not 0 * inf = nan)."""
    return xp.maximum(xp.log(probs), -_APPROX_INF)


def _cross_entropy_of_probs(xp, attrs, probs, label, axis):
    """Loss when the input already holds probabilities (use_softmax=False)."""
    if attrs["soft_label"]:
        return -(label * _tolerable_log(xp, probs)).sum(axis=axis, keepdims=True)
    label, keep = checked_labels(xp, "softmax_with_cross_entropy", label,
                                 probs.shape[axis], attrs["ignore_index"])
    picked = xp.take(probs, flat_positions(xp, probs.shape, axis, label))
    return -_tolerable_log(xp, picked if keep is None else xp.where(keep, picked, 1))


def _swce_grad(xp, attrs, label, softmax, dloss):
    if _plain_rows(attrs, softmax, label):
        rows, classes = softmax.shape
        label, keep = checked_labels(np, "softmax_with_cross_entropy_grad", label, classes,
                                     attrs["ignore_index"])
        if keep is not None:
            dloss = dloss * keep
        dlogits = np.ascontiguousarray(softmax * dloss)  # fresh, so flat views alias it
        view = dlogits.reshape(-1)
        view[label + _row_starts(np, rows, classes)] -= dloss  # one position per row
        return dlogits
    axis = norm_axis(attrs["axis"], softmax.ndim)
    if attrs["soft_label"]:
        # Paddle's formula: labels are taken to sum to 1 over the class axis.
        if attrs["use_softmax"]:
            return (softmax - label) * dloss
        return -label / softmax * dloss
    label, keep = checked_labels(xp, "softmax_with_cross_entropy_grad", label,
                                 softmax.shape[axis], attrs["ignore_index"])
    if keep is not None:
        dloss = dloss * keep
    flat = flat_positions(xp, softmax.shape, axis, label)
    if attrs["use_softmax"]:
        dlogits = xp.ascontiguousarray(softmax * dloss)  # fresh, so flat views alias it
        view = dlogits.reshape(-1)
        view[flat] -= dloss  # one position per row: no repeated index
        return dlogits
    dprobs = xp.zeros(softmax.shape, dtype=softmax.dtype)
    picked = xp.take(softmax, flat)
    if keep is not None:
        picked = xp.where(keep, picked, 1)
    dprobs.reshape(-1)[flat] = -dloss / picked
    return dprobs


def _infer_swce(ctx):
    logits, label = ctx.input("Logits"), ctx.input("Label")
    axis = norm_axis(ctx.attr("axis"), len(logits.shape))
    if not 0 <= axis < len(logits.shape):
        ctx.fail(f"axis {ctx.attr('axis')} is out of range for Logits {list(logits.shape)}")
    _check_label_shape(ctx, logits, label, axis, ctx.attr("soft_label"))
    loss = list(logits.shape)
    loss[axis] = 1
    ctx.set_output("Softmax", logits.shape, like=logits)
    ctx.set_output("Loss", loss, like=logits)


def _infer_swce_grad(ctx):
    softmax = ctx.input("Softmax")
    ctx.set_output(grad_name("Logits"), softmax.shape, like=softmax)


_SWCE_GRAD = GradSpec(_swce_grad, inputs=("Label",), outputs=("Softmax",), out_grads=("Loss",),
                      in_grads=("Logits",))
_swce_def = register(
    "softmax_with_cross_entropy",
    inputs=[Slot("Logits", doc="scores [..., C, ...] (classes on `axis`)"),
            Slot("Label", no_grad=True,
                 doc="int64 class ids, class axis of size 1; or soft labels like Logits")],
    outputs=[Slot("Softmax", doc="softmax of Logits along axis"),
             Slot("Loss", doc="cross entropy, Logits' shape with axis of size 1")],
    attrs=[Attr("soft_label", AttrType.BOOLEAN, False, doc="Label holds distributions"),
           Attr("use_softmax", AttrType.BOOLEAN, True,
                doc="False: Logits already hold probabilities"),
           Attr("numeric_stable_mode", AttrType.BOOLEAN, True,
                doc="kept for Paddle; the kernel is always log-sum-exp stable"),
           Attr("ignore_index", AttrType.INT, -100, doc="hard label whose rows are skipped"),
           Attr("axis", AttrType.INT, -1, doc="class axis")],
    infer_shape=_infer_swce, kernel=_swce,
    grad=standard_grad_maker(_SWCE_GRAD, "softmax_with_cross_entropy_grad"),
    share_lod=(("Logits", "Softmax"), ("Logits", "Loss")),
    doc="Loss = -log softmax(Logits)[Label] per row, fused and numerically stable",
    category="loss")
register_grad(_swce_def, _SWCE_GRAD, "softmax_with_cross_entropy_grad", _infer_swce_grad)


# ------------------------------------------------------------ cross_entropy2
def _cross_entropy2(xp, attrs, x, label):
    # A Label one rank lower than X (Paddle's RemoveLastDim form) gives Y its shape.
    y_shape = label.shape if label.ndim == x.ndim - 1 else x.shape[:-1] + (1,)
    label = label.reshape(x.shape[:-1] + (1,))
    label, keep = checked_labels(xp, "cross_entropy2", label, x.shape[-1],
                                 attrs["ignore_index"])
    match = xp.take(x, flat_positions(xp, x.shape, x.ndim - 1, label))
    # A zero probability costs 1e20, not inf (Paddle's TolerableValue; checked on 3.3.1).
    if keep is None:
        y = -_tolerable_log(xp, match)
    else:
        y = -_tolerable_log(xp, xp.where(keep, match, 1))  # log 1 = 0: ignored rows lose nothing
        match = xp.where(keep, match, 0)
    y = y.reshape(y_shape)
    # XShape carries X's dims for the grad op, as Paddle's does: [0, *X.dims], no data.
    return y, xp.empty((0,) + x.shape, dtype=x.dtype), match


def _cross_entropy2_grad(xp, attrs, label, match, xshape, dy):
    shape = xshape.shape[1:]
    label, dy = label.reshape(match.shape), dy.reshape(match.shape)
    label, keep = checked_labels(xp, "cross_entropy_grad2", label, shape[-1],
                                 attrs["ignore_index"])
    if keep is not None:
        dy = dy * keep
        match = xp.where(keep, match, 1)
    dx = xp.zeros(shape, dtype=dy.dtype)
    dx.reshape(-1)[flat_positions(xp, shape, len(shape) - 1, label)] = -dy / match
    return dx


def _infer_cross_entropy2(ctx):
    x, label = ctx.input("X"), ctx.input("Label")
    match = list(x.shape[:-1]) + [1]
    if label is not None and len(label.shape) == len(x.shape) - 1:
        # Paddle's RemoveLastDim form: Label [...] for X [..., C] gives Y [...].
        _check_label_shape(ctx, x, VarMeta(tuple(label.shape) + (1,)), len(x.shape) - 1,
                           soft=False)
        ctx.set_output("Y", label.shape, like=x)
    else:
        _check_label_shape(ctx, x, label, len(x.shape) - 1, soft=False)
        ctx.set_output("Y", match, like=x)
    ctx.set_output("XShape", [0] + list(x.shape), like=x)
    ctx.set_output("MatchX", match, like=x)


def _infer_cross_entropy2_grad(ctx):
    xshape = ctx.input("XShape")
    ctx.set_output(grad_name("X"), xshape.shape[1:], like=xshape)


_CE2_GRAD = GradSpec(_cross_entropy2_grad, inputs=("Label",), outputs=("MatchX", "XShape"),
                     out_grads=("Y",), in_grads=("X",))
_ce2_def = register(
    "cross_entropy2",
    inputs=[Slot("X", doc="probabilities [..., C]"),
            Slot("Label", no_grad=True, doc="int64 class ids [..., 1] (or [...])")],
    outputs=[Slot("Y", doc="-log X[Label], [..., 1] (Label's shape when it is [...])"),
             Slot("XShape", intermediate=True, doc="[0, *X.dims], no data: X's dims for backward"),
             Slot("MatchX", intermediate=True, doc="X[Label], [..., 1]")],
    attrs=[Attr("ignore_index", AttrType.INT, -100, doc="label whose rows are skipped")],
    infer_shape=_infer_cross_entropy2, kernel=_cross_entropy2,
    grad=standard_grad_maker(_CE2_GRAD, "cross_entropy_grad2"),
    share_lod=(("X", "Y"),),
    doc="Y = -log X[Label] per row (X holds probabilities; hard labels)", category="loss")
register_grad(_ce2_def, _CE2_GRAD, "cross_entropy_grad2", _infer_cross_entropy2_grad)

__all__ = ["norm_axis", "flat_positions", "checked_labels", "register_grad"]
