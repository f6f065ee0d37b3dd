"""A malformed recurrent op (engine/recurrent/common.py, op.py, grad.py) is refused with
an error naming the op and what is wrong: memories that do not pair up, no in-link, boot
layers that do not match the memories, a sequence op inside a step, a state the step block
does not have, a step that reads an undeclared outer variable, a grad block reading what
the forward step does not hold, and an in-link of LoD level 0 at shape inference. Each
case is a program the designer built, edited as a hand-written or loaded one could be."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError, ShapeError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.descs import add_op, add_var, set_attr
from fluidscope.engine.ir.proto import framework_pb2 as pb

LOD = [0, 3, 4, 8]


def _program(backward=False):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        h0 = fd.data("h0", [None, 2], "float64")
        x.stop_gradient = False

        def step(x_t):
            return fd.fc([x_t, fd.memory("h", size=2, boot_layer=h0)], size=2, act="tanh",
                         name="h", param_attr=[fd.ParamAttr("w0"), fd.ParamAttr("w1")],
                         bias_attr=False)
        out = fd.recurrent_group(step, x)
        if backward:
            fd.append_backward(fd.reduce_sum(out))
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    op = next(o for o in main.desc.blocks[0].ops if o.type == "recurrent")
    return main, scope, op, out


def _run(main, scope, out):
    feed = {"x": fd.LoDTensor(np.ones((8, 2)), [LOD]), "h0": np.ones((3, 2))}
    fd.Executor().run(main.desc, feed=feed, fetch_list=[out.name], scope=scope)


def _slot(op, name):
    return next(v for v in op.inputs if v.parameter == name)


def _refused(main, scope, out, pattern):
    with pytest.raises(FluidscopeError, match=pattern):
        _run(main, scope, out)


def test_memories_that_do_not_pair_up():
    main, scope, op, out = _program()
    set_attr(op, "ex_states", registry.AttrType.STRINGS, ["h@PRE_0", "h@PRE_0"])
    _refused(main, scope, out, r"op #0 recurrent: ex_states \['h@PRE_0', 'h@PRE_0'\] and "
                               r"states \['h\.tmp_\d+'\] must pair up")


def test_no_in_link():
    main, scope, op, out = _program()
    del _slot(op, "inputs").arguments[:]
    _refused(main, scope, out, r"op #0 recurrent: needs at least one sequence in 'inputs'")


def test_boot_layers_that_do_not_match_the_memories():
    main, scope, op, out = _program()
    _slot(op, "initial_states").arguments.append("h0")
    _refused(main, scope, out, r"op #0 recurrent: 2 initial_states for 1 memories")


def test_a_sequence_op_inside_the_step_block():
    main, scope, op, out = _program()
    step = main.desc.blocks[1]
    add_var(step, "pooled", [-1, 2], "float64")
    add_op(step, "sequence_pool", {"X": ["x"]}, {"Out": ["pooled"]}, {"pooltype": "SUM"})
    _refused(main, scope, out, r"op #0 recurrent: its step block runs sequence_pool \(op #\d+\), "
                               r"which needs sequences; inside a step each input is one time "
                               r"step \(nested sub-sequence groups are not supported\)")


def test_a_state_the_step_block_does_not_have():
    main, scope, op, out = _program()
    set_attr(op, "states", registry.AttrType.STRINGS, ["nope"])
    _refused(main, scope, out, r"op #0 recurrent: state 'nope' is not a variable of the step "
                               r"block 1")


def test_a_step_reading_an_outer_variable_not_in_its_parameters():
    main, scope, op, out = _program()
    params = _slot(op, "parameters")
    params.arguments[:] = [p for p in params.arguments if p != "w1"]
    _refused(main, scope, out, r"op #0 recurrent: its step block reads 'w1', which is neither an "
                               r"input, a memory nor listed in its parameters")


def _grad_block(main):
    """The block the program's recurrent_grad op runs."""
    grad_op = next(o for o in main.desc.blocks[0].ops if o.type == "recurrent_grad")
    return main.desc.blocks[next(a.block_idx for a in grad_op.attrs if a.name == "sub_block")]


def test_a_grad_block_reading_what_the_forward_step_does_not_hold():
    main, scope, op, out = _program(backward=True)
    grad_block = _grad_block(main)
    add_var(grad_block, "stray", [-1, 2], "float64")
    add_var(grad_block, "stray_out", [-1, 2], "float64")
    add_op(grad_block, "scale", {"X": ["stray"]}, {"Out": ["stray_out"]}, {"scale": 2.0})
    _refused(main, scope, out, r"op #\d+ recurrent_grad: its grad block reads 'stray', which "
                               r"the forward step block does not hold")


def test_a_recurrent_grad_whose_block_names_no_forward_block():
    main, scope, op, out = _program(backward=True)
    grad_block = _grad_block(main)
    grad_block.forward_block_idx = -1
    _refused(main, scope, out, rf"op #\d+ recurrent_grad: its sub_block {grad_block.idx} names "
                               r"no forward block")


