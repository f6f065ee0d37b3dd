"""Normalisation: ``batch_norm``, ``layer_norm``, ``instance_norm``, ``group_norm`` and
their gradients (Paddle's slots, attributes and CPU kernel semantics).

layer_norm, instance_norm and group_norm normalise rows of a 2-D view of X: one row per
sample, per (sample, channel) or per (sample, group). ``_row_stats`` gives the biased
mean and variance of each row and ``_row_backward`` the gradient of
``xhat = (x - mean) * inv_std`` through those stats, so these ops differ only in how
they view X and apply Scale and Bias. batch_norm normalises per channel over an
[A, C, B] view of X (the axes before and after the channel one; a [C, rest] view would
copy the whole activation), with one full-size temporary in each direction.

What Paddle keeps, and so do we:
- batch_norm training: SavedMean is the batch mean, SavedVariance the batch
  *inverse std* ``1 / sqrt(var + epsilon)``; MeanOut/VarianceOut are the running stats
  ``running * momentum + batch * (1 - momentum)`` with the *biased* batch variance
  (Paddle's CPU kernel; cuDNN's GPU kernel would use the unbiased one). In a Paddle
  program MeanOut is the Mean variable itself: the executor maps both names to one slot,
  so the update lands in place and is written back to the scope (persistable).
  A channel holding one element only (N * spatial == 1) passes X through, as Paddle does.
  The MomentumTensor slot is accepted but, as in Paddle 3.3.1's CPU and GPU kernels
  (checked: a [0.7] tensor against momentum=0.9 updates with 0.9), not read.
- batch_norm inference (is_test without trainable_statistics, or use_global_stats):
  the running Mean/Variance normalise; they pass to MeanOut/VarianceOut unchanged.
  SavedMean/SavedVariance then hold the running mean and inverse std (Paddle leaves
  them unset or uninitialised there; its own OpTest reference expects these values).
  The gradient takes the running stats whenever is_test or use_global_stats.
- layer_norm and group_norm keep the variance in Variance; instance_norm keeps the
  inverse std in SavedVariance (each as Paddle's kernel and grad kernel read it).
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, at_least, one_of, register, wanted

_LAYOUTS = ("NCHW", "NHWC", "NCDHW", "NDHWC", "NCL", "NLC", "AnyLayout")
_CHANNEL_LAST = ("NHWC", "NDHWC", "NLC")
_EPS = Attr("epsilon", AttrType.FLOAT, 1e-5, doc="added to the variance before the square root")


def _row_stats(xp, rows):
    """Mean and biased variance of each row of a 2-D array, as [R, 1] columns."""
    mean = rows.mean(axis=1, keepdims=True)
    centred = rows - mean
    return mean, (centred * centred).mean(axis=1, keepdims=True)


def _row_backward(g, xhat, inv):
    """d/dx of rows normalised by their own stats, given g = dL/dxhat (all [R, M])."""
    return inv * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))


def _channel_axis(layout, ndim):
    return ndim - 1 if layout in _CHANNEL_LAST else 1


def _per_channel(v, ndim, axis):
    """A [C] vector shaped to broadcast along ``axis`` of an ndim array."""
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _check_vector(op, slot, v, size, x):
    if v is not None and v.size != size:
        raise ShapeError(f"op {op}: {slot} {list(v.shape)} must hold {size} values "
                         f"(X {list(x.shape)})")


def _infer_vector(ctx, slot, size, what):
    v = ctx.input(slot)
    if v is None:
        return
    n = 1
    for d in v.shape:
        n = -1 if d < 0 or n < 0 else n * d
    if n >= 0 and size >= 0 and n != size:
        ctx.fail(f"{slot} {list(v.shape)} must hold {size} values, one per {what} "
                 f"(X {list(ctx.input('X').shape)})", slot=slot)


def _x_rank(ctx, low, high=None):
    x = ctx.input("X")
    rank = len(x.shape)
    if rank < low or (high is not None and rank > high):
        span = f"{low}..{high}" if high else f">= {low}"
        ctx.fail(f"X {list(x.shape)} must have rank {span}", slot="X")
    return x


# ----------------------------------------------------------------- batch_norm
def _bn_global(attrs):
    return (attrs["is_test"] and not attrs["trainable_statistics"]) or attrs["use_global_stats"]


def _channel_view(x, axis):
    """x as [A, C, B] (A the axes before the channel one, B those after): the channel
    statistics reduce axes 0 and 2 of one view, for every layout and rank, without a
    transposed copy (NCHW: [N, C, H*W]; channel-last: [N*H*W, C, 1])."""
    a = 1
    for d in x.shape[:axis]:
        a *= d
    return x.reshape(a, x.shape[axis], -1)


def _channel_dot(xp, u, v):
    """Per-channel sum of u * v over [A, C, B] views, with no full-size product (for
    B > 1). einsum reduces B per (a, c) and the sum adds the A partial sums: one
    einsum over A and B would accumulate all A*B float32 terms into one number."""
    return xp.einsum("acb,acb->ac", u, v).sum(axis=0)


def _batch_norm(xp, attrs, x, scale, bias, mean, variance, momentum_tensor):
    if x.ndim < 2:
        raise ShapeError(f"op batch_norm: X {list(x.shape)} must have rank >= 2 (N, C, ...)")
    axis = _channel_axis(attrs["data_layout"], x.ndim)
    c = x.shape[axis]
    for slot, v in (("Scale", scale), ("Bias", bias), ("Mean", mean), ("Variance", variance)):
        _check_vector("batch_norm", slot, v, c, x)
    eps = attrs["epsilon"]
    x3 = _channel_view(x, axis)
    if _bn_global(attrs):
        inv = 1 / xp.sqrt(variance.reshape(-1) + eps)
        centre, mean_out, var_out = mean.reshape(-1), mean.copy(), variance.copy()
        saved_mean, saved_var = mean_out.reshape(-1).copy(), inv.astype(mean.dtype)
        centred = None
    else:
        if x.size == c:  # one element per channel: Paddle passes X through
            zeros = xp.zeros(c, dtype=mean.dtype)
            return x.copy(), mean.copy(), variance.copy(), zeros, zeros.copy(), None
        count = x.size // c
        batch_mean = x3.sum(axis=2).sum(axis=0) / count
        centred = x3 - batch_mean[:, None]  # the one full-size temporary; becomes Y
        batch_var = _channel_dot(xp, centred, centred) / count
        momentum = attrs["momentum"]  # Paddle 3.3.1 ignores MomentumTensor (see above)
        mean_out = (mean * momentum + batch_mean.reshape(mean.shape) * (1 - momentum))
        var_out = (variance * momentum + batch_var.reshape(variance.shape) * (1 - momentum))
        mean_out, var_out = mean_out.astype(mean.dtype), var_out.astype(variance.dtype)
        inv = 1 / xp.sqrt(batch_var + eps)
        centre, saved_mean, saved_var = batch_mean, batch_mean.astype(mean.dtype), inv.astype(mean.dtype)
    new_scale = inv if scale is None else scale.reshape(-1) * inv
    shift = 0 if bias is None else bias.reshape(-1)
    if centred is None:
        # Paddle folds the affine part: y = x * (scale * inv) + (bias - mean * scale * inv).
        y = x3 * new_scale.astype(x.dtype)[:, None]
        y += (shift - centre * new_scale).astype(x.dtype)[:, None]
    else:  # training: scale the centred values in place
        y = centred
        y *= new_scale.astype(x.dtype)[:, None]
        if bias is not None:
            y += shift.astype(x.dtype)[:, None]
    return y.reshape(x.shape), mean_out, var_out, saved_mean, saved_var, None


def _batch_norm_grad(xp, attrs, x, scale, bias, saved_mean, saved_var, mean_out, var_out,
                     reserve, dy):
    axis = _channel_axis(attrs["data_layout"], x.ndim)
    use_global = attrs["is_test"] or attrs["use_global_stats"]
    if use_global:
        mean, inv = mean_out.reshape(-1), 1 / xp.sqrt(var_out.reshape(-1) + attrs["epsilon"])
    else:
        mean, inv = saved_mean.reshape(-1), saved_var.reshape(-1)
    mean, inv = mean.astype(x.dtype), inv.astype(x.dtype)
    x3, dy3 = _channel_view(x, axis), _channel_view(dy, axis)
    dbias = dy3.sum(axis=2).sum(axis=0)
    # Centred first (as Paddle does): sum(dy * x) - mean * sum(dy) would cancel in float32.
    centred = x3 - mean[:, None]  # the one full-size temporary; becomes dX
    dscale = _channel_dot(xp, dy3, centred) * inv
    dx = None
    if wanted(attrs, 0):
        gamma = xp.ones_like(inv) if scale is None else scale.reshape(-1).astype(x.dtype)
        k = gamma * inv
        if use_global:
            dx = dy3 * k[:, None]
        elif x.size == inv.size:  # Y was X: Paddle passes dY through, zero dScale/dBias
            dx, dscale, dbias = dy3.copy(), dscale * 0, dbias * 0
        else:
            # The _row_backward formula per channel, gamma * inv * (dy - dbias / m -
            # xhat * dscale / m), folded into per-channel coefficients:
            # dx = (x - mean) * a + dy * k + b.
            m = x.size // inv.size
            dx = centred
            dx *= (-k * inv * dscale / m)[:, None]
            dx += dy3 * k[:, None]
            dx += (-k * dbias / m)[:, None]
        dx = dx.reshape(x.shape)
    return (dx, dscale if scale is None else dscale.reshape(scale.shape),
            dbias if bias is None else dbias.reshape(bias.shape))


def _infer_batch_norm(ctx):
    x = _x_rank(ctx, 2)
    axis = _channel_axis(ctx.attr("data_layout"), len(x.shape))
    c = x.shape[axis]
    for slot in ("Scale", "Bias", "Mean", "Variance"):
        _infer_vector(ctx, slot, c, "channel")
    ctx.set_output("Y", x.shape, like=x)
    stats = ctx.input("Mean")
    for slot in ("MeanOut", "VarianceOut", "SavedMean", "SavedVariance"):
        ctx.set_output(slot, [c], like=stats, lod_level=0)


_STATS_DOC = "running {} (MeanOut/VarianceOut is the same variable in Paddle programs)"
register(
    "batch_norm",
    inputs=[Slot("X"), Slot("Scale", dispensable=True, doc="gamma [C]"),
            Slot("Bias", dispensable=True, doc="beta [C]"),
            Slot("Mean", no_grad=True, doc=_STATS_DOC.format("mean [C]")),
            Slot("Variance", no_grad=True, doc=_STATS_DOC.format("variance [C]")),
            Slot("MomentumTensor", dispensable=True, no_grad=True,
                 doc="[1] momentum tensor; Paddle 3.3.1 does not read it")],
    outputs=[Slot("Y"), Slot("MeanOut", doc="updated running mean"),
             Slot("VarianceOut", doc="updated running variance (biased batch variance)"),
             Slot("SavedMean", intermediate=True, doc="batch mean [C]"),
             Slot("SavedVariance", intermediate=True, doc="batch 1/sqrt(var + epsilon) [C]"),
             Slot("ReserveSpace", dispensable=True,
                  doc="cuDNN workspace in Paddle; never produced here")],
    attrs=[Attr("is_test", AttrType.BOOLEAN, False, doc="inference: normalise with the running stats"),
           Attr("momentum", AttrType.FLOAT, 0.9, doc="running = running * momentum + batch * (1 - momentum)"),
           _EPS,
           Attr("data_layout", AttrType.STRING, "NCHW", one_of(*_LAYOUTS),
                doc="NCHW: channels on axis 1; NHWC: channels last"),
           Attr("use_global_stats", AttrType.BOOLEAN, False,
                doc="normalise with the running stats even while training"),
           Attr("trainable_statistics", AttrType.BOOLEAN, False,
                doc="with is_test: still use (and update) the batch stats")],
    infer_shape=_infer_batch_norm, kernel=_batch_norm,
    grad=GradSpec(_batch_norm_grad, inputs=("X", "Scale", "Bias"),
                  outputs=("SavedMean", "SavedVariance", "MeanOut", "VarianceOut", "ReserveSpace"),
                  out_grads=("Y",), in_grads=("X", "Scale", "Bias")),
    share_lod=(("X", "Y"),),
    doc="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias per channel; batch stats "
        "while training (running stats updated), running stats in inference",
    category="norm")


# ----------------------------------------------------------------- layer_norm
def _ln_split(x, begin):
    left = 1
    for d in x.shape[:begin]:
        left *= d
    return left, (x.size // left if left else 0)


def _layer_norm(xp, attrs, x, scale, bias):
    begin = attrs["begin_norm_axis"]
    if not 0 <= begin < max(x.ndim, 1):
        raise ShapeError(f"op layer_norm: begin_norm_axis={begin} is out of range for X "
                         f"{list(x.shape)}")
    left, right = _ln_split(x, begin)
    _check_vector("layer_norm", "Scale", scale, right, x)
    _check_vector("layer_norm", "Bias", bias, right, x)
    rows = x.reshape(left, right)
    mean, var = _row_stats(xp, rows)
    y = (rows - mean) / xp.sqrt(var + attrs["epsilon"])
    if scale is not None:
        y = y * scale.reshape(1, -1).astype(x.dtype)
    if bias is not None:
        y = y + bias.reshape(1, -1).astype(x.dtype)
    # Paddle shapes Mean and Variance as X's dims before begin_norm_axis.
    return y.reshape(x.shape), mean.reshape(x.shape[:begin]), var.reshape(x.shape[:begin])


def _layer_norm_grad(xp, attrs, x, scale, bias, mean, var, dy):
    left, right = _ln_split(x, attrs["begin_norm_axis"])
    rows, drows = x.reshape(left, right), dy.reshape(left, right)
    inv = 1 / xp.sqrt(var.reshape(-1, 1).astype(x.dtype) + attrs["epsilon"])
    xhat = (rows - mean.reshape(-1, 1).astype(x.dtype)) * inv
    g = drows if scale is None else drows * scale.reshape(1, -1).astype(x.dtype)
    dx = _row_backward(g, xhat, inv).reshape(x.shape) if wanted(attrs, 0) else None
    dscale = None if scale is None else (drows * xhat).sum(axis=0).reshape(scale.shape)
    dbias = None if bias is None else drows.sum(axis=0).reshape(bias.shape)
    return dx, dscale, dbias


def _infer_layer_norm(ctx):
    x = _x_rank(ctx, 1)
    begin = ctx.attr("begin_norm_axis")
    if not 0 <= begin < len(x.shape):
        ctx.fail(f"begin_norm_axis={begin} must index a dim of X {list(x.shape)}", slot="X")
    right = 1
    for d in x.shape[begin:]:
        right = -1 if d < 0 or right < 0 else right * d
    for slot in ("Scale", "Bias"):
        _infer_vector(ctx, slot, right, "normalised element")
    ctx.set_output("Y", x.shape, like=x)
    ctx.set_output("Mean", x.shape[:begin], like=x, lod_level=0)
    ctx.set_output("Variance", x.shape[:begin], like=x, lod_level=0)


register(
    "layer_norm",
    inputs=[Slot("X"), Slot("Scale", dispensable=True, doc="gamma over the normalised dims"),
            Slot("Bias", dispensable=True, doc="beta over the normalised dims")],
    outputs=[Slot("Y"), Slot("Mean", intermediate=True, doc="X's dims before begin_norm_axis"),
             Slot("Variance", intermediate=True, doc="biased variance, same shape as Mean")],
    attrs=[_EPS, Attr("begin_norm_axis", AttrType.INT, 1, at_least(0),
                      doc="dims from this one on are normalised together")],
    infer_shape=_infer_layer_norm, kernel=_layer_norm,
    grad=GradSpec(_layer_norm_grad, inputs=("X", "Scale", "Bias"), outputs=("Mean", "Variance"),
                  out_grads=("Y",), in_grads=("X", "Scale", "Bias")),
    share_lod=(("X", "Y"),),
    doc="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias over dims >= begin_norm_axis",
    category="norm")


# ------------------------------------------------- instance_norm / group_norm
def _grouped(x, axis, groups):
    """[N * groups, C / groups * spatial] rows of x (channels on ``axis``)."""
    xc = x.swapaxes(1, axis) if axis != 1 else x
    return xc.reshape(x.shape[0] * groups, -1), xc.shape


def _ungrouped(rows, moved_shape, axis):
    y = rows.reshape(moved_shape)
    return y.swapaxes(1, axis) if axis != 1 else y


def _affine(y, scale, bias, axis):
    if scale is not None:
        y = y * _per_channel(scale.astype(y.dtype), y.ndim, axis)
    if bias is not None:
        y = y + _per_channel(bias.astype(y.dtype), y.ndim, axis)
    return y


def _grouped_grad(xp, x, scale, mean, inv, dy, axis, groups, want_dx):
    """(dX, dScale, dBias) of per-(sample, group) normalisation with per-channel affine."""
    rows, moved = _grouped(x, axis, groups)
    xhat = (rows - mean.reshape(-1, 1).astype(x.dtype)) * inv.reshape(-1, 1).astype(x.dtype)
    xhat_full = _ungrouped(xhat, moved, axis)
    red = tuple(i for i in range(x.ndim) if i != axis)
    dscale = None if scale is None else (dy * xhat_full).sum(axis=red).reshape(scale.shape)
    dx = None
    if want_dx:
        g = dy if scale is None else dy * _per_channel(scale.astype(x.dtype), x.ndim, axis)
        grows, _ = _grouped(g, axis, groups)
        dx = _ungrouped(_row_backward(grows, xhat, inv.reshape(-1, 1).astype(x.dtype)), moved, axis)
    return dx, dscale, dy.sum(axis=red)


def _instance_norm(xp, attrs, x, scale, bias):
    if x.ndim < 2:
        raise ShapeError(f"op instance_norm: X {list(x.shape)} must have rank >= 2 (N, C, ...)")
    _check_vector("instance_norm", "Scale", scale, x.shape[1], x)
    _check_vector("instance_norm", "Bias", bias, x.shape[1], x)
    rows, moved = _grouped(x, 1, x.shape[1])
    mean, var = _row_stats(xp, rows)
    inv = 1 / xp.sqrt(var + attrs["epsilon"])
    y = _affine(_ungrouped((rows - mean) * inv, moved, 1), scale, bias, 1)
    return y, mean.reshape(-1), inv.reshape(-1)


def _instance_norm_grad(xp, attrs, x, scale, bias, saved_mean, saved_inv, dy):
    dx, dscale, dbias = _grouped_grad(xp, x, scale, saved_mean, saved_inv, dy, 1, x.shape[1],
                                      wanted(attrs, 0))
    return dx, dscale, None if bias is None else dbias.reshape(bias.shape)


def _infer_instance_norm(ctx):
    x = _x_rank(ctx, 2)
    n, c = x.shape[0], x.shape[1]
    for slot in ("Scale", "Bias"):
        _infer_vector(ctx, slot, c, "channel")
    ctx.set_output("Y", x.shape, like=x)
    nc = n * c if n >= 0 and c >= 0 else -1
    ctx.set_output("SavedMean", [nc], like=x, lod_level=0)
    ctx.set_output("SavedVariance", [nc], like=x, lod_level=0)


register(
    "instance_norm",
    inputs=[Slot("X"), Slot("Scale", dispensable=True, doc="gamma [C]"),
            Slot("Bias", dispensable=True, doc="beta [C]")],
    outputs=[Slot("Y"), Slot("SavedMean", intermediate=True, doc="mean per (sample, channel) [N*C]"),
             Slot("SavedVariance", intermediate=True, doc="1/sqrt(var + epsilon) per (sample, channel)")],
    attrs=[_EPS], infer_shape=_infer_instance_norm, kernel=_instance_norm,
    grad=GradSpec(_instance_norm_grad, inputs=("X", "Scale", "Bias"),
                  outputs=("SavedMean", "SavedVariance"), out_grads=("Y",),
                  in_grads=("X", "Scale", "Bias")),
    share_lod=(("X", "Y"),),
    doc="Y = normalised X per sample and channel (over the spatial dims) * Scale + Bias",
    category="norm")


def _group_axis(attrs, x, op="group_norm"):
    axis = _channel_axis(attrs["data_layout"], x.ndim)
    groups = attrs["groups"]
    if groups < 1 or x.shape[axis] % groups:
        raise ShapeError(f"op {op}: groups={groups} must be >= 1 and divide the "
                         f"{x.shape[axis]} channels of X {list(x.shape)}")
    return axis, groups


def _group_norm(xp, attrs, x, scale, bias):
    if x.ndim < 2:
        raise ShapeError(f"op group_norm: X {list(x.shape)} must have rank >= 2 (N, C, ...)")
    axis, groups = _group_axis(attrs, x)
    _check_vector("group_norm", "Scale", scale, x.shape[axis], x)
    _check_vector("group_norm", "Bias", bias, x.shape[axis], x)
    rows, moved = _grouped(x, axis, groups)
    mean, var = _row_stats(xp, rows)
    y = _ungrouped((rows - mean) / xp.sqrt(var + attrs["epsilon"]), moved, axis)
    shape = (x.shape[0], groups)
    return _affine(y, scale, bias, axis), mean.reshape(shape), var.reshape(shape)


def _group_norm_grad(xp, attrs, x, scale, bias, y, mean, var, dy):
    axis, groups = _group_axis(attrs, x, "group_norm_grad")
    inv = 1 / xp.sqrt(var.astype(x.dtype) + attrs["epsilon"])
    dx, dscale, dbias = _grouped_grad(xp, x, scale, mean, inv, dy, axis, groups, wanted(attrs, 0))
    return dx, dscale, None if bias is None else dbias.reshape(bias.shape)


def _infer_group_norm(ctx):
    x = _x_rank(ctx, 2)
    axis = _channel_axis(ctx.attr("data_layout"), len(x.shape))
    c, groups = x.shape[axis], ctx.attr("groups")
    if groups < 1 or (c >= 0 and c % groups):
        ctx.fail(f"groups={groups} must be >= 1 and divide the {c} channels of X "
                 f"{list(x.shape)}", slot="X")
    for slot in ("Scale", "Bias"):
        _infer_vector(ctx, slot, c, "channel")
    ctx.set_output("Y", x.shape, like=x)
    ctx.set_output("Mean", [x.shape[0], groups], like=x, lod_level=0)
    ctx.set_output("Variance", [x.shape[0], groups], like=x, lod_level=0)


register(
    "group_norm",
    inputs=[Slot("X"), Slot("Scale", dispensable=True, doc="gamma [C]"),
            Slot("Bias", dispensable=True, doc="beta [C]")],
    outputs=[Slot("Y"), Slot("Mean", intermediate=True, doc="mean per (sample, group) [N, groups]"),
             Slot("Variance", intermediate=True, doc="biased variance per (sample, group)")],
    attrs=[_EPS, Attr("groups", AttrType.INT, -1, doc="channel groups (must divide C)"),
           Attr("data_layout", AttrType.STRING, "NCHW", one_of(*_LAYOUTS),
                doc="NCHW: channels on axis 1; NHWC: channels last")],
    infer_shape=_infer_group_norm, kernel=_group_norm,
    grad=GradSpec(_group_norm_grad, inputs=("X", "Scale", "Bias"),
                  outputs=("Y", "Mean", "Variance"), out_grads=("Y",),
                  in_grads=("X", "Scale", "Bias")),
    share_lod=(("X", "Y"),),
    doc="Y = X normalised per sample over each group of channels * Scale + Bias",
    category="norm")
