"""Cases for concat, split, reshape2, transpose2 and assign (kernels/shape.py)."""
import numpy as np

from . import OpCase

rng = np.random.default_rng(14)
A, B, C = rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 4))
X = rng.standard_normal((2, 6, 3))


def _with_xshape(out, x):
    return {"Out": out, "XShape": np.zeros((0,) + x.shape)}


CASES = [
    OpCase("concat", {"X": [A, B, C]}, lambda i, a: np.concatenate(i["X"], axis=1),
           attrs={"axis": -1}, name="negative_axis"),
    OpCase("concat", {"X": [A, 2 * A]}, lambda i, a: np.concatenate(i["X"], axis=0)),
    OpCase("concat", {"X": [A, B, C], "AxisTensor": np.array([1], np.int32)},
           lambda i, a: np.concatenate(i["X"], axis=1), name="axis_tensor"),
    OpCase("split", {"X": X}, lambda i, a: {"Out": np.split(i["X"], 3, axis=1)},
           attrs={"num": 3, "axis": 1}, name="num"),
    OpCase("split", {"X": X}, lambda i, a: {"Out": np.split(i["X"], [1, 4], axis=1)},
           attrs={"sections": [1, -1, 2], "axis": -2}, name="sections_rest"),
    OpCase("split", {"X": X, "AxisTensor": np.array([2], np.int64),
                     "SectionsTensorList": [np.array([2], np.int32), np.array([1], np.int32)]},
           lambda i, a: {"Out": np.split(i["X"], [2], axis=2)},
           attrs={"sections": [0, 0]}, name="tensors"),
    OpCase("reshape2", {"X": X}, lambda i, a: _with_xshape(i["X"].reshape(2, 18), i["X"]),
           attrs={"shape": [0, -1]}, name="copy_and_infer"),
    OpCase("reshape2", {"X": X}, lambda i, a: _with_xshape(i["X"].reshape(4, 3, 3), i["X"]),
           attrs={"shape": [4, 3, 3]}, name="explicit"),
    OpCase("reshape2", {"X": X, "ShapeTensor": [np.array([9], np.int32),
                                                np.array([-1], np.int32)]},
           lambda i, a: _with_xshape(i["X"].reshape(9, 4), i["X"]),
           attrs={"shape": [1]}, name="shape_tensor_list"),
    OpCase("reshape2", {"X": X, "Shape": np.array([3, 0, 2], np.int64)},
           lambda i, a: _with_xshape(i["X"].reshape(3, 6, 2), i["X"]), name="shape_tensor"),
    OpCase("transpose2", {"X": X},
           lambda i, a: _with_xshape(i["X"].transpose(2, 0, 1), i["X"]),
           attrs={"axis": [2, 0, 1]}),
    OpCase("transpose2", {"X": X},
           lambda i, a: _with_xshape(i["X"].transpose(0, 2, 1), i["X"]),
           attrs={"axis": [0, -1, 1]}, name="negative_axis"),
    OpCase("assign", {"X": X}, lambda i, a: i["X"]),
]
