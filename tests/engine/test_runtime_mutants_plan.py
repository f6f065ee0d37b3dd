"""engine/runtime/plan.py: what a prepared block promises its callers (issue #17: mutants
of plan.py that the executor tests let through). A loaded inference model's feed and fetch
ops, unimplemented ops in sub-blocks, block indices that do not exist, the sub-plans shared
by a program's blocks, the kernel picked by the declared dtype, and the slots every input of
a kernel is gathered from."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import Executor, FluidscopeError, Scope
from fluidscope.engine.ir.paddle_ops import UnimplementedOpError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.descs import add_block, add_op, add_var, new_program
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.runtime.place import CPUPlace
from fluidscope.engine.runtime.plan import BlockPlan

from test_debugger import rnn_session


def _holder_op(block, type, slot_in, names_in, slot_out, names_out, col):
    """A feed or fetch op as Paddle's save_inference_model writes them."""
    op = block.ops.add(type=type)
    op.inputs.add(parameter=slot_in, arguments=names_in)
    op.outputs.add(parameter=slot_out, arguments=names_out)
    if col is not None:
        op.attrs.add(name="col", type=pb.AttrType.INT, i=col)
    return op


def _inference_model(fetch_cols=(0, 1), feed_col=0):
    """feed x -> scale(2) -> a; a + 1 -> b; fetch b (col fetch_cols[0]), a (col [1])."""
    desc, b = new_program()
    add_var(b, "feed", (), kind=pb.VarType.FEED_MINIBATCH, persistable=True)
    add_var(b, "fetch", (), kind=pb.VarType.FETCH_LIST, persistable=True)
    for name in ("x", "a", "b"):
        add_var(b, name, [-1, 2])
    _holder_op(b, "feed", "X", ["feed"], "Out", ["x"], feed_col)
    add_op(b, "scale", {"X": ["x"]}, {"Out": ["a"]}, scale=2.0)
    add_op(b, "scale", {"X": ["a"]}, {"Out": ["b"]}, bias=1.0)
    _holder_op(b, "fetch", "X", ["b"], "Out", ["fetch"], fetch_cols[0])
    _holder_op(b, "fetch", "X", ["a"], "Out", ["fetch"], fetch_cols[1])
    return desc


def test_a_loaded_models_fetch_ops_say_what_a_run_returns_in_col_order():
    desc = _inference_model(fetch_cols=(1, 0))
    exe = Executor()
    plan = exe.prepare(desc)
    assert [s.type for s in plan.steps] == ["scale", "scale"]  # feed and fetch are not steps
    assert plan.feed_cols == {0: "x"}
    assert {c: plan.names[s] for c, s in plan.fetch_cols.items()} == {1: "b", 0: "a"}
    x = np.array([[1.0, 2.0]], np.float32)
    a, b = exe.run(desc, feed={"x": x}, scope=Scope())  # fetch_list=None: the fetch ops'
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * x + 1)
    assert exe.start(desc, {"x": x}, Scope()).fetch_names() == ["a", "b"]


def test_a_feed_or_fetch_op_without_col_is_a_schema_error_naming_it():
    desc = _inference_model(feed_col=None)
    with pytest.raises(FluidscopeError, match="^feed op has no 'col' attribute$"):
        BlockPlan(desc, 0, CPUPlace())


def test_an_unimplemented_op_in_a_sub_block_listed_in_a_blocks_attribute_is_refused_first():
    # A Paddle file may hold an op running several sub-blocks (a BLOCKS attribute).
    desc, b0 = new_program()
    add_var(b0, "x", [2])
    add_var(b0, "y", [2])
    add_op(b0, "scale", {"X": ["x"]}, {"Out": ["y"]})
    outer = b0.ops[0]
    outer.attrs.add(name="blocks", type=pb.AttrType.BLOCKS, blocks_idx=[1, 2])
    for _ in range(2):
        add_block(desc, 0)
    desc.blocks[2].ops.add(type="no_such_inner_op")
    with pytest.raises(UnimplementedOpError) as err:
        BlockPlan(desc, 0, CPUPlace())
    assert "no_such_inner_op (1x" in str(err.value)


