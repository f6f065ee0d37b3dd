"""Element-wise binary ops with Paddle's ``axis`` broadcasting, and ``scale``."""
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register, same_as
from ._util import align_y, broadcast_shape, unbroadcast


def _infer_binary(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    ctx.set_output("Out", broadcast_shape(ctx, x, y, ctx.attr("axis")), like=x)


def _binary(name, forward, grads, doc):
    """Register ``elementwise_<name>`` whose gradient is ``grads(x, y, out, dout)``."""
    def kernel(xp, attrs, x, y):
        return forward(x, align_y(y, x.ndim, attrs["axis"]))

    def grad_kernel(xp, attrs, x, y, dout):
        yb = align_y(y, x.ndim, attrs["axis"])
        dx, dy = grads(x, yb, dout)
        return unbroadcast(dx, x.shape), unbroadcast(dy, yb.shape).reshape(y.shape)

    register(f"elementwise_{name}", inputs=["X", "Y"], outputs=["Out"],
             attrs=[Attr("axis", AttrType.INT, -1, doc="where Y's dims start inside X")],
             infer_shape=_infer_binary, kernel=kernel,
             grad=GradSpec(grad_kernel, inputs=("X", "Y"), in_grads=("X", "Y")),
             lod_agree=("X", "Y"), doc=doc, category="math")


_binary("add", lambda x, y: x + y, lambda x, y, g: (g, g), "Out = X + Y (broadcast by axis)")
_binary("sub", lambda x, y: x - y, lambda x, y, g: (g, -g), "Out = X - Y (broadcast by axis)")
_binary("mul", lambda x, y: x * y, lambda x, y, g: (g * y, g * x), "Out = X * Y element-wise")
_binary("div", lambda x, y: x / y, lambda x, y, g: (g / y, -g * x / (y * y)),
        "Out = X / Y element-wise")


def _scale(xp, attrs, x, scale_tensor, bias_tensor):
    s = attrs["scale"] if scale_tensor is None else scale_tensor.reshape(())
    b = attrs["bias"] if bias_tensor is None else bias_tensor.reshape(())
    if attrs["bias_after_scale"]:
        return x * s + b if b else x * s
    return (x + b) * s


def _scale_grad(xp, attrs, dout):
    return dout * attrs["scale"]


register(
    "scale",
    inputs=["X", Slot("ScaleTensor", dispensable=True, no_grad=True),
            Slot("BiasTensor", dispensable=True, no_grad=True)],
    outputs=["Out"],
    attrs=[Attr("scale", AttrType.FLOAT, 1.0), Attr("bias", AttrType.FLOAT, 0.0),
           Attr("bias_after_scale", AttrType.BOOLEAN, True)],
    infer_shape=same_as(), kernel=_scale,
    grad=GradSpec(_scale_grad, inputs=(), in_grads=("X",)),
    doc="Out = scale * X + bias (or scale * (X + bias))", category="math")
