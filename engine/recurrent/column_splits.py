"""A step block's gate split binds its column views directly, in every driver (issue #16).

An LSTM or GRU step cuts its gate sums ``[n, kH]`` into column blocks with a ``split``
once per frame. Through the plan's general path (a duplicable output, two optional
tensor inputs) and the kernel's checks that costs about 5 us a frame for four views that
basic slicing makes in about 1 us. Where the split's pieces are fixed before anything
runs (a rank-2 X cut along its columns by ``num`` or ``sections``: ``column_split``),
its step binds ``X[:, a:b]`` for each piece with slices made once: the same views
(same memory, shape and strides) the kernel returns. An X that is not the declared
matrix runs the step's own op (which names any error).
"""
from __future__ import annotations

from ..kernels.shape import static_split_sizes


def column_split(plan, step):
    """(X slot, piece slots, [(start, stop)] of the pieces) of ``step``, a ``split`` of a
    rank-2 X along its columns with sizes fixed by its attributes; else None."""
    if step.type != "split" or step.control is not None or len(step.ins) != 3:
        return None
    x, axis_tensor, sections = step.ins
    if not isinstance(x, int) or not x or axis_tensor or sections \
            or step.attrs.get("axis") not in (1, -1):
        return None
    desc = plan.var_descs.get(plan.names[x])
    if desc is None or not desc.type.HasField("dense_tensor"):
        return None
    dims = list(desc.type.dense_tensor.tensor.dims)
    if len(dims) != 2 or dims[1] < 0:
        return None
    sizes = static_split_sizes(step.attrs, dims[1])
    (pieces,) = step.outs
    if sizes is None or not isinstance(pieces, tuple) or len(pieces) != len(sizes):
        return None
    spans, start = [], 0
    for size in sizes:
        spans.append((start, start + size))
        start += size
    return x, pieces, spans


def column_split_run(step, x_slot, pieces, spans):
    """``run(vals)`` of a column split: each piece slot gets its view of X."""
    own, width = step.run, spans[-1][1]
    binds = [(p, (slice(None), slice(a, b))) for p, (a, b) in zip(pieces, spans) if p]

    def run(vals):
        x = vals[x_slot]
        if getattr(x, "ndim", 0) == 2 and x.shape[1] == width:
            for piece, key in binds:
                vals[piece] = x[key]
            return
        own(vals)
    run.column_split = True  # (so preparing the group again does not wrap it twice)
    return run


def bind_column_splits(plan):
    """Rebind the ``run`` of every column split of ``plan`` (module docstring)."""
    for step in plan.steps:
        found = column_split(plan, step)
        if found is not None and not getattr(step.run, "column_split", False):
            step.run = column_split_run(step, *found)


__all__ = ["column_split", "column_split_run", "bind_column_splits"]
