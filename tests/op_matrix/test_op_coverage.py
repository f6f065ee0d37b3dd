"""The op matrix covers every input slot, output slot, attribute and choice value of every
registered op, forward and gradient (rules: op_matrix/slot_coverage.py).

``EXEMPT`` names what no case can usefully run, each with its reason; keep it short.
A new op, slot, attribute or choice value without a case fails here.
"""
import functools

from fluidscope.engine import registry
from fluidscope.engine.autodiff.gradcheck import differentiable_slots
from op_matrix import all_cases
from op_matrix.slot_coverage import all_gaps

_DISTRIBUTED = "parameter-server setting of distributed training; one process reads none"

# gap name -> why no case runs it. An entry on a forward op covers the same entry on its
# grad op (grad ops carry the forward op's attributes).
EXEMPT = {
    **{f"lookup_table attr:{a}": _DISTRIBUTED for a in (
        "is_distributed", "remote_prefetch", "entry_config", "entry", "table_class",
        "table_names", "trainer_id", "grad_inplace", "epmap", "height_sections")},
    "reshape2 attr:use_quantizer": "oneDNN quantization switch (Paddle's MKLDNN build only)",
    "reshape2 attr:mkldnn_data_type": "oneDNN data type switch (Paddle's MKLDNN build only)",
    "fill_constant attr:force_cpu": "placement only (CPU memory on a GPU run); no value changes",
    "fill_constant attr:place_type": "placement only; no value changes",
    "fill attr:force_cpu": "placement only; no value changes",
    "fill_constant_batch_size_like attr:force_cpu": "placement only; no value changes",
    "recurrent out:step_scopes": "holds the step scopes for backward, no tensor to compare",
    "recurrent attr:skip_eager_deletion_vars": "Paddle's garbage-collector hint; no values",
    "recurrent attr:is_train": "Paddle keeps step scopes for backward when set; the "
                               "backward program cases run it (default True) either way",
    "reshape_grad out:Shape@GRAD": "Shape is an int tensor: it never takes a gradient",
    "reshape_grad out:ShapeTensor@GRAD": "ShapeTensor holds ints: it never takes a gradient",
    **{f"{op} attr:is_test": "an is_test op is never differentiated (inference only)"
       for op in ("lstm_grad", "gru_grad", "sequence_pool_grad", "lookup_table_grad")},
    "warpctc_grad attr:norm_by_times": "Paddle divides the gradient by T only, not the Loss: "
        "no derivative to difference; cases_loss_ctc checks WarpCTCGrad and the scaled grad",
    "logcumsumexp_grad attr:exclusive": "Out's first element is log(0) (the lowest float), "
        "which overflows the generic check's loss; cases_variants' grad_where_finite checks "
        "the gradient with that element's weight 0",
    "batch_norm_grad attr:trainable_statistics": "with is_test Paddle's gradient takes the "
        "running stats while the forward used the batch's: not the forward's derivative",
    **{f"{op} attr:contextStride": "Paddle accepts only 1 (its kernel refuses others, "
       "as ours does)" for op in ("sequence_conv", "context_projection")},
}

CASES = all_cases()
GRAD_CASES = [c for c in CASES if c.grad != () and registry.get(c.op).has_grad]


@functools.cache
def _gaps():
    return tuple(all_gaps(CASES, GRAD_CASES))


def _exempt(gap):
    op, what = gap.split(" ", 1)
    fwd = registry.get(op).grad_of
    return gap in EXEMPT or (fwd is not None and f"{fwd} {what}" in EXEMPT)


def test_every_slot_attribute_and_choice_value_is_exercised():
    found = [g for g in _gaps() if not _exempt(g)]
    assert not found, (
        f"{len(found)} slots/attributes of registered ops that no op-matrix case exercises "
        f"(add a case with a reference / a gradient check): {found}")


def test_exemptions_are_still_gaps():
    """An exemption whose slot or attribute a case now runs is stale: drop it."""
    found = set(_gaps())
    stale = [g for g in EXEMPT if g not in found]
    assert not stale, f"exempt but covered now: {stale}"


def test_exemptions_name_real_gaps():
    """An exemption names a registered op's slot or attribute (no stale entries)."""
    for gap in EXEMPT:
        op, what = gap.split(" ", 1)
        opdef = registry.get(op)
        kind, name = what.split(":", 1)
        names = {"in": [s.name for s in opdef.inputs], "out": [s.name for s in opdef.outputs],
                 "attr": [a.name for a in opdef.attrs]}[kind]
        assert name.split("=")[0] in names, gap


def test_every_differentiable_input_is_gradient_checked():
    """Each input slot of a differentiable op that is not no_grad is compared with central
    differences in some case (its grad op may be of another type: sum's is scale)."""
    checked, in_programs = {}, {c.op for c in GRAD_CASES if c.program is not None}
    for case in GRAD_CASES:
        if case.program is None:
            wrt = (differentiable_slots(case.op, case.inputs) if case.grad == "auto"
                   else list(case.grad))
            checked.setdefault(case.op, set()).update(wrt)
    missing = [f"{op} in:{s.name}" for op, opdef in sorted(registry.forward_ops().items())
               if opdef.has_grad and op not in in_programs
               for s in opdef.inputs if not s.no_grad and s.name not in checked.get(op, ())]
    assert not missing, f"differentiable inputs no gradient check covers: {missing}"