def test_an_in_link_of_lod_level_0_is_refused_at_shape_inference():
    opdef = registry.get("recurrent")
    flat = registry.VarMeta((-1, 2), pb.VarType.FP64, lod_level=0)
    with pytest.raises(ShapeError, match=r"op recurrent: slot inputs: input has LoD level 0 "
                                         r"\(shape \[-1, 2\]\); a recurrent group runs over "
                                         r"sequences: declare it with lod_level=1"):
        registry.run_infer_shape(opdef, {"inputs": [flat]}, {})
    sequences = registry.VarMeta((-1, 2), pb.VarType.FP64, lod_level=1)
    registry.run_infer_shape(opdef, {"inputs": [sequences]}, {})  # accepted
    registry.run_infer_shape(opdef, {}, {})  # nothing to check yet


def test_the_grad_op_mirrors_the_forward_slots_and_a_memory_without_boot_gets_no_gradient():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        h0 = fd.data("h0", [None, 2], "float64")
        h0.stop_gradient = False

        def step(x_t):
            a = fd.elementwise_add(x_t, fd.memory("a", size=2), name="a")  # zeros at first
            b = fd.tanh(fd.elementwise_add(a, fd.memory("b", size=2, boot_layer=h0)), name="b")
            return b
        fd.append_backward(fd.reduce_sum(fd.recurrent_group(step, x)))
    ops = main.global_block().ops
    fwd = next(o for o in ops if o.type == "recurrent")
    grad = next(o for o in ops if o.type == "recurrent_grad")
    assert fwd.input("initial_states") == ["@EMPTY@", "h0"]
    for slot in ("inputs", "initial_states", "parameters"):
        assert grad.input(slot) == fwd.input(slot), slot
    assert grad.output("initial_states@GRAD") == ["@EMPTY@", "h0@GRAD"]
    feed = {"x": fd.LoDTensor(np.linspace(-1, 1, 16).reshape(8, 2), [LOD]),
            "h0": np.linspace(0.5, -0.5, 6).reshape(3, 2)}
    dh0, = fd.Executor().run(main, feed=feed, fetch_list=["h0@GRAD"], scope=fd.Scope())
    # b_t = tanh(a_t + b_{t-1}): h0 reaches every step through b; differences of the loop
    def loss(h):
        total = 0.0
        for i, (s, e) in enumerate(zip(LOD, LOD[1:])):
            a, b = np.zeros(2), h[i]
            for r in range(s, e):
                a = feed["x"].numpy()[r] + a
                b = np.tanh(a + b)
                total += b.sum()
        return total
    h, numeric = feed["h0"], np.zeros((3, 2))
    for idx in np.ndindex(3, 2):
        for sign in (1, -1):
            probe = h.copy()
            probe[idx] += sign * 1e-6
            numeric[idx] += sign * loss(probe) / 2e-6
    np.testing.assert_allclose(dh0, numeric, rtol=1e-7, atol=1e-9)


def test_an_op_without_initial_states_boots_its_memories_with_zeros():
    main, scope, op, out = _program()
    ref_prog, ref_scope, ref_op, _ = _program()
    for o in (op, ref_op):
        del _slot(o, "initial_states").arguments[:]  # initial_states is dispensable
    # the reference boots with zeros explicitly: an h0 of zeros through the boot slot
    _slot(ref_op, "initial_states").arguments.append("h0")
    feed = {"x": fd.LoDTensor(np.linspace(-1, 1, 16).reshape(8, 2), [LOD]),
            "h0": np.zeros((3, 2))}
    got, = fd.Executor().run(main.desc, feed=feed, fetch_list=[out.name], scope=scope)
    for name in ("w0", "w1"):
        ref_scope.find_var(name).get_tensor().set(np.array(scope.find_var(name).get_tensor()))
    ref, = fd.Executor().run(ref_prog.desc, feed=feed, fetch_list=[out.name], scope=ref_scope)
    np.testing.assert_array_equal(got, ref)


def test_an_out_link_a_frame_did_not_compute_is_an_error_naming_it():
    from fluidscope.engine.runtime.frames import run_frame_ops
    main, scope, op, out = _program()
    exe = fd.Executor()
    plan = exe.prepare(main.desc)
    step = next(s for s in plan.steps if s.type == "recurrent")
    vals, lods = [None] * len(plan.names), [None] * len(plan.names)
    feed = {"x": np.ones((8, 2)), "h0": np.ones((3, 2))}
    for name, value in feed.items():
        vals[plan.slot[name]] = value
    lods[plan.slot["x"]] = [LOD]
    for name in ("w0", "w1"):
        vals[plan.slot[name]] = np.array(scope.find_var(name).get_tensor())
    frames = step.control.unroll(vals, lods)
    for t in frames.frame_order:
        fvals = frames.begin_frame(t)
        if t != 3:  # the last frame's ops never ran (a driver that stopped short)
            run_frame_ops(frames, t, fvals)
        frames.end_frame(t, fvals)
    with pytest.raises(FluidscopeError, match=r"op #0 recurrent: output 'h\.tmp_\d+' was not "
                                              "computed in every frame"):
        frames.finish()


def test_an_out_link_the_step_block_does_not_compute():
    main, scope, op, out = _program()
    outputs = next(v for v in op.outputs if v.parameter == "outputs")
    outputs.arguments.append("nowhere")
    _refused(main, scope, out, r"op #0 recurrent: outputs \['nowhere'\] are not computed by its "
                               r"step block")
