"""Spatial sampling ops: ``affine_grid``, ``grid_sampler`` (spatial transformer networks)
and ``unpool``/``unpool3d`` (max unpooling by indices), with their ``_grad`` ops, as
Paddle 3.3.1's CPU kernels.

affine_grid: Theta [N, 2, 3] -> Output [N, H, W, 2] (or [N, 3, 4] -> [N, D, H, W, 3]) for
``output_shape`` [N, C, H, W] ([N, C, D, H, W]; the int tensor ``OutputShape``, when
given, wins): each output pixel's base coordinates (x, y[, z], 1), spaced
``linspace(-1, 1, size)`` (times ``(size - 1) / size`` without ``align_corners``), times
Theta^T.

grid_sampler: X [N, C, H, W] sampled at Grid [N, Ho, Wo, 2] (x then y, in [-1, 1]; 5-D:
[N, Do, Ho, Wo, 3]) -> Output [N, C, Ho, Wo]. A grid value g maps to the input coordinate
``(g + 1) / 2 * (size - 1)`` (align_corners) or ``((g + 1) * size - 1) / 2``; padding_mode
"border" clamps it to [0, size - 1], "reflection" reflects it at the borders (at the
corner pixels' centres with align_corners, else at their edges) then clamps, "zeros"
reads 0 outside. mode "bilinear" blends the 2^d neighbours, "nearest" takes the rounded
one (halves to even, as Paddle's std::nearbyint). The Grid gradient is the blend's slope times
the map's (0 where a clamp is active; sign-flipped where reflected); nearest gives Grid
no gradient, as Paddle.

unpool / unpool3d: Out [N, C, *output_size] is zero except ``Out.flat_plane[Indices] = X``
(the Mask of max_pool*_with_index); X@GRAD gathers Out@GRAD at Indices.

Gathers and scatters are fancy indexing and ``add.at`` over the whole batch (loops only
over the 2^d interpolation corners).
"""
import itertools

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register


# ------------------------------------------------------------------ affine_grid
def _affine_shape(op, theta_shape, shape):
    nd = len(shape) - 2
    if nd not in (2, 3):
        raise ShapeError(f"op {op}: output_shape {list(shape)} must hold 4 ([N, C, H, W]) or "
                         "5 ([N, C, D, H, W]) values")
    if (len(theta_shape) != 3 or theta_shape[1] not in (nd, -1)
            or theta_shape[2] not in (nd + 1, -1)):
        raise ShapeError(f"op {op}: Theta {list(theta_shape)} must be [N, {nd}, {nd + 1}] for "
                         f"output_shape {list(shape)}")
    return nd


def _output_shape(attrs, theta, shape_tensor):
    if shape_tensor is not None:
        return [int(v) for v in shape_tensor.reshape(-1).tolist()]
    return list(attrs["output_shape"])


def _base_grid(xp, sizes, align, dtype):
    """[prod(sizes), nd + 1]: (x, y[, z], 1) per output pixel, x varying fastest."""
    axes = []
    for size in sizes:
        line = xp.linspace(-1.0, 1.0, size) if size > 1 else xp.full((size,), -1.0)
        if not align:
            line = line * (size - 1) / size
        axes.append(line.astype(dtype))
    mesh = xp.meshgrid(*axes, indexing="ij")  # mesh[i] varies along spatial dim i
    cols = [mesh[i].reshape(-1) for i in reversed(range(len(sizes)))]  # x = last dim first
    cols.append(xp.ones_like(cols[0]))
    return xp.stack(cols, axis=1)


def _affine_grid(xp, attrs, theta, shape_tensor):
    shape = _output_shape(attrs, theta, shape_tensor)
    nd = _affine_shape("affine_grid", theta.shape, shape)
    base = _base_grid(xp, shape[2:], attrs["align_corners"], theta.dtype)
    out = xp.matmul(base[None], theta.swapaxes(1, 2))  # [N, P, nd]
    return out.reshape([theta.shape[0]] + shape[2:] + [nd])


def _affine_grid_grad(xp, attrs, theta, shape_tensor, dout):
    shape = _output_shape(attrs, theta, shape_tensor)
    nd = _affine_shape("affine_grid", theta.shape, shape)
    base = _base_grid(xp, shape[2:], attrs["align_corners"], dout.dtype)
    d = dout.reshape(dout.shape[0], -1, nd)
    return xp.matmul(d.swapaxes(1, 2), base[None])  # [N, nd, nd + 1]


