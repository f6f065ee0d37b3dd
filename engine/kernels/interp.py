"""Resizing: ``linear_interp_v2``, ``bilinear_interp_v2``, ``trilinear_interp_v2``,
``nearest_interp_v2``, ``bicubic_interp_v2`` and their gradients, with Paddle's slots,
attributes and CPU coordinate rules (phi interpolate_kernel.cc).

Output size, first match wins: SizeTensor (one [1] int tensor per spatial dim), then
OutSize ([k] ints), then ``out_dim = int(in_dim * scale)`` from the Scale tensor (one
value for every dim, or one per dim) or the ``scale`` attribute (one value per dim; one
value only for 1-D), then the ``out_d/out_h/out_w`` attributes. When every spatial dim
keeps its size the input is copied. Otherwise each dim maps output index k to a source
coordinate with ``ratio = (in - 1) / (out - 1)`` under align_corners, else ``1 / scale``
when a scale was given, else ``in / out`` (in float32, as Paddle computes it):

- nearest: ``int(ratio * k + 0.5)`` with align_corners, else ``int(ratio * k)``;
- linear: with align_mode 0 and no align_corners the half-pixel source
  ``ratio * (k + 0.5) - 0.5`` (clamped at 0), else ``ratio * k``; it blends the two
  neighbours ``floor`` and ``min(floor + 1, in - 1)``;
- bicubic: source ``ratio * k`` (align_corners) or the half-pixel one, four taps at
  ``floor - 1 .. floor + 2`` clamped to the edge, Keys' kernel with A = -0.75.

As in Paddle, ``interp_method`` (not the op type) picks the method, and X's rank picks
the dims: 3-D X takes linear, 4-D bilinear, nearest or bicubic, 5-D trilinear or nearest.
Every method is separable, so the kernel resizes one spatial axis at a time with
gathers (no loop over pixels); the gradient runs the same taps backwards, again as
gathers (input index j sums the outputs that read it), or as one matmul with the axis's
[out, in] weight matrix when an input feeds many outputs (large upsampling).
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register

_METHODS = {3: ("linear",), 4: ("bilinear", "nearest", "bicubic"), 5: ("trilinear", "nearest")}
_CUBIC_A = -0.75


def _spatial_axes(attrs, ndim):
    return list(range(1, ndim - 1)) if attrs["data_layout"] == "NHWC" else list(range(2, ndim))


def _check_method(op, attrs, ndim):
    method = attrs["interp_method"]
    if method not in _METHODS.get(ndim, ()):
        raise ShapeError(
            f"op {op}: interp_method '{method}' does not apply to a {ndim}-D X; 3-D X takes "
            "linear, 4-D bilinear/nearest/bicubic, 5-D trilinear/nearest")
    return method


def _scales(op, attrs, k, scale_tensor):
    """Per-dim scale factors, or None when no scale is given."""
    if scale_tensor is not None:
        values = [float(v) for v in np.asarray(_host(scale_tensor)).reshape(-1)]
        values = values[:k] if len(values) > 1 else values[:1] * k
    else:
        given = list(attrs["scale"])
        if not given:
            return None
        if len(given) < k and k > 1:
            raise ShapeError(f"op {op}: scale {given} must hold {k} values, one per spatial dim")
        values = given[:k]
    if len(values) < k or any(v <= 0 for v in values):
        raise ShapeError(f"op {op}: scale {values} must hold {k} values > 0")
    return values


def _host(value):
    return value.get() if hasattr(value, "get") else value


def _resolve(op, attrs, in_sizes, out_size, size_tensor, scale_tensor):
    """(out sizes, per-dim scales or None) as Paddle's kernel resolves them."""
    k = len(in_sizes)
    scales = None
    if size_tensor:
        out = [int(np.asarray(_host(t)).reshape(-1)[0]) for t in size_tensor]
        if len(out) != k:
            raise ShapeError(f"op {op}: SizeTensor holds {len(out)} tensors; X has {k} "
                             "spatial dims")
    else:
        scales = _scales(op, attrs, k, scale_tensor)
        if scales is not None:
            out = [int(np.float32(n) * np.float32(s)) for n, s in zip(in_sizes, scales)]
        else:
            out = [attrs[name] for name in ("out_d", "out_h", "out_w")[3 - k:]]
        if out_size is not None:
            out = [int(v) for v in np.asarray(_host(out_size)).reshape(-1)[:k]]
    if len(out) != k or any(n <= 0 for n in out):
        raise ShapeError(f"op {op}: output size {out} must hold {k} values > 0; give "
                         "out_h/out_w (out_d, for 3-D), scale, OutSize or SizeTensor")
    return out, scales


def _ratio(n_in, n_out, scale, align_corners):
    """Paddle's float32 source step per output index."""
    if n_out <= 1:
        return np.float32(0)
    if align_corners:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    if scale is not None:
        return np.float32(1.0 / np.float32(scale))
    return np.float32(n_in) / np.float32(n_out)


