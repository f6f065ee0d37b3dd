"""Shape ops: ``concat``, ``split``, ``reshape2``, ``transpose2``, ``assign``.

Slots and attributes are Paddle's. ``reshape2`` and ``transpose2`` also write an
intermediate ``XShape`` of shape ``[0] + X.shape`` (size 0: it carries X's shape for
the gradient, never data), and their grad ops read it instead of ``X``, as Paddle's.
Kernels return views where numpy would (reshape, transpose, split); they never write.
"""
from math import prod

from ..errors import ShapeError
from ..ir.registry import REQUIRED, Attr, AttrType, GradOp, Slot, register
from ..ir.names import grad_name
from ._util import numel
from .xshape import (XSHAPE_GRAD_SLOTS, infer_from_xshape, lod_if_rows_kept, register_grad,
                     rows_lod_level, xshape, xshape_grad_maker)


def _scalar(tensor):
    """The int held by a 1-element tensor (AxisTensor, SectionsTensorList items)."""
    return int(tensor.reshape(-1)[0])


def _axis_of(attrs, axis_tensor, ndim):
    """``axis`` (from AxisTensor when given), made non-negative for rank ``ndim``."""
    axis = attrs["axis"] if axis_tensor is None else _scalar(axis_tensor)
    return axis + ndim if axis < 0 else axis


def _check_axis(ctx, axis, shape, slot="X"):
    rank = len(shape)
    if not -rank <= axis < rank:
        ctx.fail(f"axis={axis} is out of range for {list(shape)} of rank {rank}", slot=slot)
    return axis + rank if axis < 0 else axis


# --------------------------------------------------------------------- concat
def _concat(xp, attrs, lod, xs, axis_tensor):
    axis = _axis_of(attrs, axis_tensor, xs[0].ndim)
    if axis == 0 and lod.inputs[0] and lod.inputs[0][0]:
        lod.outputs[0] = _merged_lod(lod.inputs[0])
    # Other axes keep the rows, so Out takes X[0]'s LoD (the share_lod pair).
    return xp.concatenate(xs, axis=axis)


def _merged_lod(lods):
    """Rows joined on axis 0: each input's sequences follow the previous ones', so its
    offsets (every level) are shifted by the previous inputs' last offsets. As Paddle,
    only when every input has LoD; a mix of sequence and plain inputs has no sequence
    structure, so Out gets none (Paddle keeps X[0]'s, which then covers too few rows)."""
    if not all(lods):
        return []
    levels = len(lods[0])
    for i, other in enumerate(lods[1:], 1):
        if len(other) != levels:
            raise ShapeError(f"op concat: X[{i}] has {len(other)} LoD levels but X[0] has "
                             f"{levels}; inputs joined on axis 0 need the same levels")
    merged = [list(level) for level in lods[0]]
    for other in lods[1:]:
        for level, offsets in zip(merged, other):
            shift = level[-1] - offsets[0]
            level.extend(o + shift for o in offsets[1:])
    return merged


def _concat_shape(ctx, metas, axis, slot):
    """Out dims of concatenating ``metas`` along ``axis``; -1 where unknown."""
    if not metas:
        ctx.fail("needs at least one input", slot=slot)
    first = list(metas[0].shape)
    for i, m in enumerate(metas[1:], 1):
        if len(m.shape) != len(first):
            ctx.fail(f"input {i} has shape {list(m.shape)} (rank {len(m.shape)}) but input 0 "
                     f"has {first} (rank {len(first)}); all inputs need the same rank",
                     slot=slot)
    if axis is None:  # AxisTensor: known only when the op runs
        return [-1] * len(first)
    axis = _check_axis(ctx, axis, first, slot)
    out = []
    for d in range(len(first)):
        dims = [m.shape[d] for m in metas]
        if d == axis:
            out.append(-1 if any(n < 0 for n in dims) else sum(dims))
            continue
        known = {n for n in dims if n >= 0}
        if len(known) > 1:
            ctx.fail(f"inputs {[list(m.shape) for m in metas]} differ in dim {d}; only the "
                     f"concat axis {axis} may differ", slot=slot)
        out.append(known.pop() if known else -1)
    return out


