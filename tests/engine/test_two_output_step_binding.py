"""A step with two plain outputs (elementwise_add_grad, softmax_with_cross_entropy) is
bound without the general output loop (runtime.plan._bind): each output lands in its
slot, and an output with no variable (@EMPTY@) never becomes slot 0's value, which
every empty input reads.
"""
import numpy as np
import pytest

from fluidscope.engine import Executor, Scope
from fluidscope.engine.ir.descs import add_op, add_var, new_program

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([0.25, -0.5, 2.0], np.float32)
G = np.array([[3.0, 1.0, -2.0], [-1.0, 0.5, 4.0]], np.float32)


@pytest.mark.parametrize("dx, db", [("dx", "db"), ("@EMPTY@", "db"), ("dx", "@EMPTY@")])
def test_each_output_reaches_its_slot_and_an_empty_one_reaches_none(dx, db):
    desc, b = new_program()
    for name, shape in (("x", [-1, 3]), ("b", [3]), ("g", [-1, 3]), ("dx", [-1, 3]),
                        ("db", [3]), ("y", [-1, 3])):
        add_var(b, name, shape, "float32")
    add_op(b, "elementwise_add_grad", {"X": ["x"], "Y": ["b"], "Out@GRAD": ["g"]},
           {"X@GRAD": [dx], "Y@GRAD": [db]}, axis=-1)
    # reads an empty ScaleTensor: slot 0 must still hold None here
    add_op(b, "scale", {"X": ["x"], "ScaleTensor": ["@EMPTY@"]}, {"Out": ["y"]}, scale=2.0)
    exe = Executor()
    fetch = [n for n in (dx, db) if n != "@EMPTY@"] + ["y"]
    got = exe.run(desc, feed={"x": X, "b": B, "g": G}, fetch_list=fetch, scope=Scope())
    want = {"dx": G, "db": G.sum(axis=0), "y": 2 * X}
    for name, value in zip(fetch, got, strict=True):
        assert value.tobytes() == want[name].tobytes(), name
    plan = exe.prepare(desc)
    assert plan.steps[0].outs == (plan.slot.get(dx, 0), plan.slot.get(db, 0))


def test_an_output_computed_for_no_variable_is_not_read_by_an_empty_input():
    # softmax_with_cross_entropy computes Softmax whether or not a variable takes it
    desc, b = new_program()
    add_var(b, "logits", [-1, 3], "float32")
    add_var(b, "label", [-1, 1], "int64")
    add_var(b, "loss", [-1, 1], "float32")
    add_var(b, "y", [-1, 1], "float32")
    add_op(b, "softmax_with_cross_entropy", {"Logits": ["logits"], "Label": ["label"]},
           {"Softmax": ["@EMPTY@"], "Loss": ["loss"]})
    add_op(b, "scale", {"X": ["loss"], "ScaleTensor": ["@EMPTY@"]}, {"Out": ["y"]}, scale=2.0)
    label = np.array([[2], [0]], np.int64)
    loss, y = Executor().run(desc, feed={"logits": X, "label": label},
                             fetch_list=["loss", "y"], scope=Scope())
    shifted = X - X.max(axis=1, keepdims=True)
    want = -(shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True)))[[0, 1], [2, 0]]
    np.testing.assert_allclose(loss[:, 0], want, rtol=1e-6)
    assert y.tobytes() == (2 * loss).tobytes()
