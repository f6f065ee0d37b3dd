"""Special functions numpy lacks, written once against ``xp``: ``erf``.

numpy has no erf, and scipy is not a runtime dependency, so erf is computed here
with the rational approximations of Sun's fdlibm ``s_erf.c`` (the algorithm behind
glibc's, musl's and Go's erf; error below 1 ulp in float64). Every branch is
evaluated on the whole array and the right one picked with ``where``, so the code is
the same on numpy and cupy. float32 inputs are computed in float64 and cast back.
"""
import math

# erf(x) = x + x * R(x^2) / S(x^2) on |x| < 0.84375.
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01,
       -2.84817495755985104766e-02, -5.77027029648944159157e-03,
       -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
       5.08130628187576562776e-03, 1.32494738004321644526e-04,
       -3.96022827877536812320e-06)
# erf(x) = erx + P(s) / Q(s), s = |x| - 1, on 0.84375 <= |x| < 1.25.
_ERX = 8.45062911510467529297e-01
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01,
       -3.72207876035701323847e-01, 3.18346619901161753674e-01,
       -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
       7.18286544141962662868e-02, 1.26171219808761642112e-01,
       1.36370839120290507362e-02, 1.19844998467991074170e-02)
# erfc(x) = exp(-x^2 - 0.5625 + R(1/x^2) / S(1/x^2)) / x on 1.25 <= |x| < 1/0.35 (ra/sa)
# and 1/0.35 <= |x| < 6 (rb/sb); erf = 1 - erfc and erf = 1 beyond 6.
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01,
       -1.05586262253232909814e+01, -6.23753324503260060396e+01,
       -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02,
       4.34565877475229228821e+02, 6.45387271733267880336e+02,
       4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01,
       -1.77579549177547519889e+01, -1.60636384855821916062e+02,
       -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02,
       1.53672958608443695994e+03, 3.19985821950859553908e+03,
       2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp splitting constant for float64


def _poly(coeffs, t):
    """coeffs[0] + coeffs[1] t + ... by Horner's rule."""
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * t + c
    return acc


def erf(xp, x):
    """The error function of ``x``, elementwise, in ``x``'s dtype."""
    dtype = x.dtype
    x = xp.asarray(x, dtype=xp.float64)
    ax = xp.abs(x)
    # Each branch sees its input clipped to its own range, so the lanes it does not
    # own stay finite (no inf * 0, no 1/0) and raise no floating-point warnings.
    # |x| < 0.84375
    a = xp.minimum(ax, 0.84375)
    z = a * a
    small = a + a * (_poly(_PP, z) / _poly(_QQ, z))
    # 0.84375 <= |x| < 1.25
    s = xp.clip(ax, 0.84375, 1.25) - 1.0
    mid = _ERX + _poly(_PA, s) / _poly(_QA, s)
    # 1.25 <= |x| < 6
    t = xp.clip(ax, 1.25, 6.0)
    w = 1.0 / (t * t)
    ratio = xp.where(t < 1 / 0.35, _poly(_RA, w) / _poly(_SA, w),
                     _poly(_RB, w) / _poly(_SB, w))
    # exp(-t^2) split as exp(-h^2) * exp((h - t)(h + t)) with h = t's high 26 bits, so
    # h * h is exact and the large exponent loses no bits to rounding.
    c = t * _SPLIT
    h = c - (c - t)
    tail = 1.0 - xp.exp(-h * h - 0.5625) * xp.exp((h - t) * (h + t) + ratio) / t
    out = xp.where(ax < 0.84375, small,
                   xp.where(ax < 1.25, mid, xp.where(ax < 6.0, tail, 1.0)))
    out = xp.where(xp.isnan(x), x, xp.copysign(out, x))
    return out.astype(dtype, copy=False)


SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