def _infer_concat(ctx):
    xs = ctx.inputs("X")
    axis = None if ctx.input("AxisTensor") is not None else ctx.attr("axis")
    ctx.set_output("Out", _concat_shape(ctx, xs, axis, "X"), like=xs[0] if xs else None)


def _concat_grad(xp, attrs, xs, axis_tensor, dout):
    """One slice of dOut per input, along the concat axis (views of dOut)."""
    axis = _axis_of(attrs, axis_tensor, dout.ndim)
    index, start, out = [slice(None)] * dout.ndim, 0, []
    for x in xs:
        index[axis] = slice(start, start + x.shape[axis])
        start += x.shape[axis]
        out.append(dout[tuple(index)])
    return out


def _infer_concat_grad(ctx):
    for i, x in enumerate(ctx.inputs("X")):
        ctx.set_output("X@GRAD", x.shape, like=x, index=i)


def _concat_grad_maker(op):
    return [GradOp("concat_grad",
                   {"X": op.input("X"), "AxisTensor": op.input("AxisTensor"),
                    "Out@GRAD": [grad_name(op.output("Out")[0])]},
                   {"X@GRAD": [grad_name(n) for n in op.input("X")]})]


_CONCAT_ATTRS = [Attr("axis", AttrType.INT, 0, doc="dim to join; negative counts from the end")]
register("concat",
         inputs=[Slot("X", duplicable=True),
                 Slot("AxisTensor", dispensable=True, no_grad=True, doc="int axis at run time")],
         outputs=["Out"], attrs=_CONCAT_ATTRS, infer_shape=_infer_concat, kernel=_concat,
         grad=_concat_grad_maker, doc="Out = X[0], X[1], ... joined along axis",
         category="shape", lod=True)
register_grad("concat", _CONCAT_ATTRS,
               [Slot("X", duplicable=True), Slot("AxisTensor", dispensable=True),
                Slot("Out@GRAD")],
               [Slot("X@GRAD", duplicable=True, dispensable=True)],
               _infer_concat_grad, _concat_grad)


