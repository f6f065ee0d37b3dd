"""Runs the declarative op matrix (tests/op_matrix) and the meta-test over the registry."""
import numpy as np
import pytest

from fluidscope.engine import registry
from fluidscope.engine.executor import Executor
from fluidscope.engine.autodiff.gradcheck import (build_single_op, check_grad, check_program_grad,
                                         differentiable_slots, run_op)
from fluidscope.engine.ir.dtypes import dtype_name, to_var_type
from fluidscope.engine.runtime.place import CUDAPlace, cuda_available
from fluidscope.engine.runtime.tensor import LoDTensor
from op_matrix import all_cases

CASES = all_cases()


def _expected(case):
    ref = case.reference(case.inputs, case.attrs)
    return ref if isinstance(ref, dict) else {"Out": ref}


def _assert_close(actual, expected, case, slot):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{case.id} {slot}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_close(a, e, case, f"{slot}[{i}]")
        return
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{case.id}: {slot} shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=case.rtol, atol=case.atol,
                               err_msg=f"{case.id}: output {slot}")


def _run(case):
    if case.direct:
        opdef = registry.get(case.op)
        attrs = opdef.parse_attrs(case.attrs)
        args = [case.inputs.get(s.name) for s in opdef.inputs]
        result = opdef.kernel_for("cpu")(np, attrs, *args)
        names = [s.name for s in opdef.outputs]
        return dict(zip(names, [result] if len(names) == 1 else result))
    return run_op(case.op, case.inputs, case.attrs)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_forward_matches_reference(case):
    if case.program is not None:
        pc = case.program()
        names = list(pc.expected)
        got = Executor().run(pc.desc, feed=pc.feed, fetch_list=names, scope=pc.scope)
        for name, value in zip(names, got):
            _assert_close(value, pc.expected[name], case, name)
        return
    outs = _run(case)
    if case.check is not None:
        case.check(outs, case.inputs, case.attrs)
    if case.reference is not None:
        for slot, expected in _expected(case).items():
            _assert_close(outs[slot], expected, case, slot)


SHAPE_CASES = [c for c in CASES if c.check_shapes and not c.direct and c.program is None]

# Cases whose output keeps the LoD level Paddle 3.3.1 declares at build time while the run
# drops a LoD that no longer fits the rows (checked with the oracle: gather declares X's
# level for any index; concat declares X[0]'s even when another input has none).
DECLARED_LOD_LEVEL_AS_PADDLE = {"gather-lod_rows_changed": "Out", "concat-lod_mixed_dropped": "Out"}


# Ops whose output size follows the input values themselves (how many are selected,
# unique, non-zero; range's bounds): their dims may be inferred as -1 from plain inputs.
VALUE_SIZED = {"masked_select", "unique", "unique_consecutive", "where_index", "range"}


def _unknown_dims_allowed(case):
    """-1 in an inferred shape is right only where the size is known at run time alone:
    an int tensor input (a shape, size, index or axis tensor), a tensor in a no_grad slot
    (interp's float Scale), a LoD input (rows per sequence), or a value-sized op."""
    if case.op in VALUE_SIZED:
        return True
    opdef = registry.get(case.op)
    if any(s.no_grad and case.inputs.get(s.name) is not None for s in opdef.inputs):
        return True
    for value in case.inputs.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, LoDTensor) or (
                    item is not None and np.asarray(item).dtype.kind in "iub"):
                return True
    return False


