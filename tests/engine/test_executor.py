"""Executor, scopes and LoDTensor behaviour."""
import numpy as np
import pytest

from fluidscope.engine import (CPUPlace, ExecutionError, Executor, FluidscopeError, LoDTensor,
                               Scope, create_lod_tensor, global_scope, scope_guard)
from fluidscope.engine.ir.descs import add_op, add_var
from fluidscope.engine.ir.proto import framework_pb2 as pb


def _var(block, name, dims, persistable=False, dtype="float32"):
    return add_var(block, name, dims, dtype, persistable=persistable)


_op = add_op


def _program():
    """x -> scale(2) -> t ; t + w -> out ; w persistable, accumulated: w = w + t."""
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    _var(b, "x", [-1, 3])
    _var(b, "t", [-1, 3])
    _var(b, "w", [3], persistable=True)
    _var(b, "out", [-1, 3])
    _op(b, "scale", {"X": ["x"]}, {"Out": ["t"]}, scale=2.0)
    _op(b, "elementwise_add", {"X": ["t"], "Y": ["w"]}, {"Out": ["out"]})
    return desc


def test_run_reads_parameters_from_scope_and_fetches():
    scope = Scope()
    scope.var("w").get_tensor().set(np.ones(3, np.float32), CPUPlace())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, t = Executor().run(_program(), feed={"x": x}, fetch_list=["out", "t"], scope=scope)
    np.testing.assert_allclose(out, 2 * x + 1)
    np.testing.assert_allclose(t, 2 * x)


def test_temporaries_do_not_leak_into_the_root_scope():
    scope = Scope()
    scope.var("w").get_tensor().set(np.ones(3, np.float32))
    Executor().run(_program(), feed={"x": np.ones((1, 3), np.float32)}, scope=scope)
    assert scope.find_var("t") is None and scope.find_var("out") is None
    assert scope.local_var_names() == ["w"]


def test_persistable_outputs_are_written_back_to_the_root_scope():
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    _var(b, "w", [2], persistable=True)
    _op(b, "scale", {"X": ["w"]}, {"Out": ["w"]}, scale=3.0)
    scope = Scope()
    scope.var("w").get_tensor().set(np.array([1.0, 2.0], np.float32))
    exe = Executor()
    exe.run(desc, scope=scope)
    exe.run(desc, scope=scope)
    np.testing.assert_allclose(np.array(scope.find_var("w").get_tensor()), [9.0, 18.0])


def test_missing_parameter_says_to_run_startup():
    with pytest.raises(ExecutionError, match="reads parameter 'w'.*startup"):
        Executor().run(_program(), feed={"x": np.ones((1, 3), np.float32)}, scope=Scope())


def test_feed_of_wrong_shape_or_dtype_is_a_clear_error():
    scope = Scope()
    scope.var("w").get_tensor().set(np.ones(3, np.float32))
    exe = Executor()
    with pytest.raises(FluidscopeError, match=r"feed 'x': got shape \[2, 4\].*\[-1, 3\]"):
        exe.run(_program(), feed={"x": np.ones((2, 4), np.float32)}, scope=scope)
    with pytest.raises(FluidscopeError, match="feed 'x': got dtype complex128"):
        exe.run(_program(), feed={"x": np.ones((2, 3), np.complex128)}, scope=scope)
    with pytest.raises(FluidscopeError, match="feed 'nope' is not a variable"):
        exe.run(_program(), feed={"nope": np.ones(1)}, scope=scope)
    # float64 data is cast to the declared float32 (same kind), like Paddle's feeder.
    out, = exe.run(_program(), feed={"x": np.ones((1, 3))}, fetch_list=["out"], scope=scope)
    assert out.dtype == np.float32


