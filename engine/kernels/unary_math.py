"""Unary math: abs, sqrt, rsqrt, pow, reciprocal, sin, cos, erf, log1p, log2, log10,
expm1, and the rounding ops floor, ceil, round, sign.

Each grad op reads what Paddle 3.3.1's reads (``X`` or ``Out``). floor, ceil and
round have a zero gradient, as in Paddle; sign has no gradient op at all (Paddle's
backward stops there). ``round`` rounds halves to even after scaling by 10**decimals,
as Paddle 3.3.1 does (checked: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0).
"""
import math

from ..errors import ShapeError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, register
from .activation import unary
from .special import TWO_OVER_SQRT_PI, erf

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _math(type, kernel, grad_kernel, reads, doc, attrs=()):
    unary(type, kernel, grad_kernel, reads, doc, category="math", attrs=attrs)


def _zero_grad(xp, attrs, dout):
    return xp.zeros_like(dout)


_math("abs", lambda xp, a, x: xp.abs(x),
      lambda xp, a, x, dout: dout * xp.sign(x), "X", "Out = |X|")
_math("sqrt", lambda xp, a, x: xp.sqrt(x),
      lambda xp, a, out, dout: dout * 0.5 / out, "Out", "Out = sqrt(X)")
_math("rsqrt", lambda xp, a, x: 1 / xp.sqrt(x),
      lambda xp, a, out, dout: dout * out * out * out * -0.5, "Out", "Out = 1 / sqrt(X)")
_math("reciprocal", lambda xp, a, x: 1 / x,
      lambda xp, a, out, dout: -dout * out * out, "Out", "Out = 1 / X")
_math("sin", lambda xp, a, x: xp.sin(x),
      lambda xp, a, x, dout: dout * xp.cos(x), "X", "Out = sin(X)")
_math("cos", lambda xp, a, x: xp.cos(x),
      lambda xp, a, x, dout: -dout * xp.sin(x), "X", "Out = cos(X)")
_math("erf", lambda xp, a, x: erf(xp, x),
      lambda xp, a, x, dout: dout * xp.exp(-x * x) * TWO_OVER_SQRT_PI, "X",
      "Out = erf(X) = 2 / sqrt(pi) * integral of exp(-t^2) from 0 to X")
_math("log1p", lambda xp, a, x: xp.log1p(x),
      lambda xp, a, x, dout: dout / (x + 1), "X", "Out = ln(1 + X)")
_math("log2", lambda xp, a, x: xp.log2(x),
      lambda xp, a, x, dout: dout / (x * _LN2), "X", "Out = log2(X)")
_math("log10", lambda xp, a, x: xp.log10(x),
      lambda xp, a, x, dout: dout / (x * _LN10), "X", "Out = log10(X)")
_math("expm1", lambda xp, a, x: xp.expm1(x),
      # Paddle's dOut * Out + dOut, rounding included (Out + 1 loses bits near X << 0)
      lambda xp, a, out, dout: dout * out + dout, "Out", "Out = exp(X) - 1")
_math("floor", lambda xp, a, x: xp.floor(x), _zero_grad, "",
      "Out = largest integer <= X (zero gradient)")
_math("ceil", lambda xp, a, x: xp.ceil(x), _zero_grad, "",
      "Out = smallest integer >= X (zero gradient)")
_math("sign", lambda xp, a, x: xp.sign(x), None, "",
      "Out = -1, 0 or 1 by the sign of X (no gradient)")


def _round(xp, attrs, x):
    # rint rounds halves to even, as Paddle 3.3.1's round does (0.5 -> 0, 2.5 -> 2)
    d = attrs["decimals"]
    if d == 0:
        out = xp.rint(x)
    elif d > 0:
        scale = 10.0 ** d
        out = xp.rint(x * scale) / scale
    else:
        scale = 10.0 ** -d
        out = xp.rint(x / scale) * scale
    return out.astype(x.dtype, copy=False)


_math("round", _round, _zero_grad, "",
      "Out = X rounded to `decimals` places, halves to even (zero gradient)",
      attrs=[Attr("decimals", AttrType.INT, 0, doc="digits kept after the point (< 0: before)")])


# ------------------------------------------------------------------------- pow
def _factor(attrs, factor_tensor):
    """The exponent: FactorTensor's single value when fed, else the ``factor`` attr."""
    if factor_tensor is None:
        return attrs["factor"]
    if factor_tensor.size != 1:
        raise ShapeError(f"op pow: slot FactorTensor must hold one value, got shape "
                         f"{list(factor_tensor.shape)}")
    return float(factor_tensor.reshape(-1)[0])


def _pow(xp, attrs, x, factor_tensor):
    return x ** _factor(attrs, factor_tensor)


def _pow_grad(xp, attrs, x, factor_tensor, dout):
    f = _factor(attrs, factor_tensor)
    return dout * (x ** (f - 1)) * f


def _infer_pow(ctx):
    x, ft = ctx.input("X"), ctx.input("FactorTensor")
    if ft is not None and all(d >= 0 for d in ft.shape) and math.prod(ft.shape) != 1:
        ctx.fail(f"FactorTensor must hold one value, got shape {list(ft.shape)}",
                 slot="FactorTensor")
    ctx.set_output("Out", x.shape, like=x)


register(
    "pow", inputs=["X", Slot("FactorTensor", dispensable=True, no_grad=True,
                             doc="1-element exponent; overrides the factor attribute")],
    outputs=["Out"], attrs=[Attr("factor", AttrType.FLOAT, 1.0, doc="the exponent")],
    infer_shape=_infer_pow, kernel=_pow,
    grad=GradSpec(_pow_grad, inputs=("X", "FactorTensor")),
    doc="Out = X ** factor", category="math")
