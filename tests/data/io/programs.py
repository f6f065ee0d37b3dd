"""Small ProgramDescs built directly with engine ops, for the file and validation tests.

``fc_program()``: x[-1, 4] -> mul(fc_0.w_0[4, 3]) -> elementwise_add(fc_0.b_0[3], axis=1)
-> relu -> scale(2, 0.5) -> out; ``fc_training_program()`` adds dropout, a mean loss,
the generated backward and sgd updates. ``netron_minimal_program()`` is the file of
paddle_compat.md §4.3.
"""
import pathlib

import numpy as np

from fluidscope.engine import OpRole, append_backward_desc
from fluidscope.engine.ir import descs
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.runtime.scope import Scope

HERE = pathlib.Path(__file__).resolve().parent
FP32 = pb.VarType.FP32


def add_var(block, name, dims, dtype=FP32, persistable=False, is_parameter=False):
    return descs.add_var(block, name, dims, dtype, persistable=persistable,
                         is_parameter=is_parameter)


def add_holder(block, name, var_type):
    v = block.vars.add(name=name, persistable=True)
    v.type.type = var_type
    return v


add_op = descs.add_op


def fc_program():
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    add_var(b, "x", [-1, 4])
    add_var(b, "fc_0.w_0", [4, 3], persistable=True, is_parameter=True)
    add_var(b, "fc_0.b_0", [3], persistable=True, is_parameter=True)
    for name in ("fc_0.tmp_0", "fc_0.tmp_1", "relu_0.tmp_0", "out"):
        add_var(b, name, [-1, 3])
    add_op(b, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["fc_0.tmp_0"]},
           x_num_col_dims=1, y_num_col_dims=1)
    add_op(b, "elementwise_add", {"X": ["fc_0.tmp_0"], "Y": ["fc_0.b_0"]},
           {"Out": ["fc_0.tmp_1"]}, axis=1)
    add_op(b, "relu", {"X": ["fc_0.tmp_1"]}, {"Out": ["relu_0.tmp_0"]})
    add_op(b, "scale", {"X": ["relu_0.tmp_0"]}, {"Out": ["out"]},
           scale=2.0, bias=0.5, bias_after_scale=True)
    return desc


def fc_training_program():
    """fc -> dropout -> scale -> mean loss, with backward and sgd (op_role 1 and 2)."""
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    add_var(b, "x", [-1, 4])
    add_var(b, "fc_0.w_0", [4, 3], persistable=True, is_parameter=True)
    add_var(b, "fc_0.b_0", [3], persistable=True, is_parameter=True)
    add_var(b, "learning_rate_0", [1], persistable=True)
    for name in ("fc_0.tmp_0", "fc_0.tmp_1", "drop", "out"):
        add_var(b, name, [-1, 3])
    add_var(b, "mask", [-1, 3], dtype=pb.VarType.UINT8)
    add_var(b, "loss", [])
    add_op(b, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["fc_0.tmp_0"]})
    add_op(b, "elementwise_add", {"X": ["fc_0.tmp_0"], "Y": ["fc_0.b_0"]},
           {"Out": ["fc_0.tmp_1"]}, axis=1)
    add_op(b, "dropout", {"X": ["fc_0.tmp_1"]}, {"Out": ["drop"], "Mask": ["mask"]},
           dropout_prob=0.5, dropout_implementation="upscale_in_train")
    add_op(b, "scale", {"X": ["drop"]}, {"Out": ["out"]}, scale=2.0, bias=0.5)
    add_op(b, "mean", {"X": ["out"]}, {"Out": ["loss"]})
    pairs = append_backward_desc(desc, "loss")
    for param, grad in pairs:
        add_op(b, "sgd", {"Param": [param], "LearningRate": ["learning_rate_0"],
                          "Grad": [grad]}, {"ParamOut": [param]},
               op_role=OpRole.OPTIMIZE, op_role_var=[param, grad])
    return desc


def fc_scope(seed=0):
    """A scope holding values for fc_0.w_0 [4, 3] and fc_0.b_0 [3] (float32)."""
    rng = np.random.default_rng(seed)
    scope = Scope()
    scope.var("fc_0.w_0").get_tensor().set(rng.standard_normal((4, 3)).astype("float32"))
    scope.var("fc_0.b_0").get_tensor().set(rng.standard_normal(3).astype("float32"))
    scope.var("learning_rate_0").get_tensor().set(np.array([0.1], "float32"))
    return scope


def netron_minimal_program():
    """paddle_compat.md §4.3: feed -> mul -> elementwise_add -> fetch, version 2002000."""
    desc = pb.ProgramDesc()
    b = desc.blocks.add(idx=0, parent_idx=-1)
    add_holder(b, "feed", pb.VarType.FEED_MINIBATCH)
    add_holder(b, "fetch", pb.VarType.FETCH_LIST)
    add_var(b, "x", [-1, 4])
    add_var(b, "fc_0.w_0", [4, 3], persistable=True)
    add_var(b, "fc_0.b_0", [3], persistable=True)
    add_var(b, "t", [-1, 3])
    add_var(b, "y", [-1, 3])
    add_op(b, "feed", {"X": ["feed"]}, {"Out": ["x"]}, col=0)
    add_op(b, "mul", {"X": ["x"], "Y": ["fc_0.w_0"]}, {"Out": ["t"]})
    add_op(b, "elementwise_add", {"X": ["t"], "Y": ["fc_0.b_0"]}, {"Out": ["y"]}, axis=1)
    add_op(b, "fetch", {"X": ["y"]}, {"Out": ["fetch"]}, col=0)
    desc.version.version = 2002000
    return desc
