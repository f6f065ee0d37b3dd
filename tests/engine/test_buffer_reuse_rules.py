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

import fluidscope.designer as fd
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
    _spares_hold_arrays_or_nothing(exe, desc)


def _spares_hold_arrays_or_nothing(exe, desc):
    for step in exe.prepare(desc).steps:
        for kept in step.spare or ():
            assert kept is None or isinstance(kept, np.ndarray), (step.type, kept)


def _sgd_with_master(fetch=()):
    """g = q @ w; sgd(w, g) with a MasterParam but no multi_precision: its ParamOut w goes
    into the dead gradient, and its two outputs take the general path."""
    desc = _program([("mul", {"X": ["q"], "Y": ["w"]}, {"Out": ["g"]}, {}),
                     ("sgd", {"Param": ["w"], "LearningRate": ["lr"], "Grad": ["g"],
                              "MasterParam": ["m"]}, {"ParamOut": ["w"], "MasterParamOut": ["m"]},
                      {})], persistable=("lr", "m"))
    exe, scope = _runner(desc, lr=np.array([0.1]), m=np.ones((3, 3)))
    return desc, exe, scope


def _q(k):
    return np.eye(3) * (k + 1) + 0.25


def _sgd_steps(runs):
    w, grads = W.copy(), []
    for k in range(runs):
        grads.append(_q(k) @ w)
        w = w - 0.1 * grads[-1]
    return w, grads


def test_sgd_with_two_outputs_writes_into_the_dead_gradient_and_swaps_two_arrays():
    desc, exe, scope = _sgd_with_master()
    refs = []
    for k in range(4):
        exe.run(desc, feed={"q": _q(k)}, fetch_list=[], scope=scope)
        refs.append(weakref.ref(_value(scope, "w")))
    assert refs[2]() is not None and refs[2]() is refs[0]()
    assert refs[3]() is refs[1]() and refs[1]() is not refs[0]()
    np.testing.assert_array_equal(_value(scope, "w"), _sgd_steps(4)[0])
    np.testing.assert_array_equal(_value(scope, "m"), np.ones((3, 3)))
    _spares_hold_arrays_or_nothing(exe, desc)


def test_sgd_never_writes_into_a_gradient_the_run_fetches():
    desc, exe, scope = _sgd_with_master()
    w, grads = _sgd_steps(4)
    got = [exe.run(desc, feed={"q": _q(k)}, fetch_list=["g"], scope=scope)[0]
           for k in range(4)]
    for g, want in zip(got, grads, strict=True):
        np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(_value(scope, "w"), w)
    assert len({id(g) for g in got} | {id(_value(scope, "w"))}) == 5


def test_sgd_whose_gradient_is_fetched_swaps_two_arrays_of_its_own():
    desc, exe, scope = _sgd_with_master()
    refs = []
    for k in range(4):
        exe.run(desc, feed={"q": _q(k)}, fetch_list=["g"], scope=scope)
        refs.append(weakref.ref(_value(scope, "w")))
    assert refs[2]() is not None and refs[2]() is refs[0]()
    assert refs[3]() is refs[1]() and refs[1]() is not refs[0]()
    np.testing.assert_array_equal(_value(scope, "w"), _sgd_steps(4)[0])


def test_a_run_told_nothing_to_keep_writes_into_no_input():
    """A debugger-style run (run_to_end without keep) keeps every value: sgd takes its
    spare, and the gradient it read is still there to fetch."""
    desc, exe, scope = _sgd_with_master()
    w, grads = _sgd_steps(3)
    for k in range(3):
        run = exe.start(desc, {"q": _q(k)}, scope)
        run.run_to_end()
        run.write_back()
        (g,) = run.fetch(["g"])
        np.testing.assert_array_equal(g, grads[k])
    np.testing.assert_array_equal(_value(scope, "w"), w)


def test_an_update_in_place_of_a_persistable_swaps_two_arrays():
    """p = p + x @ w (no dead input: the add's output is its own input): the add's next
    array is the one the scope let go."""
    desc = _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("elementwise_add", {"X": ["p"], "Y": ["t"]}, {"Out": ["p"]}, {})],
                    persistable=("p",))
    exe, scope = _runner(desc, p=np.zeros((2, 3)))
    refs = _ids_over_runs(exe, desc, scope, "p")
    assert refs[2]() is not None and refs[2]() is refs[0]()
    assert refs[3]() is refs[1]() and refs[1]() is not refs[0]()
    np.testing.assert_array_equal(_value(scope, "p"), sum((X + k) @ W for k in range(4)))
    _spares_hold_arrays_or_nothing(exe, desc)


