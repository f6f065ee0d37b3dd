"""Pooling ops: ``pool2d``/``pool3d`` (max, avg) and ``max_pool2d_with_index``/
``max_pool3d_with_index`` (Out + Mask), with their ``_grad`` ops, as Paddle's CPU kernels.
The windows, paddings and divisors are pool_window.py's (its docstring has the rules).

Gradients follow Paddle's CPU kernels: avg spreads ``dOut / divisor`` over the window;
max gives ``dOut`` to the first element (row-major in the window) equal to ``Out`` --
one element, not every tie; ``*_with_index`` scatters ``dOut`` to ``Mask`` (the flat
index in the input plane of the first strict maximum, int32).

One Paddle quirk kept on purpose: pool2d/pool3d *max* with ``adaptive`` reads plain
``ksize``/``strides`` windows (``Geometry.as_windows``).
"""
from ..errors import ShapeError
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register
from .pool_window import (FORMATS, Geometry, avg_backward, avg_forward, first_match,
                          max_backward, max_forward, scatter, to_channel_first,
                          to_channel_last)

# ------------------------------------------------------------------ pool2d / pool3d
def _fail_runtime(op, x):
    def fail(message):
        raise ShapeError(f"op {op}: X {list(x.shape)}: {message}")
    return fail


def _pool_setup(op, nd, attrs, x):
    channel_last = attrs["data_format"] == FORMATS[nd][1]
    if x.ndim != nd + 2:
        _fail_runtime(op, x)(f"X must be {nd + 2}-D ({'/'.join(FORMATS[nd])})")
    x = to_channel_first(x, nd, channel_last)
    geo = Geometry(attrs, x.shape[2:], _fail_runtime(op, x), attrs["padding_algorithm"])
    if geo.adaptive and attrs["pooling_type"] == "max":
        geo.as_windows(_fail_runtime(op, x))
    return x, channel_last, geo


def _check_type(op, attrs):
    if attrs["pooling_type"] not in ("max", "avg"):
        raise ShapeError(f"op {op}: pooling_type {attrs['pooling_type']!r} must be 'max' or 'avg'")


def _pool_kernel(op, nd):
    def kernel(xp, attrs, x):
        _check_type(op, attrs)
        x, channel_last, geo = _pool_setup(op, nd, attrs, x)
        if attrs["pooling_type"] == "max":
            out = max_forward(xp, x, geo)
        else:
            out = avg_forward(xp, x, geo, attrs["exclusive"])
        return xp.ascontiguousarray(to_channel_last(out, nd, channel_last))
    return kernel


def _pool_grad_kernel(op, nd):
    def kernel(xp, attrs, x, out, dout):
        _check_type(op, attrs)
        x, channel_last, geo = _pool_setup(op, nd, attrs, x)
        dout = to_channel_first(dout, nd, channel_last)
        if attrs["pooling_type"] == "max":
            out = to_channel_first(out, nd, channel_last)
            dx = max_backward(xp, x, geo, out, dout)
        else:
            dx = avg_backward(xp, x.shape, geo, attrs["exclusive"], dout)
        return xp.ascontiguousarray(to_channel_last(dx, nd, channel_last))
    return kernel


def _infer_geometry(ctx, nd, slot="X"):
    x = ctx.input(slot)
    xs = list(x.shape)

    def fail(message):
        ctx.fail(f"{slot} {xs}: {message}", slot=slot)

    if len(xs) != nd + 2:
        fail(f"must be {nd + 2}-D ({'/'.join(FORMATS[nd])})")
    return x, xs, fail


def _pool_infer(nd):
    def infer(ctx):
        x, xs, fail = _infer_geometry(ctx, nd)
        if ctx.attr("pooling_type") not in ("max", "avg"):
            fail(f"pooling_type {ctx.attr('pooling_type')!r} must be 'max' or 'avg'")
        channel_last = ctx.attr("data_format") == FORMATS[nd][1]
        spatial = xs[1:-1] if channel_last else xs[2:]
        out = Geometry(ctx.attrs, spatial, fail, ctx.attr("padding_algorithm")).out
        shape = [xs[0]] + out + [xs[-1]] if channel_last else xs[:2] + out
        ctx.set_output("Out", shape, like=x)
    return infer


