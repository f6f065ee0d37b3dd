"""Cases for the reduce_* ops (kernels/reduce.py)."""
import numpy as np

from fluidscope.engine.autodiff.gradcheck import analytic_grads
from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase

rng = np.random.default_rng(13)
X = rng.standard_normal((2, 3, 4))


def _ref(fn, axis=0, keepdims=False):
    return lambda i, a: np.asarray(fn(i["X"], axis=axis, keepdims=keepdims))


def _is_int64(outs, inputs, attrs):
    assert outs["Out"].dtype == np.int64, outs["Out"].dtype


CASES = [
    OpCase("reduce_sum", {"X": X}, _ref(np.sum)),
    OpCase("reduce_sum", {"X": X}, _ref(np.sum, (0, 2), True),
           attrs={"dim": [0, -1], "keep_dim": True}, name="negative_dim_keep_dim"),
    OpCase("reduce_sum", {"X": X}, _ref(np.sum, None),
           attrs={"reduce_all": True}, name="reduce_all"),
    OpCase("reduce_sum", {"X": X}, _ref(np.sum, None, True),
           attrs={"dim": [], "keep_dim": True}, name="empty_dim_keep_dim"),
    OpCase("reduce_sum", {"X": X}, _ref(lambda x, **k: np.sum(x, **k).astype(np.float32), 1),
           attrs={"dim": [1], "out_dtype": pb.VarType.FP32}, grad=(), name="out_dtype"),
    OpCase("reduce_sum", {"X": np.arange(6, dtype=np.int32).reshape(2, 3)},
           _ref(np.sum, 1), attrs={"dim": [1]}, check=_is_int64, grad=(), name="int32_to_int64"),
    OpCase("reduce_mean", {"X": X}, _ref(np.mean)),
    OpCase("reduce_mean", {"X": X}, _ref(np.mean, (1, 2)),
           attrs={"dim": [-2, 2]}, name="two_dims"),
    OpCase("reduce_mean", {"X": X}, _ref(np.mean, None),
           attrs={"dim": [], "reduce_all": False}, name="empty_dim"),
    OpCase("reduce_mean", {"X": X}, _ref(np.mean, None, True),
           attrs={"reduce_all": True, "keep_dim": True}, name="reduce_all_keep_dim"),
]


# ------------------------------------- reduce_max/min/amax/amin/prod/all/any
# Ported from Paddle's test/legacy_test/test_reduce_op.py (shapes shrunk for the float64
# gradient check). Every case below also matched PaddlePaddle 3.3.1 (legacy static
# executor, gradients from paddle.static.gradients) on the same inputs: float64 to 1e-10
# relative, bool outputs equal, ties included. Where we differ from Paddle 3.3.1, on purpose:
# - reduce_prod's gradient where X has zeros (Paddle's CPU kernel computes Out / X: NaN);
# - reduce_min_grad over non-adjacent dims (TestMin6DOp, dims [2, 4]): Paddle's CPU kernel
#   returns zeros or uninitialised memory there; ours passes the float64 check;
# - reduce_amax/amin with reduce_all=True, and AxisTensor/AxisTensorList on
#   amax/amin/all/any: Paddle 3.3.1's legacy executor ignores them and reduces ``dim``
#   only (its Python API always writes the full ``dim`` list, so its own programs agree
#   with us); we honour them as the op's proto documents them.
NOT_PORTED = {
    "TestMaxFP16Op": "float16", "TestMaxBF16Op": "bfloat16", "TestMinFP16Op": "float16",
    "TestMinBF16Op": "bfloat16", "TestProdFP16OP": "float16 (also Prod6D/8D FP16)",
    "TestProdBFP16OP": "bfloat16 (also Prod6D/8D BF16)",
    "TestAllOpError": "Python API type check", "TestAnyOpError": "Python API type check",
    "TestSumOp": "reduce_sum/reduce_mean classes belong to the reduce_sum/mean cases above",
    "TestComplexSumOP": "complex dtypes are not supported",
}
R = np.random.default_rng(14)


def _np(fn, axis=None, keepdims=False):
    return lambda i, a: np.asarray(fn(i["X"], axis=axis, keepdims=keepdims))


def _prod_others(x, axes):
    """Reference dX of prod with dOut = 1: product of the other elements, by loops."""
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape):
        sel = tuple(slice(None) if d in axes else idx[d] for d in range(x.ndim))
        block = x[sel].copy()
        pos = tuple(idx[d] for d in range(x.ndim) if d in axes)
        block[pos] = 1.0
        out[idx] = block.prod()
    return out


def _check_tie_shares(outs, i, a):
    """Three-way ties: each tied element gets a third of dOut (Paddle's rule; the central
    difference would see a half, so this is checked directly)."""
    x = i["X"]
    g = R.uniform(0.5, 1.5, outs["Out"].shape)
    dx = analytic_grads("reduce_max", i, a, {"Out": g}, ["X"])["X"]
    hit = x == x.max(axis=1, keepdims=True)
    np.testing.assert_allclose(dx, hit * (g[:, None] / hit.sum(axis=1, keepdims=True)))


