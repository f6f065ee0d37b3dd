"""What Executor.run keeps between runs of one plan (issue #16: the MLP step's time outside
its ops) must never serve a stale value: the scope variables a plan reads and writes
(runtime.feed.ScopeBinding, per root scope and Scope.generation), the feeds it accepted
as they were (plan.accepted_feeds) and the slots of a fetch list (run._fetch_plan). Each
test changes what a cache remembers between two runs and checks the run sees the change.
"""
import numpy as np
import pytest

from fluidscope.engine import Executor, ExecutionError, FluidscopeError, LoDTensor, Scope
from fluidscope.engine.ir.descs import add_op, add_var, new_program

X = np.arange(6.0).reshape(2, 3) - 2.5
W = np.linspace(-1.0, 1.0, 9).reshape(3, 3)


def _program():
    """t = x @ w, then w = 2 w (w persistable: read from the scope, written back)."""
    desc, b = new_program()
    add_var(b, "x", [-1, 3], "float64")
    add_var(b, "w", [3, 3], "float64", persistable=True)
    add_var(b, "t", [-1, 3], "float64")
    add_op(b, "mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]})
    add_op(b, "scale", {"X": ["w"]}, {"Out": ["w"]}, scale=2.0)
    return desc


def _scope(w=W):
    scope = Scope()
    scope.var("w").get_tensor().set(np.array(w, copy=True))
    return scope


def _run(exe, desc, scope, x=X, fetch=("t",)):
    return exe.run(desc, feed={"x": x}, fetch_list=list(fetch), scope=scope)


def _w(scope):
    return scope.find_var("w").get_tensor().value


def test_runs_read_and_write_the_scope_as_it_is_after_each_change():
    exe, desc, scope = Executor(), _program(), _scope()
    (t,) = _run(exe, desc, scope)
    np.testing.assert_array_equal(t, X @ W)
    np.testing.assert_array_equal(_w(scope), 2 * W)
    # a new value in the same variable
    scope.find_var("w").get_tensor().set(W + 1)
    (t,) = _run(exe, desc, scope)
    np.testing.assert_array_equal(t, X @ (W + 1))
    # a new tensor in the same variable
    scope.find_var("w").set_value(LoDTensor(W - 1))
    (t,) = _run(exe, desc, scope)
    np.testing.assert_array_equal(t, X @ (W - 1))
    np.testing.assert_array_equal(_w(scope), 2 * (W - 1))


def test_a_variable_erased_and_made_again_is_the_one_read_and_written():
    exe, desc, scope = Executor(), _program(), _scope()
    _run(exe, desc, scope)
    old = scope.find_var("w")
    scope.erase(["w"])
    scope.var("w").get_tensor().set(W * 3)
    (t,) = _run(exe, desc, scope)
    np.testing.assert_array_equal(t, X @ (W * 3))
    np.testing.assert_array_equal(_w(scope), 6 * W)
    np.testing.assert_array_equal(old.get_tensor().value, 2 * W)  # the old one untouched


def test_an_erased_input_is_reported_missing_on_the_next_run():
    exe, desc, scope = Executor(), _program(), _scope()
    _run(exe, desc, scope)
    scope.erase(["w"])
    with pytest.raises(ExecutionError, match="reads parameter 'w', which nothing has set"):
        _run(exe, desc, scope)
    scope.var("w")  # a variable without a value is missing too
    with pytest.raises(ExecutionError, match="which nothing has set"):
        _run(exe, desc, scope)


@pytest.mark.parametrize("with_parent", [False, True], ids=["root-scopes", "kid-scopes"])
def test_one_plan_run_over_two_scopes_in_turn_reads_and_writes_each(with_parent):
    exe, desc = Executor(), _program()
    scopes = [_scope(W), _scope(-W)]
    if with_parent:  # kid scopes reading w from their own roots
        scopes = [s.new_scope() for s in scopes]
    for k in range(3):
        for scope, sign in zip(scopes, (1, -1)):
            (t,) = _run(exe, desc, scope)
            np.testing.assert_array_equal(t, X @ (sign * W * 2 ** k))
    for scope, sign in zip(scopes, (1, -1)):
        np.testing.assert_array_equal(_w(scope), sign * W * 8)


def test_a_new_scope_at_a_dead_ones_address_is_never_taken_for_it():
    exe, desc = Executor(), _program()
    for k in range(20):  # ids of dead scopes come back; generations never do
        scope = _scope(W * (k + 1))
        (t,) = _run(exe, desc, scope)
        np.testing.assert_array_equal(t, X @ (W * (k + 1)))
        del scope


def test_scope_generations_change_when_a_name_comes_or_goes_and_only_then():
    scope = Scope()
    g0 = scope.generation
    scope.var("a")
    g1 = scope.generation
    scope.var("a").get_tensor().set(np.ones(2))
    assert g1 != g0 and scope.generation == g1
    scope.erase(["a"])
    assert scope.generation not in (g0, g1)
    assert Scope().generation not in (g0, g1, scope.generation)


# ------------------------------------------------------------------------ feeds
def test_a_feed_after_one_accepted_is_checked_again_when_dtype_or_shape_differ():
    exe, desc, scope = Executor(), _program(), _scope()
    _run(exe, desc, scope)  # accepted: float64 [2, 3]
    (t,) = _run(exe, desc, scope, x=X.astype(np.float32))  # cast, as the first time
    assert t.dtype == np.float64
    np.testing.assert_array_equal(t, X @ (2 * W))
    with pytest.raises(FluidscopeError, match=r"got shape \[2, 4\]"):
        _run(exe, desc, scope, x=np.zeros((2, 4)))
    with pytest.raises(FluidscopeError, match="got dtype complex128"):
        _run(exe, desc, scope, x=X.astype(np.complex128))
    (t,) = _run(exe, desc, scope, x=X[:1])  # another batch size: checked and accepted
    np.testing.assert_array_equal(t, X[:1] @ (4 * W))
    (t,) = _run(exe, desc, scope, x=X.tolist())  # a nested list
    np.testing.assert_array_equal(t, X @ (8 * W))


def test_a_fed_array_is_bound_as_it_is_each_run():
    exe, desc, scope = Executor(), _program(), _scope()
    x = X.copy()
    _run(exe, desc, scope, x=x)
    x += 1  # the same array, new values
    (t,) = _run(exe, desc, scope, x=x)
    np.testing.assert_array_equal(t, (X + 1) @ (2 * W))


# ------------------------------------------------------------------------ fetch
def test_fetch_lists_keep_their_order_and_unknown_names_are_refused_every_time():
    exe, desc, scope = Executor(), _program(), _scope()
    for _ in range(2):
        t, x, w = _run(exe, desc, scope, fetch=("t", "x", "w"))
        np.testing.assert_array_equal(x, X)
        np.testing.assert_array_equal(t, X @ (w / 2))
        w2, t2 = _run(exe, desc, scope, fetch=("w", "t"))
        np.testing.assert_array_equal(t2, X @ (w2 / 2))
    for _ in range(2):
        with pytest.raises(FluidscopeError, match="cannot fetch 'nope'"):
            _run(exe, desc, scope, fetch=("t", "nope"))


def test_a_run_told_to_keep_one_fetch_list_refuses_another():
    exe, desc, scope = Executor(), _program(), _scope()
    run = exe.start(desc, {"x": X}, scope)
    run.run_to_end(keep=run.keep_slots(["t"]))
    with pytest.raises(FluidscopeError, match="kept only what it was asked to fetch"):
        run.fetch(["x"])
    (t,) = run.fetch(["t"])
    np.testing.assert_array_equal(t, X @ W)
