"""Helpers shared by kernel families: Paddle broadcasting, shape checks, axes, and the
small int tensors that override int-list attributes."""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import VarMeta

_add_reduce = np.add.reduce


def align_y(y, x_ndim, axis):
    """Reshape ``y`` so numpy broadcasting matches Paddle's ``axis`` rule: y's dims line
    up with x's dims starting at ``axis`` (-1: trailing, numpy's own rule)."""
    if axis == -1 or axis is None or y.ndim == x_ndim:
        return y
    return y.reshape(tuple(y.shape) + (1,) * (x_ndim - axis - y.ndim))


def fitting(buf, shape, dtype):
    """``buf`` when it has exactly ``shape`` and ``dtype`` (a ``kernel_into`` may then
    write its output there: ``ir.registry``), else None."""
    if buf is not None and buf.shape == shape and buf.dtype == dtype:
        return buf
    return None


def written(write, *args, **kwargs):
    """``write(*args, **kwargs)`` (a numpy call with an ``out`` buffer), or None where
    numpy refuses the buffer before writing anything: a shape that does not fit
    (ValueError) or, with ``casting="no"``, another dtype (TypeError). The ``kernel_into``
    fast paths write straight into a dead input and go the checked way on None."""
    try:
        return write(*args, **kwargs)
    except (ValueError, TypeError):
        return None


_LEADING = tuple(tuple(range(n)) for n in range(8))  # the axes broadcasting puts in front


def unbroadcast(g, shape):
    """Sum ``g`` over the axes broadcasting added to reach it from ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = _LEADING[lead] if lead < len(_LEADING) else tuple(range(lead))
    if g.shape[lead:] != shape:  # size-1 dims of ``shape`` stretched, besides (a bias: none)
        axes += tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    # numpy's ndarray.sum is a Python function around add.reduce: call that directly
    out = _add_reduce(g, axis=axes) if g.__class__ is np.ndarray else g.sum(axis=axes)
    # no reshape when the sum has the shape already: a view would keep the next run from
    # reusing the array (runtime.recycle offers only arrays that own their memory)
    return out if out.shape == shape else out.reshape(shape)


def broadcast_shape(ctx, x: VarMeta, y: VarMeta, axis):
    """Output dims of a Paddle element-wise op, with -1 for unknown; fails clearly."""
    xs, ys = list(x.shape), list(y.shape)
    if axis not in (-1, None) and len(ys) < len(xs):
        if axis < 0 or axis + len(ys) > len(xs):
            ctx.fail(f"axis={axis} cannot place Y {ys} inside X {xs}", slot="Y")
        ys = ys + [1] * (len(xs) - axis - len(ys))
    out = broadcast_dims(xs, ys)
    if out is None:
        ctx.fail(f"X {list(x.shape)} and Y {list(y.shape)} do not broadcast (axis={axis})",
                 slot="Y")
    return out


def broadcast_dims(xs, ys):
    """numpy's broadcast of two dim lists where -1 is unknown; None if they clash."""
    n = max(len(xs), len(ys))
    xs, ys = [1] * (n - len(xs)) + list(xs), [1] * (n - len(ys)) + list(ys)
    out = []
    for a, b in zip(xs, ys):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif a == -1 or b == -1:
            out.append(max(a, b))
        else:
            return None
    return out


def numel(shape):
    """Element count of a static shape, or -1 when a dim is unknown."""
    n = 1
    for d in shape:
        if d < 0:
            return -1
        n *= d
    return n


def host_ints(tensor):
    """Python ints of a small int tensor (numpy or cupy)."""
    host = tensor.get() if hasattr(tensor, "get") else tensor
    return [int(v) for v in np.asarray(host).reshape(-1)]


def ints_override(attr_value, tensor, tensor_list):
    """An int-list attribute as Paddle reads it: a 1-D int tensor wins, then a list of
    1-element tensors, then the attribute (shape, axes, repeat_times...)."""
    if tensor is not None:
        return host_ints(tensor)
    if tensor_list:
        return [host_ints(t)[0] for t in tensor_list]
    return list(attr_value)


def checked_axis(axis, rank, op, fail=None):
    """``axis`` in [0, rank) (negative counts from the end); otherwise ``fail(message)``
    (shape inference) or a ShapeError naming ``op``."""
    if not -max(rank, 1) <= axis < max(rank, 1):
        message = f"axis={axis} is out of range for rank {rank}"
        if fail:
            fail(message)
        raise ShapeError(f"op {op}: {message}")
    return axis + rank if axis < 0 else axis
