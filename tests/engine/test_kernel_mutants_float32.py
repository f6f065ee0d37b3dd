"""float32 in, float32 out: the op-matrix cases of ops whose kernels make scratch arrays
(zeros, inverse scales, normalisers), run on float32 inputs, give float32 outputs and
float32 gradients (engine/kernels, issue #17: mutants that let such a temporary default
to float64 survived, since the matrix runs float64)."""
import numpy as np

from fluidscope.engine.autodiff.gradcheck import analytic_grads, differentiable_slots, run_op
from fluidscope.engine.runtime.tensor import LoDTensor
from op_matrix import source_cases

OPS = ("sigmoid_cross_entropy_with_logits", "unpool", "deformable_conv", "deformable_conv_v1",
       "warpctc")


def _float32(value):
    if isinstance(value, list):
        return [_float32(v) for v in value]
    if isinstance(value, LoDTensor):
        return LoDTensor(_float32(value.value), value.lod())
    value = np.asarray(value)
    return value.astype(np.float32) if value.dtype == np.float64 else value


def test_float32_cases_keep_float32_outputs_and_gradients():
    cases = [c for c in source_cases() if c.op in OPS and c.program is None and not c.direct]
    assert {c.op for c in cases} == set(OPS)
    checked = 0
    for case in cases:
        inputs = {slot: _float32(v) for slot, v in case.inputs.items()}
        outs = run_op(case.op, inputs, case.attrs)
        for slot, out in outs.items():
            assert np.asarray(out).dtype == np.float32, (case.id, slot)
        wrt = differentiable_slots(case.op, inputs) if case.grad == "auto" else list(case.grad)
        seeded = case.grad_outputs or [s for s in outs if s != "WarpCTCGrad"]
        seeds = {s: np.ones_like(outs[s]) for s in seeded}
        for slot, grad in analytic_grads(case.op, inputs, case.attrs, seeds, wrt).items():
            assert np.asarray(grad).dtype == np.float32, (case.id, slot)
            checked += 1
    assert checked > 20
