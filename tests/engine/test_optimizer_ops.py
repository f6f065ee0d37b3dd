"""Optimizer ops over several steps, run by the executor, against hand-written numpy loops.

The program minimises the quadratic L = sum(c * (p - t)^2) whose gradient 2c(p - t) is
computed in the program (elementwise_sub, elementwise_mul); the optimizer op writes
ParamOut (and its state outputs) to the same variables, and the executor keeps them in
the scope from one run to the next, as in training.
"""
import numpy as np
import pytest

from fluidscope.engine import Executor, Scope, registry
from fluidscope.engine.ir.dtypes import to_var_type
from fluidscope.engine.autodiff.gradcheck import build_single_op, run_op
from fluidscope.engine.ir.descs import add_op, add_var
from fluidscope.engine.ir.proto import framework_pb2 as pb
from op_matrix import cases_optimizer
from op_matrix.cases_optimizer import F32, adam_reference

rng = np.random.default_rng(21)
SHAPE = (3, 5)
P0 = rng.standard_normal(SHAPE)
TARGET = rng.standard_normal(SHAPE)
TWICE_C = rng.uniform(0.5, 3.0, SHAPE)  # 2c: the Hessian's diagonal
STEPS = 5


def _declare(block, name, dtype, shape, persistable=False):
    return add_var(block, name, shape, dtype, persistable=persistable)


def _op(block, op_type, inputs, outputs, attrs=None):
    return add_op(block, op_type, inputs, outputs, attrs)


def _training_program(opt_type, state, attrs, dtype):
    """p -> grad 2c(p - t) -> ``opt_type`` updating p and the ``state`` vars in place."""
    desc = pb.ProgramDesc()
    block = desc.blocks.add(idx=0, parent_idx=-1)
    for name in ("t", "twice_c", "diff", "grad"):
        _declare(block, name, dtype, SHAPE)
    _declare(block, "p", dtype, SHAPE, persistable=True)
    for name, value in state.items():
        _declare(block, name, dtype, value.shape, persistable=True)
    _op(block, "elementwise_sub", {"X": ["p"], "Y": ["t"]}, {"Out": ["diff"]})
    _op(block, "elementwise_mul", {"X": ["diff"], "Y": ["twice_c"]}, {"Out": ["grad"]})
    ins = {"Param": ["p"], "Grad": ["grad"]}
    ins.update({slot: [slot.lower()] for slot in _state_slots(opt_type)})
    outs = {"ParamOut": ["p"]}
    outs.update({slot + "Out": [slot.lower()] for slot in _state_slots(opt_type)
                 if slot != "LearningRate"})
    _op(block, opt_type, ins, outs, attrs)
    return desc


def _state_slots(opt_type):
    return {"sgd": ["LearningRate"], "momentum": ["LearningRate", "Velocity"],
            "adam": ["LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"]}[opt_type]


def _train(opt_type, state, attrs, dtype=np.float64):
    desc = _training_program(opt_type, state, attrs, dtype)
    scope = Scope()
    for name, value in dict(state, p=P0).items():
        scope.var(name).get_tensor().set(np.asarray(value, dtype=dtype))
    exe = Executor()
    feed = {"t": TARGET.astype(dtype), "twice_c": TWICE_C.astype(dtype)}
    for _ in range(STEPS):
        exe.run(desc, feed=feed, fetch_list=[], scope=scope)
    return {name: np.asarray(scope.find_var(name).get_tensor()) for name in dict(state, p=0)}


def _gradient(p):
    return TWICE_C * (p - TARGET)


def test_sgd_matches_numpy_loop():
    lr = 0.05
    got = _train("sgd", {"learningrate": np.array([lr])}, {})
    p = P0.copy()
    for _ in range(STEPS):
        p = p - lr * _gradient(p)
    np.testing.assert_allclose(got["p"], p, rtol=1e-12, atol=1e-12)
    loss = lambda q: float((TWICE_C / 2 * (q - TARGET) ** 2).sum())  # noqa: E731
    assert loss(got["p"]) < loss(P0)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_numpy_loop(nesterov):
    lr, mu = 0.05, np.float32(0.9).item()  # mu travels as a float32 attribute
    state = {"learningrate": np.array([lr]), "velocity": np.zeros(SHAPE)}
    got = _train("momentum", state, {"mu": mu, "use_nesterov": nesterov})
    p, v = P0.copy(), np.zeros(SHAPE)
    for _ in range(STEPS):
        g = _gradient(p)
        v = mu * v + g
        p = p - lr * (g + mu * v) if nesterov else p - lr * v
    np.testing.assert_allclose(got["p"], p, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["velocity"], v, rtol=1e-12, atol=1e-12)