# ---------------------------------------------------------------------- split
def _split_sizes(attrs, sections, dim, fail):
    """Sizes of the pieces of a dim of length ``dim`` (-1 in sections: the rest)."""
    num = attrs["num"]
    if num > 0:
        if dim % num:
            fail(f"num={num} does not divide the split dim of length {dim}")
        return [dim // num] * num
    if not sections:
        fail("needs num > 0 or a non-empty sections")
    if sections.count(-1) > 1 or any(s < -1 for s in sections):
        fail(f"sections {sections} may hold one -1 (the rest) and otherwise sizes >= 0")
    rest = dim - sum(s for s in sections if s != -1)
    sizes = [rest if s == -1 else s for s in sections]
    if rest < 0 or sum(sizes) != dim:
        fail(f"sections {sections} do not add up to the split dim of length {dim}")
    return sizes


def static_split_sizes(attrs, dim):
    """The piece sizes ``split`` cuts a dim of length ``dim`` into by its ``num`` or
    ``sections`` attribute, or None when they do not fit (the kernel then names the
    error). For planners that lay out the pieces before anything runs
    (``recurrent.column_splits``)."""
    def fail(message):
        raise ValueError(message)
    try:
        return _split_sizes(attrs, list(attrs["sections"]), dim, fail)
    except ValueError:
        return None


def _column_pieces(attrs, x):
    """The pieces of a rank-2 X cut along its columns by the ``num`` or ``sections``
    attribute (a recurrent step's gate split, once per frame), or None when anything is
    off (a -1, sizes not adding up): the general path then does it, or names the error."""
    dim, num = x.shape[1], attrs["num"]
    if num > 0:
        size = dim // num
        if size == 0 or dim % num:
            return None
        return [x[:, start:start + size] for start in range(0, dim, size)]
    start, out = 0, []
    for size in attrs["sections"]:
        if size < 0:
            return None
        out.append(x[:, start:start + size])
        start += size
    return out if out and start == dim else None


def _split(xp, attrs, x, axis_tensor, sections_list):
    if axis_tensor is None and not sections_list and x.ndim == 2 and attrs["axis"] in (1, -1):
        pieces = _column_pieces(attrs, x)  # the same views as below, without its checks
        if pieces is not None:
            return pieces
    axis = _axis_of(attrs, axis_tensor, x.ndim)
    sections = [_scalar(t) for t in sections_list] if sections_list else attrs["sections"]

    def fail(message):
        raise ShapeError(f"op split: X {list(x.shape)}, axis {axis}: {message}")

    sizes = _split_sizes(attrs, sections, x.shape[axis], fail)
    # Basic slicing gives the same views as xp.split at a fraction of its cost (a gate
    # split runs once per time step of a recurrent group).
    index, start, out = [slice(None)] * x.ndim, 0, []
    for size in sizes:
        index[axis] = slice(start, start + size)
        out.append(x[tuple(index)])
        start += size
    return out


def _infer_split(ctx):
    x = ctx.input("X")
    shape = list(x.shape)
    num, sections = ctx.attr("num"), ctx.attr("sections")
    count = num if num > 0 else len(sections)
    if count == 0:
        ctx.fail("needs num > 0 or a non-empty sections")
    if ctx.input("AxisTensor") is not None:
        for i in range(count):
            ctx.set_output("Out", [-1] * len(shape), like=x, index=i)
        return
    axis = _check_axis(ctx, ctx.attr("axis"), shape)

    def fail(message):
        ctx.fail(f"X {shape}, axis {axis}: {message}")

    if ctx.inputs("SectionsTensorList"):
        sizes = [-1] * count
    elif shape[axis] < 0:
        if num <= 0 and (sections.count(-1) > 1 or any(s < -1 for s in sections)):
            fail(f"sections {sections} may hold one -1 (the rest) and otherwise sizes >= 0")
        sizes = [-1] * count if num > 0 else list(sections)
    else:
        sizes = _split_sizes(ctx.attrs, sections, shape[axis], fail)
    for i, size in enumerate(sizes):
        ctx.set_output("Out", shape[:axis] + [size] + shape[axis + 1:], like=x, index=i)


def _split_grad(xp, attrs, axis_tensor, douts):
    return xp.concatenate(douts, axis=_axis_of(attrs, axis_tensor, douts[0].ndim))


def _infer_split_grad(ctx):
    douts = ctx.inputs("Out@GRAD")
    axis = None if ctx.input("AxisTensor") is not None else ctx.attr("axis")
    ctx.set_output("X@GRAD", _concat_shape(ctx, douts, axis, "Out@GRAD"),
                   like=douts[0] if douts else None)


def _split_grad_maker(op):
    # Out@GRAD pieces nobody produced are zero-filled by backward (fill_zeros_like).
    return [GradOp("split_grad",
                   {"AxisTensor": op.input("AxisTensor"),
                    "Out@GRAD": [grad_name(n) for n in op.output("Out")]},
                   {"X@GRAD": [grad_name(op.input("X")[0])]})]


_SPLIT_ATTRS = [
    Attr("sections", AttrType.INTS, [], doc="piece sizes; one -1 means the rest"),
    Attr("num", AttrType.INT, 0, doc="number of equal pieces (used when > 0)"),
    Attr("axis", AttrType.INT, 0, doc="dim to cut; negative counts from the end"),
]
register("split",
         inputs=["X", Slot("AxisTensor", dispensable=True, no_grad=True),
                 Slot("SectionsTensorList", duplicable=True, dispensable=True, no_grad=True)],
         outputs=[Slot("Out", duplicable=True)], attrs=_SPLIT_ATTRS,
         infer_shape=_infer_split, kernel=_split, grad=_split_grad_maker, share_lod=(),
         doc="Out[0], Out[1], ... = X cut along axis into num or sections pieces",
         category="shape")
# Paddle makes a ``concat`` as split's gradient; ours is a concat under its own name,
# because backward copies the forward attributes (sections, num) onto the grad op.
register("split_grad",
         inputs=[Slot("AxisTensor", dispensable=True), Slot("Out@GRAD", duplicable=True)],
         outputs=["X@GRAD"], attrs=_SPLIT_ATTRS, infer_shape=_infer_split_grad,
         kernel=_split_grad, doc="gradient of split: the out gradients joined along axis",
         category="gradient", paddle=False, share_lod=(), grad_of="split")


# ------------------------------------------------- reshape2 / transpose2 XShape
# ------------------------------------------------------------------- reshape2
def resolve_shape(x_shape, target, fail):
    """Paddle's rule on a known X shape: 0 copies X's dim, one -1 is inferred."""
    if 0 in x_shape:
        return _resolve_zero_size(x_shape, target, fail)
    out = []
    for i, d in enumerate(target):
        if d == 0:
            if i >= len(x_shape):
                fail(f"shape {target}: 0 at position {i} copies a dim X does not have")
            out.append(x_shape[i])
        elif d < -1:
            fail(f"shape {target}: dims must be > 0, 0 (copy) or -1 (infer)")
        else:
            out.append(d)
    if out.count(-1) > 1:
        fail(f"shape {target} has more than one -1")
    total, known = prod(x_shape), prod(d for d in out if d != -1)
    if -1 in out:
        if known == 0 or total % known:
            fail(f"cannot reshape X {list(x_shape)} ({total} elements) to {target}: "
                 f"{total} is not a multiple of {known}")
        out[out.index(-1)] = total // known
    elif known != total:
        fail(f"cannot reshape X {list(x_shape)} ({total} elements) to {target} "
             f"({known} elements)")
    return out


def _resolve_zero_size(x_shape, target, fail):
    """Paddle's rule for an X without elements: a 0 in shape is a literal 0 dim (X [0, 2]
    to [2, 0] gives [2, 0]), and a -1 is 0 unless another dim is 0, which makes it
    ambiguous."""
    if any(d < -1 for d in target) or target.count(-1) > 1:
        fail(f"shape {target}: dims must be >= 0 with at most one -1")
    if -1 in target:
        if 0 in target:
            fail(f"cannot reshape X {list(x_shape)} to {target}: with a 0 dim the -1 could "
                 "be any number")
        return [0 if d == -1 else d for d in target]
    if 0 not in target:
        fail(f"cannot reshape X {list(x_shape)} (0 elements) to {target} ({prod(target)} "
             "elements)")
    return list(target)


def _reshape_target(attrs, shape_tensor, shape_list):
    """The target shape: ShapeTensor (list of scalars) > Shape (1-D tensor) > attr."""
    if shape_list:
        return [_scalar(t) for t in shape_list]
    if shape_tensor is not None:
        return [int(d) for d in shape_tensor.tolist()]
    return list(attrs["shape"])


def _reshape2(xp, attrs, x, shape_tensor, shape_list):
    target = _reshape_target(attrs, shape_tensor, shape_list)

    def fail(message):
        raise ShapeError(f"op reshape2: {message}")

    return x.reshape(resolve_shape(tuple(x.shape), target, fail)), xshape(xp, x)


def infer_reshape2(ctx):
    x = ctx.input("X")
    xs = list(x.shape)
    ctx.set_output("XShape", [0] + xs, like=x)
    if ctx.inputs("ShapeTensor"):
        ctx.set_output("Out", [-1] * len(ctx.inputs("ShapeTensor")), like=x)
        return
    if ctx.input("Shape") is not None:
        n = ctx.input("Shape").shape[0] if ctx.input("Shape").shape else 1
        ctx.set_output("Out", [-1] * max(n, 1), like=x)
        return
    target = ctx.attr("shape")
    if numel(xs) >= 0:
        out = resolve_shape(xs, target, ctx.fail)
        ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))
        return
    # X has unknown dims. A 0 that copies an unknown dim cancels it on both sides,
    # so a -1 batch dim passes through and the rest can still be inferred or checked.
    out = []
    for i, d in enumerate(target):
        if d == 0 and i >= len(xs):
            ctx.fail(f"shape {target}: 0 at position {i} copies a dim X {xs} does not have")
        if d < -1:
            ctx.fail(f"shape {target}: dims must be > 0, 0 (copy) or -1 (infer)")
        out.append(xs[i] if d == 0 else d)
    if target.count(-1) > 1:
        ctx.fail(f"shape {target} has more than one -1")
    cancelled = {i for i, d in enumerate(target) if d == 0 and xs[i] < 0}
    x_rest = [n for i, n in enumerate(xs) if i not in cancelled]
    out_rest = prod(n for i, n in enumerate(out) if i not in cancelled and target[i] != -1)
    x_total, x_known = numel(x_rest), prod(n for n in x_rest if n >= 0)
    if -1 in target:
        infer = target.index(-1)
        if x_total >= 0:
            if out_rest == 0 or x_total % out_rest:
                ctx.fail(f"cannot reshape X {xs} to {target}: {x_total} is not a multiple "
                         f"of {out_rest}")
            out[infer] = x_total // out_rest
    elif x_total >= 0 and x_total != out_rest:
        ctx.fail(f"cannot reshape X {xs} to {target}: {x_total} elements against {out_rest}")
    elif x_total < 0 and x_known > 0 and out_rest % x_known:
        ctx.fail(f"cannot reshape X {xs} to {target} ({out_rest} elements): not a multiple "
                 f"of X's known {x_known} elements")
    ctx.set_output("Out", out, like=x, lod_level=rows_lod_level(x, out))


