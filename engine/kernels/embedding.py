"""Embedding lookup: ``lookup_table_v2`` (Paddle's ``embedding``), with a dense W gradient."""
from ..errors import ExecutionError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register

NO_PADDING = -1  # Paddle's kNoPadding: the op-level padding_idx that means "none"


def _check_ids(ids, vocab):
    """Ids must index rows of W; negative ids would wrap around silently in xp."""
    if ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab:
            bad = low if low < 0 else high
            raise ExecutionError(
                f"op lookup_table_v2: slot Ids holds id {bad}, outside the {vocab} rows of W")


def _lookup(xp, attrs, ids, w):
    _check_ids(ids, w.shape[0])
    out = xp.take(w, ids, axis=0)  # a fresh array: Ids.shape + [D]
    pad = attrs["padding_idx"]
    if pad != NO_PADDING:
        out[ids == pad] = 0
    return out


def _lookup_grad(xp, attrs, w, ids, dout):
    dw = xp.zeros(w.shape, dtype=dout.dtype)
    # add.at accumulates repeated ids (plain fancy-index += would keep only one).
    xp.add.at(dw, ids.reshape(-1), dout.reshape(-1, w.shape[1]))
    pad = attrs["padding_idx"]
    if pad != NO_PADDING:
        dw[pad] = 0
    return dw


def _infer_lookup(ctx):
    ids, w = ctx.input("Ids"), ctx.input("W")
    if len(w.shape) != 2:
        ctx.fail(f"W {list(w.shape)} must be [vocabulary, width]", slot="W")
    pad = ctx.attr("padding_idx")
    if pad != NO_PADDING and (pad < 0 or 0 <= w.shape[0] <= pad):
        ctx.fail(f"padding_idx={pad} is not a row of W {list(w.shape)} (or -1 for none)")
    ctx.set_output("Out", list(ids.shape) + [w.shape[1]], dtype=w.dtype, like=ids)


register(
    "lookup_table_v2",
    inputs=[Slot("Ids", no_grad=True, doc="int64 ids, any shape"),
            Slot("W", doc="table [V, D]")],
    outputs=[Slot("Out", doc="rows of W: Ids.shape + [D]")],
    attrs=[Attr("padding_idx", AttrType.LONG, NO_PADDING,
                doc="id whose rows are zero and get no gradient; -1: none")],
    infer_shape=_infer_lookup, kernel=_lookup,
    grad=GradSpec(_lookup_grad, inputs=("W", "Ids"), in_grads=("W",)),
    share_lod=(("Ids", "Out"),),
    doc="Out = W[Ids] (an embedding lookup)", category="embedding")
