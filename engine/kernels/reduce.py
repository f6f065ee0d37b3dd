"""Reductions: ``mean``, ``sum`` (of several tensors)."""
from ..registry import GradOp, GradSpec, Slot, register, grad_name


def _mean(xp, attrs, x):
    return x.mean(dtype=x.dtype).reshape(())


def _mean_grad(xp, attrs, x, dout):
    return xp.full(x.shape, dout.reshape(()) / max(x.size, 1), dtype=x.dtype)


register("mean", inputs=["X"], outputs=["Out"],
         infer_shape=lambda ctx: ctx.set_output("Out", [], like=ctx.input("X")),
         kernel=_mean, grad=GradSpec(_mean_grad, inputs=("X",)),
         doc="Out = mean of all elements of X (a 0-d tensor)", category="math")


def _sum(xp, attrs, xs):
    out = xs[0].copy()
    for x in xs[1:]:
        out += x
    return out


def _infer_sum(ctx):
    xs = ctx.inputs("X")
    if not xs:
        ctx.fail("needs at least one input", slot="X")
    for i, x in enumerate(xs[1:], 1):
        if len(x.shape) != len(xs[0].shape) or any(
                a != b and a >= 0 and b >= 0 for a, b in zip(x.shape, xs[0].shape)):
            ctx.fail(f"input {i} has shape {list(x.shape)}, input 0 has {list(xs[0].shape)}",
                     slot="X")
    ctx.set_output("Out", xs[0].shape, like=xs[0])


def _sum_grad_maker(op):
    # d(sum)/dX_i = dOut: one ``scale`` per input keeps the grad ops ordinary ops.
    dout = grad_name(op.output("Out")[0])
    return [GradOp("scale", {"X": [dout]}, {"Out": [grad_name(x)]}, {"scale": 1.0})
            for x in op.input("X")]


register("sum", inputs=[Slot("X", duplicable=True)], outputs=["Out"],
         infer_shape=_infer_sum, kernel=_sum, grad=_sum_grad_maker, share_lod=(("X", "Out"),),
         doc="Out = X[0] + X[1] + ... (same shapes)", category="math")