_RESHAPE_ATTRS = [
    Attr("shape", AttrType.INTS, [], doc="target shape; 0 copies X's dim, one -1 is inferred"),
    Attr("use_quantizer", AttrType.BOOLEAN, False),
    Attr("mkldnn_data_type", AttrType.STRING, "float32", extra=True),
]
register("reshape2",
         inputs=["X", Slot("Shape", dispensable=True, no_grad=True, doc="1-D int tensor"),
                 Slot("ShapeTensor", duplicable=True, dispensable=True, no_grad=True,
                      doc="one 1-element int tensor per dim")],
         outputs=["Out", Slot("XShape", intermediate=True, doc="[0] + X.shape, for backward")],
         attrs=_RESHAPE_ATTRS, infer_shape=infer_reshape2, kernel=lod_if_rows_kept(_reshape2),
         grad=xshape_grad_maker("reshape2_grad"), lod=True,
         doc="Out = X with a new shape (same elements, same order)", category="shape")
register_grad("reshape2", _RESHAPE_ATTRS, *XSHAPE_GRAD_SLOTS, infer_from_xshape,
               lambda xp, attrs, meta, dout: dout.reshape(meta.shape[1:]))


# ----------------------------------------------------------------- transpose2
def _perm(axis, ndim):
    return [a + ndim if a < 0 else a for a in axis]