def test_an_op_whose_dead_input_is_fetched_writes_into_its_own_previous_output():
    desc = _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("relu", {"X": ["t"]}, {"Out": ["u"]}, {})])
    exe, scope = _runner(desc)
    refs = []
    for k in range(3):
        t, u = exe.run(desc, feed={"x": X + k}, fetch_list=["t", "u"], scope=scope)
        np.testing.assert_array_equal(t, (X + k) @ W)
        np.testing.assert_array_equal(u, np.maximum(t, 0))
        refs.append((weakref.ref(t), weakref.ref(u)))
        del t, u
    assert refs[2][1]() is refs[0][1]() is not None, "relu reused its own output"
    assert refs[2][0]() is refs[0][0]() is not None, "mul reused its own output"
    assert refs[0][0]() is not refs[0][1]()
    _spares_hold_arrays_or_nothing(exe, desc)


def test_an_input_a_later_op_reads_is_never_written_into():
    desc = _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("relu", {"X": ["t"]}, {"Out": ["u"]}, {}),
                     ("elementwise_add", {"X": ["t"], "Y": ["u"]}, {"Out": ["v"]}, {})])
    exe, scope = _runner(desc)
    for k in range(3):
        t = (X - k) @ W
        (v,) = exe.run(desc, feed={"x": X - k}, fetch_list=["v"], scope=scope)
        np.testing.assert_array_equal(v, t + np.maximum(t, 0))


def test_a_persistable_input_made_in_the_run_is_never_written_into():
    desc = _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("relu", {"X": ["t"]}, {"Out": ["u"]}, {})], persistable=("t",))
    exe, scope = _runner(desc)
    for k in range(3):
        (u,) = exe.run(desc, feed={"x": X - k}, fetch_list=["u"], scope=scope)
        np.testing.assert_array_equal(_value(scope, "t"), (X - k) @ W)
        np.testing.assert_array_equal(u, np.maximum((X - k) @ W, 0))


def test_take_refuses_what_is_not_an_array():
    assert recycle.take([object()], 0) is None
    assert recycle.take([None], 0) is None


def test_the_product_next_writes_into_the_parameter_array_sgd_let_go():
    """sgd writes w into the dead gradient; the scope lets the old w go, and the product
    writes the next gradient into it (the user sees it by fetching that gradient)."""
    for desc, exe, scope in (_sgd_with_master(), _sgd_plain()):
        first = weakref.ref(_value(scope, "w"))
        exe.run(desc, feed={"q": _q(0)}, fetch_list=[], scope=scope)
        assert first() is not None and _value(scope, "w") is not first()
        _spares_hold_arrays_or_nothing(exe, desc)
        (g,) = exe.run(desc, feed={"q": _q(1)}, fetch_list=["g"], scope=scope)
        assert g is first()
        w, grads = _sgd_steps(2)
        np.testing.assert_array_equal(g, grads[1])
        np.testing.assert_array_equal(_value(scope, "w"), w)
        _spares_hold_arrays_or_nothing(exe, desc)


def _sgd_plain():
    desc = _program([("mul", {"X": ["q"], "Y": ["w"]}, {"Out": ["g"]}, {}),
                     ("sgd", {"Param": ["w"], "LearningRate": ["lr"], "Grad": ["g"]},
                      {"ParamOut": ["w"]}, {})], persistable=("lr",))
    exe, scope = _runner(desc, lr=np.array([0.1]))
    return desc, exe, scope


