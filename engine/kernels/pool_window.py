"""Pooling windows shared by the pool ops (kernels/pool.py): Paddle's geometry and the
tap loops that read, reduce and scatter back through the windows.

Geometry (Paddle's PoolInferMeta + UpdatePadding): ``paddings`` holds one value per
spatial dim or a (before, after) pair per dim; SAME pads so ``out = ceil(in / stride)``,
VALID pads nothing; ``global_pooling`` takes the whole plane (ksize = input dims,
paddings 0); ``adaptive`` makes ``ksize`` the output size, with bin ``i`` covering
``floor(i * in / out) .. ceil((i + 1) * in / out)`` and paddings 0. Output size is
``(in - k + before + after [+ stride - 1 with ceil_mode]) / stride + 1`` in C++ integer
division (it truncates toward zero).

Window ``o`` starts at ``o * stride - before``; only input elements count:
max starts from -FLT_MAX (Paddle's initial value), avg divides by the number of input
elements in the window (``exclusive``, always for adaptive) or by the window clipped at
``in + before`` (not ``+ after``: Paddle's kernel keeps only the leading padding).

Every routine loops over window taps only (a tap reads one strided slice of the input
extended by the paddings, or for adaptive bins one gather per dim), never over pixels; a
window covering the whole plane (global pooling) is one reduction. Max gradients scatter
with ``bincount``; avg gradients add each tap's share into its strided slice.
"""
import itertools


