"""Cases for ``lrn`` (kernels/lrn.py) against Paddle's per-channel numpy loop (the
reference of test_lrn_op.py, rewritten) and a direct loop for the gradient's window.

Ported from Paddle's test/legacy_test/test_lrn_op.py: TestLRNOp (float32 [2, 3, 5, 5], n=5,
k=2, alpha=1e-4, beta=0.75) and TestLRNOpAttrDataFormat (NHWC), each as a float32 forward
and a float64 gradient case; plus larger alpha so the window term matters in the gradient.

Compared with PaddlePaddle 3.3.1 (static graph, CPU; its lrn kernel is float32-only):
Out, MidOut and X@GRAD matched to 1e-6 (float32 rounding) for NCHW/NHWC, n = 3, 5, 9.
Paddle refuses an even n (LRNInferMeta), as the attribute checker here does.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(144)

NOT_PORTED = {
    "TestLRNMKLDNNOp / TestLRNMKLDNNOpWithIsTest / TestLRNMKLDNNOpNHWC (test_lrn_mkldnn_op.py)":
        "oneDNN-only",
    "TestLocalResponseNormFAPI / TestLocalResponseNormCAPI / *Error (test_lrn_op.py)":
        "paddle.nn.functional.local_response_norm is built from pad/pool/elementwise ops, "
        "not the lrn op; argument checks of that API",
}


def lrn_ref(x, n=5, k=2.0, alpha=1e-4, beta=0.75, data_format="AnyLayout"):
    if data_format == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    c_total = x.shape[1]
    mid = np.full(x.shape, k, dtype=x.dtype)
    for c in range(c_total):
        for ch in range(c - (n - 1) // 2, c - (n - 1) // 2 + n):
            if 0 <= ch < c_total:
                mid[:, c] += alpha * x[:, ch] ** 2
    out = x * mid ** -beta
    if data_format == "NHWC":
        out, mid = out.transpose(0, 2, 3, 1), mid.transpose(0, 2, 3, 1)
    return {"Out": out, "MidOut": mid}


def _ref(i, a):
    return lrn_ref(i["X"], **a)


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="odd"):
        run_op("lrn", i, dict(a, n=4))
    with pytest.raises(FluidscopeError, match="4-D"):
        run_op("lrn", {"X": rng.random((2, 3, 4))}, {})


_PADDLE = {"n": 5, "k": 2.0, "alpha": 1e-4, "beta": 0.75}
CASES = [
    *port("lrn", "TestLRNOp", {"X": rng.random((2, 3, 5, 5))}, _ref, dtype="float32",
          attrs=_PADDLE, grad_outputs=("Out",), check=_errors),
    *port("lrn", "TestLRNOpAttrDataFormat", {"X": rng.random((2, 5, 5, 3))}, _ref,
          dtype="float32", attrs=dict(_PADDLE, data_format="NHWC"), grad_outputs=("Out",)),
    OpCase("lrn", {"X": rng.standard_normal((2, 7, 2, 3))}, _ref,
           attrs={"n": 3, "k": 1.5, "alpha": 0.4, "beta": 0.6}, grad_outputs=("Out",),
           name="strong_window"),
    OpCase("lrn", {"X": rng.standard_normal((1, 4, 2, 2))}, _ref,
           attrs={"n": 9, "k": 1.0, "alpha": 0.3, "beta": 1.2}, grad_outputs=("Out",),
           name="window_wider_than_channels"),
]
