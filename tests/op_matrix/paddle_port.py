"""Helpers for the ``cases_paddle_*`` modules: Paddle OpTest classes ported as OpCases.

Paddle's tests write LoDs as sequence lengths and often run in float32. A float32 test
becomes two cases here: the forward in float32 (Paddle's dtype, no gradient) and the
same configuration in float64 whose gradient is checked by central differences (a
float32 finite difference is too coarse to check anything).
"""
import numpy as np

from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase


def offsets(lengths):
    """Paddle's length-based LoD level -> an offset-based one."""
    return [0] + np.cumsum(lengths).astype(int).tolist()


def lod_tensor(x, lengths_levels):
    """A LoDTensor from Paddle's ``(x, [[lengths], ...])`` input form."""
    return LoDTensor(x, [offsets(level) for level in lengths_levels])


def val(t):
    return np.asarray(getattr(t, "value", t))


def seqs(x, lengths):
    """The sequences of ``x`` (rows) for one length-based LoD level."""
    bounds = offsets(lengths)
    return [x[a:b] for a, b in zip(bounds, bounds[1:])]


def _cast(v, dtype):
    if isinstance(v, dict):
        return {k: _cast(x, dtype) for k, x in v.items()}
    if isinstance(v, list):
        return [_cast(x, dtype) for x in v]
    if isinstance(v, LoDTensor):
        return LoDTensor(_cast(v.value, dtype), v.lod())
    if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating):
        return v.astype(dtype)
    return v


def _keeps_float32(check):
    """The float32 twin's check: every float output stays float32, then ``check``."""
    def keeps(outs, inputs, attrs):
        for slot, value in outs.items():
            for v in (value if isinstance(value, list) else [value]):
                if v is not None and np.issubdtype(np.asarray(v).dtype, np.floating):
                    assert np.asarray(v).dtype == np.float32, f"{slot}: {np.asarray(v).dtype}"
        if check is not None:
            check(outs, inputs, attrs)
    return keeps


def port(op, name, inputs, reference, dtype="float64", grad_rtol=1e-5, f32_tol=1e-5,
         **kwargs):
    """The OpCases for one Paddle test class ``name``: one float64 case (forward and
    gradient), plus a float32 forward-only twin when Paddle's test runs in float32."""
    cases = [OpCase(op, _cast(inputs, np.float64), reference, name=f"paddle_{name}",
                    grad_rtol=grad_rtol, **kwargs)]
    if dtype == "float32":
        kw = dict(kwargs, grad=(), check=_keeps_float32(kwargs.get("check")))
        kw.setdefault("rtol", f32_tol)
        kw.setdefault("atol", f32_tol)
        cases.append(OpCase(op, _cast(inputs, np.float32), reference,
                            name=f"paddle_{name}_fp32", **kw))
    return cases
