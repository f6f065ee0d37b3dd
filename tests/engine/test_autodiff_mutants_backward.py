"""The generated backward's bookkeeping where the usual programs never look (engine/autodiff,
issue #17: mutants of these lines survived the autodiff tests):

* a seeded gradient that grad ops also write is summed with what they write *before* the
  next grad op reads it (a recurrent step's memory state read twice);
* a maker that emits one grad op per input (``sum``) still makes the later inputs'
  gradients when an earlier input needs none, and an op whose outputs get no gradient
  does not end the walk back;
* a missing output gradient is zero-filled once, however many grad ops read it;
* check_program_grad fails with both values named, and an empty variable checks nothing.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import Executor, Scope
from fluidscope.engine.autodiff.backward import append_grad_ops
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.ir.names import seed_of

rng = np.random.default_rng(71)


def _op_types(block):
    return [op.type for op in block.ops]


def test_a_seeded_gradient_also_written_is_summed_before_it_is_read():
    desc, block = new_program()
    for name in ("x", "y", "z", "z@GRAD"):
        add_var(block, name, (3,), "float64")
    add_op(block, "scale", {"X": ["x"]}, {"Out": ["y"]}, {"scale": 2.0})
    add_op(block, "scale", {"X": ["y"]}, {"Out": ["z"]}, {"scale": 3.0})
    append_grad_ops(desc, 0, list(block.ops), {"z@GRAD", "y@GRAD"})
    ops = list(block.ops)[2:]
    summed = next(i for i, op in enumerate(ops) if op.type == "sum")
    reader = next(i for i, op in enumerate(ops)
                  if any("y@GRAD" in v.arguments for v in op.inputs) and op.type != "sum")
    assert summed < reader
    (parts,) = [list(v.arguments) for v in ops[summed].inputs]
    assert seed_of("y@GRAD") in parts and len(parts) == 2
    x, gy, gz = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    got, = Executor().run(desc, feed={"x": x, "z@GRAD": gz, seed_of("y@GRAD"): gy},
                          fetch_list=["x@GRAD"], scope=Scope())
    np.testing.assert_allclose(got, 2 * (gy + 3 * gz), rtol=1e-12)


def test_sum_gives_later_inputs_their_gradient_when_the_first_needs_none():
    desc, block = new_program()
    add_var(block, "a", (2, 2), "float64", stop_gradient=True)
    for name in ("b", "c", "out", "out@GRAD"):
        add_var(block, name, (2, 2), "float64")
    add_op(block, "sum", {"X": ["a", "b", "c"]}, {"Out": ["out"]})
    append_grad_ops(desc, 0, list(block.ops), {"out@GRAD"}, no_grad={"a"})
    written = {n for op in list(block.ops)[1:] for v in op.outputs for n in v.arguments}
    assert written == {"b@GRAD", "c@GRAD"}
    g = rng.standard_normal((2, 2))
    feed = {n: rng.standard_normal((2, 2)) for n in "abc"}
    gb, gc_ = Executor().run(desc, feed={**feed, "out@GRAD": g},
                             fetch_list=["b@GRAD", "c@GRAD"], scope=Scope())
    np.testing.assert_array_equal(gb, g)
    np.testing.assert_array_equal(gc_, g)


def test_an_op_off_the_gradient_path_does_not_end_the_walk_back():
    # p = 2w, then a = 3x (x takes no gradient), s = a * p: walking back, a's op gets no
    # output gradient, and w's op before it must still get its turn
    desc, block = new_program()
    add_var(block, "x", (3,), "float64", stop_gradient=True)
    for name in ("w", "p", "a", "s", "s@GRAD"):
        add_var(block, name, (3,), "float64")
    add_op(block, "scale", {"X": ["w"]}, {"Out": ["p"]}, {"scale": 2.0})
    add_op(block, "scale", {"X": ["x"]}, {"Out": ["a"]}, {"scale": 3.0})
    add_op(block, "elementwise_mul", {"X": ["a"], "Y": ["p"]}, {"Out": ["s"]})
    append_grad_ops(desc, 0, list(block.ops), {"s@GRAD"}, no_grad={"x"})
    x, w, g = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    gw, = Executor().run(desc, feed={"x": x, "w": w, "s@GRAD": g}, fetch_list=["w@GRAD"],
                         scope=Scope())
    np.testing.assert_allclose(gw, 2 * 3 * x * g, rtol=1e-12)


def test_a_missing_output_gradient_read_by_two_grad_ops_is_zero_filled_once():
    # two splits write the same unused second half ``b`` (an in-place rewrite): both
    # grad ops read b@GRAD, which no one produced
    desc, block = new_program()
    for name in ("x", "y"):
        add_var(block, name, (4,), "float64")
    for name in ("a", "a2", "b", "s", "s@GRAD"):
        add_var(block, name, (2,), "float64")
    add_op(block, "split", {"X": ["x"]}, {"Out": ["a", "b"]}, {"num": 2, "axis": 0})
    add_op(block, "split", {"X": ["y"]}, {"Out": ["a2", "b"]}, {"num": 2, "axis": 0})
    add_op(block, "sum", {"X": ["a", "a2"]}, {"Out": ["s"]})
    append_grad_ops(desc, 0, list(block.ops), {"s@GRAD"})
    grad_types = _op_types(block)[3:]
    assert grad_types.count("fill_zeros_like") == 1
    assert "sum" not in grad_types  # b@GRAD has one writer: nothing to add up
    g = rng.standard_normal(2)
    gx, gy = Executor().run(desc, feed={"x": rng.standard_normal(4),
                                        "y": rng.standard_normal(4), "s@GRAD": g},
                            fetch_list=["x@GRAD", "y@GRAD"], scope=Scope())
    np.testing.assert_array_equal(gx, np.concatenate([g, np.zeros(2)]))
    np.testing.assert_array_equal(gy, np.concatenate([g, np.zeros(2)]))


def _square_sum(rows):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3], "float64")
        x.stop_gradient = False
        loss = fd.reduce_sum(fd.elementwise_mul(x, x))
    return main, loss, {"x": rng.uniform(0.5, 1.5, (rows, 3))}


def test_check_program_grad_fails_naming_the_element_and_both_gradients():
    main, loss, feed = _square_sum(2)
    worst = check_program_grad(main.desc, loss.name, feed, ["x"], Scope(), rtol=1e-6)
    assert 0 < worst < 1e-6
    with pytest.raises(AssertionError) as err:
        check_program_grad(main.desc, loss.name, feed, ["x"], Scope(), rtol=worst / 2)
    message = str(err.value)
    assert message.startswith("gradient of x at (")
    assert "analytic " in message and ", numeric " in message and f"> {worst / 2})" in message


def test_check_program_grad_of_an_empty_variable_checks_nothing():
    main, loss, feed = _square_sum(0)
    assert check_program_grad(main.desc, loss.name, feed, ["x"], Scope()) == 0.0


def test_a_control_flow_grad_op_keeps_the_forward_ops_namescope():
    # recurrent's maker takes a GradContext (no memo): its grad op is built apart, and
    # must still carry the common attributes that place it in its layer
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        x.stop_gradient = False
        with fd.name_scope("encoder"):
            def step(x_t):
                h_pre = fd.memory("h", size=2)
                return fd.tanh(fd.elementwise_add(x_t, h_pre), name="h")
            out = fd.recurrent_group(step, x)
        loss = fd.reduce_sum(out)
    fd.append_backward(loss)
    scopes = {op.type: [a.s for a in op.attrs if a.name == "op_namescope"]
              for op in main.desc.blocks[0].ops}
    assert scopes["recurrent"] == ["/encoder/recurrent_group_0/"]
    assert scopes["recurrent_grad"] == scopes["recurrent"]