def _register_pool(op, nd):
    channel_first, channel_last = FORMATS[nd]
    register(
        op, inputs=["X"], outputs=["Out"],
        attrs=[Attr("ksize", AttrType.INTS, doc="window size per spatial dim (adaptive: output size)"),
               Attr("strides", AttrType.INTS, [1] * nd, doc="window stride per spatial dim"),
               Attr("paddings", AttrType.INTS, [0] * nd,
                    doc=f"{nd} values, or a (before, after) pair per spatial dim"),
               Attr("ceil_mode", AttrType.BOOLEAN, False, doc="round the output size up"),
               Attr("exclusive", AttrType.BOOLEAN, True,
                    doc="avg divides by the input elements only, not the padding"),
               Attr("data_format", AttrType.STRING, channel_first,
                    one_of(channel_first, channel_last, "AnyLayout"),
                    doc=f"{channel_first} or {channel_last}"),
               Attr("pooling_type", AttrType.STRING, "", doc="'max' or 'avg'"),
               Attr("global_pooling", AttrType.BOOLEAN, False,
                    doc="pool the whole plane (ignores ksize and paddings)"),
               Attr("adaptive", AttrType.BOOLEAN, False,
                    doc="ksize is the output size; bins floor(i*in/out)..ceil((i+1)*in/out)"),
               Attr("padding_algorithm", AttrType.STRING, "EXPLICIT",
                    one_of("EXPLICIT", "SAME", "VALID"),
                    doc="EXPLICIT: use paddings; SAME: out = ceil(in / stride); VALID: none")],
        infer_shape=_pool_infer(nd), kernel=_pool_kernel(op, nd),
        grad=GradSpec(_pool_grad_kernel(op, nd), inputs=("X",), outputs=("Out",)),
        doc=f"Out = {nd}-D max or average pooling of X", category="pool")


_register_pool("pool2d", 2)
_register_pool("pool3d", 3)


# ------------------------------------------------------------ max_pool*_with_index
def _index_setup(op, nd, attrs, x):
    if x.ndim != nd + 2:
        _fail_runtime(op, x)(f"X must be {nd + 2}-D (N, C, spatial...)")
    if len(attrs["paddings"]) != nd:
        _fail_runtime(op, x)(f"paddings {list(attrs['paddings'])} must hold {nd} values")
    return Geometry(attrs, x.shape[2:], _fail_runtime(op, x))


def _index_kernel(op, nd):
    def kernel(xp, attrs, x):
        geo = _index_setup(op, nd, attrs, x)
        out = max_forward(xp, x, geo)
        mask = first_match(xp, x, geo, out, strict=True)
        return out, mask.astype(xp.int32)
    return kernel


def _index_grad_kernel(op, nd):
    def kernel(xp, attrs, x, mask, dout):
        _index_setup(op, nd, attrs, x)
        return scatter(xp, x.shape, mask.astype(xp.int64), dout)
    return kernel


def _index_infer(nd):
    def infer(ctx):
        x, xs, fail = _infer_geometry(ctx, nd)
        if len(ctx.attr("paddings")) != nd:
            fail(f"paddings {list(ctx.attr('paddings'))} must hold {nd} values")
        out = Geometry(ctx.attrs, xs[2:], fail).out
        ctx.set_output("Out", xs[:2] + out, like=x)
        ctx.set_output("Mask", xs[:2] + out, dtype=pb.VarType.INT32, like=x)
    return infer


def _register_index(op, nd):
    register(
        op, inputs=["X"], outputs=["Out", Slot("Mask", no_grad=True,
                                               doc="int32 flat index of the max in X's plane")],
        attrs=[Attr("ksize", AttrType.INTS, doc="window size per spatial dim (adaptive: output size)"),
               Attr("strides", AttrType.INTS, [1] * nd, doc="window stride per spatial dim"),
               Attr("paddings", AttrType.INTS, [0] * nd, doc="symmetric padding per spatial dim"),
               Attr("global_pooling", AttrType.BOOLEAN, False,
                    doc="pool the whole plane (ignores ksize and paddings)"),
               Attr("adaptive", AttrType.BOOLEAN, False,
                    doc="ksize is the output size; bins floor(i*in/out)..ceil((i+1)*in/out)"),
               Attr("ceil_mode", AttrType.BOOLEAN, False, doc="round the output size up")],
        infer_shape=_index_infer(nd), kernel=_index_kernel(op, nd),
        grad=GradSpec(_index_grad_kernel(op, nd), inputs=("X",), outputs=("Mask",)),
        share_lod=(), doc=f"Out = {nd}-D max pooling of X; Mask = where each max came from",
        category="pool")


_register_index("max_pool2d_with_index", 2)
_register_index("max_pool3d_with_index", 3)
