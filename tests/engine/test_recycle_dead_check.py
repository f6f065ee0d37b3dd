"""runtime.recycle._dead_check: the one place the ownership rule for a dead input is
written (module docstring of runtime.recycle), checked on its own, and the one-candidate
steps of a training program (relu, the bias add, relu_grad, sgd) that call it directly."""
import weakref

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.runtime import recycle

pytestmark = pytest.mark.skipif(not recycle.ENABLED, reason="no reference counts here")

SLOT, OTHER = 1, 2


def _vals(a):
    vals = [None, None, None, None]
    vals[SLOT] = a
    return vals


def test_an_array_held_by_its_slot_alone_is_handed_over():
    vals = _vals(np.zeros(4))
    check = recycle._dead_check(SLOT, (), ())
    assert check(vals, frozenset()) is vals[SLOT]


def test_an_array_someone_else_holds_is_refused():
    a = np.zeros(4)
    vals = _vals(a)  # ``a`` (this frame) holds it too
    assert recycle._dead_check(SLOT, (), ())(vals, frozenset()) is None
    del a
    assert recycle._dead_check(SLOT, (), ())(vals, frozenset()) is not None


def test_a_kept_slot_and_an_empty_slot_are_refused():
    vals = _vals(np.zeros(4))
    check = recycle._dead_check(SLOT, (), ())
    assert check(vals, frozenset({SLOT})) is None
    vals[SLOT] = None
    assert check(vals, frozenset()) is None


@pytest.mark.parametrize("make", [
    lambda: np.zeros((4, 4))[:, 1],                 # a view, not contiguous
    lambda: np.zeros((4, 4)).T,                     # a view, F-ordered
    lambda: np.frombuffer(bytearray(32)),           # does not own its memory
])
def test_what_does_not_own_contiguous_memory_is_refused(make):
    vals = _vals(make())
    assert recycle._dead_check(SLOT, (), ())(vals, frozenset()) is None


def test_a_read_only_array_is_refused():
    a = np.zeros(4)
    a.flags.writeable = False
    vals = _vals(a)
    del a
    assert recycle._dead_check(SLOT, (), ())(vals, frozenset()) is None


def test_holders_in_the_chain_are_counted_and_a_kept_dead_slot_refuses():
    vals = _vals(np.zeros(4))
    spare = [vals[SLOT]]  # the producer's spare holds the array too
    assert recycle._dead_check(SLOT, (), ())(vals, frozenset()) is None
    assert recycle._dead_check(SLOT, ((spare, 0),), ())(vals, frozenset()) is vals[SLOT]
    vals[OTHER] = vals[SLOT]  # a dead slot it went through
    check = recycle._dead_check(SLOT, ((spare, 0),), (OTHER,))
    assert check(vals, frozenset()) is vals[SLOT]
    assert check(vals, frozenset({OTHER})) is None  # the run keeps that slot


def _mlp():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 6], "float32")
        label = fd.data("label", [None, 1], "int64")
        hidden = fd.fc(x, 5, act="relu")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(hidden, 3), label))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor(fd.CPUPlace())
    exe.run(startup, scope=scope)
    return main, scope, exe, loss, hidden


def _feed(seed):
    rng = np.random.default_rng(seed)
    return {"x": rng.random((4, 6), dtype=np.float32),
            "label": rng.integers(0, 3, (4, 1), dtype=np.int64)}


def test_relu_writes_into_the_dead_biased_sum_and_never_into_a_fetched_one():
    main, scope, exe, loss, hidden = _mlp()
    exe.run(main, feed=_feed(0), fetch_list=[loss], scope=scope)
    plan = exe.prepare(main)
    relu = next(s for s in plan.steps if s.type == "relu")
    assert relu.run.__qualname__.startswith("_one_candidate_run")
    add_out = relu.ins[0]
    # a plain run that fetches only the loss: relu's output is the sum's own array
    seen = {}
    original = relu.run

    def spy(vals):
        before = id(vals[add_out])  # an id only: a reference here would refuse the rule
        original(vals)
        seen["same"] = id(vals[relu.outs[0]]) == before
    relu.run = spy
    try:
        exe.run(main, feed=_feed(1), fetch_list=[loss], scope=scope)
        assert seen["same"] is True
        # fetching the biased sum keeps it: relu writes elsewhere, the sum is unchanged
        name = plan.names[add_out]
        total, out = exe.run(main, feed=_feed(2), fetch_list=[name, hidden.name], scope=scope)
        assert seen["same"] is False
        assert np.array_equal(np.maximum(total, 0), out)
        assert (total < 0).any()  # relu really changed values: a write into it would show
    finally:
        relu.run = original


def test_sgd_into_the_dead_gradient_hands_the_old_parameter_to_a_spare():
    main, scope, exe, loss, _ = _mlp()
    for seed in range(3):
        exe.run(main, feed=_feed(seed), fetch_list=[loss], scope=scope)
    plan = exe.prepare(main)
    sgds = [s for s in plan.steps if s.type == "sgd"]
    assert sgds and all(s.run.__qualname__.startswith("_one_candidate_run") for s in sgds)
    names = [plan.names[s.outs[0]] for s in sgds]
    before = {n: weakref.ref(scope.find_var(n).get_tensor().value) for n in names}
    exe.run(main, feed=_feed(3), fetch_list=[loss], scope=scope)
    spares = [a for s in plan.steps if s.spare is not None for a in s.spare]
    for n in names:
        old, new = before[n](), scope.find_var(n).get_tensor().value
        # the parameter moved to the gradient's array; its old array waits in a spare
        assert old is not None and old is not new
        assert any(a is old for a in spares), n
        assert not any(a is new for a in spares), n