def _check_prod_zeros(outs, i, a):
    dx = analytic_grads("reduce_prod", i, a, {"Out": np.ones(outs["Out"].shape)}, ["X"])["X"]
    np.testing.assert_allclose(dx, _prod_others(i["X"], (1,)))


def _is_bool(outs, inputs, attrs):
    assert outs["Out"].dtype == np.bool_, outs["Out"].dtype


X3 = R.random((3, 4, 5))
BITS = R.integers(0, 2, (3, 4, 5))
BITS8 = R.integers(0, 2, (2, 2, 3, 2, 2, 3, 2, 2)).astype(bool)
CASES += [
    OpCase("reduce_max", {"X": X3}, _np(np.max, (2,)), attrs={"dim": [-1]}, name="TestMaxOp"),
    OpCase("reduce_max", {"X": R.random(())}, _np(np.max), attrs={"dim": []},
           name="TestMaxOp_ZeroDim"),
    OpCase("reduce_max", {"X": R.random(5)}, _np(np.max, (0,)), attrs={"dim": [0]},
           name="TestMaxOp_ZeroDim1"),
    OpCase("reduce_max", {"X": R.random((3, 4))}, _np(np.max), attrs={"dim": [0, 1]},
           name="TestMaxOp_ZeroDim2"),
    OpCase("reduce_max", {"X": X3.astype(np.float32)}, _np(np.max, (2,), True),
           attrs={"dim": [-1], "keep_dim": True}, name="TestMaxFP32Op"),
    OpCase("reduce_max", {"X": X3}, _np(np.max, (1, 2)), attrs={"dim": [-2, -1]},
           name="TestReduceMaxOpMultiAxises"),
    OpCase("reduce_max", {"X": X3}, _np(np.max, None, True),
           attrs={"reduce_all": True, "keep_dim": True}, name="reduce_all_keep_dim"),
    # Two-way ties: half each, which the central difference also measures.
    OpCase("reduce_max", {"X": np.array([[1., 3., 3.], [4., 2., 4.]])}, _np(np.max, (1,)),
           attrs={"dim": [1]}, name="ties2"),
    OpCase("reduce_max", {"X": np.array([[1., 3., 3., 3.], [5., 5., 5., 0.]])},
           _np(np.max, (1,)), attrs={"dim": [1]}, grad=(), check=_check_tie_shares,
           name="ties3_share"),
    OpCase("reduce_max", {"X": R.integers(-9, 9, (3, 4)).astype(np.int32)},
           _np(np.max, (1,)), attrs={"dim": [1]}, grad=(), name="int32"),
    OpCase("reduce_min", {"X": X3}, _np(np.min, (2,)), attrs={"dim": [2]}, name="TestMinOp"),
    OpCase("reduce_min", {"X": R.random(())}, _np(np.min), attrs={"dim": []},
           name="TestMinOp_ZeroDim"),
    OpCase("reduce_min", {"X": R.random((2, 2, 3, 2, 3, 2))}, _np(np.min, (2, 4)),
           attrs={"dim": [2, 4]}, name="TestMin6DOp"),
    OpCase("reduce_min", {"X": R.random((2, 2, 2, 3, 2, 2, 2, 2))}, _np(np.min, (2, 3, 4)),
           attrs={"dim": [2, 3, 4]}, name="TestMin8DOp"),
    OpCase("reduce_min", {"X": X3}, _np(np.min, (1, 2)), attrs={"dim": [1, 2]},
           name="TestReduceMinOpMultiAxises"),
    OpCase("reduce_min", {"X": np.array([[1., 1., 3.], [4., 2., 2.]])}, _np(np.min, (1,), True),
           attrs={"dim": [-1], "keep_dim": True}, name="ties2_keep_dim"),
    OpCase("reduce_amax", {"X": X3}, _np(np.max, (0, 2)), attrs={"dim": [0, 2]}, name="dims"),
    OpCase("reduce_amax", {"X": np.array([[1., 3., 3.], [4., 2., 4.]])}, _np(np.max, None),
           attrs={"reduce_all": True}, name="ties2_reduce_all"),
    OpCase("reduce_amax", {"X": X3, "AxisTensor": np.array([0, 2], np.int64)},
           _np(np.max, (0, 2), True), attrs={"dim": [1], "keep_dim": True},
           name="axis_tensor_keep_dim"),
    OpCase("reduce_amin", {"X": X3}, _np(np.min, (1,), True), attrs={"dim": [1], "keep_dim": True},
           name="keep_dim"),
    OpCase("reduce_amin", {"X": X3, "AxisTensorList": [np.array([2], np.int64),
                                                       np.array([0], np.int64)]},
           _np(np.min, (0, 2)), name="axis_tensor_list"),
    OpCase("reduce_prod", {"X": R.random((3, 2, 4))}, _np(np.prod, 0), name="TestProdOp"),
    OpCase("reduce_prod", {"X": R.random(())}, _np(np.prod),
           attrs={"dim": [], "reduce_all": True}, name="TestProdOp_ZeroDim"),
    OpCase("reduce_prod", {"X": R.random(8)}, _np(np.prod),
           attrs={"dim": [], "reduce_all": True}, name="TestProdOp_ZeroDim1"),
    OpCase("reduce_prod", {"X": R.random((2, 2, 3))}, _np(np.prod),
           attrs={"dim": [], "reduce_all": True}, name="TestProdOp_ZeroDim2"),
    OpCase("reduce_prod", {"X": R.uniform(0.5, 1.5, (2, 2, 2, 3, 2, 2))}, _np(np.prod, (2, 3, 4)),
           attrs={"dim": [2, 3, 4]}, name="TestProd6DOp"),
    OpCase("reduce_prod", {"X": R.uniform(0.5, 1.5, (2, 2, 2, 2, 2, 3, 2, 2))},
           _np(np.prod, (2, 3, 4)), attrs={"dim": [2, 3, 4]}, name="TestProd8DOp"),
    OpCase("reduce_prod", {"X": R.uniform(0.5, 1.5, (3, 4))}, _np(np.prod, (1,), True),
           attrs={"dim": [-1], "keep_dim": True}, name="keep_dim"),
    OpCase("reduce_prod", {"X": np.array([[1., 0., 3.], [0., 0., 4.], [2., 5., 0.5]])},
           _np(np.prod, (1,)), attrs={"dim": [1]}, check=_check_prod_zeros, name="zeros"),
    OpCase("reduce_all", {"X": BITS.astype(bool)}, _np(np.all), attrs={"reduce_all": True},
           check=_is_bool, name="TestAllOp"),
    OpCase("reduce_all", {"X": BITS.astype(np.float64)}, _np(np.all), attrs={"reduce_all": True},
           check=_is_bool, name="TestAllFloatOp"),
    OpCase("reduce_all", {"X": BITS.astype(np.int64)}, _np(np.all), attrs={"reduce_all": True},
           name="TestAllIntOp"),
    OpCase("reduce_all", {"X": np.array(True)}, _np(np.all), attrs={"dim": []},
           name="TestAllOp_ZeroDim"),
    OpCase("reduce_all", {"X": BITS8}, _np(np.all, (2, 3, 4)), attrs={"dim": [2, 3, 4]},
           name="TestAll8DOp"),
    OpCase("reduce_all", {"X": BITS.astype(bool)}, _np(np.all, (1,)), attrs={"dim": [1]},
           name="TestAllOpWithDim"),
    OpCase("reduce_all", {"X": BITS8}, _np(np.all, (1, 3, 4)), attrs={"dim": [1, 3, 4]},
           name="TestAll8DOpWithDim"),
    OpCase("reduce_all", {"X": BITS.astype(bool)}, _np(np.all, (1,), True),
           attrs={"dim": [1], "keep_dim": True}, name="TestAllOpWithKeepDim"),
    OpCase("reduce_all", {"X": BITS8}, _np(np.all, (5,), True),
           attrs={"dim": [5], "keep_dim": True}, name="TestAll8DOpWithKeepDim"),
    OpCase("reduce_all", {"X": BITS.astype(bool), "AxisTensor": np.array([-1], np.int64)},
           _np(np.all, (2,)), name="axis_tensor"),
    OpCase("reduce_any", {"X": BITS.astype(bool)}, _np(np.any), attrs={"reduce_all": True},
           check=_is_bool, name="TestAnyOp"),
    OpCase("reduce_any", {"X": BITS.astype(np.float64)}, _np(np.any), attrs={"reduce_all": True},
           name="TestAnyFloatOp"),
    OpCase("reduce_any", {"X": BITS.astype(np.int64)}, _np(np.any), attrs={"reduce_all": True},
           name="TestAnyIntOp"),
    OpCase("reduce_any", {"X": np.array(False)}, _np(np.any), attrs={"dim": []},
           name="TestAnyOp_ZeroDim"),
    OpCase("reduce_any", {"X": BITS8}, _np(np.any, (3, 4, 5)), attrs={"dim": [3, 5, 4]},
           name="TestAny8DOp"),
    OpCase("reduce_any", {"X": BITS.astype(bool)}, _np(np.any, (1,)), attrs={"dim": [1]},
           name="TestAnyOpWithDim"),
    OpCase("reduce_any", {"X": BITS8}, _np(np.any, (3, 6)), attrs={"dim": [3, 6]},
           name="TestAny8DOpWithDim"),
    OpCase("reduce_any", {"X": BITS.astype(bool)}, _np(np.any, (1,), True),
           attrs={"dim": [1], "keep_dim": True}, name="TestAnyOpWithKeepDim"),
    OpCase("reduce_any", {"X": BITS8}, _np(np.any, (1,), True),
           attrs={"dim": [1], "keep_dim": True}, name="TestAny8DOpWithKeepDim"),
]
