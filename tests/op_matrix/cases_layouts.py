"""Layout values the coverage meta-test asked for: every allowed ``data_format`` /
``data_layout`` of every op runs, forward and float64 gradient.

Aliases run an existing case again under the other name of the same layout, against that
case's reference with the original value: ``AnyLayout`` is channels-first (Paddle's
kernels test for the channels-last names only), conv3d's ``NCHW``/``NHWC`` are
``NCDHW``/``NDHWC``, conv3d_transpose's ``NCDHW`` and ``NDHWC`` are both channels-first
(Paddle 3.3.1 reads only "NHWC" as channel-last there: cases_conv3d.py), lrn's ``NCHW`` is its default
``AnyLayout``. Ranks the ported cases never fed (batch_norm and group_norm on 3-D and
5-D X, prelu's NC/NCL/NLC/NCDHW/NDHWC) get cases of their own.
"""
from dataclasses import replace

import numpy as np

from fluidscope.engine import registry

from . import OpCase, source_cases
from .cases_norm import _bn, _gn, TRAIN

rng = np.random.default_rng(211)


def _float64(case):
    return all(np.asarray(getattr(v, "value", v)).dtype != np.float32
               for vs in case.inputs.values() if vs is not None
               for v in (vs if isinstance(vs, list) else [vs]))


def _size(case):
    return sum(np.asarray(getattr(v, "value", v)).size for vs in case.inputs.values()
               if vs is not None for v in (vs if isinstance(vs, list) else [vs]))


def _alias(op, attr, value, same_as):
    """The smallest gradient-checked float64 case of ``op`` whose ``attr`` is ``same_as``,
    run with ``value`` and compared with the reference at ``same_as``."""
    default = registry.get(op).attr_spec(attr).default
    pool = [c for c in SOURCES if c.op == op and c.program is None and c.reference is not None
            and c.grad != () and _float64(c) and c.attrs.get(attr, default) == same_as]
    assert pool, f"no {op} case with {attr}={same_as!r} to run as {value!r}"
    case = min(pool, key=_size)
    reference = case.reference
    return replace(case, attrs=dict(case.attrs, **{attr: value}), check=None,
                   reference=lambda i, a: reference(i, dict(a, **{attr: same_as})),
                   name=f"{value}_as_{same_as}_{case.name}")


SOURCES = source_cases()
_ANY = [(op, "data_format", "NCHW") for op in (
    "channel_shuffle", "conv2d", "conv2d_transpose", "depthwise_conv2d", "lp_pool2d",
    "pixel_shuffle", "pixel_unshuffle", "pool2d", "temporal_shift", "conv3d_transpose")]
_ANY += [("pool3d", "data_format", "NCDHW"), ("conv3d", "data_format", "NCDHW"),
         ("batch_norm", "data_layout", "NCHW"), ("group_norm", "data_layout", "NCHW")]
CASES = [_alias(op, attr, "AnyLayout", same) for op, attr, same in _ANY]
CASES += [
    _alias("conv3d", "data_format", "NCHW", "NCDHW"),
    _alias("conv3d", "data_format", "NHWC", "NDHWC"),
    _alias("conv3d_transpose", "data_format", "NCDHW", "NCHW"),
    _alias("conv3d_transpose", "data_format", "NDHWC", "NCHW"),
    _alias("lrn", "data_format", "NCHW", "AnyLayout"),
]

# ------------------------------------------------- ranks of their own: 3-D and 5-D X
CASES += [
    _bn("training_ncl", [2, 3, 4], dict(TRAIN, data_layout="NCL")),
    _bn("training_nlc", [2, 4, 3], dict(TRAIN, data_layout="NLC")),
    _bn("training_ncdhw", [2, 2, 2, 2, 3], dict(TRAIN, data_layout="NCDHW")),
    _gn("ncl", [2, 4, 3], 2, layout="NCL"),
    _gn("nlc", [2, 3, 4], 2, layout="NLC"),
    _gn("ncdhw", [2, 4, 2, 2, 2], 2, layout="NCDHW"),
    _gn("ndhwc", [2, 2, 2, 2, 4], 2, layout="NDHWC"),
]


def _prelu_channel_ref(i, a):
    x, alpha = i["X"], i["Alpha"].reshape(-1)
    axis = 1 if a["data_format"].startswith("NC") else x.ndim - 1
    shape = [1] * x.ndim
    shape[axis] = alpha.size
    return np.where(x > 0, x, alpha.reshape(shape) * x)


def _prelu(fmt, shape):
    x = rng.uniform(-1, 1, shape)
    x = np.where(np.abs(x) < 0.05, 0.3, x)  # away from the kink at 0
    c = shape[1] if fmt.startswith("NC") else shape[-1]
    return OpCase("prelu", {"X": x, "Alpha": rng.uniform(-1, -0.5, (c,))}, _prelu_channel_ref,
                  attrs={"mode": "channel", "data_format": fmt}, name=f"channel_{fmt}")


CASES += [_prelu("NC", [3, 4]), _prelu("NCL", [2, 3, 4]), _prelu("NLC", [2, 4, 3]),
          _prelu("NCDHW", [2, 3, 2, 2, 2]), _prelu("NDHWC", [2, 2, 2, 2, 3])]
