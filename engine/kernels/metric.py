"""Metrics: ``top_k_v2`` (differentiable in X) and ``accuracy`` over its indices."""
from ..errors import ExecutionError
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradSpec, Slot, at_least, register
from .loss import flat_positions, norm_axis


# ------------------------------------------------------------------ top_k_v2
def _descending_order(xp, x, axis, largest):
    """Positions along ``axis`` from the first pick to the last: a stable sort, so tied
    values come lowest index first (Paddle's CPU kernel uses an unstable partial sort,
    whose tie order depends on k and the data; ours is deterministic). NaN ranks above
    every number when ``largest``, below when not, as in Paddle."""
    key = xp.where(xp.isnan(x), -xp.inf, -x) if largest else x
    if xp.__name__ == "numpy":
        return xp.argsort(key, axis=axis, kind="stable")
    return xp.argsort(key, axis=axis)  # cupy's sort is stable and takes no kind=


def _top_k(xp, attrs, x, k_tensor):
    k = attrs["k"] if k_tensor is None else int(k_tensor.reshape(-1)[0])
    if x.ndim == 0:  # a 0-D tensor is its own top 1, at index 0 (Paddle's rule)
        if k != 1:
            raise ExecutionError(f"op top_k_v2: k={k} must be 1 for a 0-D X")
        return x.copy(), xp.zeros((), dtype=xp.int64)
    axis = norm_axis(attrs["axis"], x.ndim)
    if not 0 < k <= x.shape[axis]:
        raise ExecutionError(f"op top_k_v2: k={k} must be in [1, {x.shape[axis]}] for X "
                         f"{list(x.shape)} along axis {axis}")
    # A full sort: sorted=False may return any order, so sorted order serves both.
    order = _descending_order(xp, x, axis, attrs["largest"])
    pick = [slice(None)] * x.ndim
    pick[axis] = slice(0, k)
    indices = order[tuple(pick)].astype(xp.int64, copy=False)
    return xp.take_along_axis(x, indices, axis=axis), indices


def _top_k_grad(xp, attrs, x, indices, dout):
    if x.ndim == 0:
        return dout.copy()
    axis = norm_axis(attrs["axis"], x.ndim)
    dx = xp.zeros(x.shape, dtype=dout.dtype)  # C-order, so the flat view aliases it
    dx.reshape(-1)[flat_positions(xp, x.shape, axis, indices)] = dout
    return dx


def _infer_top_k(ctx):
    x, k_tensor = ctx.input("X"), ctx.input("K")
    if not x.shape:
        ctx.set_output("Out", [], like=x)
        ctx.set_output("Indices", [], dtype=pb.VarType.INT64, like=x)
        return
    axis = norm_axis(ctx.attr("axis"), len(x.shape))
    if not 0 <= axis < len(x.shape):
        ctx.fail(f"axis {ctx.attr('axis')} is out of range for X {list(x.shape)}", slot="X")
    k = -1 if k_tensor is not None else ctx.attr("k")
    if k > 0 and x.shape[axis] >= 0 and k > x.shape[axis]:
        ctx.fail(f"k={k} exceeds X {list(x.shape)} along axis {axis}", slot="X")
    out = list(x.shape)
    out[axis] = k
    ctx.set_output("Out", out, like=x)
    ctx.set_output("Indices", out, dtype=pb.VarType.INT64, like=x)


register(
    "top_k_v2",
    inputs=[Slot("X", doc="values"),
            Slot("K", dispensable=True, no_grad=True, doc="int tensor [1]: overrides k")],
    outputs=[Slot("Out", doc="the k largest (smallest) values along axis"),
             Slot("Indices", doc="int64 positions of Out's values in X")],
    attrs=[Attr("k", AttrType.INT, 1, checker=at_least(1)),
           Attr("axis", AttrType.INT, -1),
           Attr("largest", AttrType.BOOLEAN, True, doc="False: the k smallest"),
           Attr("sorted", AttrType.BOOLEAN, True)],
    infer_shape=_infer_top_k, kernel=_top_k,
    grad=GradSpec(_top_k_grad, inputs=("X",), outputs=("Indices",)),
    doc="Out, Indices = the top k values of X along axis and where they are",
    category="metric")


# ------------------------------------------------------------------ accuracy
def _accuracy(xp, attrs, out, indices, label):
    total = indices.shape[0]
    hits = (indices == label.reshape(total, 1)).any(axis=1)
    correct = hits.sum(dtype=xp.int32).reshape(())
    accuracy = (correct.astype(xp.float32) / total if total
                else xp.zeros((), dtype=xp.float32))
    return accuracy, correct, xp.full((), total, dtype=xp.int32)


def _infer_accuracy(ctx):
    indices, label = ctx.input("Indices"), ctx.input("Label")
    if len(indices.shape) != 2:
        ctx.fail(f"Indices {list(indices.shape)} must be [N, k]", slot="Indices")
    if len(label.shape) != 2 or label.shape[1] not in (1, -1):
        ctx.fail(f"Label {list(label.shape)} must be [N, 1]", slot="Label")
    n, m = indices.shape[0], label.shape[0]
    if n >= 0 and m >= 0 and n != m:
        ctx.fail(f"Indices {list(indices.shape)} and Label {list(label.shape)} differ in N",
                 slot="Label")
    # 0-d outputs, as Paddle 3.3.1 gives them (checked against it; 2.x gave [1]).
    ctx.set_output("Accuracy", [], dtype=pb.VarType.FP32, lod_level=0)
    ctx.set_output("Correct", [], dtype=pb.VarType.INT32, lod_level=0)
    ctx.set_output("Total", [], dtype=pb.VarType.INT32, lod_level=0)


register(
    "accuracy",
    inputs=[Slot("Out", doc="top-k values [N, k] (read for Paddle's slot only)"),
            Slot("Indices", doc="int64 top-k class ids [N, k]"),
            Slot("Label", doc="int64 true class ids [N, 1]")],
    outputs=[Slot("Accuracy", doc="float32 0-d: Correct / Total"),
             Slot("Correct", doc="int32 0-d: rows whose label is among the top k"),
             Slot("Total", doc="int32 0-d: rows")],
    infer_shape=_infer_accuracy, kernel=_accuracy, share_lod=(),
    doc="Accuracy = share of rows whose Label is among Indices", category="metric")