def _taps(method, n_in, n_out, ratio, attrs, dtype):
    """(index arrays, weight arrays) of one axis: output k = sum_t w_t[k] * x[idx_t[k]]."""
    k = np.arange(n_out)
    align_corners = attrs["align_corners"]
    scaled = (ratio * k.astype(np.float32)).astype(np.float32)  # float ratio * int k
    half = float(ratio) * (k + 0.5) - 0.5                         # computed in double
    if method == "nearest":
        idx = np.trunc(scaled.astype(np.float64) + 0.5) if align_corners else np.trunc(scaled)
        return [np.minimum(idx.astype(np.int64), n_in - 1)], [np.ones(n_out, dtype)]
    if method == "bicubic":
        src = (scaled if align_corners else half).astype(dtype)
        floor = np.floor(src)
        t = src - floor
        floor = floor.astype(np.int64)
        idx = [np.clip(floor + j, 0, n_in - 1) for j in (-1, 0, 1, 2)]
        a = _CUBIC_A
        near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1           # noqa: E731  |x| <= 1
        far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a      # noqa: E731  1 < |x| < 2
        return idx, [far(t + 1), near(t), near(1 - t), far(2 - t)]
    align_flag = attrs["align_mode"] == 0 and not align_corners
    low = np.maximum(np.trunc(half if align_flag else scaled).astype(np.int64), 0)
    high = np.minimum(low + 1, n_in - 1)
    if align_flag and method == "linear":
        # Paddle's 1-D kernel keeps its float half-pixel source in double (measured: its
        # weights are double ``src - low`` rounded once); the 2-D/3-D ones round it first.
        lam = (np.maximum(half, 0) - low).astype(np.float32)
    else:
        src = np.maximum(half.astype(np.float32), np.float32(0))
        lam = ((src if align_flag else scaled) - low.astype(np.float32)).astype(np.float32)
    return [low, high], [(np.float32(1) - lam).astype(dtype), lam.astype(dtype)]


def _plan(op, attrs, x, out_size, size_tensor, scale_tensor):
    """Per spatial axis (axis, in size, out size, idx list, weight list); None = copy."""
    method = _check_method(op, attrs, x.ndim)
    method = "bilinear" if method == "trilinear" else method
    axes = _spatial_axes(attrs, x.ndim)
    in_sizes = [x.shape[a] for a in axes]
    out, scales = _resolve(op, attrs, in_sizes, out_size, size_tensor, scale_tensor)
    if out == in_sizes:
        return out, None
    dtype = np.dtype(str(x.dtype))
    if dtype.kind not in "f":  # integer images (uint8): float32 weights, truncated back
        dtype = np.dtype(np.float32)
    plan = []
    for i, (axis, n_in, n_out) in enumerate(zip(axes, in_sizes, out)):
        ratio = _ratio(n_in, n_out, scales[i] if scales else None, attrs["align_corners"])
        idx, weights = _taps(method, n_in, n_out, ratio, attrs, dtype)
        plan.append((axis, n_in, n_out, idx, [w.astype(dtype) for w in weights]))
    return out, plan


def _along(shape_len, axis, v):
    shape = [1] * shape_len
    shape[axis] = -1
    return v.reshape(shape)


def _interp(op):
    def kernel(xp, attrs, x, out_size, size_tensor, scale_tensor):
        _, plan = _plan(op, attrs, x, out_size, size_tensor, scale_tensor)
        if plan is None:
            return x.copy()
        blend = x.dtype.kind != "f" and any(len(p[3]) > 1 for p in plan)
        y = x.astype(xp.float32) if blend else x
        # Last axis first: gathering along the innermost axis is the slow, element-wise
        # one, so it runs while the array is smallest (before the other axes grow it).
        for axis, _, _, idx, weights in reversed(plan):
            acc = None
            for i, w in zip(idx, weights):
                term = xp.take(y, xp.asarray(i), axis=axis)
                if len(idx) > 1:
                    term = term * _along(y.ndim, axis, xp.asarray(w))
                acc = term if acc is None else acc + term
            y = acc
        # Paddle assigns the float sum to the integer element type: truncation.
        return y.astype(x.dtype) if blend else y
    return kernel


_MAX_FAN_IN = 8  # transposed taps per input index above which a dense matmul is cheaper


def _transposed_taps(idx, weights, n_in, dtype):
    """The forward taps turned around: for input index j, the output indices K[j, m] that
    read it with weight W[j, m] (padded with weight 0), so dX is a sum of M gathers."""
    j = np.concatenate(idx)
    k = np.concatenate([np.arange(len(i)) for i in idx])
    w = np.concatenate(weights).astype(dtype)
    order = np.argsort(j, kind="stable")
    j, k, w = j[order], k[order], w[order]
    counts = np.bincount(j, minlength=n_in)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(len(j)) - starts[j]
    fan_in = max(int(counts.max()), 1)
    big_k, big_w = np.zeros((n_in, fan_in), np.int64), np.zeros((n_in, fan_in), dtype)
    big_k[j, slot], big_w[j, slot] = k, w
    return big_k, big_w