def test_kernel_failure_names_the_op_and_input_shapes():
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    _var(b, "a", [-1])
    _var(b, "b", [-1])
    _var(b, "c", [-1])
    _op(b, "elementwise_add", {"X": ["a"], "Y": ["b"]}, {"Out": ["c"]})
    with pytest.raises(ExecutionError, match=r"op #0 elementwise_add \(X: a \[3\], Y: b \[4\]\)"):
        Executor().run(desc, feed={"a": np.ones(3, np.float32), "b": np.ones(4, np.float32)},
                       fetch_list=["c"], scope=Scope())


def test_plan_is_cached_and_rebuilt_after_an_edit():
    desc = _program()
    exe = Executor()
    scope = Scope()
    scope.var("w").get_tensor().set(np.zeros(3, np.float32))
    feed = {"x": np.ones((1, 3), np.float32)}
    assert exe.prepare(desc) is exe.prepare(desc)
    out1, = exe.run(desc, feed=feed, fetch_list=["out"], scope=scope)
    desc.blocks[0].ops[0].attrs[0].f = 5.0  # edit the bare desc: the plan must follow
    out2, = exe.run(desc, feed=feed, fetch_list=["out"], scope=scope)
    assert out1[0, 0] == 2.0 and out2[0, 0] == 5.0


def test_lod_passes_through_element_wise_ops_and_return_numpy_false():
    scope = Scope()
    scope.var("w").get_tensor().set(np.zeros(3, np.float32))
    x = create_lod_tensor(np.ones((5, 3), np.float32), [[2, 3]])
    out, = Executor().run(_program(), feed={"x": x}, fetch_list=["out"], scope=scope,
                          return_numpy=False)
    assert isinstance(out, LoDTensor)
    assert out.lod() == [[0, 2, 5]] and out.recursive_sequence_lengths() == [[2, 3]]


def test_bad_lod_is_rejected():
    with pytest.raises(FluidscopeError, match="covers 4 rows but the tensor has 5"):
        LoDTensor(np.ones((5, 3)), lod=[[0, 2, 4]])
    with pytest.raises(FluidscopeError, match="never decrease"):
        LoDTensor(np.ones((5, 3)), lod=[[0, 3, 2, 5]])


def test_scope_hierarchy_and_global_scope_guard():
    root = Scope()
    kid = root.new_scope()
    root.var("a").get_tensor().set(np.array([1.0]))
    assert kid.find_var("a") is root.find_var("a")
    assert kid.find_local_var("a") is None
    kid.var("a")
    assert kid.find_var("a") is not root.find_var("a")
    assert root.kids() == [kid]
    mine = Scope()
    with scope_guard(mine):
        assert global_scope() is mine
    assert global_scope() is not mine


def test_tensor_set_and_numpy_round_trip():
    t = LoDTensor()
    t.set(np.arange(4, dtype=np.int64), CPUPlace())
    assert np.array(t).tolist() == [0, 1, 2, 3] and t.shape() == [4] and t.dtype == np.int64


def test_adding_sequences_cut_differently_is_a_clear_error():
    import fluidscope.designer as fd
    from fluidscope.engine.errors import ExecutionError
    main = fd.Program()
    with fd.program_guard(main, fd.Program()):
        a = fd.data("a", [None, 2], lod_level=1)
        b = fd.data("b", [None, 2], lod_level=1)
        out = fd.elementwise_add(a, b)
    x = np.ones((5, 2), "float32")
    exe = fd.Executor()
    with pytest.raises(ExecutionError, match=r"elementwise_add .*X 'a' has LoD \[\[0, 2, 5\]\] "
                                             r"but Y 'b' has LoD \[\[0, 3, 5\]\]"):
        exe.run(main, feed={"a": fd.LoDTensor(x, [[0, 2, 5]]), "b": fd.LoDTensor(x, [[0, 3, 5]])},
                fetch_list=[out], scope=fd.Scope())
    got, = exe.run(main, feed={"a": fd.LoDTensor(x, [[0, 2, 5]]), "b": x}, fetch_list=[out],
                   scope=fd.Scope(), return_numpy=False)
    assert got.lod() == [[0, 2, 5]]
