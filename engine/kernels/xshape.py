"""Helpers shared by the shape-op families: explicit grad-op registration, the
``XShape`` convention of reshape2, transpose2, flatten_contiguous_range, squeeze2 and
unsqueeze2 (an intermediate output of shape ``[0] + X.shape``, size 0, that carries X's
shape to the grad op, which reads it instead of X, as Paddle's), and the LoD rule of
ops that may change the rows (``lod_if_rows_kept``)."""
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


def lod_if_rows_kept(kernel, out_index=0):
    """A LoD-aware kernel (register it with ``lod=True`` and an (input, output) share_lod
    pair) from an ordinary one: Out takes its first input's LoD, as Paddle 3.3.1 shares it,
    while Out has that input's rows (dim 0); an Out with other rows gets none, where Paddle
    would hand on a LoD that no longer fits them. A list output (unbind) is judged by its
    first item, a list input (stack) by its first tensor."""
    def run(xp, attrs, lod, *inputs):
        result = kernel(xp, attrs, *inputs)
        out = result[out_index] if isinstance(result, tuple) else result
        x = inputs[0][0] if isinstance(inputs[0], list) else inputs[0]
        out = out[0] if isinstance(out, list) and out else out
        if out is None or x.ndim == 0 or getattr(out, "ndim", 0) == 0 or \
                out.shape[0] != x.shape[0]:
            lod.outputs[out_index] = []
        return result
    return run


def rows_lod_level(x, out_shape):
    """Shape inference's side of ``lod_if_rows_kept``: X's LoD level while Out's dim 0 is
    X's (Paddle compares the declared dims, -1 included), else 0."""
    kept = len(x.shape) and len(out_shape) and out_shape[0] == x.shape[0]
    return x.lod_level if kept else 0


def lod_blind(kernel):
    """A LoD-aware kernel that ignores the LoD (the grad op of a LoD-aware forward op is
    LoD-aware too; its outputs take their LoD from its share_lod pairs)."""
    return lambda xp, attrs, lod, *inputs: kernel(xp, attrs, *inputs)