def _infer_affine_grid(ctx):
    theta = ctx.input("Theta")
    shape = list(ctx.attr("output_shape"))
    if ctx.input("OutputShape") is not None:  # the tensor wins at run time: dims unknown
        count = len(shape) or (4 if len(theta.shape) == 3 and theta.shape[1] == 2 else 5)
        shape = [-1] * count
    elif not shape:
        ctx.fail("needs output_shape (or the OutputShape input)", "Theta")
    try:
        nd = _affine_shape("affine_grid", list(theta.shape), shape)
    except ShapeError as exc:
        ctx.fail(str(exc).split(": ", 1)[1], "Theta")
    ctx.set_output("Output", [theta.shape[0]] + shape[2:] + [nd], like=theta, lod_level=0)


# ------------------------------------------------------------------ grid_sampler
def _map(xp, g, size, attrs):
    """(coordinate, d coordinate / d g) of grid values ``g`` on an axis of ``size``."""
    align, mode = attrs["align_corners"], attrs["padding_mode"]
    dtype = g.dtype.type
    if align:
        coord, scale = (g + dtype(1)) / dtype(2) * dtype(size - 1), dtype((size - 1) / 2)
    else:
        coord, scale = ((g + dtype(1)) * dtype(size) - dtype(1)) / dtype(2), dtype(size / 2)
    slope = xp.full(g.shape, scale, dtype=g.dtype)
    top = dtype(size - 1)
    if mode == "border":
        clipped = xp.clip(coord, 0, top)
        return clipped, slope * (clipped == coord)
    if mode == "reflection":
        shift = dtype(0) if align else dtype(0.5)
        span = dtype(2 * (size - 1)) if align else dtype(2 * size)
        if span == 0:  # a size-1 axis reflects everything onto its one pixel
            return xp.zeros_like(coord), xp.zeros_like(slope)
        moved = coord + shift
        negative = moved < 0
        extra = xp.abs(moved) - xp.floor(xp.abs(moved) / span) * span
        flip = extra > span - extra
        reflected = xp.where(flip, span - extra, extra) - shift
        clipped = xp.clip(reflected, 0, top)
        sign = xp.where(negative == flip, dtype(1), dtype(-1))
        return clipped, slope * sign * (clipped == reflected)
    return coord, slope


def _setup(xp, attrs, x, grid, op="grid_sampler"):
    nd = x.ndim - 2
    if (nd not in (2, 3) or grid.ndim != x.ndim or grid.shape[-1] != nd
            or grid.shape[0] != x.shape[0]):
        raise ShapeError(f"op {op}: X {list(x.shape)}, Grid {list(grid.shape)}: X must be "
                         "[N, C, H, W] with Grid [N, Ho, Wo, 2] (or 5-D with [..., 3])")
    sizes = x.shape[2:]
    # spatial dim i (D, H, W order) reads grid channel nd - 1 - i (grid is x, y, z)
    return nd, sizes, [_map(xp, grid[..., nd - 1 - i], sizes[i], attrs) for i in range(nd)]


def _corners(xp, coords, sizes, mode):
    """(flat index, weight [or None], valid mask, lows, fracs) per neighbour."""
    if mode == "nearest":
        near = [xp.rint(c) for c, _ in coords]  # halves to even, as Paddle's nearbyint
        picks = [(near, None)]
    else:
        lows = [xp.floor(c) for c, _ in coords]
        picks = []
        for bits in itertools.product((0, 1), repeat=len(sizes)):
            picks.append(([lo + b for lo, b in zip(lows, bits)], bits))
    out = []
    for idx, bits in picks:
        valid = None
        flat = None
        for i, (v, size) in enumerate(zip(idx, sizes)):
            ok = (v >= 0) & (v <= size - 1)
            valid = ok if valid is None else valid & ok
            vi = xp.clip(v, 0, size - 1).astype(xp.int64)
            flat = vi if flat is None else flat * size + vi
        out.append((flat, bits, valid))
    return out


def _gather(xp, xt, flat):
    """xt [N, P, C] at flat [N, *out] -> [N, *out, C]."""
    n = xt.shape[0]
    rows = xp.arange(n).reshape((n,) + (1,) * (flat.ndim - 1))
    return xt[rows, flat]