FLT_MAX = 3.4028234663852886e38  # Paddle's max-pool initial value is -FLT_MAX, also for float64
FORMATS = {2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _trunc_div(a, b):
    """C++ integer division (toward zero), as in Paddle's PoolOutputSize."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _adaptive_bins(size, out):
    """[(start, end)] of Paddle's AdaptStartIndex/AdaptEndIndex."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


class Geometry:
    """Resolved pooling geometry of one call: per spatial dim the kernel, stride,
    (before, after) paddings and output size; ``adaptive`` bins replace windows."""

    def __init__(self, attrs, spatial, fail, padding_algorithm="EXPLICIT"):
        nd = len(spatial)
        ksize, strides = list(attrs["ksize"]), list(attrs["strides"])
        pads = list(attrs["paddings"])
        if len(ksize) != nd or len(strides) != nd:
            fail(f"ksize {ksize} and strides {strides} must each hold {nd} values "
                 f"(one per spatial dim)")
        if len(pads) == nd:
            pads = [p for p in pads for _ in (0, 1)]
        elif len(pads) != 2 * nd:
            fail(f"paddings {pads} must hold {nd} or {2 * nd} values")
        self.adaptive, self.global_pooling = attrs["adaptive"], attrs["global_pooling"]
        if any(s < 1 for s in strides) and not (self.adaptive or self.global_pooling):
            fail(f"strides {strides} must be >= 1")
        if padding_algorithm == "SAME":
            pads = []
            for size, k, s in zip(spatial, ksize, strides):
                if size < 0:
                    pads += [0, 0]
                    continue
                total = max((-(-size // s) - 1) * s + k - size, 0)
                pads += [total // 2, total - total // 2]
        if padding_algorithm == "VALID" or self.adaptive or self.global_pooling:
            pads = [0] * (2 * nd)  # after SAME: global/adaptive zero it too
        if self.global_pooling:
            ksize = list(spatial)
        if any(p < 0 for p in pads):
            fail(f"paddings {pads} must be >= 0")
        self.ksize, self.strides = ksize, strides
        self.pads = [(pads[2 * i], pads[2 * i + 1]) for i in range(nd)]
        if self.adaptive:
            if any(k < 1 for k in ksize) and not self.global_pooling:
                fail(f"adaptive output size (ksize) {ksize} must be >= 1")
            self.out = list(ksize)
            return
        if any(k < 1 for k in ksize) and not self.global_pooling:
            fail(f"ksize {ksize} must be >= 1")
        ceil = attrs["ceil_mode"]
        self.out = []
        for size, k, s, (a, b) in zip(spatial, ksize, strides, self.pads):
            if size < 0:  # unknown; a global window always gives 1
                self.out.append(1 if self.global_pooling else -1)
                continue
            out = _trunc_div(size - k + a + b + (s - 1 if ceil else 0), s) + 1
            if out <= 0:
                fail(f"input dim {size} with paddings ({a}, {b}) is smaller than ksize {k}: "
                     "the output would be empty")
            self.out.append(out)

    def as_windows(self, fail):
        """Paddle's CPU pool2d/pool3d *max* kernels ignore ``adaptive``: they keep the
        adaptive output size (= ksize) but read plain windows ``o * stride .. + ksize``
        (clipped; a window past the input gives -FLT_MAX). Matched here on purpose
        (Paddle's adaptive max API emits max_pool2d_with_index, which has true bins)."""
        if any(s < 1 for s in self.strides):
            fail(f"strides {self.strides} must be >= 1")
        self.adaptive = False

    def whole_plane(self, spatial):
        """True when the one output window is the whole input plane (global pooling, or
        an adaptive output of 1): a plain reduction then replaces the tap loop."""
        if any(o != 1 for o in self.out):
            return False
        return self.adaptive or all(
            k == size and a == 0 for k, size, (a, _) in zip(self.ksize, spatial, self.pads))

    # ------------------------------------------------------------------ taps
    def tap_indices(self, spatial):
        """Per dim (index [out, K] into the input extended by ``before`` rows, valid [out, K]).
        Non-adaptive: window rows ``o * stride + t``; adaptive: bin rows, clamped to the
        bin's last row past its end (a repeat never changes a max or its first match)."""
        dims = []
        for size, k, s, (a, _), out in zip(spatial, self.ksize, self.strides, self.pads,
                                           self.out):
            if self.adaptive:
                bins = _adaptive_bins(size, out)
                width = max(e - b for b, e in bins)
                idx = [[min(b + t, e - 1) for t in range(width)] for b, e in bins]
                dims.append((idx, [[True] * width for _ in bins]))
            else:
                idx = [[o * s + t for t in range(k)] for o in range(out)]
                dims.append((idx, [[0 <= i - a < size for i in row] for row in idx]))
        return dims

    def extension(self, spatial):
        """(before, after) rows to add so every window lies inside the array."""
        if self.adaptive:
            return [(0, 0)] * len(spatial)
        return [(a, max(0, (out - 1) * s + k - size - a))
                for size, k, s, (a, _), out in zip(spatial, self.ksize, self.strides,
                                                    self.pads, self.out)]

    def divisor(self, xp, spatial, exclusive, dtype):
        """The avg divisor broadcast over the output dims."""
        total = None
        for d, (size, k, s, (a, _), out) in enumerate(zip(spatial, self.ksize, self.strides,
                                                          self.pads, self.out)):
            if self.adaptive:
                counts = [e - b for b, e in _adaptive_bins(size, out)]
            elif exclusive:
                counts = [min(o * s - a + k, size) - max(o * s - a, 0) for o in range(out)]
            else:
                counts = [min(o * s - a + k, size + a) - (o * s - a) for o in range(out)]
            shape = [1] * len(spatial)
            shape[d] = out
            c = xp.asarray(counts, dtype=dtype).reshape(shape)
            total = c if total is None else total * c
        return total


def _tap_slices(geo, taps):
    """The strided slice of the extended input that window tap ``taps`` reads."""
    return (slice(None), slice(None)) + tuple(
        slice(t, t + s * (o - 1) + 1, s) for t, s, o in zip(taps, geo.strides, geo.out))


def _gather(xp, x_ext, geo, dims, taps):
    if not geo.adaptive:
        return x_ext[_tap_slices(geo, taps)]
    v = x_ext
    for d, t in enumerate(taps):
        v = xp.take(v, xp.asarray([row[t] for row in dims[d][0]]), axis=2 + d)
    return v


def _extend(xp, x, geo, fill):
    ext = geo.extension(x.shape[2:])
    if not any(a or b for a, b in ext):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(ext), constant_values=fill)


def _all_taps(dims):
    return itertools.product(*(range(len(idx[0])) for idx, _ in dims))


def to_channel_first(x, nd, channel_last):
    return x.transpose((0, nd + 1) + tuple(range(1, nd + 1))) if channel_last else x


def to_channel_last(x, nd, channel_last):
    return x.transpose((0,) + tuple(range(2, nd + 2)) + (1,)) if channel_last else x


def _plane_axes(x):
    return tuple(range(2, x.ndim))


def max_forward(xp, x, geo):
    """Out of max pooling (never below -FLT_MAX, Paddle's initial value)."""
    floor = xp.asarray(-FLT_MAX, dtype=x.dtype)
    if geo.whole_plane(x.shape[2:]):
        return xp.maximum(x.max(axis=_plane_axes(x), keepdims=True), floor)
    dims = geo.tap_indices(x.shape[2:])
    x_ext = _extend(xp, x, geo, -xp.inf)
    out = None
    for taps in _all_taps(dims):
        v = _gather(xp, x_ext, geo, dims, taps)
        out = v.copy() if out is None else xp.maximum(out, v)
    return xp.maximum(out, floor)


def first_match(xp, x, geo, out, strict):
    """Flat plane index of the first element (row-major in the window) equal to ``out``
    (``strict``: also > -FLT_MAX, Paddle's with_index rule); -1 where none."""
    spatial = x.shape[2:]
    if geo.whole_plane(spatial):
        flat = x.reshape(x.shape[:2] + (-1,))
        hit = flat == out.reshape(x.shape[:2] + (1,))
        if strict:
            hit &= flat > -FLT_MAX
        first = xp.where(hit.any(axis=-1), hit.astype(xp.int8).argmax(axis=-1), -1)
        return first.astype(xp.int64).reshape(out.shape)
    dims = geo.tap_indices(spatial)
    x_ext = _extend(xp, x, geo, -xp.inf)
    chosen = xp.full(out.shape, -1, dtype=xp.int64)
    for taps in _all_taps(dims):
        v = _gather(xp, x_ext, geo, dims, taps)
        flat, ok = 0, True
        for d, t in enumerate(taps):
            shape = [1] * len(spatial)
            shape[d] = geo.out[d]
            rows = xp.asarray([r[t] - geo.pads[d][0] * (not geo.adaptive)
                               for r in dims[d][0]]).reshape(shape)
            valid = xp.asarray([r[t] for r in dims[d][1]]).reshape(shape)
            flat = flat * spatial[d] + rows
            ok = ok & valid
        hit = (v == out) & ok & (chosen < 0)
        if strict:
            hit &= v > -FLT_MAX
        chosen = xp.where(hit, flat, chosen)
    return chosen


def max_backward(xp, x, geo, out, dout):
    """dX of max pooling: dOut goes to the first element of each window equal to Out."""
    return scatter(xp, x.shape, first_match(xp, x, geo, out, strict=False), dout)


def scatter(xp, x_shape, chosen, dout):
    """dX with ``dout`` added at each output's ``chosen`` plane index (-1: dropped)."""
    n, c = x_shape[:2]
    plane = 1
    for s in x_shape[2:]:
        plane *= s
    base = (xp.arange(n * c, dtype=xp.int64) * plane).reshape((n, c) + (1,) * (len(x_shape) - 2))
    keep = chosen >= 0
    flat = xp.where(keep, chosen + base, 0).ravel()
    weights = xp.where(keep, dout, 0).ravel().astype(xp.float64)
    dx = xp.bincount(flat, weights=weights, minlength=n * c * plane)
    return dx.astype(dout.dtype).reshape(x_shape)


def avg_forward(xp, x, geo, exclusive):
    spatial = x.shape[2:]
    if geo.adaptive:  # bins differ in size: sum each dim with a 0/1 bin matrix
        y = x
        for d, (size, out) in enumerate(zip(spatial, geo.out)):
            y = xp.swapaxes(xp.swapaxes(y, 2 + d, -1) @ _bin_matrix(xp, size, out, x.dtype).T,
                            2 + d, -1)
        return y / geo.divisor(xp, spatial, True, x.dtype)
    if geo.whole_plane(spatial):
        return x.mean(axis=_plane_axes(x), keepdims=True)
    dims = geo.tap_indices(spatial)
    x_ext = _extend(xp, x, geo, 0)
    total = None
    for taps in _all_taps(dims):
        v = _gather(xp, x_ext, geo, dims, taps)
        total = v.copy() if total is None else total + v
    return total / geo.divisor(xp, spatial, exclusive, x.dtype)


def _bin_matrix(xp, size, out, dtype):
    m = xp.zeros((out, size), dtype=dtype)
    for i, (b, e) in enumerate(_adaptive_bins(size, out)):
        m[i, b:e] = 1
    return m


def avg_backward(xp, x_shape, geo, exclusive, dout):
    spatial = x_shape[2:]
    if geo.whole_plane(spatial):
        plane = 1
        for size in spatial:
            plane *= size
        return xp.broadcast_to(dout / dout.dtype.type(plane), tuple(x_shape)).copy()
    g = dout / geo.divisor(xp, spatial, exclusive or geo.adaptive, dout.dtype)
    if geo.adaptive:
        for d, (size, out) in enumerate(zip(spatial, geo.out)):
            g = xp.swapaxes(xp.swapaxes(g, 2 + d, -1) @ _bin_matrix(xp, size, out, g.dtype),
                            2 + d, -1)
        return g
    ext = geo.extension(spatial)
    dx = xp.zeros(tuple(x_shape[:2]) + tuple(s + a + b for s, (a, b) in zip(spatial, ext)),
                  dtype=dout.dtype)
    for taps in _all_taps(geo.tap_indices(spatial)):
        dx[_tap_slices(geo, taps)] += g  # taps overlap: each adds into its own slice
    return dx[(slice(None), slice(None)) + tuple(
        slice(a, a + s) for s, (a, _) in zip(spatial, ext))]
