"""Cases for the embedding lookup (kernels/embedding.py): lookup_table_v2."""
import numpy as np
import pytest

from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.autodiff.gradcheck import analytic_grads, run_op
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase

rng = np.random.default_rng(13)
V, D = 7, 3
W = rng.standard_normal((V, D))
IDS = np.array([[1, 4, 1], [0, 6, 4]], np.int64)  # repeated ids: their gradients add up
IDS_PAD = np.array([2, 5, 2, 3, 2], np.int64)
IDS_LOD = LoDTensor(np.array([[3], [1], [3], [0], [5]], np.int64), [[0, 2, 5]])


def _lookup_ref(i, a):
    ids = np.asarray(getattr(i["Ids"], "value", i["Ids"]))
    out = i["W"][ids]
    pad = a.get("padding_idx", -1)
    if pad != -1:
        out[ids == pad] = 0.0
    return out


def _check_padding_gets_no_gradient(outs, i, a):
    dout = np.ones(outs["Out"].shape)
    dw = analytic_grads("lookup_table_v2", i, a, {"Out": dout}, ["W"])["W"]
    expected = np.zeros((V, D))
    for row in i["Ids"]:
        if row != a["padding_idx"]:
            expected[row] += 1.0
    np.testing.assert_array_equal(dw, expected)


def _check_lod_kept(outs, i, a):
    out = run_op("lookup_table_v2", i, a, return_lod=True)["Out"]
    assert out.lod() == [[0, 2, 5]]
    assert out.shape() == [5, 1, D]


def _check_bad_ids_raise(outs, i, a):
    for bad in (V, -1):
        with pytest.raises(ExecutionError, match=f"id {bad}, outside the {V} rows"):
            run_op("lookup_table_v2", dict(i, Ids=np.array([0, bad], np.int64)), a)


CASES = [
    OpCase("lookup_table_v2", {"Ids": IDS, "W": W}, _lookup_ref, check=_check_bad_ids_raise,
           name="2d_ids"),
    OpCase("lookup_table_v2", {"Ids": IDS_PAD, "W": W}, _lookup_ref, attrs={"padding_idx": 2},
           check=_check_padding_gets_no_gradient, name="padding"),
    OpCase("lookup_table_v2", {"Ids": IDS_LOD, "W": W}, _lookup_ref, check=_check_lod_kept,
           name="lod"),
]