@pytest.mark.parametrize("ops", [
    [("elementwise_add", {"X": ["p"], "Y": ["x"]}, {"Out": ["p"]}, {})],
    [("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
     ("elementwise_add", {"X": ["t"], "Y": ["p"]}, {"Out": ["p"]}, {})],
], ids=["p-first-variable", "t-fetched"])
def test_an_add_into_a_persistable_it_reads_swaps_two_arrays(ops):
    """p = p + x (p the program's first variable), or p = t + p with t fetched every run
    (so the add cannot take it): the add takes the array the scope let go."""
    desc = _program(ops, persistable=("p",))
    exe, scope = _runner(desc, p=np.zeros((2, 3)))
    refs = _ids_over_runs(exe, desc, scope, "p", fetch=("t",) if len(ops) > 1 else ("x",))
    assert refs[2]() is not None and refs[2]() is refs[0]()
    assert refs[3]() is refs[1]() and refs[1]() is not refs[0]()
    product = len(ops) > 1
    np.testing.assert_array_equal(_value(scope, "p"),
                                  sum((X + k) @ W if product else X + k for k in range(4)))
    _spares_hold_arrays_or_nothing(exe, desc)


def test_a_persistable_written_into_a_dead_input_of_a_plain_op_keeps_the_old_array():
    """p = relu(-p / 2): relu writes p into the dead output of scale (which keeps no
    arrays); its own next array, when it cannot take that input, is the one the scope let
    go."""
    desc = _program([("scale", {"X": ["p"]}, {"Out": ["u"]}, {"scale": -0.5}),
                     ("relu", {"X": ["u"]}, {"Out": ["p"]}, {})], persistable=("p",))
    start = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    exe, scope = _runner(desc, p=start)
    first = weakref.ref(_value(scope, "p"))
    exe.run(desc, feed={"x": X}, fetch_list=[], scope=scope)
    assert first() is not None
    (u,) = exe.run(desc, feed={"x": X}, fetch_list=["u"], scope=scope)
    assert _value(scope, "p") is first()
    np.testing.assert_array_equal(u, -0.5 * np.maximum(-0.5 * start, 0))
    np.testing.assert_array_equal(_value(scope, "p"), np.maximum(u, 0))


def test_a_view_is_never_written_into_even_when_dead():
    """t = reshape2(w) is a view of the parameter: relu must not write into it."""
    desc = _program([("reshape2", {"X": ["w"]}, {"Out": ["t"], "XShape": ["ts"]},
                      {"shape": [9]}),
                     ("relu", {"X": ["t"]}, {"Out": ["u"]}, {})])
    exe, scope = _runner(desc)
    for _ in range(3):
        (u,) = exe.run(desc, feed={"x": X}, fetch_list=["u"], scope=scope)
        np.testing.assert_array_equal(_value(scope, "w"), W)
        np.testing.assert_array_equal(u, np.maximum(W.ravel(), 0))


def test_an_input_read_later_by_an_op_of_several_inputs_is_never_written_into():
    desc = _program([("mul", {"X": ["x"], "Y": ["w"]}, {"Out": ["t"]}, {}),
                     ("relu", {"X": ["t"]}, {"Out": ["u"]}, {}),
                     ("sum", {"X": ["t", "u"]}, {"Out": ["v"]}, {})])
    exe, scope = _runner(desc)
    for k in range(3):
        t = (X - k) @ W
        (v,) = exe.run(desc, feed={"x": X - k}, fetch_list=["v"], scope=scope)
        np.testing.assert_array_equal(v, t + np.maximum(t, 0))


def test_an_op_whose_only_output_has_no_variable_runs_on_a_scalar():
    """A Paddle file may send an op's only output to @EMPTY@ (no variable): the step
    still runs its kernel, whatever the rank of what it returns."""
    desc, b = new_program()
    add_var(b, "s", [], "float64")
    add_var(b, "y", [], "float64")
    add_op(b, "relu", {"X": ["s"]}, {"Out": ["@EMPTY@"]})
    add_op(b, "scale", {"X": ["s"]}, {"Out": ["y"]}, scale=3.0)
    exe = Executor()
    for k in range(2):
        (y,) = exe.run(desc, feed={"s": np.array(-2.0 + k)}, fetch_list=["y"], scope=Scope())
        assert y.shape == () and y == 3.0 * (-2.0 + k)


def test_a_plan_with_a_control_flow_op_writes_into_no_dead_input():
    """A recurrent op's blocks may read variables its slots do not name (a grad block
    binds any outer name), so next to one the fc's relu keeps its own arrays instead of
    writing into the biased sum; without it, relu writes into the product's array."""
    def build(rnn):
        main, startup = fd.Program(), fd.Program()
        with fd.program_guard(main, startup):
            side = fd.fc(fd.data("d", [None, 3], dtype="float64"), 4, act="relu", name="side")
            if rnn:
                seq = fd.data("s", [None, 2], dtype="float64", lod_level=1)
                fd.recurrent_group(lambda x_t: fd.fc([x_t, fd.memory("h", size=2)], size=2,
                                                     act="tanh", name="h"), [seq])
        exe, scope = Executor(), Scope()
        exe.run(startup, scope=scope)
        return main, exe, scope, side

    feed = {"d": X.copy(), "s": fd.LoDTensor(np.ones((3, 2)), [[0, 1, 3]])}
    for rnn in (False, True):
        main, exe, scope, side = build(rnn)
        for _ in range(2):
            (got,) = exe.run(main, feed=feed if rnn else {"d": X.copy()}, fetch_list=[side],
                             scope=scope)
        steps = exe.prepare(main).steps
        product, act = steps[0], next(s for s in steps if s.type == "relu")
        assert product.type == "mul" and act.spare is not None
        assert (product.spare[0] is got) is not rnn, rnn
        assert (act.spare[0] is got) is rnn, rnn
        w, b = (_value(scope, p.name) for p in main.all_parameters()
                if p.name.startswith("side"))
        np.testing.assert_array_equal(got, np.maximum(X @ w + b, 0))
