"""Broadcasting copies: ``expand_v2``, ``expand_as_v2`` and ``tile``, with their grads.

Slots, attributes and gradient ops are Paddle 3.3.1's. The target (or repeats) may come
from a 1-D int tensor (``Shape`` / ``RepeatTimes``, it wins) or a list of 1-element int
tensors (``expand_shapes_tensor`` / ``repeat_times_tensor``) instead of the attribute;
shape inference then leaves the dims unknown. Gradients sum the copies back.
"""
from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register, wanted
from ._util import ints_override, unbroadcast
from .xshape import lod_blind, lod_if_rows_kept


# -------------------------------------------------------------- expand / tile
def _expanded(x_shape, target, fail):
    """Paddle's expand rule: X's dims align to the right of target; -1 keeps X's dim;
    an X dim of 1 broadcasts, any other must equal the target."""
    if len(target) < len(x_shape):
        fail(f"shape {list(target)} has fewer dims than X {list(x_shape)}")
    lead = len(target) - len(x_shape)
    out = []
    for i, t in enumerate(target):
        d = x_shape[i - lead] if i >= lead else 1
        if t == -1:
            if i < lead:
                fail(f"shape {list(target)}: -1 at {i} has no X dim to keep")
            out.append(d)
        elif t < -1:
            fail(f"shape {list(target)}: dims must be >= 0 or -1")
        elif d in (1, t, -1):
            out.append(t)
        else:
            fail(f"X {list(x_shape)} cannot expand to {list(target)}: dim {i - lead} is {d}, "
                 f"neither 1 nor {t}")
    return out


def _expand_v2(xp, attrs, x, shape_tensor, shape_list):
    target = ints_override(attrs["shape"], shape_tensor, shape_list)

    def fail(message):
        raise ShapeError(f"op expand_v2: {message}")
    return xp.broadcast_to(x, _expanded(list(x.shape), target, fail)).copy()


def _infer_expand_v2(ctx):
    x = ctx.input("X")
    if ctx.input("Shape") is not None or ctx.inputs("expand_shapes_tensor"):
        n = (len(ctx.inputs("expand_shapes_tensor")) or
             (ctx.input("Shape").shape[0] if ctx.input("Shape").shape else 1))
        ctx.set_output("Out", [-1] * max(n, len(x.shape)), like=x)
        return
    ctx.set_output("Out", _expanded(list(x.shape), ctx.attr("shape"),
                                    lambda m: ctx.fail(m, "X")), like=x)


def _sum_to(g, shape):
    """Sum a broadcast gradient back to ``shape`` (X's, right-aligned)."""
    return unbroadcast(g, shape).reshape(shape)


register("expand_v2",
         inputs=["X", Slot("Shape", dispensable=True, no_grad=True, doc="1-D int target (wins)"),
                 Slot("expand_shapes_tensor", duplicable=True, dispensable=True, no_grad=True,
                      doc="one 1-element int tensor per target dim")],
         outputs=["Out"], attrs=[Attr("shape", AttrType.INTS, [], doc="target; -1 keeps X's dim")],
         infer_shape=_infer_expand_v2, kernel=lod_if_rows_kept(_expand_v2), lod=True,
         grad=GradSpec(lod_blind(lambda xp, a, x, s, sl, dout: _sum_to(dout, x.shape)),
                       inputs=("X", "Shape", "expand_shapes_tensor")),
         doc="Out = X broadcast to shape (size-1 dims repeated)", category="shape")


def _expand_as_v2(xp, attrs, x, y):
    # Paddle's kernel reads only target_shape (the layer writes Y's dims there).
    def fail(message):
        raise ShapeError(f"op expand_as_v2: {message}")
    return xp.broadcast_to(x, _expanded(list(x.shape), attrs["target_shape"], fail)).copy()


def _infer_expand_as_v2(ctx):
    x, target = ctx.input("X"), list(ctx.attr("target_shape"))
    ctx.set_output("Out", _expanded(list(x.shape), target, lambda m: ctx.fail(m, "X")), like=x,
                   lod_level=0)  # Paddle drops X's LoD here


register("expand_as_v2",
         inputs=["X", Slot("Y", dispensable=True, no_grad=True, doc="its shape is the target")],
         outputs=["Out"],
         attrs=[Attr("target_shape", AttrType.INTS, [], doc="target shape (Y's dims)")],
         infer_shape=_infer_expand_as_v2, kernel=_expand_as_v2, share_lod=(),
         grad=GradSpec(lambda xp, a, x, dout: _sum_to(dout, x.shape), inputs=("X",)),
         doc="Out = X broadcast to target_shape (Y's shape)", category="shape")


def _tile_plan(x_shape, repeats, fail):
    """X's shape and repeats brought to the same rank (leading 1s), as numpy.tile."""
    if any(r <= 0 for r in repeats):
        fail(f"repeat_times {list(repeats)} must be positive")
    rank = max(len(x_shape), len(repeats))
    return ([1] * (rank - len(x_shape)) + list(x_shape),
            [1] * (rank - len(repeats)) + list(repeats))


def _tile(xp, attrs, x, rt, rt_list):
    repeats = ints_override(attrs["repeat_times"], rt, rt_list)

    def fail(message):
        raise ShapeError(f"op tile: X {list(x.shape)}: {message}")
    shape, reps = _tile_plan(list(x.shape), repeats, fail)
    return xp.tile(x.reshape(shape), reps)


def _tile_grad(xp, attrs, x, rt, rt_list, dout):
    if not wanted(attrs, 0):
        return None
    shape, reps = _tile_plan(list(x.shape), ints_override(attrs["repeat_times"], rt, rt_list),
                             lambda m: None)
    # dOut viewed as (r0, x0, r1, x1, ...): summing the r axes adds every copy's gradient.
    split = [n for pair in zip(reps, shape) for n in pair]
    return dout.reshape(split).sum(axis=tuple(range(0, len(split), 2))).reshape(x.shape)


def _infer_tile(ctx):
    x = ctx.input("X")
    if ctx.input("RepeatTimes") is not None or ctx.inputs("repeat_times_tensor"):
        n = (len(ctx.inputs("repeat_times_tensor")) or
             (ctx.input("RepeatTimes").shape[0] if ctx.input("RepeatTimes").shape else 1))
        ctx.set_output("Out", [-1] * max(n, len(x.shape)), like=x)
        return
    shape, reps = _tile_plan(list(x.shape), ctx.attr("repeat_times"), lambda m: ctx.fail(m, "X"))
    ctx.set_output("Out", [d * r if d >= 0 else -1 for d, r in zip(shape, reps)], like=x)


register("tile",
         inputs=["X", Slot("RepeatTimes", dispensable=True, no_grad=True, doc="1-D int (wins)"),
                 Slot("repeat_times_tensor", duplicable=True, dispensable=True, no_grad=True,
                      doc="one 1-element int tensor per dim")],
         outputs=["Out"],
         attrs=[Attr("repeat_times", AttrType.INTS, [], doc="copies along each dim")],
         infer_shape=_infer_tile, kernel=lod_if_rows_kept(_tile), lod=True,
         grad=GradSpec(lod_blind(_tile_grad), inputs=("X", "RepeatTimes", "repeat_times_tensor")),
         doc="Out = X repeated repeat_times[i] times along dim i", category="shape")
