"""Paddle 1.x resizes that saved static programs still carry: ``bilinear_interp`` and
``nearest_interp`` (4-D X), with Paddle 3.3.1's slots, attributes and grad ops
(``<op>_grad`` reads X, OutSize, SizeTensor, Scale and Out@GRAD).

They differ from the v2 ops (interp.py) in two ways, both measured against Paddle 3.3.1:

- the output size: SizeTensor, else ``out = int(in * scale)`` with one float scale (the
  Scale tensor's first value beats the attribute) when it is > 0, else out_h/out_w; and
  OutSize beats both. The source step is then always in/out (align_corners: (in-1)/(out-1)),
  never 1/scale;
- bilinear's half-pixel source (align_mode 0 without align_corners) is computed in
  float32, ``ratio * (k + 0.5f) - 0.5f``, where v2 computes it in double: the weights can
  differ from v2's by one float32 ulp.

As in Paddle, ``interp_method`` (not the op type) picks the method. The forward sums
Paddle's four bilinear terms in its order (gathers, no loop over pixels), so integer
images truncate as in Paddle; the gradient multiplies dOut by each axis's [out, in]
weight matrix.
"""
import numpy as np

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register
from ._util import host_ints

_F32 = np.float32


def _spatial(attrs):
    return (1, 2) if attrs["data_layout"] == "NHWC" else (2, 3)


def _out_size(op, attrs, x, out_size, size_tensor, scale_tensor):
    """(out_h, out_w) by Paddle 1.x's rule (module docstring)."""
    if x.ndim != 4:
        raise ShapeError(f"op {op}: X {list(x.shape)} must be 4-D")
    h, w = (x.shape[a] for a in _spatial(attrs))
    if size_tensor:
        out = [host_ints(t)[0] for t in size_tensor]
    else:
        out = [attrs["out_h"], attrs["out_w"]]
        scale = attrs["scale"]
        if scale_tensor is not None:
            host = scale_tensor.get() if hasattr(scale_tensor, "get") else scale_tensor
            scale = float(np.asarray(host).reshape(-1)[0])
        if scale > 0:  # int * float in float32, truncated
            out = [int(_F32(h) * _F32(scale)), int(_F32(w) * _F32(scale))]
        if out_size is not None:
            out = host_ints(out_size)[:2]
    if len(out) != 2 or any(n <= 0 for n in out):
        raise ShapeError(f"op {op}: output size {out} must be 2 values > 0; give out_h/out_w, "
                         "scale, OutSize or SizeTensor")
    return out


def _taps(method, n_in, n_out, align_corners, align_mode):
    """(low, high, lam) of one axis: out[k] = x[low[k]] * (1 - lam[k]) + x[high[k]] * lam[k],
    with float32 weights as Paddle's (nearest: low = high, lam = 0)."""
    ratio = _F32(0)
    if n_out > 1:
        ratio = _F32(n_in - 1) / _F32(n_out - 1) if align_corners else _F32(n_in) / _F32(n_out)
    k = np.arange(n_out)
    scaled = (ratio * k.astype(_F32)).astype(_F32)  # float ratio * int k
    if method == "nearest":
        idx = np.trunc(scaled.astype(np.float64) + 0.5) if align_corners else np.trunc(scaled)
        idx = np.minimum(idx.astype(np.int64), n_in - 1)
        return idx, idx, np.zeros(n_out, _F32)
    if align_mode == 0 and not align_corners:
        src = (ratio * (k.astype(_F32) + _F32(0.5))).astype(_F32) - _F32(0.5)  # float32
    else:
        src = scaled
    low = np.maximum(np.trunc(src).astype(np.int64), 0)
    lam = (np.maximum(src, _F32(0)) - low.astype(_F32)).astype(_F32)
    return low, np.minimum(low + 1, n_in - 1), lam


def _plan(op, attrs, x, out_size, size_tensor, scale_tensor):
    """[(axis, low, high, lam)] for H and W, or None when the size does not change."""
    method = attrs["interp_method"]
    if method not in ("bilinear", "nearest"):
        raise ShapeError(f"op {op}: interp_method '{method}' must be bilinear or nearest")
    out = _out_size(op, attrs, x, out_size, size_tensor, scale_tensor)
    axes = _spatial(attrs)
    if [x.shape[a] for a in axes] == out:
        return None
    return [(a,) + _taps(method, x.shape[a], n, attrs["align_corners"], attrs["align_mode"])
            for a, n in zip(axes, out)]


