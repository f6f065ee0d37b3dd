"""engine.validate: every structural rule Paddle 3.3.1 / Netron enforce, all problems at once."""
import pytest

from data.io.programs import (add_holder, add_op, add_var, fc_program, fc_training_program,
                              netron_minimal_program)
from fluidscope.engine import registry
from fluidscope.engine.errors import ValidationError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import Attr, AttrType, Slot
from fluidscope.engine.ir.names import EMPTY_VAR
from fluidscope.engine.ir.validate import find_problems, validate_program


def problems_of(desc, expected=None):
    """The problems validate_program raises for ``desc``: find_problems' list (what it
    reports), each in the message, and, when given, exactly the ``expected`` strings
    (written out here, so a rule that stops firing or changes its wording is seen)."""
    with pytest.raises(ValidationError) as info:
        validate_program(desc)
    problems = info.value.problems
    assert problems == find_problems(desc)
    for p in problems:
        assert p in str(info.value)
    if expected is not None:
        assert problems == expected
    return problems


def one_problem(desc, *fragments, exactly=None):
    problems = problems_of(desc, None if exactly is None else [exactly])
    assert len(problems) == 1, problems
    for fragment in fragments:
        assert fragment in problems[0], problems[0]
    return problems[0]


def test_valid_programs_pass():
    for desc in (fc_program(), netron_minimal_program()):
        assert find_problems(desc) == []
        validate_program(desc)


def test_no_blocks():
    one_problem(pb.ProgramDesc(), exactly="the program has no blocks; block 0 (idx 0, "
                "parent_idx -1) is required")


def test_missing_required_fields_are_reported_by_path():
    desc = fc_program()
    desc.blocks[0].vars[0].ClearField("type")
    desc.blocks[0].ClearField("parent_idx")
    problems_of(desc, ["missing required field blocks[0].parent_idx",
                       "missing required field blocks[0].vars[0].type"])


def test_block_0_must_be_root():
    desc = fc_program()
    desc.blocks[0].parent_idx = 0
    one_problem(desc, exactly="block 0: parent_idx is 0, expected -1 (the root block)")


def test_block_idx_and_parent_rules():
    desc = fc_program()
    desc.blocks.add(idx=1, parent_idx=0)
    desc.blocks.add(idx=5, parent_idx=2)
    desc.blocks.add(idx=3, parent_idx=-1, forward_block_idx=9)
    problems_of(desc, [
        "block 2: idx is 5, expected 2 (a block's idx is its position)",
        "block 2: parent_idx is 2; it must name an earlier block (0..1); only block 0 has "
        "parent -1",
        "block 3: parent_idx is -1; it must name an earlier block (0..2); only block 0 has "
        "parent -1",
        "block 3: forward_block_idx 9 names no block (the program has 4)"])


def test_undeclared_variable_names_block_op_and_slot():
    desc = fc_program()
    desc.blocks[0].ops[1].inputs[1].arguments[0] = "fc_0.b_9"
    one_problem(desc, exactly="block 0, op #1 (elementwise_add): input slot Y: variable "
                "'fc_0.b_9' is not declared in this block or its ancestors")


def test_variable_of_an_ancestor_block_and_empty_placeholder_are_fine():
    desc = fc_program()
    sub = desc.blocks.add(idx=1, parent_idx=0)
    add_var(sub, "inner", [-1, 3])
    add_op(sub, "relu", {"X": ["out"]}, {"Out": ["inner"]})
    add_op(desc.blocks[0], "sum", {"X": ["out", EMPTY_VAR]}, {"Out": ["fc_0.tmp_1"]})
    assert find_problems(desc) == []
    add_op(sub, "relu", {"X": ["undeclared_here"]}, {"Out": ["inner"]})
    one_problem(desc, exactly="block 1, op #1 (relu): input slot X: variable 'undeclared_here' "
                "is not declared in this block or its ancestors")


def test_unknown_op_type_suggests_close_names():
    desc = fc_program()
    desc.blocks[0].ops[2].type = "reluu"
    one_problem(desc, "block 0, op #2 (reluu)", "unknown op type 'reluu'", "relu")


def test_attr_of_the_wrong_type():
    desc = fc_program()
    axis = desc.blocks[0].ops[1].attrs[0]
    axis.type, axis.f = AttrType.FLOAT, 1.0
    one_problem(desc, exactly="block 0, op #1 (elementwise_add): attribute 'axis' has type "
                "FLOAT, expected INT")


def test_unknown_and_repeated_attrs():
    desc = fc_program()
    op = desc.blocks[0].ops[3]
    op.attrs.add(name="scal", type=AttrType.FLOAT, f=1.0)
    bias = next(a for a in op.attrs if a.name == "bias")
    op.attrs.add(name="bias", type=AttrType.FLOAT, f=bias.f + 1.0)
    problems = problems_of(desc)
    assert len(problems) == 2
    # the list of scale's attributes follows the registry; its start and the two closest
    # names are what the user needs
    assert problems[0].startswith("block 0, op #3 (scale): unknown attribute 'scal'; scale "
                                  "takes ['bias', "), problems[0]
    assert "'scale'" in problems[0]
    assert problems[1] == ("block 0, op #3 (scale): attribute 'bias' appears twice with "
                           "different values")


