"""Element-wise activations and unary math: relu, tanh, sigmoid, exp, log, square, softmax.

Like Paddle, the gradients of relu, tanh, sigmoid, exp and softmax read the forward
output ``Out`` (cheaper than recomputing from ``X``); log and square read ``X``.
All kernels keep the input dtype (float32 stays float32) and take 0-D tensors
(numpy's ufuncs turn a 0-D array into a scalar, so in-place tricks are only used
on arrays of rank >= 1). ``unary`` is the table entry the other activation and
unary-math modules (activation_more, unary_math) register through.
"""
import numpy as np

from ..ir.registry import Attr, AttrType, GradSpec, register, same_as
from ._util import written


def unary(type, kernel, grad_kernel, reads, doc, category="activation", attrs=(),
          kernel_into=None, grad_into=None):
    """Register ``type`` (X -> Out) and, unless ``grad_kernel`` is None, ``<type>_grad``.

    ``reads`` names what Paddle's grad op reads besides ``Out@GRAD``: "X", "Out",
    "X,Out" or "" (only the out-gradient); the grad kernel is
    ``(xp, attrs, *read values, dout) -> dx`` in that order. ``kernel_into`` and
    ``grad_into``: the two kernels writing into recycled buffers (``ir.registry``); they
    must take X's array as Out's buffer, and Out@GRAD's as X@GRAD's (element-wise).
    """
    slots = tuple(r for r in reads.split(",") if r)
    spec = None if grad_kernel is None else GradSpec(
        grad_kernel, inputs=tuple(r for r in slots if r == "X"),
        outputs=tuple(r for r in slots if r == "Out"), kernel_into=grad_into,
        inplace=(("Out@GRAD", "X@GRAD"),) if grad_into is not None else ())
    register(type, inputs=["X"], outputs=["Out"], attrs=list(attrs), infer_shape=same_as(),
             kernel=kernel, grad=spec, doc=doc, category=category, kernel_into=kernel_into,
             inplace=(("X", "Out"),) if kernel_into is not None else ())


# Given their input's own array (a dead input: runtime.recycle), the two kernels below
# write into it at once and let numpy refuse what does not fit before it writes anything
# (relu: casting="no" for another dtype; relu_grad: a mask that would grow dOut,
# ValueError, its dtype tested); any other buffer takes the checks (numpy would broadcast
# the operands up to a larger buffer's shape). A training step runs each twice, and
# reading shapes and dtypes after a large product has evicted the interpreter's data
# costs more than the element-wise pass. The same ufunc calls as the pure kernels, the
# same bits; rank 0 takes the checks, which give numpy's scalar as the pure kernels do.
def _relu_into(xp, attrs, bufs, x):
    out = bufs[0]
    if out is x and x.ndim:
        done = written(xp.maximum, x, 0, out=out, casting="no")
        if done is not None:
            return done
    if (out is not None and out.shape == x.shape and out.dtype == x.dtype and x.ndim
            and x.dtype.kind == "f"):
        return xp.maximum(x, 0, out=out)
    return xp.maximum(x, 0)


def _relu_grad_into(xp, attrs, bufs, out, dout):
    dx = bufs[0]
    if dx is dout and dout.ndim:  # dout * mask has dout's dtype: no dtype to test
        done = written(xp.multiply, dout, out > 0, out=dx)
        if done is not None:
            return done
    if (dx is not None and dx.shape == dout.shape == out.shape and dx.dtype == dout.dtype
            and dout.ndim and dout.dtype.kind == "f"):
        return xp.multiply(dout, out > 0, out=dx)
    return dout * (out > 0)


# Each grad kernel is (xp, attrs, out_or_x, dout) -> dx.
unary("relu", lambda xp, attrs, x: xp.maximum(x, 0),
      lambda xp, attrs, out, dout: dout * (out > 0),
      "Out", "Out = max(X, 0)", kernel_into=_relu_into, grad_into=_relu_grad_into)


# The kernels below work in place on the one array they allocate (never on an input):
# recurrent steps call them once per time step on small arrays, where allocations and
# passes over memory are most of the cost. On numpy float32/float64 arrays they call the
# ufuncs directly with out= given positionally and constants of the array's own dtype: a
# Python float costs a conversion per call (~0.3 us on a 30x128 gate), and since 0.5 and 1
# are exact in both dtypes, numpy's weak-scalar rule (NEP 50) casts the Python constant to
# the very same value and loop: the same bits (tests/engine/test_activation_consts_bits.py).
_CONSTS = {np.dtype(np.float32): (np.float32(0.5), np.float32(1)),
           np.dtype(np.float64): (np.float64(0.5), np.float64(1))}
_multiply, _add, _subtract, _tanh = np.multiply, np.add, np.subtract, np.tanh


