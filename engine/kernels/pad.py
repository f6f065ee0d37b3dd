"""Padding: ``pad3d`` (constant/reflect/replicate/circular on 5-D tensors) and the legacy
constant ``pad`` (any rank), with their ``_grad`` ops, as Paddle's CPU kernels.

pad3d's ``paddings`` are [left, right, top, bottom, front, back] (width first) and may
come from the dispensable int ``Paddings`` tensor instead. Output position ``o`` along
a padded dim of size D reads input ``i = o - before``, mapped by the mode: constant
gives ``value`` outside [0, D); reflect mirrors without repeating the edge
(``-i``, ``2(D-1) - i``; each padding must be < D); replicate clamps; circular wraps
(``i mod D``). Negative paddings crop, as in Paddle.

Kernels gather each padded dim with one ``take`` of an index vector (no Python loop over
elements); the gradient sums back through the same map with a small 0/1 matrix per dim
(reflect/replicate/circular send several outputs to one input).
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register

_MODES = ("constant", "reflect", "replicate", "circular")


def source_index(size, before, after, mode):
    """(input index per output position, in-range mask) along one dim (numpy)."""
    i = np.arange(size + before + after) - before
    valid = (i >= 0) & (i < size)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i >= size, 2 * (size - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, size - 1)
    elif mode == "circular":
        i = np.mod(i, size)
    return np.clip(i, 0, max(size - 1, 0)), valid if mode == "constant" else np.ones_like(valid)


def _gather(xp, x, axes, pairs, mode, value):
    y, mask = x, None
    for axis, (before, after) in zip(axes, pairs):
        if before == 0 and after == 0:
            continue
        idx, valid = source_index(x.shape[axis], before, after, mode)
        y = xp.take(y, xp.asarray(idx), axis=axis)
        if mode == "constant" and not valid.all():
            shape = [1] * x.ndim
            shape[axis] = len(valid)
            v = xp.asarray(valid).reshape(shape)
            mask = v if mask is None else mask & v
    if mask is not None:
        y = xp.where(mask, y, xp.asarray(value, dtype=x.dtype))
    return y


def _scatter(xp, dout, x_shape, axes, pairs, mode):
    g = dout
    for axis, (before, after) in zip(axes, pairs):
        if before == 0 and after == 0:
            continue
        size = x_shape[axis]
        idx, valid = source_index(size, before, after, mode)
        m = np.zeros((len(idx), size))
        np.add.at(m, (np.nonzero(valid)[0], idx[valid]), 1)
        g = xp.swapaxes(xp.swapaxes(g, axis, -1) @ xp.asarray(m, dtype=g.dtype), axis, -1)
    return xp.ascontiguousarray(g)


# ---------------------------------------------------------------------- pad3d
def _pad3d_args(attrs, x, paddings):
    """(spatial axes D, H, W; their (before, after) pairs) of one pad3d call."""
    def fail(message):
        raise ShapeError(f"op pad3d: X {list(x.shape)}: {message}")

    if x.ndim != 5:
        fail("X must be 5-D (NCDHW or NDHWC)")
    pads = [int(p) for p in (paddings.ravel().tolist() if paddings is not None
                             else attrs["paddings"])]
    if len(pads) != 6:
        fail(f"paddings {pads} must hold 6 values [left, right, top, bottom, front, back]")
    axes = (1, 2, 3) if attrs["data_format"] == "NDHWC" else (2, 3, 4)
    pairs = [(pads[4], pads[5]), (pads[2], pads[3]), (pads[0], pads[1])]
    for axis, (a, b), name in zip(axes, pairs, "DHW"):
        size = x.shape[axis]
        if size + a + b < 0:
            fail(f"paddings {pads} leave a negative {name} dim")
        if attrs["mode"] == "reflect" and (a >= size or b >= size):
            fail(f"reflect paddings {pads} must be < the input's {name} dim {size}")
        if attrs["mode"] in ("replicate", "circular") and size == 0:
            fail(f"{attrs['mode']} padding needs a non-empty {name} dim")
    return axes, pairs


def _pad3d(xp, attrs, x, paddings):
    axes, pairs = _pad3d_args(attrs, x, None if paddings is None else _host(paddings))
    return _gather(xp, x, axes, pairs, attrs["mode"], attrs["value"])


def _pad3d_grad(xp, attrs, x, paddings, dout):
    axes, pairs = _pad3d_args(attrs, x, None if paddings is None else _host(paddings))
    return _scatter(xp, dout, x.shape, axes, pairs, attrs["mode"])


def _host(array):
    """A small int tensor's values on the host (cupy arrays have .get())."""
    return np.asarray(array.get() if hasattr(array, "get") else array)