@pytest.mark.parametrize("case", SHAPE_CASES, ids=[c.id for c in SHAPE_CASES])
def test_inferred_shapes_match_actual(case):
    """Inferred metas against the run: rank and every dim (-1 only where the size
    depends on input data: ``_unknown_dims_allowed``), the dtype and the LoD level of
    each output."""
    unknown_ok = _unknown_dims_allowed(case)
    _, _, out_names, inferred = build_single_op(case.op, case.inputs, case.attrs)
    outs = run_op(case.op, case.inputs, case.attrs, return_lod=True)
    for slot in out_names:
        actual = outs[slot] if isinstance(outs[slot], list) else [outs[slot]]
        metas = inferred.get(slot) or []
        slot_def = registry.get(case.op).output_slot(slot)
        if (slot_def.intermediate or slot_def.dispensable) and (
                not metas or all(v is None for v in actual)):
            continue  # an optional output this configuration does not produce
        assert len(metas) == len(actual), f"{case.id}: {slot}: inferred {len(metas)} outputs"
        for meta, tensor in zip(metas, actual):
            value = np.asarray(tensor.value)
            shape = value.shape
            assert len(meta.shape) == len(shape) and all(
                d == a or (d == -1 and unknown_ok) for d, a in zip(meta.shape, shape)), (
                f"{case.id}: {slot} inferred {list(meta.shape)}, actual {list(shape)}")
            assert meta.dtype == to_var_type(value.dtype), (
                f"{case.id}: {slot} inferred dtype {dtype_name(meta.dtype)}, actual {value.dtype}")
            if slot == "XShape" or DECLARED_LOD_LEVEL_AS_PADDLE.get(case.id) == slot:
                continue  # XShape holds no data; Paddle declares it with X's LoD level
            assert meta.lod_level == len(tensor.lod()), (
                f"{case.id}: {slot} inferred LoD level {meta.lod_level}, actual "
                f"{len(tensor.lod())} ({tensor.lod()})")


GRAD_CASES = [c for c in CASES if c.grad != () and registry.get(c.op).has_grad]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.id for c in GRAD_CASES])
def test_gradient_float64_central_difference(case):
    if case.program is not None:
        pc = case.program()
        check_program_grad(pc.desc, pc.loss, pc.feed, pc.wrt, pc.scope, rtol=case.grad_rtol)
        return
    wrt = None if case.grad == "auto" else list(case.grad)
    assert (wrt or differentiable_slots(case.op, case.inputs)), f"{case.id}: nothing to check"
    check_grad(case.op, case.inputs, case.attrs, wrt=wrt, outputs=case.grad_outputs,
               rtol=case.grad_rtol)


DEVICE_CASES = [c for c in CASES if not c.direct and c.reference is not None and c.program is None]


@pytest.mark.skipif(not cuda_available(), reason="cupy sees no CUDA device")
@pytest.mark.parametrize("case", DEVICE_CASES, ids=[c.id for c in DEVICE_CASES])
def test_gpu_kernels_match_cpu(case):
    """The same xp kernel (or a registered GPU fast path) gives the CPU result on cupy."""
    cpu = run_op(case.op, case.inputs, case.attrs)
    gpu = run_op(case.op, case.inputs, case.attrs, place=CUDAPlace(0))
    for slot, expected in _expected(case).items():
        _assert_close(gpu[slot], cpu[slot], case, slot)


def test_every_registered_op_is_in_the_matrix():
    covered = {c.op for c in CASES}
    missing = sorted(set(registry.forward_ops()) - covered)
    assert not missing, f"registered ops without an OpCase in tests/op_matrix: {missing}"


def test_every_differentiable_op_has_a_float64_gradient_check():
    def float64(case):
        values = [v for v in case.inputs.values() if v is not None]
        if case.program is not None:
            pc = case.program()
            values = [v for v in pc.feed.values()] + [
                pc.scope.find_var(n).get_tensor().value for n in pc.wrt if n not in pc.feed]
            values = [v for v in values if np.issubdtype(np.asarray(getattr(v, "value", v)).dtype,
                                                         np.floating)]
        flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
        return all(np.asarray(getattr(x, "value", x)).dtype != np.float32 for x in flat)

    checked = {c.op for c in GRAD_CASES if float64(c)}
    missing = sorted(op for op, d in registry.forward_ops().items() if d.has_grad and op not in checked)
    assert not missing, f"differentiable ops without a float64 gradient check: {missing}"


def test_every_grad_op_belongs_to_a_forward_op():
    for name, opdef in registry.all_ops().items():
        if opdef.grad_of is not None:
            assert registry.has(opdef.grad_of), name
