"""Cases for kernels/cumulative_more.py, ported from Paddle's test_cumprod_op.py (TestCumprod:
every dim -4..3 of a 4-D input with 0, 10, 20, 30 or all elements zero; plus exclusive
and reverse, which TestNPUCumprodOp2 and the attributes cover), test_logcumsumexp_op.py
(TestLogcumsumexp's arange(12) data: flattened, axis 0, axis -1; plus every combination
of axis, flatten, exclusive and reverse its gradient reference takes), test_cummax_op.py / test_cummin_op.py (TestCummaxOp,
TestCummaxOp_axis1, _axis2, _dtype int32, and ties / NaNs). Paddle's [2, 3, 4, 5] and
[100, 100] inputs are shrunk for a fast float64 central difference.

Checked against PaddlePaddle 3.3.1 (static graph, CPU: every case here appended with
``block.append_op``, a random out-gradient through ``paddle.static.gradients``): float64
outputs and gradients match to 1e-15 relative (cummax/cummin exactly, indices included,
with ties and NaNs; an exclusive logcumsumexp's first value is the lowest float64, as in
Paddle). Paddle 3.3.1 refuses cumprod of a 0-D X (dim -1; dim 0 works) and its cummax_grad
crashes (SIGSEGV) on a 0-D x; ours gives the obvious results there.
"""
import math

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

NOT_PORTED = {
    "*FP16* / *BF16*": "float16/bfloat16 (CUDA only)",
    "*Complex* (TestCumprodComplex*)": "complex dtypes are not supported",
    "TestCummaxOpFlatten / TestCumminOpFlatten": "commented out in Paddle's file; cummax and "
    "cummin have no flatten attribute in Paddle 3.3.1",
    "TestLogcumsumexp exclusive: float64 central difference": "its loss holds the lowest "
    "float64 and overflows; these gradients are compared with Paddle's instead (match)",
    "*API / *Error / TestLogcumsumexpBF16 / TestCummaxAPI / TestCumprodAPI": "python API "
    "and argument-type tests, not op semantics",
}


def _u(seed, lo, hi, shape):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _scan(x, axis, f, exclusive=False, reverse=False, start=None):
    """A running reduction written out element by element."""
    x = np.moveaxis(np.asarray(x, dtype=float), axis, -1) if x.ndim else x.reshape(1)
    out = np.empty(x.shape)
    n = x.shape[-1]
    for k in np.ndindex(*x.shape[:-1]):
        order = range(n - 1, -1, -1) if reverse else range(n)
        seen = []
        for j in order:
            if exclusive:
                out[k + (j,)] = f(seen) if seen else start
                seen.append(x[k + (j,)])
            else:
                seen.append(x[k + (j,)])
                out[k + (j,)] = f(seen)
    return np.moveaxis(out, -1, axis)


def _cumprod_ref(i, a):
    x = i["X"]
    out = _scan(x, a["dim"] % max(x.ndim, 1), math.prod, a.get("exclusive", False),
                a.get("reverse", False), 1.0)
    return out.reshape(x.shape)


def _lse_ref(i, a):
    x = i["X"]
    if a.get("flatten"):
        x = x.reshape(-1)
    def f(v):
        m = max(v)
        return m + math.log(math.fsum(math.exp(t - m) for t in v))
    return _scan(x, a.get("axis", -1) % max(x.ndim, 1), f, a.get("exclusive", False),
                 a.get("reverse", False), np.finfo(np.float64).min).reshape(x.shape)


def _extreme_ref(greater):
    def ref(i, a):
        x = np.asarray(i["x"], dtype=float)
        axis = a.get("axis", -1) % max(x.ndim, 1)
        xm = np.moveaxis(x.reshape(x.shape or (1,)), axis, -1)
        out, idx = np.empty(xm.shape), np.empty(xm.shape, dtype=np.int64)
        for k in np.ndindex(*xm.shape[:-1]):
            best, at = xm[k + (0,)], 0
            for j in range(xm.shape[-1]):
                v = xm[k + (j,)]
                if math.isnan(v) or (not math.isnan(best) and (v >= best if greater else v <= best)):
                    best, at = v, j
                out[k + (j,)], idx[k + (j,)] = best, at
        dtype = np.int32 if a.get("dtype", 3) == 2 else np.int64
        return {"out": np.moveaxis(out, -1, axis).reshape(x.shape),
                "indices": np.moveaxis(idx, -1, axis).reshape(x.shape).astype(dtype)}
    return ref


def _with_zeros(seed, shape, count):
    x = _u(seed, 0.5, 1.5, shape) * np.random.default_rng(seed).choice([-1, 1], shape)
    flat = x.reshape(-1)
    flat[np.random.default_rng(seed + 1).choice(flat.size, count, replace=False)] = 0.0
    return x


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="axis"):
        run_op("logcumsumexp", {"X": np.ones((2, 3))}, {"axis": 1, "flatten": True})
    with pytest.raises(FluidscopeError, match="out of range"):
        run_op("cumprod", {"X": np.ones((2, 3))}, {"dim": 2})