def _infer_pad3d(ctx):
    x = ctx.input("X")
    xs = list(x.shape)
    if len(xs) != 5:
        ctx.fail(f"X {xs} must be 5-D (NCDHW or NDHWC)", slot="X")
    channel_last = ctx.attr("data_format") == "NDHWC"
    axes = (1, 2, 3) if channel_last else (2, 3, 4)
    out = list(xs)
    if ctx.input("Paddings") is not None:  # values known only at run time
        for axis in axes:
            out[axis] = -1
    else:
        pads = list(ctx.attr("paddings"))
        if len(pads) != 6:
            ctx.fail(f"paddings {pads} must hold 6 values [left, right, top, bottom, front, "
                     "back]", slot="X")
        for axis, (a, b) in zip(axes, [(pads[4], pads[5]), (pads[2], pads[3]),
                                       (pads[0], pads[1])]):
            if xs[axis] >= 0:
                if ctx.attr("mode") == "reflect" and (a >= xs[axis] or b >= xs[axis]):
                    ctx.fail(f"X {xs}: reflect paddings {pads} must be < the padded dim "
                             f"{xs[axis]}", slot="X")
                out[axis] = xs[axis] + a + b
    ctx.set_output("Out", out, like=x)


register(
    "pad3d", inputs=["X", Slot("Paddings", dispensable=True, no_grad=True,
                               doc="int tensor [6] overriding the paddings attribute")],
    outputs=["Out"],
    attrs=[Attr("paddings", AttrType.INTS,
                doc="[left, right, top, bottom, front, back] (width first)"),
           Attr("mode", AttrType.STRING, "constant", one_of(*_MODES),
                doc="constant, reflect (no edge repeat), replicate or circular"),
           Attr("value", AttrType.FLOAT, 0.0, doc="fill value of constant mode"),
           Attr("data_format", AttrType.STRING, "NCDHW", one_of("NCDHW", "NDHWC"),
                doc="NCDHW or NDHWC")],
    infer_shape=_infer_pad3d, kernel=_pad3d,
    grad=GradSpec(_pad3d_grad, inputs=("X", "Paddings")),
    doc="Out = X padded on its depth, height and width", category="shape")


# ------------------------------------------------------------------------ pad
def _pad_pairs(op, x_shape, paddings):
    if len(paddings) != 2 * len(x_shape) or any(p < 0 for p in paddings):
        raise ShapeError(f"op {op}: X {list(x_shape)}: paddings {list(paddings)} must hold "
                         f"2 x rank = {2 * len(x_shape)} values, all >= 0")
    return [(paddings[2 * i], paddings[2 * i + 1]) for i in range(len(x_shape))]


def _pad(xp, attrs, x):
    pairs = _pad_pairs("pad", x.shape, attrs["paddings"])
    return xp.pad(x, pairs, constant_values=x.dtype.type(attrs["pad_value"]))


def _pad_grad(xp, attrs, x, dout):
    pairs = _pad_pairs("pad_grad", x.shape, attrs["paddings"])
    return xp.ascontiguousarray(dout[tuple(slice(a, a + s) for (a, _), s in zip(pairs, x.shape))])


def _infer_pad(ctx):
    x = ctx.input("X")
    xs, pads = list(x.shape), list(ctx.attr("paddings"))
    if len(pads) != 2 * len(xs) or any(p < 0 for p in pads):
        ctx.fail(f"X {xs}: paddings {pads} must hold 2 x rank = {2 * len(xs)} values, "
                 "all >= 0", slot="X")
    ctx.set_output("Out", [d + pads[2 * i] + pads[2 * i + 1] if d >= 0 else -1
                           for i, d in enumerate(xs)], like=x)


register(
    "pad", inputs=["X"], outputs=["Out"],
    attrs=[Attr("paddings", AttrType.INTS,
                doc="[before_0, after_0, before_1, after_1, ...], 2 per dim, >= 0"),
           Attr("pad_value", AttrType.FLOAT, 0.0, doc="fill value")],
    infer_shape=_infer_pad, kernel=_pad, grad=GradSpec(_pad_grad, inputs=("X",)),
    doc="Out = X with pad_value added before and after each dim", category="shape")
