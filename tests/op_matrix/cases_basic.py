"""Cases for reductions, creation and io ops (kernels/reduce.py, init.py, io.py)."""
import numpy as np

from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase

rng = np.random.default_rng(2)
X = rng.standard_normal((3, 4))

CASES = [
    OpCase("mean", {"X": X}, lambda i, a: np.array(i["X"].mean())),
    OpCase("sum", {"X": [X, 2 * X, -X]}, lambda i, a: sum(i["X"])),
    OpCase("fill_constant", {}, lambda i, a: np.full((2, 3), 1.5, np.float32),
           attrs={"shape": [2, 3], "value": 1.5, "dtype": pb.VarType.FP32}, grad=()),
    OpCase("fill_zeros_like", {"X": X}, lambda i, a: np.zeros_like(i["X"]), grad=()),
    OpCase("feed", {"X": [X, 2 * X]}, lambda i, a: i["X"][1], attrs={"col": 1}, grad=(),
           direct=True),
    OpCase("fetch", {"X": X}, lambda i, a: [i["X"]], attrs={"col": 0}, grad=(), direct=True),
]
