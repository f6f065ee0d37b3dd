"""engine.ir: op roles, gradient names, variable lookup across blocks, the desc builders.

Each rule is decided in one place; these tests pin what the rule is, and that the
readers (pruning, clone(for_test), backward) follow it.
"""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import OpRole
from fluidscope.engine.ir import descs, lookup, names, roles
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType
from fluidscope.engine.prune import prune_for_inference


# ----------------------------------------------------------------------- roles
def test_op_role_bits_are_paddles():
    assert [int(r) for r in (OpRole.FORWARD, OpRole.BACKWARD, OpRole.OPTIMIZE, OpRole.RPC,
                             OpRole.DIST, OpRole.LR_SCHED, OpRole.LOSS,
                             OpRole.NOT_SPECIFIED)] == [0, 1, 2, 4, 8, 16, 256, 4096]


@pytest.mark.parametrize("role, phase, kind", [
    (0, "forward", "forward"), (256, "forward", "loss"), (1, "backward", "backward"),
    (257, "backward", "loss_grad"), (2, "optimize", "optimize"),
    (16, "optimize", "optimize"),  # LRSched runs with the optimizer
    (4096, "forward", "forward"),
])
def test_phase_and_kind_of_each_role(role, phase, kind):
    assert roles.phase_of_role(role) == phase
    assert roles.role_kind(role) == kind
    assert roles.is_training_role(role) == (phase != "forward")


def test_role_of_reads_the_attribute_and_defaults_to_forward():
    op = pb.OpDesc(type="scale")
    assert roles.role_of(op) == 0 and roles.phase_of(op) == "forward"
    descs.set_attr(op, roles.ROLE_ATTR, AttrType.INT, int(OpRole.LR_SCHED))
    assert roles.role_of(op) == 16 and roles.phase_of(op) == "optimize"


def _program_with_lr_schedule():
    """x -> scale -> y (forward), plus a scale op marked LRSched writing the LR."""
    desc, block = descs.new_program()
    descs.add_var(block, "x", [-1, 3], need_check_feed=True)
    descs.add_var(block, "y", [-1, 3])
    descs.add_var(block, "lr", [1], persistable=True)
    descs.add_var(block, "lr_scaled", [1], persistable=True)
    descs.add_op(block, "scale", {"X": ["x"]}, {"Out": ["y"]}, scale=2.0)
    descs.add_op(block, "scale", {"X": ["lr"]}, {"Out": ["lr_scaled"]}, scale=0.5,
                 op_role=int(OpRole.LR_SCHED))
    return desc


def test_pruning_for_inference_drops_lr_schedule_ops():
    pruned = prune_for_inference(_program_with_lr_schedule(), ["x"], ["y"])
    kept = [op for op in pruned.blocks[0].ops if op.type == "scale"]
    assert len(kept) == 1 and list(kept[0].outputs[0].arguments) == ["y"]


def test_clone_for_test_drops_lr_schedule_ops_like_optimize_ops():
    test_program = fd.Program.from_desc(_program_with_lr_schedule()).clone(for_test=True)
    assert [roles.phase_of(op) for op in test_program.desc.blocks[0].ops] == ["forward"]


# ----------------------------------------------------------------------- names
def test_gradient_names():
    assert names.grad_name("x") == "x@GRAD"
    assert names.rename_of("x@GRAD", 0, 1) == "x@GRAD@RENAME@block0@1"
    assert names.forward_name("x@GRAD@RENAME@block0@1") == "x"
    assert names.forward_name("x") is None
    assert names.unseeded(names.seed_of("x@GRAD")) == "x@GRAD"
    assert names.unseeded("x@GRAD") == "x@GRAD"
    assert names.is_grad_name("h@GRAD@SEED") and not names.is_grad_name("h")
    assert names.grad_op_type("mul") == "mul_grad"


# ---------------------------------------------------------------------- lookup
def _three_blocks():
    """Block 0 declares a, b; block 1 (a step block, parent 0) declares b, c; block 2 (the
    grad block of 1, parent 0) declares d."""
    desc, root = descs.new_program()
    for n in ("a", "b"):
        descs.add_var(root, n, [1])
    step = descs.add_block(desc, 0)
    for n in ("b", "c"):
        descs.add_var(step, n, [2])
    grad = descs.add_block(desc, 0, forward_block_idx=1)
    descs.add_var(grad, "d", [3])
    return desc


def test_lookup_searches_the_block_its_forward_block_then_parents():
    desc = _three_blocks()
    assert lookup.owner_block(desc, 2, "d") == 2
    assert lookup.owner_block(desc, 2, "c") == 1   # the forward step's var
    assert lookup.owner_block(desc, 2, "b") == 1   # the nearest declaration wins
    assert lookup.owner_block(desc, 1, "a") == 0
    assert lookup.owner_block(desc, 0, "c") is None  # a parent never sees its children
    assert list(lookup.find_var_recursive(desc, 2, "b").type.dense_tensor.tensor.dims) == [2]
    assert sorted(lookup.visible_vars(desc, 2)) == ["a", "b", "c", "d"]


def test_lookup_survives_cyclic_block_links():
    desc = _three_blocks()
    desc.blocks[1].forward_block_idx = 2  # 1 -> 2 -> 1: broken, validate reports it
    assert lookup.find_var_recursive(desc, 1, "nowhere") is None


def test_designer_finds_variables_as_the_engine_does():
    program = fd.Program.from_desc(_three_blocks())
    assert program.block(2)._find_var_recursive("c").block.idx == 1


# ----------------------------------------------------------------------- descs
def test_make_op_types_attributes_from_the_registry():
    op = descs.make_op("scale", {"X": ["x"]}, {"Out": ["y"]}, {"scale": 2.0, "bias_after_scale": True})
    types = {a.name: a.type for a in op.attrs}
    assert types == {"scale": AttrType.FLOAT, "bias_after_scale": AttrType.BOOLEAN}
    descs.set_attr(op, "scale", AttrType.FLOAT, 3.0)
    assert [a.f for a in op.attrs if a.name == "scale"] == [3.0]
    descs.remove_attr(op, "scale")
    assert "scale" not in {a.name for a in op.attrs}