def _transpose2(xp, attrs, x):
    return x.transpose(_perm(attrs["axis"], x.ndim)), xshape(xp, x)


def _transpose2_grad(xp, attrs, meta, dout):
    perm = _perm(attrs["axis"], dout.ndim)
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return dout.transpose(inverse)


def _infer_transpose2(ctx):
    x = ctx.input("X")
    xs, axis = list(x.shape), ctx.attr("axis")
    perm = _perm(axis, len(xs))
    if sorted(perm) != list(range(len(xs))):
        ctx.fail(f"axis {axis} is not a permutation of the {len(xs)} dims of X {xs}")
    ctx.set_output("Out", [xs[p] for p in perm], like=x, lod_level=0)  # no LoD, as Paddle
    ctx.set_output("XShape", [0] + xs, like=x)


_TRANSPOSE_ATTRS = [Attr("axis", AttrType.INTS, REQUIRED, doc="Out dim i is X dim axis[i]")]
register("transpose2", inputs=["X"],
         outputs=["Out", Slot("XShape", intermediate=True, doc="[0] + X.shape, for backward")],
         attrs=_TRANSPOSE_ATTRS, infer_shape=_infer_transpose2, kernel=_transpose2,
         grad=xshape_grad_maker("transpose2_grad"), share_lod=(),
         doc="Out = X with its dims permuted by axis", category="shape")
register_grad("transpose2", _TRANSPOSE_ATTRS, *XSHAPE_GRAD_SLOTS, infer_from_xshape,
               _transpose2_grad)


# --------------------------------------------------------------------- assign
def _infer_assign(ctx):
    x = ctx.input("X")
    if x is not None:
        ctx.set_output("Out", x.shape, like=x)


def _assign_grad_maker(op):
    # Paddle's gradient of assign is another assign: X@GRAD = Out@GRAD.
    return [GradOp("assign", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]})]


register("assign", inputs=[Slot("X", dispensable=True)], outputs=["Out"],
         infer_shape=_infer_assign, kernel=lambda xp, attrs, x: None if x is None else x.copy(),
         grad=_assign_grad_maker, doc="Out = a copy of X", category="shape")
