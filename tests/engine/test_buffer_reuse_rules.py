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
