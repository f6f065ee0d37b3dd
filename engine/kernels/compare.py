"""Comparisons, logical ops and finiteness tests: every output is a bool tensor, and
none has a gradient (Paddle registers no grad op for them).

The comparisons broadcast Y into X by Paddle's ``axis`` rule like the element-wise math
ops (Paddle 3.3.1's kernels honour ``axis``; its compile-time shape check accepts only
placements numpy broadcasting also accepts). The logical ops broadcast numpy-style and
read any dtype, non-zero being true, as Paddle's do. Paddle 3.3.1's ``equal`` and
``not_equal`` treat finite floats closer than 1e-15 (absolute) as equal, NaN as unequal
to everything and infinities by sign (measured on its CPU kernel); ours do the same.
"""
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, register
from ._util import align_y, broadcast_shape

_BOOL = pb.VarType.BOOL


def _infer_binary_bool(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    axis = ctx.attrs.get("axis", -1)
    ctx.set_output("Out", broadcast_shape(ctx, x, y, axis), dtype=_BOOL, like=x)


def _infer_unary_bool(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x.shape, dtype=_BOOL, like=x)


_COMPARISONS = (
    ("less_than", "less", "Out = X < Y"),
    ("less_equal", "less_equal", "Out = X <= Y"),
    ("greater_than", "greater", "Out = X > Y"),
    ("greater_equal", "greater_equal", "Out = X >= Y"),
    ("equal", "equal", "Out = X == Y"),
    ("not_equal", "not_equal", "Out = X != Y"),
)


_EQUAL_TOLERANCE = 1e-15


def _float_equal(xp, x, y):
    """Paddle's float equality: exact, or finite and within 1e-15. The difference is
    taken only of finite pairs (inf - inf would warn and is no answer anyway)."""
    finite = xp.isfinite(x) & xp.isfinite(y)
    zero = xp.zeros((), dtype=x.dtype)
    gap = xp.abs(xp.where(finite, x, zero) - xp.where(finite, y, zero))
    return xp.equal(x, y) | (finite & (gap < _EQUAL_TOLERANCE))


def _comparison(fn_name):
    def kernel(xp, attrs, x, y):
        y = align_y(y, x.ndim, attrs["axis"])
        if fn_name in ("equal", "not_equal") and (x.dtype.kind == "f" or y.dtype.kind == "f"):
            same = _float_equal(xp, x, y)
            return same if fn_name == "equal" else ~same
        return getattr(xp, fn_name)(x, y)
    return kernel


for _type, _fn, _doc in _COMPARISONS:
    register(_type, inputs=["X", "Y"], outputs=["Out"],
             attrs=[Attr("axis", AttrType.INT, -1,
                         doc="where Y's dims start inside X (-1: trailing)"),
                    Attr("force_cpu", AttrType.BOOLEAN, False,
                         doc="keep Out on the CPU (a placement hint; results are the same)")],
             infer_shape=_infer_binary_bool, kernel=_comparison(_fn),
             doc=f"{_doc} element-wise (bool, broadcast by axis)", category="compare")


def _logical(fn_name):
    fn = "logical_" + fn_name
    return lambda xp, attrs, x, y: getattr(xp, fn)(x, y)


for _name, _doc in (("and", "X and Y"), ("or", "X or Y"), ("xor", "X xor Y")):
    register(f"logical_{_name}", inputs=["X", "Y"], outputs=["Out"],
             infer_shape=_infer_binary_bool, kernel=_logical(_name),
             doc=f"Out = {_doc} element-wise (bool; non-zero is true; numpy broadcasting)",
             category="compare")

register("logical_not", inputs=["X"], outputs=["Out"], infer_shape=_infer_unary_bool,
         kernel=lambda xp, attrs, x: xp.logical_not(x),
         doc="Out = not X element-wise (bool; non-zero is true)", category="compare")

for _type, _fn, _doc in (("isnan_v2", "isnan", "X is NaN"), ("isinf_v2", "isinf", "X is +-inf"),
                         ("isfinite_v2", "isfinite", "X is neither NaN nor +-inf")):
    register(_type, inputs=["X"], outputs=["Out"], infer_shape=_infer_unary_bool,
             kernel=(lambda fn: lambda xp, attrs, x: getattr(xp, fn)(x))(_fn),
             doc=f"Out = {_doc}, element-wise (bool)", category="compare")