def _along(ndim, axis, v):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _interp_v1(op):
    def kernel(xp, attrs, x, out_size, size_tensor, scale_tensor):
        plan = _plan(op, attrs, x, out_size, size_tensor, scale_tensor)
        if plan is None:
            return x.copy()
        (ah, hn, hs, lh), (aw, ww, we, lw) = plan
        # integer images (uint8): blended in float32, truncated back, as Paddle's kernel
        ct = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
        xc = x.astype(ct, copy=False)

        def pick(rows, cols):
            return xp.take(xp.take(xc, xp.asarray(rows), axis=ah), xp.asarray(cols), axis=aw)

        if attrs["interp_method"] == "nearest":
            return pick(hn, ww).astype(x.dtype, copy=False)
        weight = lambda axis, w: _along(x.ndim, axis, xp.asarray(w.astype(ct)))  # noqa: E731
        d_n, d_s = weight(ah, lh), weight(ah, _F32(1) - lh)
        d_w, d_e = weight(aw, lw), weight(aw, _F32(1) - lw)
        # Paddle's four terms, in its order (the rounding of integer images depends on it)
        out = (pick(hn, ww) * d_s * d_e + pick(hs, ww) * d_n * d_e
               + pick(hn, we) * d_s * d_w + pick(hs, we) * d_n * d_w)
        return out.astype(x.dtype, copy=False)
    return kernel


def _matrix(n_in, low, high, lam):
    """The [n_out, n_in] matrix of one axis's taps (np.add: low = high at the edge)."""
    k = np.arange(len(low))
    matrix = np.zeros((len(low), n_in), np.float64)
    np.add.at(matrix, (k, low), (_F32(1) - lam).astype(np.float64))
    np.add.at(matrix, (k, high), lam.astype(np.float64))
    return matrix


def _interp_v1_grad(op):
    def kernel(xp, attrs, x, out_size, size_tensor, scale_tensor, dout):
        plan = _plan(op, attrs, x, out_size, size_tensor, scale_tensor)
        if plan is None:
            return dout.copy()
        g = dout
        for axis, low, high, lam in plan:  # dX = dOut times each axis's matrix
            matrix = xp.asarray(_matrix(x.shape[axis], low, high, lam), dtype=g.dtype)
            g = xp.moveaxis(xp.matmul(xp.moveaxis(g, axis, -1), matrix), -1, axis)
        return xp.ascontiguousarray(g)
    return kernel


def _infer_interp_v1(ctx):
    x = ctx.input("X")
    if len(x.shape) != 4:
        ctx.fail(f"X {list(x.shape)} must be 4-D", "X")
    axes = _spatial(ctx.attrs)
    scale = ctx.attr("scale")
    if ctx.inputs("SizeTensor") or ctx.input("OutSize") is not None or \
            ctx.input("Scale") is not None:
        out = [-1, -1]
    elif scale > 0:
        out = [int(_F32(x.shape[a]) * _F32(scale)) if x.shape[a] > 0 else -1 for a in axes]
    else:
        out = [ctx.attr("out_h"), ctx.attr("out_w")]
        if any(n <= 0 for n in out):
            ctx.fail(f"no output size: set out_h/out_w, scale, OutSize or SizeTensor "
                     f"(X {list(x.shape)})")
    shape = list(x.shape)
    for a, n in zip(axes, out):
        shape[a] = n
    ctx.set_output("Out", shape, like=x, lod_level=0)


_INPUTS = [
    Slot("X"),
    Slot("OutSize", dispensable=True, no_grad=True, doc="[2] int tensor: out h, w (beats scale)"),
    Slot("SizeTensor", duplicable=True, dispensable=True, no_grad=True,
         doc="one [1] int tensor per spatial dim (beats everything)"),
    Slot("Scale", dispensable=True, no_grad=True, doc="[1] float tensor (beats the attribute)"),
]

for _op, _what in (("bilinear_interp", "bilinear"), ("nearest_interp", "nearest neighbour")):
    register(
        _op, inputs=_INPUTS, outputs=["Out"],
        attrs=[Attr("data_layout", AttrType.STRING, "NCHW", one_of("NCHW", "NHWC"),
                    doc="NCHW: channels before the spatial dims; NHWC: channels last"),
               Attr("out_d", AttrType.INT, 0, doc="unused by 4-D X (Paddle declares it)"),
               Attr("out_h", AttrType.INT, 0, doc="output height"),
               Attr("out_w", AttrType.INT, 0, doc="output width"),
               Attr("scale", AttrType.FLOAT, 0.0, doc="> 0: out = int(in * scale); beats out_*"),
               Attr("interp_method", AttrType.STRING, "bilinear", one_of("bilinear", "nearest"),
                    doc="the method actually run (Paddle reads this, not the op type)"),
               Attr("align_corners", AttrType.BOOLEAN, True,
                    doc="corner pixels of input and output line up"),
               Attr("align_mode", AttrType.INT, 1, one_of(0, 1),
                    doc="bilinear without align_corners: 0 half-pixel, 1 ratio * k")],
        infer_shape=_infer_interp_v1, kernel=_interp_v1(_op),
        grad=GradSpec(_interp_v1_grad(_op), inputs=("X", "OutSize", "SizeTensor", "Scale")),
        share_lod=(), category="resize",
        doc=f"resize H and W of 4-D X ({_what}; Paddle 1.x, one scale for both dims)")
