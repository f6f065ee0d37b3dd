"""Cases for reduce_sum and reduce_mean (kernels/reduce.py)."""
import numpy as np

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
