"""How a prepared step moves values and LoD between slots (engine/runtime/plan.py), at the
shapes of op the executor tests did not reach (issue #17, a second sample of mutants): a
duplicable output of a plain kernel, LoD shared from one input to several outputs, three
tensor inputs of a kernel that calls ``xp``, sequences fed without LoD, required inputs a
hand-made program leaves out, and the unimplemented ops of sub-blocks and other blocks."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import ExecutionError, Executor, LoDTensor, Scope
from fluidscope.engine.ir.descs import add_block, add_op, add_var, new_program
from fluidscope.engine.ir.paddle_ops import UnimplementedOpError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.runtime.place import CPUPlace
from fluidscope.engine.runtime.plan import BlockPlan


def _dense(name):
    return {"name": name, "type": {"type": "DENSE_TENSOR"}}


def test_a_split_writes_each_part_into_its_own_output():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        parts = fd.split(fd.data("x", [None, 6], dtype="float64"), 3, dim=1)
    x = np.arange(12.0).reshape(2, 6)
    got = Executor().run(main, feed={"x": x}, fetch_list=parts, scope=Scope())
    for part, want in zip(got, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(part, want)


def test_unbinding_the_columns_of_sequences_gives_every_column_their_lod():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64", lod_level=1)
        cols = fd.op("unbind", inputs={"X": [x]}, outputs={"Out": [_dense(f"col{k}")
                                                                    for k in range(3)]},
                     attrs={"axis": 1})
    x_val = np.arange(12.0).reshape(4, 3)
    got = Executor().run(main, feed={"x": LoDTensor(x_val, [[0, 1, 4]])}, fetch_list=cols,
                         scope=Scope(), return_numpy=False)
    for k, col in enumerate(got):
        np.testing.assert_array_equal(col.numpy(), x_val[:, k])
        assert col.lod() == [[0, 1, 4]], f"col{k}"


def test_clip_by_tensors_reads_both_bounds():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float64")
        lo, hi = fd.data("lo", [1], dtype="float64"), fd.data("hi", [1], dtype="float64")
        out, = fd.op("clip", inputs={"X": [x], "Min": [lo], "Max": [hi]},
                     outputs={"Out": [_dense("clipped")]}, attrs={"min": -9.0, "max": 9.0})
    x_val = np.array([[-3.0, -0.5, 0.5, 3.0]])
    got, = Executor().run(main, feed={"x": x_val, "lo": np.array([-1.0]),
                                      "hi": np.array([2.0])}, fetch_list=[out], scope=Scope())
    np.testing.assert_array_equal(got, [[-1.0, -0.5, 0.5, 2.0]])


def test_a_sequence_op_fed_rows_without_lod_says_to_feed_a_lod_tensor():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        pooled = fd.sequence_pool(fd.data("x", [None, 2], dtype="float64", lod_level=1), "sum")
    with pytest.raises(ExecutionError) as err:
        Executor().run(main, feed={"x": np.ones((3, 2))}, fetch_list=[pooled], scope=Scope())
    message = str(err.value)
    assert message.startswith("op #0 sequence_pool")
    assert "op sequence_pool: input X has no LoD; it needs sequences: feed a LoDTensor" in message


def test_sequence_softmax_keeps_the_sequences_of_its_input():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        out = fd.sequence_softmax(fd.data("x", [None, 1], dtype="float64", lod_level=1))
    x = np.log(np.array([[1.0], [3.0], [2.0], [2.0], [4.0]]))
    got, = Executor().run(main, feed={"x": LoDTensor(x, [[0, 2, 5]])}, fetch_list=[out],
                          scope=Scope(), return_numpy=False)
    assert got.lod() == [[0, 2, 5]]
    np.testing.assert_allclose(got.numpy().ravel(), [0.25, 0.75, 0.25, 0.25, 0.5])


def test_an_op_missing_a_required_input_fails_naming_the_op_at_run_time():
    desc, b = new_program()
    add_var(b, "x", [-1, 2])
    add_var(b, "y", [-1, 2])
    add_op(b, "elementwise_add", {"X": ["x"]}, {"Out": ["y"]})  # no Y slot at all
    exe = Executor()
    plan = exe.prepare(desc)
    assert plan.steps[0].lod_agree == ((plan.slot["x"], "X 'x'"),)
    with pytest.raises(ExecutionError, match=r"^op #0 elementwise_add \(X: x \[2, 2\]\): "):
        exe.run(desc, feed={"x": np.ones((2, 2), np.float32)}, fetch_list=["y"], scope=Scope())


def test_sub_blocks_run_by_several_ops_are_each_checked_once():
    # op y runs blocks 2 and 1, op z runs block 1 again: block 1 comes up twice before 2
    desc, b0 = new_program()
    add_var(b0, "x", [2])
    for name, blocks in (("y", [2, 1]), ("z", [1])):
        add_var(b0, name, [2])
        op = add_op(b0, "scale", {"X": ["x"]}, {"Out": [name]})
        op.attrs.add(name="sub_blocks", type=pb.AttrType.BLOCKS, blocks_idx=blocks)
    add_block(desc, 0).ops.add(type="no_such_inner_op")
    add_block(desc, 0).ops.add(type="other_missing_op")
    with pytest.raises(UnimplementedOpError) as err:
        BlockPlan(desc, 0, CPUPlace())
    assert "no_such_inner_op (1x" in str(err.value) and "other_missing_op (1x" in str(err.value)


def test_preparing_another_block_refuses_its_unimplemented_ops_with_their_count():
    desc, b0 = new_program()
    add_var(b0, "x", [2])
    b1 = add_block(desc, 0)
    for _ in range(2):
        b1.ops.add(type="my_custom_op")
    with pytest.raises(UnimplementedOpError, match=r"my_custom_op \(2x"):
        Executor().prepare(desc, 1)


@pytest.mark.parametrize("op_type", ["relu", "tanh", "sigmoid"])
def test_an_op_whose_only_output_has_no_variable_leaves_empty_inputs_empty(op_type):
    # A Paddle file may hold an op whose output is @EMPTY@; its result must not become the
    # value of the next op's empty ScaleTensor (slot 0 stands for every empty input).
    desc, b = new_program()
    add_var(b, "x", [-1, 1])
    add_var(b, "y", [-1, 1])
    add_op(b, op_type, {"X": ["x"]}, {"Out": ["@EMPTY@"]})
    add_op(b, "scale", {"X": ["x"], "ScaleTensor": ["@EMPTY@"]}, {"Out": ["y"]}, scale=2.0)
    x = np.array([[-3.0]], np.float32)
    exe = Executor()
    y, = exe.run(desc, feed={"x": x}, fetch_list=["y"], scope=Scope())
    np.testing.assert_array_equal(y, 2 * x)
    assert "@EMPTY@" not in exe.prepare(desc).slot  # no LoD is shared into "no variable"
    run = exe.start(desc, {"x": x}, Scope())
    assert run.describe(run.plan.steps[1]) == ("op #1 scale (X: x [1, 1], "
                                               "ScaleTensor: @EMPTY@ unset)")


def test_a_grad_op_that_omits_its_duplicable_output_slot_still_runs():
    # A Paddle file leaves out an output slot nobody wants (here stack_grad's X@GRAD).
    desc, b = new_program()
    for name in ("a", "b", "dy"):
        add_var(b, name, [2] if name != "dy" else [2, 2])
    add_var(b, "y", [2, 2])
    add_op(b, "stack_grad", {"X": ["a", "b"], "Y@GRAD": ["dy"]}, {})
    add_op(b, "stack", {"X": ["a", "b"]}, {"Y": ["y"]})
    one = np.ones(2, np.float32)
    y, = Executor().run(desc, feed={"a": one, "b": 2 * one, "dy": np.ones((2, 2), np.float32)},
                        fetch_list=["y"], scope=Scope())
    np.testing.assert_array_equal(y, [[1.0, 1.0], [2.0, 2.0]])