def test_an_unimplemented_op_is_refused_with_its_count_before_anything_runs():
    desc, b = new_program()
    add_var(b, "x", [2])
    add_var(b, "y", [2])
    for _ in range(2):
        b.ops.add(type="my_custom_op")
    with pytest.raises(UnimplementedOpError, match=r"my_custom_op \(2x"):
        Executor().run(desc, feed={"x": np.ones(2, np.float32)}, scope=Scope())


@pytest.mark.parametrize("block", [-1, 1, 7])
def test_preparing_a_block_that_does_not_exist_names_it(block):
    desc = _inference_model()
    with pytest.raises(FluidscopeError, match=f"^block {block} does not exist; the program "
                                              "has 1 block"):
        Executor().prepare(desc, block)


def test_running_what_is_not_a_program_names_its_type():
    with pytest.raises(FluidscopeError, match="^expected a Program or ProgramDesc, got int$"):
        Executor().run(42)


def test_every_plan_of_a_program_shares_one_table_of_sub_plans():
    exe, main, scope, feed, fetch = rnn_session()
    plan = exe.prepare(main)
    assert sorted(plan.sub_plans) == [1, 2]  # the step block and its gradient block
    for sub in plan.sub_plans.values():
        assert sub.sub_plans is plan.sub_plans


def test_declared_dtype_and_dims_are_none_for_what_is_not_a_declared_dense_tensor():
    desc = _inference_model()
    plan = BlockPlan(desc, 0, CPUPlace())
    assert plan.declared_dtype("x") == np.float32 and plan.declared_dims("x") == (-1, 2)
    assert plan.declared_dtype("feed") is None and plan.declared_dims("fetch") is None
    assert plan.declared_dtype("undeclared") is None and plan.declared_dims("undeclared") is None


def test_an_op_runs_the_kernel_registered_for_its_declared_dtype(monkeypatch):
    monkeypatch.setattr(registry, "_OPS", dict(registry._OPS))  # restored after the test
    registry.register("twice_by_dtype", inputs=["X"], outputs=["Out"], kernels={
        ("cpu", "float64"): lambda xp, attrs, x: x * 2,
        ("any", "any"): lambda xp, attrs, x: x * 3})
    results = {}
    for dtype in ("float64", "float32"):
        desc, b = new_program()
        add_var(b, "x", [2], dtype)
        add_var(b, "y", [2], dtype)
        add_op(b, "twice_by_dtype", {"X": ["x"]}, {"Out": ["y"]})
        results[dtype] = Executor().run(desc, feed={"x": np.ones(2, dtype)}, fetch_list=["y"],
                                        scope=Scope())[0]
    np.testing.assert_array_equal(results["float64"], [2.0, 2.0])
    np.testing.assert_array_equal(results["float32"], [3.0, 3.0])  # no float32 kernel: any


def test_a_kernel_of_three_tensor_inputs_reads_the_third():
    # scale's BiasTensor overrides the bias attribute (the 3-input fast path of the plan)
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64")
        s = fd.data("s", [1], dtype="float64")
        bias = fd.data("bias", [1], dtype="float64")
        out, = fd.op("scale", inputs={"X": [x], "ScaleTensor": [s], "BiasTensor": [bias]},
                     outputs={"Out": [{"name": "out", "type": {"type": "DENSE_TENSOR"}}]},
                     attrs={"scale": 5.0, "bias": 7.0})
    x_val = np.array([[1.0, 2.0]])
    got, = Executor().run(main, feed={"x": x_val, "s": np.array([3.0]), "bias": np.array([0.5])},
                          fetch_list=[out], scope=Scope())
    np.testing.assert_array_equal(got, x_val * 3.0 + 0.5)