def _blend(xp, coords, bits, frac, skip=None):
    """The interpolation weight of corner ``bits`` (without dim ``skip``)."""
    w = None
    for i, b in enumerate(bits):
        if i == skip:
            continue
        f = frac[i] if b else 1 - frac[i]
        w = f if w is None else w * f
    return w if w is not None else 1


def _grid_sampler(xp, attrs, x, grid):
    nd, sizes, coords = _setup(xp, attrs, x, grid)
    xt = x.reshape(x.shape[0], x.shape[1], -1).swapaxes(1, 2)
    frac = [c - xp.floor(c) for c, _ in coords]
    out = 0
    for flat, bits, valid in _corners(xp, coords, sizes, attrs["mode"]):
        w = valid.astype(x.dtype)
        if bits is not None:
            w = w * _blend(xp, coords, bits, frac)
        out = out + _gather(xp, xt, flat) * w[..., None]
    out = xp.moveaxis(out, -1, 1)
    return xp.ascontiguousarray(out.astype(x.dtype))


def _grid_sampler_grad(xp, attrs, x, grid, dout):
    nd, sizes, coords = _setup(xp, attrs, x, grid)
    n, c = x.shape[:2]
    xt = x.reshape(n, c, -1).swapaxes(1, 2)
    d = xp.moveaxis(dout, 1, -1)  # [N, *out, C]
    frac = [co - xp.floor(co) for co, _ in coords]
    dxt = xp.zeros_like(xt)
    dcoord = [xp.zeros(grid.shape[:-1], dtype=grid.dtype) for _ in range(nd)]
    rows = xp.arange(n).reshape((n,) + (1,) * nd)
    for flat, bits, valid in _corners(xp, coords, sizes, attrs["mode"]):
        w = valid.astype(x.dtype)
        if bits is not None:
            w = w * _blend(xp, coords, bits, frac)
        xp.add.at(dxt, (xp.broadcast_to(rows, flat.shape).reshape(-1), flat.reshape(-1)),
                  (d * w[..., None]).reshape(-1, c))
        if bits is not None:  # slope of the blend along each dim
            along = (_gather(xp, xt, flat) * d).sum(axis=-1) * valid
            for i in range(nd):
                sign = 1 if bits[i] else -1
                dcoord[i] = dcoord[i] + sign * along * _blend(xp, coords, bits, frac, skip=i)
    dx = dxt.swapaxes(1, 2).reshape(x.shape)
    dgrid = xp.zeros_like(grid)
    for i in range(nd):
        dgrid[..., nd - 1 - i] = dcoord[i] * coords[i][1]
    return xp.ascontiguousarray(dx), dgrid


def _infer_grid_sampler(ctx):
    x, grid = ctx.input("X"), ctx.input("Grid")
    xs, gs = list(x.shape), list(grid.shape)
    nd = len(xs) - 2
    if nd not in (2, 3) or len(gs) != len(xs) or gs[-1] not in (nd, -1):
        ctx.fail(f"X {xs}, Grid {gs}: X must be [N, C, H, W] with Grid [N, Ho, Wo, 2] "
                 "(or 5-D with [..., 3])", "Grid")
    ctx.set_output("Output", [xs[0], xs[1]] + gs[1:-1], like=x, lod_level=0)


# ------------------------------------------------------------------ unpool
def _unpool_setup(op, attrs, x, indices):
    nd = len(attrs["ksize"])
    size = list(attrs["output_size"])
    if x.ndim != nd + 2 or tuple(indices.shape) != tuple(x.shape) or len(size) != nd:
        raise ShapeError(f"op {op}: X {list(x.shape)}, Indices {list(indices.shape)}, "
                         f"output_size {size}: X must be {nd + 2}-D, Indices X's shape, "
                         f"output_size {nd} values")
    plane = 1
    for s in size:
        plane *= s
    return size, plane


