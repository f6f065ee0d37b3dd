"""Cases for element-wise binary ops and scale (kernels/elementwise.py)."""
import numpy as np

from . import OpCase

rng = np.random.default_rng(1)
X = rng.standard_normal((2, 3, 4))
Y_MID = rng.standard_normal(3)
Y_TAIL = rng.standard_normal((3, 4))
POS = rng.uniform(0.5, 2.0, (3, 4))


def _mid(y):
    return y.reshape(1, 3, 1)


CASES = [
    OpCase("elementwise_add", {"X": X, "Y": X * 0.5}, lambda i, a: i["X"] + i["Y"], name="same"),
    OpCase("elementwise_add", {"X": X, "Y": Y_MID}, lambda i, a: i["X"] + _mid(i["Y"]),
           attrs={"axis": 1}, name="axis1"),
    OpCase("elementwise_add", {"X": X, "Y": Y_TAIL}, lambda i, a: i["X"] + i["Y"], name="tail"),
    OpCase("elementwise_sub", {"X": X, "Y": Y_MID}, lambda i, a: i["X"] - _mid(i["Y"]),
           attrs={"axis": 1}),
    OpCase("elementwise_mul", {"X": X, "Y": Y_TAIL}, lambda i, a: i["X"] * i["Y"]),
    OpCase("elementwise_div", {"X": X, "Y": POS}, lambda i, a: i["X"] / i["Y"]),
    OpCase("scale", {"X": X}, lambda i, a: i["X"] * 2.5 + 1.0, attrs={"scale": 2.5, "bias": 1.0}),
    OpCase("scale", {"X": X}, lambda i, a: (i["X"] + 1.0) * 2.5,
           attrs={"scale": 2.5, "bias": 1.0, "bias_after_scale": False}, name="bias_first"),
]
