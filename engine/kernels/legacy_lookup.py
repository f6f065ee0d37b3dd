"""Paddle 1.x/2.x ops that saved static programs still carry, beside the shape family
(legacy_ops.py) and the resizes (legacy_interp.py): ``top_k`` (v1: the last axis, k or a
K tensor) and ``lookup_table`` (v1: Ids with a trailing dim of 1), with Paddle 3.3.1's
slots, attributes and grad ops.

Difference from Paddle: among equal values top_k puts the lower index first; Paddle
1.x's kernel (std::partial_sort on the value alone) leaves their order to the heap.
"""
from ..errors import ExecutionError, ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register
from ._util import host_ints


# ---------------------------------------------------------------------- top_k
def _k_of(attrs, k_tensor):
    return host_ints(k_tensor)[0] if k_tensor is not None else attrs["k"]


def _top_k(xp, attrs, x, k_tensor):
    k = _k_of(attrs, k_tensor)
    if x.ndim == 0 or not 1 <= k <= x.shape[-1]:
        raise ExecutionError(f"op top_k: k={k} must be in [1, {x.shape[-1] if x.ndim else 1}] "
                             f"for X {list(x.shape)} (top_k works on the last dim)")
    # larger first; the lower index first among equals (stable; see the docstring)
    order = xp.argsort(-x if x.dtype.kind != "b" else ~x, axis=-1, kind="stable")[..., :k]
    return xp.take_along_axis(x, order, axis=-1), order.astype(xp.int64)


def _top_k_grad(xp, attrs, x, k_tensor, indices, dout):
    n, k = x.shape[-1], indices.shape[-1]
    dx = xp.zeros(x.shape, dtype=dout.dtype)  # C-order, so the flat view aliases it
    rows = xp.arange(indices.size // max(k, 1), dtype=xp.int64)[:, None] * n
    # the k indices of a row are distinct, so plain assignment scatters exactly
    dx.reshape(-1)[(rows + indices.reshape(-1, k)).reshape(-1)] = dout.reshape(-1)
    return dx


def _infer_top_k(ctx):
    x = ctx.input("X")
    if not x.shape:
        ctx.fail("X must have at least one dim", "X")
    k = -1 if ctx.input("K") is not None else ctx.attr("k")
    if k != -1 and (k < 1 or 0 <= x.shape[-1] < k):
        ctx.fail(f"k={k} must be in [1, {x.shape[-1]}] for X {list(x.shape)}", "X")
    shape = list(x.shape[:-1]) + [k]
    ctx.set_output("Out", shape, like=x)
    ctx.set_output("Indices", shape, dtype=3, like=x)  # int64


register("top_k",
         inputs=[Slot("X"), Slot("K", dispensable=True, no_grad=True, doc="1-element int: k")],
         outputs=[Slot("Out", doc="the k largest of each row, largest first"),
                  Slot("Indices", no_grad=True, doc="their int64 positions in the last dim")],
         attrs=[Attr("k", AttrType.INT, 1, doc="how many (the K input beats it)")],
         infer_shape=_infer_top_k, kernel=_top_k,
         grad=GradSpec(_top_k_grad, inputs=("X", "K"), outputs=("Indices",), in_grads=("X",)),
         share_lod=(("X", "Out"), ("X", "Indices")),
         doc="Out, Indices = the k largest values of X's last dim (Paddle 1.x top_k)",
         category="index")


# --------------------------------------------------------------- lookup_table
NO_PADDING = -1  # Paddle's kNoPadding


def _ids_of(ids, vocab):
    if ids.ndim == 0 or ids.shape[-1] != 1:
        raise ShapeError(f"op lookup_table: Ids {list(ids.shape)} must end in a dim of 1")
    flat = ids.reshape(-1)
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= vocab):
        bad = int(flat.min()) if int(flat.min()) < 0 else int(flat.max())
        raise ExecutionError(f"op lookup_table: slot Ids holds id {bad}, outside the {vocab} "
                             "rows of W")
    return flat


def _lookup_table(xp, attrs, w, ids):
    flat = _ids_of(ids, w.shape[0])
    out = xp.take(w, flat, axis=0)
    if attrs["padding_idx"] != NO_PADDING:
        out[flat == attrs["padding_idx"]] = 0
    return out.reshape(tuple(ids.shape[:-1]) + (w.shape[1],))


def _lookup_table_grad(xp, attrs, w, ids, dout):
    # Dense W@GRAD (Paddle gives a SelectedRows one when is_sparse; same values).
    flat = _ids_of(ids, w.shape[0])
    dw = xp.zeros(w.shape, dtype=dout.dtype)
    xp.add.at(dw, flat, dout.reshape(-1, w.shape[1]))  # repeated ids accumulate
    if attrs["padding_idx"] != NO_PADDING:
        dw[attrs["padding_idx"]] = 0
    return dw


def _infer_lookup_table(ctx):
    w, ids = ctx.input("W"), ctx.input("Ids")
    if len(w.shape) != 2:
        ctx.fail(f"W {list(w.shape)} must be [vocabulary, width]", "W")
    if not ids.shape or ids.shape[-1] not in (1, -1):
        ctx.fail(f"Ids {list(ids.shape)} must end in a dim of 1", "Ids")
    pad = ctx.attr("padding_idx")
    if pad != NO_PADDING and (pad < 0 or 0 <= w.shape[0] <= pad):
        ctx.fail(f"padding_idx={pad} is not a row of W {list(w.shape)} (or -1 for none)")
    ctx.set_output("Out", list(ids.shape[:-1]) + [w.shape[1]], dtype=w.dtype, like=ids)


_DIST = "distributed lookup (parameter server); ignored here"
register(
    "lookup_table",
    inputs=[Slot("W", doc="table [V, D]"),
            Slot("Ids", no_grad=True, doc="int64 ids [..., 1]")],
    outputs=[Slot("Out", doc="rows of W: Ids.shape[:-1] + [D]")],
    attrs=[Attr("is_sparse", AttrType.BOOLEAN, False, doc="sparse W@GRAD in Paddle; dense here"),
           Attr("is_distributed", AttrType.BOOLEAN, False, doc=_DIST),
           Attr("padding_idx", AttrType.LONG, NO_PADDING,
                doc="id whose rows are zero and get no gradient; -1: none"),
           Attr("remote_prefetch", AttrType.BOOLEAN, False, doc=_DIST),
           Attr("entry_config", AttrType.STRING, "", doc=_DIST),
           Attr("is_test", AttrType.BOOLEAN, False),
           Attr("entry", AttrType.STRING, "none", doc=_DIST),
           Attr("table_class", AttrType.STRING, "none", doc=_DIST),
           Attr("table_names", AttrType.STRINGS, [], doc=_DIST),
           Attr("trainer_id", AttrType.INT, 0, doc=_DIST),
           Attr("grad_inplace", AttrType.BOOLEAN, False, doc=_DIST),
           Attr("epmap", AttrType.STRINGS, [], doc=_DIST),
           Attr("height_sections", AttrType.LONGS, [], doc=_DIST)],
    infer_shape=_infer_lookup_table, kernel=_lookup_table,
    grad=GradSpec(_lookup_table_grad, inputs=("W", "Ids"), in_grads=("W",)),
    share_lod=(("Ids", "Out"),),
    doc="Out = W[Ids[..., 0]] (Paddle 1.x embedding lookup)", category="embedding")