def _interp_grad(op):
    def kernel(xp, attrs, x, out_size, size_tensor, scale_tensor, dout):
        _, plan = _plan(op, attrs, x, out_size, size_tensor, scale_tensor)
        if plan is None:
            return dout.copy()
        dtype = np.dtype(str(dout.dtype))
        g = dout
        for axis, n_in, n_out, idx, weights in plan:
            big_k, big_w = _transposed_taps(idx, weights, n_in, dtype)
            if big_k.shape[1] <= _MAX_FAN_IN:
                acc = None  # gathers: the exact transpose of the forward, no scatter needed
                for m in range(big_k.shape[1]):
                    term = xp.take(g, xp.asarray(big_k[:, m]), axis=axis) * _along(
                        g.ndim, axis, xp.asarray(big_w[:, m]))
                    acc = term if acc is None else acc + term
                g = acc
                continue
            matrix = np.zeros((n_out, n_in), dtype=dtype)  # large fan-in: dense [out, in]
            np.add.at(matrix, (big_k.reshape(-1), np.repeat(np.arange(n_in), big_k.shape[1])),
                      big_w.reshape(-1))
            g = xp.moveaxis(xp.matmul(xp.moveaxis(g, axis, -1), xp.asarray(matrix)), -1, axis)
        return xp.ascontiguousarray(g)
    return kernel


def _infer(op):
    def infer(ctx):
        x = ctx.input("X")
        rank = len(x.shape)
        method = ctx.attr("interp_method")
        if method not in _METHODS.get(rank, ()):
            ctx.fail(f"interp_method '{method}' does not apply to X {list(x.shape)}: 3-D X "
                     "takes linear, 4-D bilinear/nearest/bicubic, 5-D trilinear/nearest", "X")
        axes = _spatial_axes(ctx.attrs, rank)
        k = len(axes)
        out = [attr for attr in (ctx.attr(n) for n in ("out_d", "out_h", "out_w")[3 - k:])]
        scale = list(ctx.attr("scale"))
        if ctx.inputs("SizeTensor") or ctx.input("OutSize") is not None or ctx.input(
                "Scale") is not None:
            out = [-1] * k
        elif scale:
            if (k > 1 and len(scale) < k) or any(s <= 0 for s in scale[:k]):
                ctx.fail(f"scale {scale} must hold {k} values > 0, one per spatial dim")
            out = [int(np.float32(x.shape[a]) * np.float32(s)) if x.shape[a] > 0 else -1
                   for a, s in zip(axes, scale if len(scale) >= k else scale * k)]
        elif any(n == 0 for n in out):
            ctx.fail(f"no output size: set out_h/out_w (and out_d for 5-D X), scale, "
                     f"OutSize or SizeTensor (X {list(x.shape)})")
        shape = list(x.shape)
        for a, n in zip(axes, out):
            shape[a] = n if n > 0 else -1
        ctx.set_output("Out", shape, like=x, lod_level=0)
    return infer


_DOCS = {
    "linear_interp_v2": "resize the last dim of 3-D X (linear)",
    "bilinear_interp_v2": "resize H and W of 4-D X (bilinear)",
    "trilinear_interp_v2": "resize D, H and W of 5-D X (trilinear)",
    "nearest_interp_v2": "resize the spatial dims of 4-D or 5-D X (nearest neighbour)",
    "bicubic_interp_v2": "resize H and W of 4-D X (bicubic, A = -0.75)",
}

for _op, _doc in _DOCS.items():
    register(
        _op,
        inputs=[Slot("X"),
                Slot("OutSize", dispensable=True, no_grad=True,
                     doc="[k] int tensor: output spatial size (beats scale)"),
                Slot("SizeTensor", duplicable=True, dispensable=True, no_grad=True,
                     doc="one [1] int tensor per spatial dim (beats everything)"),
                Slot("Scale", dispensable=True, no_grad=True,
                     doc="[1] or [k] float tensor: scale factors (beats the attribute)")],
        outputs=[Slot("Out")],
        attrs=[Attr("data_layout", AttrType.STRING, "NCHW", one_of("NCHW", "NHWC"),
                    doc="NCHW: channels before the spatial dims; NHWC: channels last"),
               Attr("out_d", AttrType.INT, 0, doc="output depth (5-D X)"),
               Attr("out_h", AttrType.INT, 0, doc="output height"),
               Attr("out_w", AttrType.INT, 0, doc="output width"),
               Attr("scale", AttrType.FLOATS, [],
                    doc="per spatial dim factor; out = int(in * scale); beats out_*"),
               Attr("interp_method", AttrType.STRING, "bilinear",
                    one_of("linear", "bilinear", "trilinear", "nearest", "bicubic"),
                    doc="the method actually run (Paddle reads this, not the op type)"),
               Attr("align_corners", AttrType.BOOLEAN, True,
                    doc="corner pixels of input and output line up"),
               Attr("align_mode", AttrType.INT, 1, one_of(0, 1),
                    doc="linear methods without align_corners: 0 half-pixel, 1 ratio * k")],
        infer_shape=_infer(_op), kernel=_interp(_op),
        grad=GradSpec(_interp_grad(_op + "_grad"), inputs=("X", "OutSize", "SizeTensor", "Scale"),
                      out_grads=("Out",), in_grads=("X",)),
        share_lod=(), doc=_doc, category="resize")
