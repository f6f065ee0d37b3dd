"""Helpers shared by the shape-op families: explicit grad-op registration and the
``XShape`` convention of reshape2, transpose2, flatten_contiguous_range, squeeze2 and
unsqueeze2 (an intermediate output of shape ``[0] + X.shape``, size 0, that carries X's
shape to the grad op, which reads it instead of X, as Paddle's)."""
from ..errors import SchemaError
from ..ir.names import grad_name
from ..ir.registry import GradOp, Slot, register


def register_grad(fwd_type, attrs, inputs, outputs, infer_shape, kernel):
    """Register ``<fwd_type>_grad`` with explicit slots (duplicable ones included)."""
    register(fwd_type + "_grad", inputs=inputs, outputs=outputs, attrs=attrs,
             infer_shape=infer_shape, kernel=kernel, doc=f"gradient of {fwd_type}",
             category="gradient", share_lod=(), grad_of=fwd_type)


def xshape(xp, x):
    """The intermediate XShape: an empty (size 0) array of shape (0,) + X.shape."""
    return xp.empty((0,) + tuple(x.shape), dtype=x.dtype)


def infer_from_xshape(ctx):
    """X@GRAD has XShape's dims after the leading 0, and Out@GRAD's dtype."""
    meta, dout = ctx.input("XShape"), ctx.input("Out@GRAD")
    ctx.set_output("X@GRAD", list(meta.shape)[1:], like=dout)


def xshape_grad_maker(grad_type, extra_inputs=()):
    """Grad maker of an op whose grad reads XShape and Out@GRAD (plus ``extra_inputs``
    forward input slots, as unsqueeze2_grad's AxesTensor)."""
    def make(op):
        if not op.output("XShape"):
            raise SchemaError(f"op {op.type}: backward reads its XShape output, which is "
                              f"not set; give the op an XShape variable")
        ins = {s: op.input(s) for s in extra_inputs}
        ins.update({"XShape": op.output("XShape"),
                    "Out@GRAD": [grad_name(op.output("Out")[0])]})
        return [GradOp(grad_type, ins, {"X@GRAD": [grad_name(op.input("X")[0])]})]
    return make


# The grad op's slots: (inputs, outputs).
XSHAPE_GRAD_SLOTS = ([Slot("XShape"), Slot("Out@GRAD")], [Slot("X@GRAD", dispensable=True)])
