"""Cases for mul and matmul_v2 (kernels/linalg.py)."""
import numpy as np

from . import OpCase

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.standard_normal(shape)


def _matmul_ref(trans_x=False, trans_y=False):
    def ref(i, a):
        x, y = i["X"], i["Y"]
        if trans_x and x.ndim > 1:
            x = np.swapaxes(x, -1, -2)
        if trans_y and y.ndim > 1:
            y = np.swapaxes(y, -1, -2)
        return np.asarray(np.matmul(x, y))
    return ref


def _keeps_float32(outs, inputs, attrs):
    assert outs["Out"].dtype == np.float32, outs["Out"].dtype


CASES = [
    OpCase("mul", {"X": _r(4, 3), "Y": _r(3, 5)}, lambda i, a: i["X"] @ i["Y"]),
    OpCase("mul", {"X": _r(2, 3, 4), "Y": _r(4, 5)},
           lambda i, a: (i["X"].reshape(6, 4) @ i["Y"]).reshape(2, 3, 5),
           attrs={"x_num_col_dims": 2}, name="x_num_col_dims2"),
    OpCase("mul", {"X": _r(2, 3, 4), "Y": _r(3, 4, 2)},
           lambda i, a: i["X"].reshape(2, 12) @ i["Y"].reshape(12, 2),
           attrs={"y_num_col_dims": 2}, name="flatten_both"),
    OpCase("mul", {"X": _r(4, 3).astype(np.float32), "Y": _r(3, 2).astype(np.float32)},
           lambda i, a: i["X"] @ i["Y"], check=_keeps_float32, grad=(), rtol=1e-5,
           name="float32"),
    OpCase("matmul_v2", {"X": _r(3, 4), "Y": _r(4, 2)}, _matmul_ref()),
    OpCase("matmul_v2", {"X": _r(4, 3), "Y": _r(4, 2)}, _matmul_ref(True, False),
           attrs={"trans_x": True}, name="trans_x"),
    OpCase("matmul_v2", {"X": _r(3, 4), "Y": _r(2, 4)}, _matmul_ref(False, True),
           attrs={"trans_y": True}, name="trans_y"),
    OpCase("matmul_v2", {"X": _r(2, 4, 3), "Y": _r(2, 4)}, _matmul_ref(True, True),
           attrs={"trans_x": True, "trans_y": True}, name="trans_both_broadcast"),
    OpCase("matmul_v2", {"X": _r(2, 1, 3, 4), "Y": _r(3, 4, 2)}, _matmul_ref(),
           name="batch_broadcast"),
    OpCase("matmul_v2", {"X": _r(4), "Y": _r(2, 4, 3)}, _matmul_ref(), name="x_1d"),
    OpCase("matmul_v2", {"X": _r(2, 3, 4), "Y": _r(3)}, _matmul_ref(True, False),
           attrs={"trans_x": True}, name="y_1d_trans_x"),
    OpCase("matmul_v2", {"X": _r(4), "Y": _r(4)}, _matmul_ref(), name="dot"),
    OpCase("matmul_v2", {"X": _r(3, 4).astype(np.float32), "Y": _r(4, 2).astype(np.float32)},
           _matmul_ref(), check=_keeps_float32, grad=(), rtol=1e-5, name="float32"),
]
