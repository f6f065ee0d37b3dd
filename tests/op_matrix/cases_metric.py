"""Cases for metrics (kernels/metric.py): top_k_v2, accuracy."""
import numpy as np

from . import OpCase

rng = np.random.default_rng(12)
# Distinct values, well apart, so the top k are unambiguous and ±delta keeps the order.
X = rng.permutation(24).reshape(4, 6) * 0.5 + rng.uniform(-0.1, 0.1, (4, 6))
X_3D = rng.permutation(30).reshape(2, 5, 3) * 0.5


def _top_k_ref(i, a):
    x, k, axis = i["X"], a.get("k", 1), a.get("axis", -1)
    if i.get("K") is not None:
        k = int(i["K"][0])
    order = np.argsort(-x if a.get("largest", True) else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return {"Out": np.take_along_axis(x, idx, axis=axis), "Indices": idx.astype(np.int64)}


def _accuracy_ref(i, a):
    idx, label = i["Indices"], i["Label"]
    correct = sum(int(label[r, 0] in idx[r]) for r in range(idx.shape[0]))
    return {"Accuracy": np.array(correct / idx.shape[0], np.float32),
            "Correct": np.array(correct, np.int32),
            "Total": np.array(idx.shape[0], np.int32)}


def _check_dtypes(outs, i, a):
    assert outs["Accuracy"].dtype == np.float32
    assert outs["Correct"].dtype == np.int32 and outs["Total"].dtype == np.int32


OUT_ONLY = ("Out",)  # Indices are integers: nothing to differentiate
SCORES = rng.standard_normal((6, 5))
TOP2 = np.argsort(-SCORES, axis=1)[:, :2].astype(np.int64)
LABELS = np.array([[TOP2[0, 0]], [TOP2[1, 1]], [4], [0], [TOP2[4, 0]], [2]], np.int64)

CASES = [
    OpCase("top_k_v2", {"X": X}, _top_k_ref, attrs={"k": 3}, grad_outputs=OUT_ONLY, name="k3"),
    OpCase("top_k_v2", {"X": X}, _top_k_ref, attrs={"k": 2, "largest": False},
           grad_outputs=OUT_ONLY, name="smallest"),
    OpCase("top_k_v2", {"X": X_3D}, _top_k_ref, attrs={"k": 2, "axis": 1},
           grad_outputs=OUT_ONLY, name="axis1"),
    OpCase("top_k_v2", {"X": X, "K": np.array([4], np.int32)}, _top_k_ref,
           grad_outputs=OUT_ONLY, name="k_tensor"),
    OpCase("accuracy", {"Out": np.take_along_axis(SCORES, TOP2, 1), "Indices": TOP2,
                        "Label": LABELS},
           _accuracy_ref, check=_check_dtypes, grad=()),
]


# Ties: Paddle's CPU kernel orders tied values by an unstable partial sort (the order
# changes with k), fluidscope's by a stable one: lowest index first. Values equal, so only
# Indices can differ, and ours are the documented, deterministic choice.
TIES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 2.0, 1.0, 1.0]])
NANS = np.array([[1.0, np.nan, 3.0, -np.inf]])
CASES += [
    OpCase("top_k_v2", {"X": np.array(2.5)}, lambda i, a: {
        "Out": np.array(2.5), "Indices": np.array(0, np.int64)}, grad_outputs=OUT_ONLY,
        name="0d"),
    OpCase("top_k_v2", {"X": TIES}, lambda i, a: {
        "Out": np.array([[3.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
        "Indices": np.array([[1, 2, 4], [0, 1, 2]], np.int64)}, attrs={"k": 3}, grad=(),
        name="ties_lowest_index_first"),
    OpCase("top_k_v2", {"X": TIES}, lambda i, a: {
        "Out": np.array([[1.0, 2.0], [1.0, 1.0]]),
        "Indices": np.array([[0, 3], [3, 4]], np.int64)}, attrs={"k": 2, "largest": False},
        grad=(), name="ties_smallest"),
    # NaN ranks above every number for largest=True and below for largest=False (Paddle).
    OpCase("top_k_v2", {"X": NANS}, lambda i, a: {
        "Out": np.array([[np.nan, 3.0]]), "Indices": np.array([[1, 2]], np.int64)},
        attrs={"k": 2}, grad=(), name="nan_largest"),
    OpCase("top_k_v2", {"X": NANS}, lambda i, a: {
        "Out": np.array([[-np.inf, 1.0, 3.0]]), "Indices": np.array([[3, 0, 2]], np.int64)},
        attrs={"k": 3, "largest": False}, grad=(), name="nan_smallest"),
]