def _tanh_grad(xp, attrs, out, dout):
    consts = _CONSTS.get(out.dtype)
    if consts is not None and out.ndim and xp is np and dout.dtype == out.dtype:
        g = _multiply(out, out)
        _subtract(consts[1], g, g)
        return _multiply(g, dout, g)
    if out.ndim == 0:  # out * out is a scalar there: nothing to write into
        return dout * (1 - out * out)
    g = out * out
    xp.subtract(1, g, out=g)
    g *= dout
    return g


def _sigmoid(xp, attrs, x):
    # 0.5 * (1 + tanh(X / 2)) rather than Paddle's 1 / (1 + exp(-X)): no exp overflow, and
    # numpy's tanh is about 1.5x cheaper than its exp (this op runs three times per step of
    # an LSTM group: benchmarks/lstm.py). Both have float rounding as absolute error
    # (<= 6e-8 in float32); only the relative accuracy of the far negative tail is lower
    # (0 instead of 4e-8 at X = -17 in float32), where a probability is 0 for any use.
    consts = _CONSTS.get(x.dtype)
    if consts is not None and x.ndim and xp is np:
        half, one = consts
        out = _multiply(x, half)
        _tanh(out, out)
        _add(out, one, out)
        return _multiply(out, half, out)
    if x.ndim == 0:  # numpy scalars take no out=
        return xp.asarray(0.5 * (1 + xp.tanh(x * 0.5)), dtype=x.dtype)
    out = x * 0.5
    xp.tanh(out, out=out)
    out += 1
    out *= 0.5
    return out


def _sigmoid_grad(xp, attrs, out, dout):
    consts = _CONSTS.get(out.dtype)
    if consts is not None and out.ndim and xp is np and dout.dtype == out.dtype:
        g = _subtract(consts[1], out)
        _multiply(g, out, g)
        return _multiply(g, dout, g)
    g = 1 - out
    g *= out
    g *= dout
    return g


unary("tanh", lambda xp, attrs, x: xp.tanh(x), _tanh_grad, "Out", "Out = tanh(X)")
unary("sigmoid", _sigmoid, _sigmoid_grad, "Out", "Out = 1 / (1 + exp(-X))")
unary("exp", lambda xp, attrs, x: xp.exp(x),
      lambda xp, attrs, out, dout: dout * out,
      "Out", "Out = exp(X)", category="math")
unary("log", lambda xp, attrs, x: xp.log(x),
      lambda xp, attrs, x, dout: dout / x,
      "X", "Out = ln(X) (X > 0)", category="math")
unary("square", lambda xp, attrs, x: x * x,
      lambda xp, attrs, x, dout: dout * (2 * x),
      "X", "Out = X * X", category="math")


# -------------------------------------------------------------------- softmax
# Paddle 3.3.1's CPU softmax and log_softmax clip X - max at -64 before exp (its
# ValueClip), so softmax never returns 0 and log_softmax never goes below -64 - log(n):
# a downstream log() stays finite. We do the same (checked against Paddle).
SHIFT_FLOOR = -64.0


def clipped_shift(xp, x, axis):
    """max(X - max(X, axis), -64): a fresh array, safe to work on in place."""
    shifted = x - x.max(axis=axis, keepdims=True)
    xp.maximum(shifted, SHIFT_FLOOR, out=shifted)
    return shifted


def _softmax(xp, attrs, x):
    """exp(X - max) / sum(exp(X - max)) along ``axis`` (shifting keeps exp finite)."""
    if x.ndim == 0:
        return xp.ones_like(x)
    axis = attrs["axis"]
    e = clipped_shift(xp, x, axis)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _softmax_grad(xp, attrs, out, dout):
    """dX = Out * (dOut - sum(dOut * Out, axis))."""
    if out.ndim == 0:
        return xp.zeros_like(dout)
    axis = attrs["axis"]
    return out * (dout - (dout * out).sum(axis=axis, keepdims=True))


def infer_softmax(ctx):
    x, axis = ctx.input("X"), ctx.attr("axis")
    rank = len(x.shape)
    if not -max(rank, 1) <= axis < max(rank, 1):
        ctx.fail(f"axis={axis} is out of range for X {list(x.shape)} of rank {rank}",
                 slot="X")
    ctx.set_output("Out", x.shape, like=x)


register(
    "softmax", inputs=["X"], outputs=["Out"],
    attrs=[Attr("axis", AttrType.INT, -1, doc="the dim normalised (negative counts from the end)")],
    infer_shape=infer_softmax, kernel=_softmax,
    grad=GradSpec(_softmax_grad, inputs=(), outputs=("Out",)),
    doc="Out = exp(X) / sum(exp(X)) along axis", category="activation")
