"""Cases for take_along_axis, put_along_axis, scatter, scatter_nd_add, index_sample and
index_add (kernels/along_axis.py, kernels/scatter.py).

Configurations are ported from Paddle's test_take_along_axis_op.py,
test_put_along_axis_op.py, test_scatter_op.py, test_scatter_nd_op.py,
test_index_sample_op.py and test_index_add_op.py (shapes made smaller for the float64
gradient check); the references are loops written here. Every case was rerun in
PaddlePaddle 3.3.1 (legacy static mode, ops appended directly, same inputs and
attributes, gradients through a weighted mean): outputs agree exactly (dtypes too) and
gradients to 2e-16 (relative), except where Paddle 3.3.1 is off and ours passes the
central-difference check:
- scatter_grad with repeated Ids and overwrite=True gives every repeat the gradient;
  only the last one (the one that stays in Out) gets it here;
- put_along_axis_grad does not wrap a negative Index (its forward does): Value@GRAD
  comes out as garbage (case put_along_axis-negative_index, Input@GRAD agrees);
- put_along_axis_grad makes Value@GRAD of Index's shape when Value is bigger than Index
  (paddle_api_case4_value_bigger); ours has Value's shape, 0 where Value was not read.
Paddle 3.3.1's kernels also refuse or crash on two inputs ours accepts: take_along_axis
with a negative Axis attribute (its Python API always passes it normalised), and
put_along_axis with a Value smaller than Index (double free; the API expands Value first);
ours reads Axis from the end and broadcasts such a Value.
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase

rng = np.random.default_rng(1414)

NOT_PORTED = {
    "Test*FP16* / Test*BF16*": "fp16/bf16 are not supported",
    "TestScatterOp2/3/5, TestScatterNdAdd*GPU*": "CUDA-only copies of the CPU cases ported",
    "TestTakeAlongAxisGradDeterministic*": "CUDA determinism flags; the configurations "
                                           "(duplicated and negative indices) are ported",
    "TestTakeAlongAxis0Size": "Input with a 0-size axis read by a non-empty Index: Paddle "
                              "returns zeros there, ours refuses the out-of-range read",
    "Test*API / Test*Error / Test*Dygraph* / Test*Inplace*": "Python API, dygraph, inplace "
                                                             "and argument checks",
    "TestScatterOpLargeShape / TestScatterNdOpLargeShape": "big shapes; same configurations "
                                                           "smaller",
}


# ------------------------------------------------------------------- references
def _take_ref(i, a):
    x, index, axis = i["Input"], i["Index"], a["Axis"] % i["Input"].ndim
    out = np.zeros(index.shape, x.dtype)
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = int(index[p]) % x.shape[axis]
        out[p] = x[tuple(q)]
    return {"Result": out}


def _value_at(value, index, p):
    if value.ndim == index.ndim and all(v >= n for v, n in zip(value.shape, index.shape)):
        return value[p]
    return np.broadcast_to(value, index.shape)[p]


def _put_ref(i, a):
    x, index, value = i["Input"], i["Index"], i["Value"]
    axis, reduce = a["Axis"] % x.ndim, a.get("Reduce", "assign")
    keep = a.get("Include_self", True)
    written = {}
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = int(index[p]) % x.shape[axis]
        written.setdefault(tuple(q), []).append(_value_at(value, index, p))
    out = x.copy()
    for q, vals in written.items():
        pool = ([x[q]] if keep else []) + vals
        if reduce == "assign":
            out[q] = vals[-1]
        elif reduce == "add":
            out[q] = sum(pool)
        elif reduce in ("mul", "multiply"):
            out[q] = np.prod(pool)
        elif reduce == "mean":
            out[q] = sum(pool) / len(pool)
        elif reduce == "amin":
            out[q] = min(pool)
        else:
            out[q] = max(pool)
    return {"Result": out}


def _scatter_ref(i, a):
    x, ids, upd = i["X"], np.asarray(i["Ids"]).reshape(-1), i["Updates"]
    upd = upd.reshape((ids.size,) + x.shape[1:])
    out = x.copy()
    if a.get("overwrite", True):
        for k, r in enumerate(ids):
            out[r] = upd[k]
    else:
        for r in ids:
            out[r] = 0
        for k, r in enumerate(ids):
            out[r] += upd[k]
    return out


def _scatter_nd_add_ref(i, a):
    x, index, upd = i["X"], i["Index"], i["Updates"]
    out = x.copy()
    for p in np.ndindex(*index.shape[:-1]):
        out[tuple(int(v) for v in index[p])] += upd[p]
    return out


def _index_sample_ref(i, a):
    x, index = i["X"], i["Index"]
    out = np.zeros(index.shape, x.dtype)
    for r in range(index.shape[0]):
        for c in range(index.shape[1]):
            out[r, c] = x[r, index[r, c]]
    return out


def _index_add_ref(i, a):
    x, index, add = i["X"], i["Index"], i["AddValue"]
    axis = a.get("axis", 0) % x.ndim
    out = np.moveaxis(x.copy(), axis, 0)
    src = np.moveaxis(add, axis, 0)
    for k, r in enumerate(index):
        out[int(r) % x.shape[axis]] += src[k]
    return np.moveaxis(out, 0, axis)


# --------------------------------------------------------------- error checks
def _check_take_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match=r"outside \[-5, 5\)"):
        run_op("take_along_axis", {"Input": i["Input"], "Index": i["Index"] + 10}, a)
    with pytest.raises(FluidscopeError, match="must have Input's rank"):
        run_op("take_along_axis", {"Input": i["Input"], "Index": np.zeros(3, np.int64)}, a)


def _check_put_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match=r"Reduce.*must be one of"):
        run_op("put_along_axis", i, {**a, "Reduce": "sum"})
    with pytest.raises(FluidscopeError, match="neither broadcasts to nor covers Index"):
        run_op("put_along_axis", {**i, "Value": np.ones((2, 7))}, a)


def _check_scatter_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match=r"Updates \[3, 5\] must be \[2, 5\]"):
        run_op("scatter", {**i, "Updates": np.ones((3, 5))}, a)
    with pytest.raises(FluidscopeError, match=r"Ids holds 7, outside \[-3, 3\)"):
        run_op("scatter", {**i, "Ids": np.array([0, 7])}, a)


def _check_sample_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match=r"Index holds -1; it must be in \[0, 20\)"):
        run_op("index_sample", {"X": i["X"], "Index": -np.ones((10, 1), np.int64)}, a)


def _check_nd_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="Updates .* must be Index.shape"):
        run_op("scatter_nd_add", {**i, "Updates": np.ones((9,))}, a)


# ------------------------------------------------------------------------ cases
X555 = rng.standard_normal((5, 5, 5))
IDX_T = np.array([[[1, -3, 4], [0, 2, 2]]], np.int64)  # (1, 2, 3), smaller than Input
TAKE = [
    OpCase("take_along_axis", {"Input": X555, "Index": np.broadcast_to(
        rng.integers(-5, 5, (5, 1, 1)), (5, 5, 1)).astype(np.int32).copy()}, _take_ref,
        attrs={"Axis": 2}, check=_check_take_errors, name="paddle_op_negative"),
    OpCase("take_along_axis", {"Input": rng.standard_normal((5, 6, 7)), "Index": np.broadcast_to(
        np.array([-7, -7, 6, 6, 0]).reshape(5, 1, 1), (5, 6, 1)).copy()}, _take_ref,
        attrs={"Axis": 2}, name="paddle_duplicated_indices"),
    OpCase("take_along_axis", {"Input": X555, "Index": IDX_T}, _take_ref, attrs={"Axis": 2},
           name="paddle_op2_index_smaller"),
    OpCase("take_along_axis", {"Input": X555, "Index": np.broadcast_to(
        rng.integers(-5, 5, (1, 1, 5)), (1, 5, 5)).astype(np.int32).copy()}, _take_ref,
        attrs={"Axis": 0}, name="paddle_case1_axis0"),
    OpCase("take_along_axis", {"Input": rng.standard_normal((3, 4)),
                               "Index": np.array([[0, 3, 3, 1, 0, 2]] * 3)}, _take_ref,
           attrs={"Axis": -1}, name="longer_axis_negative_attr"),
    OpCase("take_along_axis", {"Input": rng.standard_normal((2, 3, 5)),
                               "Index": np.zeros((2, 0, 5), np.int64)}, _take_ref,
           attrs={"Axis": 1}, name="paddle_0size2"),
]

X432 = rng.standard_normal((4, 3, 2))
IDX_P = np.array([[[0, 1], [2, 0], [1, 1]], [[3, 3], [0, 3], [2, 2]]])  # (2, 3, 2) axis 0
PUT = [
    OpCase("put_along_axis", {"Input": rng.standard_normal((4, 4, 4)),
                              "Index": np.zeros((4, 1, 4), np.int64),
                              "Value": np.full((4, 1, 4), 99.0)}, _put_ref,
           attrs={"Axis": 1}, check=_check_put_errors, name="paddle_op"),
    OpCase("put_along_axis", {"Input": np.zeros((3, 5)), "Index": np.array([[0, 1, 2, 0]]),
                              "Value": np.arange(1, 11.0).reshape(2, 5)}, _put_ref,
           attrs={"Axis": 0}, name="paddle_api_case4_value_bigger"),
    OpCase("put_along_axis", {"Input": rng.standard_normal((2, 2)),
                              "Index": np.array([[0, 0], [1, 0], [0, 0], [1, 0]]),
                              "Value": rng.standard_normal((4, 2))}, _put_ref,
           attrs={"Axis": 0}, name="paddle_api_case3_repeats_assign_last"),
    OpCase("put_along_axis", {"Input": X432, "Index": IDX_P,
                              "Value": rng.standard_normal((1, 3, 1))}, _put_ref,
           attrs={"Axis": 0, "Reduce": "assign"}, name="value_broadcast"),
    OpCase("put_along_axis", {"Input": X432, "Index": IDX_P - 4,
                              "Value": rng.standard_normal((2, 3, 2))}, _put_ref,
           attrs={"Axis": 0, "Reduce": "add"}, name="negative_index"),
] + [
    OpCase("put_along_axis", {"Input": X432, "Index": IDX_P,
                              "Value": rng.uniform(0.5, 2.0, (2, 3, 2))}, _put_ref,
           attrs={"Axis": 0, "Reduce": reduce, "Include_self": keep},
           name=f"{reduce}_include_self_{keep}")
    for reduce in ("add", "mul", "multiply", "mean", "amin", "amax") for keep in (True, False)
] + [
    OpCase("put_along_axis", {"Input": np.array([[1, 5], [3, 2]], np.int64),
                              "Index": np.array([[1, 0]]), "Value": np.array([[7, 8]])},
           _put_ref, attrs={"Axis": 0, "Reduce": "add"}, grad=(), name="int64"),
]

SCATTER = [
    OpCase("scatter", {"X": np.ones((3, 5)), "Ids": np.array([1, 2], np.int32),
                       "Updates": rng.standard_normal((2, 5))}, _scatter_ref,
           check=_check_scatter_errors, name="paddle_op"),
    OpCase("scatter", {"X": np.ones((3, 3)), "Ids": np.array([1, 2], np.int32),
                       "Updates": rng.standard_normal((2, 3))}, _scatter_ref,
           attrs={"overwrite": True}, name="paddle_op0"),
    OpCase("scatter", {"X": np.ones((3, 3)), "Ids": np.array([1, 1], np.int32),
                       "Updates": rng.standard_normal((2, 3))}, _scatter_ref,
           attrs={"overwrite": False}, name="paddle_op1_accumulate"),
    OpCase("scatter", {"X": rng.standard_normal((3, 3)), "Ids": np.array([1, 2]),
                       "Updates": rng.standard_normal((2, 3))}, _scatter_ref,
           name="paddle_op4_int64"),
    OpCase("scatter", {"X": rng.standard_normal((4, 2, 3)), "Ids": np.array([[2], [0], [2]]),
                       "Updates": rng.standard_normal((3, 2, 3))}, _scatter_ref,
           name="ids_n1_repeats_overwrite_last"),
    OpCase("scatter", {"X": rng.standard_normal((4, 3)), "Ids": np.array([3, 0, 3, 1]),
                       "Updates": rng.standard_normal((4, 3))}, _scatter_ref,
           attrs={"overwrite": False}, name="paddle_op6_accumulate"),
    OpCase("scatter", {"X": rng.standard_normal((3, 2)), "Ids": np.array(1),
                       "Updates": rng.standard_normal((2,))}, _scatter_ref,
           name="zero_dim_ids"),
]

XND = rng.standard_normal((3, 4, 2))
ND = [
    OpCase("scatter_nd_add", {"X": XND, "Index": np.array([[1, 2], [0, 3], [1, 2]]),
                              "Updates": rng.standard_normal((3, 2))}, _scatter_nd_add_ref,
           check=_check_nd_errors, name="paddle_op_repeats"),
    OpCase("scatter_nd_add", {"X": XND, "Index": np.array([[[2], [0]], [[2], [1]]], np.int32),
                              "Updates": rng.standard_normal((2, 2, 4, 2))},
           _scatter_nd_add_ref, name="paddle_with_high_rank_diff"),
    OpCase("scatter_nd_add", {"X": XND, "Index": np.array([[2, 3, 1], [0, 0, 0]]),
                              "Updates": rng.standard_normal((2,))}, _scatter_nd_add_ref,
           name="paddle_with_high_rank_same"),
    OpCase("scatter_nd_add", {"X": rng.standard_normal(6), "Index": np.array([[1], [5], [1]]),
                              "Updates": rng.standard_normal(3)}, _scatter_nd_add_ref,
           name="paddle_with_empty_index_1d"),
]

SAMPLE = [
    OpCase("index_sample", {"X": rng.standard_normal((10, 20)),
                            "Index": rng.integers(0, 20, (10, 10)).astype(np.int32)},
           _index_sample_ref, check=_check_sample_errors, name="paddle_case2"),
    OpCase("index_sample", {"X": rng.standard_normal((5, 10)),
                            "Index": rng.integers(0, 10, (5, 1))}, _index_sample_ref,
           name="paddle_case1"),
    OpCase("index_sample", {"X": rng.standard_normal((3, 4)),
                            "Index": np.array([[0, 0, 3], [1, 1, 1], [3, 2, 0]])},
           _index_sample_ref, name="repeats"),
]

ADD = [
    OpCase("index_add", {"X": rng.standard_normal((4, 3)), "Index": np.array([0, 2, 0]),
                         "AddValue": rng.standard_normal((3, 3))}, _index_add_ref,
           attrs={"axis": 0}, name="paddle_axis0_repeats"),
    OpCase("index_add", {"X": rng.standard_normal((3, 5, 2)), "Index": np.array([4, 1],
                                                                                np.int32),
                         "AddValue": rng.standard_normal((3, 2, 2))}, _index_add_ref,
           attrs={"axis": 1}, name="paddle_axis1_int32"),
    OpCase("index_add", {"X": rng.standard_normal((2, 3, 4)), "Index": np.array([-1, 0, 3]),
                         "AddValue": rng.standard_normal((2, 3, 3))}, _index_add_ref,
           attrs={"axis": -1}, name="negative_axis_and_index"),
]

CASES = TAKE + PUT + SCATTER + ND + SAMPLE + ADD