def _adam_state(lr=0.1):
    return {"learningrate": np.array([lr]), "moment1": np.zeros(SHAPE),
            "moment2": np.zeros(SHAPE), "beta1pow": np.array([F32[0]]),
            "beta2pow": np.array([F32[1]])}


def test_adam_matches_five_step_numpy_reference():
    got = _train("adam", _adam_state(), {})
    beta1, beta2, eps = F32
    p, m1, m2 = P0.copy(), np.zeros(SHAPE), np.zeros(SHAPE)
    for t in range(1, STEPS + 1):
        g = _gradient(p)
        m1 = beta1 * m1 + (1 - beta1) * g
        m2 = beta2 * m2 + (1 - beta2) * g * g
        lr_t = 0.1 * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        p = p - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - beta2 ** t))
    np.testing.assert_allclose(got["p"], p, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["moment1"], m1, rtol=1e-12)
    np.testing.assert_allclose(got["moment2"], m2, rtol=1e-12)
    np.testing.assert_allclose(got["beta1pow"], [beta1 ** (STEPS + 1)], rtol=1e-12)
    np.testing.assert_allclose(got["beta2pow"], [beta2 ** (STEPS + 1)], rtol=1e-12)


def test_adam_float32_stays_float32_and_close():
    got = _train("adam", _adam_state(), {}, dtype=np.float32)
    ref = _train("adam", _adam_state(), {})
    assert got["p"].dtype == np.float32 and got["moment2"].dtype == np.float32
    np.testing.assert_allclose(got["p"], ref["p"], rtol=1e-4, atol=1e-5)


def test_adam_epsilon_placement_is_paddles():
    # With a tiny gradient the epsilon term dominates the denominator, so the two
    # textbook placements differ by the factor sqrt(1 - beta2^t) and only one matches.
    g = np.full(SHAPE, 1e-9)
    outs = run_op("adam", {"Param": P0, "Grad": g, "LearningRate": np.array([0.1]),
                           "Moment1": np.zeros(SHAPE), "Moment2": np.zeros(SHAPE),
                           "Beta1Pow": np.array([F32[0]]), "Beta2Pow": np.array([F32[1]])})
    expected = adam_reference(P0, g, 0.1, 0, 0, F32[0], F32[1])[0]
    np.testing.assert_allclose(outs["ParamOut"], expected, rtol=1e-12)


@pytest.mark.parametrize("op_type", ["sgd", "momentum", "adam"])
def test_kernels_do_not_mutate_their_inputs(op_type):
    case = next(c for c in cases_optimizer.CASES if c.op == op_type)
    before = {k: v.copy() for k, v in case.inputs.items()}
    run_op(case.op, case.inputs, case.attrs)
    opdef = registry.get(op_type)
    opdef.kernel_for("cpu")(np, opdef.parse_attrs(case.attrs),
                            *[case.inputs.get(s.name) for s in opdef.inputs])
    for k, v in before.items():
        np.testing.assert_array_equal(case.inputs[k], v, err_msg=f"{op_type} changed {k}")


@pytest.mark.parametrize("case", cases_optimizer.CASES, ids=[c.id for c in cases_optimizer.CASES])
def test_inferred_shapes_match_produced_outputs(case):
    _, _, out_names, inferred = build_single_op(case.op, case.inputs, case.attrs)
    outs = run_op(case.op, case.inputs, case.attrs)
    for slot in out_names:
        metas = inferred.get(slot) or []
        if outs[slot] is None:  # an absent dispensable output is neither made nor inferred
            assert not metas, f"{case.id}: {slot} inferred but not produced"
            continue
        assert len(metas) == 1, f"{case.id}: {slot} produced but not inferred"
        assert metas[0].shape == np.shape(outs[slot]), f"{case.id}: {slot}"
        assert metas[0].dtype == to_var_type(outs[slot].dtype), f"{case.id}: {slot} dtype"


def test_shape_inference_rejects_mismatched_grad():
    from fluidscope.engine.errors import ShapeError
    metas = {"Param": [registry.VarMeta((3, 4))], "Grad": [registry.VarMeta((4, 3))],
             "LearningRate": [registry.VarMeta((1,))]}
    with pytest.raises(ShapeError, match="Grad"):
        registry.run_infer_shape(registry.get("sgd"), metas, registry.get("sgd").parse_attrs({}))
    metas["Grad"] = [registry.VarMeta((-1, 4))]
    out = registry.run_infer_shape(registry.get("sgd"), metas, registry.get("sgd").parse_attrs({}))
    assert out["ParamOut"][0].shape == (3, 4)