def _unpool_kernel(op):
    def forward(xp, attrs, x, indices):
        size, plane = _unpool_setup(op, attrs, x, indices)
        n, c = x.shape[:2]
        idx = indices.reshape(n * c, -1).astype(xp.int64)
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= plane):
            raise ShapeError(f"op {op}: Indices hold {int(idx.min())}..{int(idx.max())}, "
                             f"outside the output plane [0, {plane}) of output_size {size}")
        out = xp.zeros((n * c, plane), dtype=x.dtype)
        out[xp.arange(n * c)[:, None], idx] = x.reshape(n * c, -1)
        return out.reshape([n, c] + size)

    def backward(xp, attrs, x, indices, out, dout):
        n, c = x.shape[:2]
        idx = indices.reshape(n * c, -1).astype(xp.int64)
        d = dout.reshape(n * c, -1)
        return xp.ascontiguousarray(d[xp.arange(n * c)[:, None], idx].reshape(x.shape))
    return forward, backward


def _unpool_infer(op, nd):
    def infer(ctx):
        x, idx = ctx.input("X"), ctx.input("Indices")
        size = list(ctx.attr("output_size"))
        if len(x.shape) != nd + 2 or len(size) != nd or len(ctx.attr("ksize")) != nd:
            ctx.fail(f"X {list(x.shape)}, output_size {size}, ksize {ctx.attr('ksize')}: "
                     f"X must be {nd + 2}-D, output_size and ksize {nd} values", "X")
        if idx is not None and len(idx.shape) != len(x.shape):
            ctx.fail(f"Indices {list(idx.shape)} must have X's shape {list(x.shape)}", "Indices")
        ctx.set_output("Out", list(x.shape[:2]) + size, like=x, lod_level=0)
    return infer


def _register_unpool(op, nd, layout, extra_attrs):
    forward, backward = _unpool_kernel(op)
    ones, zeros = [1] * nd, [0] * nd
    register(
        op, inputs=["X", Slot("Indices", no_grad=True, doc="flat plane index of each X value")],
        outputs=["Out"],
        attrs=extra_attrs + [
            Attr("ksize", AttrType.INTS, doc="pooling window (Out's size comes from output_size)"),
            Attr("strides", AttrType.INTS, ones, doc="pooling strides"),
            Attr("paddings", AttrType.INTS, zeros, doc="pooling paddings"),
            Attr("output_size", AttrType.INTS, zeros, doc="Out's spatial dims"),
            Attr("data_format", AttrType.STRING, layout, one_of(layout))],
        infer_shape=_unpool_infer(op, nd), kernel=forward,
        grad=GradSpec(backward, inputs=("X", "Indices"), outputs=("Out",), out_grads=("Out",),
                      in_grads=("X",)),
        share_lod=(), doc="Out = zeros of output_size with X placed at Indices (max unpooling)",
        category="pool")


register(
    "affine_grid",
    inputs=["Theta", Slot("OutputShape", dispensable=True, no_grad=True,
                          doc="int tensor [N, C, H, W]; overrides output_shape")],
    outputs=["Output"],
    attrs=[Attr("output_shape", AttrType.INTS, [], doc="[N, C, H, W] or [N, C, D, H, W]"),
           Attr("align_corners", AttrType.BOOLEAN, True,
                doc="-1 and 1 are the corner pixels' centres (else their outer edges)")],
    infer_shape=_infer_affine_grid, kernel=_affine_grid,
    grad=GradSpec(_affine_grid_grad, inputs=("Theta", "OutputShape"), out_grads=("Output",),
                  in_grads=("Theta",)),
    share_lod=(), doc="Output = sampling grid of the affine maps Theta (spatial transformer)",
    category="conv")
register(
    "grid_sampler", inputs=["X", "Grid"], outputs=["Output"],
    attrs=[Attr("align_corners", AttrType.BOOLEAN, True,
                doc="-1 and 1 are the corner pixels' centres (else their outer edges)"),
           Attr("mode", AttrType.STRING, "bilinear", one_of("bilinear", "nearest")),
           Attr("padding_mode", AttrType.STRING, "zeros", one_of("zeros", "border", "reflection"),
                doc="what points outside X read")],
    infer_shape=_infer_grid_sampler, kernel=_grid_sampler,
    grad=GradSpec(_grid_sampler_grad, inputs=("X", "Grid"), out_grads=("Output",),
                  in_grads=("X", "Grid")),
    share_lod=(), doc="Output = X sampled at the normalized points of Grid", category="conv")
_register_unpool("unpool", 2, "NCHW",
                 [Attr("unpooling_type", AttrType.STRING, checker=one_of("max"),
                       doc="only max unpooling exists")])
_register_unpool("unpool3d", 3, "NCDHW", [])