def _cases():
    cases = []
    # Paddle's TestCumprod: every dim -4..3 of a 4-D input, with 0, 10, 20, 30 or all
    # elements zero (one zero count per dim here, cycling, to keep the gradient checks fast)
    shape = [2, 3, 2, 3]
    for k, dim in enumerate(range(-4, 4)):
        zeros = (0, 10, 20, 30, 36)[k % 5]
        x = _with_zeros(k, shape, zeros) if zeros else _u(k, 0.5, 1.5, shape)
        cases.append(OpCase("cumprod", {"X": x}, _cumprod_ref, attrs={"dim": dim},
                            name=f"paddle_TestCumprod_dim{dim}_zeros{zeros}"))
    cases += [
        OpCase("cumprod", {"X": _with_zeros(20, [3, 5], 2)}, _cumprod_ref,
               attrs={"dim": 1, "exclusive": True}, name="exclusive", check=_errors),
        OpCase("cumprod", {"X": _with_zeros(21, [3, 5], 2)}, _cumprod_ref,
               attrs={"dim": -1, "reverse": True}, name="reverse"),
        OpCase("cumprod", {"X": _u(22, 0.5, 1.5, [4, 3])}, _cumprod_ref,
               attrs={"dim": 0, "exclusive": True, "reverse": True}, name="exclusive_reverse"),
        OpCase("cumprod", {"X": np.array(1.7)}, _cumprod_ref, attrs={"dim": 0}, name="zero_dim"),
        OpCase("cummax", {"x": np.array(0.3)}, _extreme_ref(True), name="zero_dim",
               grad_outputs=("out",)),
        OpCase("logcumsumexp", {"X": np.array(0.3)}, _lse_ref, name="zero_dim"),
        OpCase("cumprod", {"X": _u(23, 0.5, 1.5, [3, 4]).astype(np.float32)}, _cumprod_ref,
               attrs={"dim": 1}, name="fp32", grad=(), rtol=1e-6),
    ]
    x = _u(30, -2, 2, [2, 3, 4])
    arange = np.arange(12, dtype=np.float64).reshape(3, 4)  # TestLogcumsumexp's data
    for name, attrs, data in (
            ("paddle_TestLogcumsumexp_flatten", {"flatten": True}, arange),
            ("paddle_TestLogcumsumexp_axis0", {"axis": 0}, arange),
            ("paddle_TestLogcumsumexp_axis-1", {"axis": -1}, arange),
            ("axis1", {"axis": 1}, x),
            ("flatten_3d", {"flatten": True}, x),
            ("exclusive", {"axis": 1, "exclusive": True}, x),
            ("reverse", {"axis": 2, "reverse": True}, x),
            ("exclusive_reverse", {"axis": -1, "exclusive": True, "reverse": True}, x),
            ("flatten_exclusive_reverse",
             {"flatten": True, "axis": 0, "exclusive": True, "reverse": True}, x)):
        # an exclusive scan starts at -1.8e308: a central difference of a loss holding it
        # overflows (to NaN, which the check would not notice); Paddle's gradient is the
        # reference there (module docstring)
        cases.append(OpCase("logcumsumexp", {"X": data}, _lse_ref, attrs=attrs, name=name,
                            grad=() if attrs.get("exclusive") else "auto"))
    cases += [
        OpCase("logcumsumexp", {"X": np.array([-800.0, 0.0, 700.0, -1000.0])}, _lse_ref,
               name="stable", grad=()),
        OpCase("logcumsumexp", {"X": x.astype(np.float32)}, _lse_ref, attrs={"axis": 1},
               name="fp32", grad=(), rtol=1e-6),
    ]
    for op, greater in (("cummax", True), ("cummin", False)):
        kind = op[3:]
        ties = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 0.5], [2.0, 2.0, 1.0, 1.0, 4.0, 4.0]])
        nans = np.array([1.0, 3.0, np.nan, 5.0, np.nan, 0.0])
        cases += [
            OpCase(op, {"x": _u(40, 0, 1, [4, 5])}, _extreme_ref(greater),
                   name=f"paddle_TestCum{kind}Op", grad_outputs=("out",)),
            OpCase(op, {"x": _u(41, -1, 1, [4, 5])}, _extreme_ref(greater), attrs={"axis": 0},
                   name=f"paddle_TestCum{kind}OpAxis1", grad_outputs=("out",)),
            OpCase(op, {"x": _u(42, -1, 1, [3, 4, 2])}, _extreme_ref(greater), attrs={"axis": -2},
                   name=f"paddle_TestCum{kind}OpAxis2", grad_outputs=("out",)),
            OpCase(op, {"x": _u(43, -1, 1, [4, 5])}, _extreme_ref(greater),
                   attrs={"axis": 1, "dtype": 2}, name=f"paddle_TestCum{kind}OpIndexType",
                   grad_outputs=("out",)),
            OpCase(op, {"x": ties if greater else -ties}, _extreme_ref(greater), attrs={"axis": 1},
                   name="ties", grad=()),
            OpCase(op, {"x": nans}, _extreme_ref(greater), name="nans", grad=()),
            OpCase(op, {"x": np.arange(12, dtype=np.int32).reshape(3, 4)}, _extreme_ref(greater),
                   attrs={"axis": 0}, name=f"paddle_TestCum{kind}API_int32", grad=()),
            OpCase(op, {"x": _u(44, -1, 1, [4, 5]).astype(np.float32)}, _extreme_ref(greater),
                   name="fp32", grad=()),
        ]
    return cases


CASES = _cases()
