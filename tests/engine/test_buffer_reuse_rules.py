"""The rules of buffer reuse (engine/runtime/recycle.py) one at a time, on programs small
enough to say which array each run must reuse (issue #17: the mutants the MLP tests of
test_buffer_reuse.py left alive). Each test reads what a caller can see: which array a
variable holds after a run (weak references, so the test itself holds nothing), that an
array someone holds is never written, and that the numbers are those of the pure kernels.
"""
import sys
import weakref

import numpy as np
import pytest

from fluidscope.engine import Executor, Scope
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime import recycle

pytestmark = pytest.mark.skipif(not recycle.ENABLED, reason="no reference counts here")

X = np.arange(6.0).reshape(2, 3) - 2.5
W = np.linspace(-1.0, 1.0, 9).reshape(3, 3)


# ------------------------------------------------------------- where reuse is possible
def test_reuse_needs_reference_counts(monkeypatch):
    monkeypatch.setattr(recycle, "_getrefcount", None)
    assert recycle._supported() is False


def test_reuse_needs_the_gil_where_the_interpreter_can_run_without_it(monkeypatch):
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    assert recycle._supported() is False
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True, raising=False)
    assert recycle._supported() is True


def test_reuse_is_on_where_the_interpreter_always_has_a_gil(monkeypatch):
    monkeypatch.delattr(sys, "_is_gil_enabled", raising=False)
    assert recycle._supported() is True


def test_the_count_of_an_array_nobody_holds_is_what_take_compares_with():
    assert recycle._count_alone() == recycle.ALONE
    assert recycle.take([np.zeros(3)], 0) is not None
    held = np.zeros(3)
    assert recycle.take([held], 0) is None


# ------------------------------------------------------------- hand-made programs
def _program(ops, persistable=(), dtype="float64"):
    """A root block with float64 variables x [2, 3] (fed), w [3, 3] (persistable) and
    every other name the ``ops`` ((type, inputs, outputs, attrs)) use."""
    desc, b = new_program()
    names = ["x", "w"] + sorted({n for _, i, o, _ in ops for ns in (*i.values(), *o.values())
                                 for n in ns} - {"x", "w"})
    for name in names:
        add_var(b, name, [3, 3] if name == "w" else [-1, 3], dtype,
                persistable=name == "w" or name in persistable)
    for op_type, ins, outs, attrs in ops:
        add_op(b, op_type, ins, outs, **attrs)
    return desc


def _runner(desc, **scope_values):
    exe, scope = Executor(), Scope()
    for name, value in {"w": W, **scope_values}.items():
        scope.var(name).get_tensor().set(np.array(value, copy=True))
    return exe, scope


def _value(scope, name):
    return scope.find_var(name).get_tensor().value


def _ids_over_runs(exe, desc, scope, name, runs=4, fetch=("x",)):
    """Weak references to the array ``name`` holds in the scope after each run."""
    refs = []
    for k in range(runs):
        exe.run(desc, feed={"x": X + k}, fetch_list=list(fetch), scope=scope)
        refs.append(weakref.ref(_value(scope, name)))
    return refs


def _accumulator():
    """p = relu(x @ w + p): relu writes the persistable p into the dead biased sum, which
    the add wrote into the dead product."""
    return _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("elementwise_add", {"X": ["t"], "Y": ["p"]}, {"Out": ["u"]}, {}),
                     ("relu", {"X": ["u"]}, {"Out": ["p"]}, {})], persistable=("p",))


def _accumulated(runs):
    p = np.full((2, 3), 0.5)
    for k in range(runs):
        p = np.maximum((X + k) @ W + p, 0)
    return p


def test_a_persistable_output_written_into_a_dead_input_swaps_two_arrays():
    """The product's next array is the one the scope let go (the old p), so p lives in
    two arrays, as a parameter updated by sgd does."""
    desc = _accumulator()
    exe, scope = _runner(desc, p=np.full((2, 3), 0.5))
    refs = _ids_over_runs(exe, desc, scope, "p")
    assert refs[2]() is not None and refs[2]() is refs[0]()
    assert refs[3]() is refs[1]() and refs[1]() is not refs[0]()
    np.testing.assert_array_equal(_value(scope, "p"), _accumulated(4))