def test_an_attribute_repeated_with_one_value_is_accepted_as_paddle_writes_it():
    # Paddle 3.3.1 writes mkldnn_data_type and use_quantizer twice on reshape2.
    desc = fc_program()
    op = desc.blocks[0].ops[3]
    op.attrs.add().CopyFrom(next(a for a in op.attrs if a.name == "bias"))
    assert find_problems(desc) == []
    validate_program(desc)


def test_required_attr_and_holder_types():
    desc = netron_minimal_program()
    feed = desc.blocks[0].ops[0]
    feed.ClearField("attrs")
    desc.blocks[0].vars[1].type.type = pb.VarType.FEED_MINIBATCH  # 'fetch' typed wrongly
    problems_of(desc, [
        "block 0, op #0 (feed): required attribute 'col' (INT) is missing",
        "block 0, op #3 (fetch): Out 'fetch' has type FEED_MINIBATCH, expected FETCH_LIST "
        "(the holder var)"])


def test_slot_rules():
    desc = fc_program()
    block = desc.blocks[0]
    block.ops[0].inputs.add(parameter="Z", arguments=["x"])
    block.ops[2].inputs[0].arguments.append("x")
    block.ops[3].ClearField("inputs")
    problems_of(desc, [
        "block 0, op #0 (mul): unknown input slot 'Z'; mul has ['X', 'Y']",
        "block 0, op #2 (relu): input slot X takes one variable, got ['fc_0.tmp_1', 'x']",
        "block 0, op #3 (scale): input slot X is empty; it is not dispensable"])


def test_duplicate_and_untyped_vars():
    desc = fc_program()
    add_var(desc.blocks[0], "x", [2])
    untyped = desc.blocks[0].vars.add(name="bare")
    untyped.type.type = pb.VarType.DENSE_TENSOR
    problems_of(desc, [
        "block 0: variable 'x' is declared twice",
        "block 0: variable 'bare' is DENSE_TENSOR but has no dense_tensor.tensor (data_type, "
        "dims)"])


@pytest.fixture
def block_op(monkeypatch):
    """A throwaway op with BLOCK and BLOCKS attributes (the real registry is restored)."""
    monkeypatch.setattr(registry, "_OPS", dict(registry._OPS))
    registry.register("test_block_op", inputs=[Slot("X", duplicable=True, dispensable=True)],
                      outputs=[], attrs=[Attr("sub_block", AttrType.BLOCK),
                                         Attr("more", AttrType.BLOCKS, [])])
    return "test_block_op"


def test_block_attrs_must_name_other_existing_blocks(block_op):
    desc = fc_program()
    desc.blocks.add(idx=1, parent_idx=0)
    add_op(desc.blocks[0], block_op, {"X": ["x"]}, {}, sub_block=1, more=[1])
    assert find_problems(desc) == []
    add_op(desc.blocks[0], block_op, {}, {}, sub_block=4, more=[1, 0])
    problems_of(desc, [
        "block 0, op #5 (test_block_op): attribute 'sub_block' names block 4, which does not "
        "exist (the program has 2)",
        "block 0, op #5 (test_block_op): attribute 'more' names the op's own block 0"])


def test_every_problem_is_listed_at_once():
    desc = fc_program()
    block = desc.blocks[0]
    block.ops[0].type = "mull"
    block.ops[1].inputs[0].arguments[0] = "nowhere"
    block.ops[3].attrs[0].type = AttrType.STRING
    add_holder(block, "feed", pb.VarType.FEED_MINIBATCH)
    block.parent_idx = 3
    error = pytest.raises(ValidationError, validate_program, desc).value
    message = str(error)
    assert message.startswith("the program has 4 problems:")
    problems = problems_of(desc)
    assert problems[0] == "block 0: parent_idx is 3, expected -1 (the root block)"
    assert problems[1].startswith("block 0, op #0 (mull): unknown op type 'mull'; did you mean "
                                  "mul"), problems[1]
    assert problems[2:] == [
        "block 0, op #1 (elementwise_add): input slot X: variable 'nowhere' is not declared in "
        "this block or its ancestors",
        "block 0, op #3 (scale): attribute 'scale' has type STRING, expected FLOAT"]


def test_an_attribute_value_its_checker_refuses_is_a_problem_as_in_append_op():
    # a file may carry what the designer refuses (dropout_prob 1.5): it is reported on
    # load, not left for the kernel to run with
    desc = fc_training_program()
    ops = desc.blocks[0].ops
    at = next(i for i, o in enumerate(ops) if o.type == "dropout")
    assert find_problems(desc) == []
    next(a for a in ops[at].attrs if a.name == "dropout_prob").f = 1.5
    one_problem(desc, exactly=f"block 0, op #{at} (dropout): attribute 'dropout_prob'=1.5 "
                "must be in [0.0, 1.0]")
