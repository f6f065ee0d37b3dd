"""Generated backward: grad names, fan-in sums, zero-filled missing grads, roles."""
import re

import numpy as np

import fluidscope.designer as fd
from fluidscope.engine import Executor, Scope, registry
from fluidscope.engine.ir.roles import OpRole


def _build(body):
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        loss = body()
    return main, startup, loss


def _ops(program):
    return [op.type for op in program.global_block().ops]


def _grad_of(main, startup, loss, feed, names):
    scope = Scope()
    exe = Executor()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=names, scope=scope)


def test_fan_in_is_summed_under_renamed_gradients():
    def body():
        x = fd.data("x", [None, 3])
        x.stop_gradient = False
        sq = x * x                      # x read twice by one op
        return fd.mean(fd.elementwise_add(sq, x))   # ... and once more
    main, startup, loss = _build(body)
    fd.append_backward(loss)
    ops = main.global_block().ops
    sums = [op for op in ops if op.type == "sum"]
    assert len(sums) == 1 and sums[0].output("Out") == ["x@GRAD"]
    assert all("@GRAD@RENAME@block0@" in n for n in sums[0].input("X"))
    assert len(sums[0].input("X")) == 3
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    g, = _grad_of(main, startup, loss, {"x": x}, ["x@GRAD"])
    np.testing.assert_allclose(g, (2 * x + 1) / 3, rtol=1e-6)


def test_missing_output_gradient_is_zero_filled():
    def body():
        x = fd.data("x", [None, 4])
        x.stop_gradient = False
        first, second = fd.split(x, 2, dim=1)   # only `first` reaches the loss
        return fd.mean(first)
    main, startup, loss = _build(body)
    fd.append_backward(loss)
    zero_ops = [op for op in main.global_block().ops if op.type == "fill_zeros_like"]
    assert len(zero_ops) == 1 and zero_ops[0].output("Out")[0].endswith("@GRAD")
    g, = _grad_of(main, startup, loss, {"x": np.ones((2, 4), np.float32)}, ["x@GRAD"])
    np.testing.assert_allclose(g, [[0.25, 0.25, 0, 0]] * 2)


def test_roles_seed_and_op_role_var():
    def body():
        x = fd.data("x", [None, 2])
        return fd.mean(fd.fc(x, 3, act="relu"))
    main, _, loss = _build(body)
    pairs = fd.append_backward(loss)
    assert [p.name for p, _ in pairs] == ["fc_0.w_0", "fc_0.b_0"]
    ops = main.global_block().ops
    seed = next(op for op in ops if op.type == "fill_constant")
    assert seed.attr("op_role") == OpRole.BACKWARD | OpRole.LOSS
    assert seed.attr("value") == 1.0 and seed.attr("shape") == []
    assert next(op for op in ops if op.type == "mean").attr("op_role") == OpRole.LOSS
    mul_grad = next(op for op in ops if op.type == "mul_grad")
    assert mul_grad.attr("op_role") == OpRole.BACKWARD
    assert mul_grad.attr("op_role_var") == ["fc_0.w_0", "fc_0.w_0@GRAD"]
    # the data input is stop_gradient: no X@GRAD is computed for it
    assert mul_grad.output("X@GRAD") == []


def test_grad_ops_carry_the_forward_attrs():
    def body():
        x = fd.data("x", [None, 2, 3])
        h = fd.fc(x, 4, num_flatten_dims=2)
        return fd.mean(h)
    main, _, loss = _build(body)
    fd.append_backward(loss)
    mul = next(op for op in main.global_block().ops if op.type == "mul")
    mul_grad = next(op for op in main.global_block().ops if op.type == "mul_grad")
    for name in ("x_num_col_dims", "y_num_col_dims", "op_namescope"):
        assert mul_grad.attr(name) == mul.attr(name)
    assert mul_grad.attr("x_num_col_dims") == 2


def test_no_grad_set_and_parameter_list():
    def body():
        x = fd.data("x", [None, 2])
        h = fd.fc(x, 3)
        return fd.mean(fd.fc(h, 1))
    main, _, loss = _build(body)
    pairs = fd.append_backward(loss, parameter_list=["fc_1.w_0"], no_grad_set={"fc_0.tmp_1"})
    assert [p.name for p, _ in pairs] == ["fc_1.w_0"]
    produced = {n for op in main.global_block().ops for n in op.output_arg_names}
    assert "fc_0.w_0@GRAD" not in produced and "fc_0.tmp_1@GRAD" not in produced


def test_every_grad_var_is_declared_like_its_forward_var():
    def body():
        x = fd.data("x", [None, 5])
        return fd.mean(fd.fc(fd.fc(x, 4, act="tanh"), 2, act="sigmoid"))
    main, _, loss = _build(body)
    fd.append_backward(loss)
    block = main.global_block()
    for op in block.ops:
        for name in op.output_arg_names:
            if name.endswith("@GRAD"):
                fwd = block.var(name[:-len("@GRAD")])
                assert block.var(name).shape == fwd.shape and not block.var(name).persistable


def test_backward_knows_no_op_by_name():
    import inspect
    from fluidscope.engine.autodiff import backward
    source = inspect.getsource(backward)
    forward_types = [t for t in registry.forward_ops() if t not in ("sum", "fill_zeros_like", "fill_constant")]
    # A quoted op name that is not a dict key ("shape": dims is fill_constant's attribute).
    assert not [t for t in forward_types if re.search(f'"{t}"(?!\\s*:)', source)]
