"""The op matrix covers every input slot, output slot, attribute and choice value of every
registered op, forward and gradient (rules: op_matrix/slot_coverage.py).

``EXEMPT`` names what no case can usefully run, each with its reason; keep it short.
``NOT_YET_COVERED`` (op_matrix/coverage_pending.py) lists the gaps still waiting for a
case: it may only shrink, so a new op or slot without a case fails here, and so does a
listed gap that a new case has closed (take it off the list).
"""
from fluidscope.engine import registry
from op_matrix import all_cases
from op_matrix.coverage_pending import NOT_YET_COVERED
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
       for op in ("lstm_grad", "gru_grad", "norm_grad", "sequence_pool_grad")},
}

CASES = all_cases()
GRAD_CASES = [c for c in CASES if c.grad != () and registry.get(c.op).has_grad]


def _exempt(gap):
    op, what = gap.split(" ", 1)
    fwd = registry.get(op).grad_of
    return gap in EXEMPT or (fwd is not None and f"{fwd} {what}" in EXEMPT)


def test_every_slot_attribute_and_choice_value_is_exercised():
    found = [g for g in all_gaps(CASES, GRAD_CASES) if not _exempt(g)]
    new = [g for g in found if g not in NOT_YET_COVERED]
    assert not new, (
        f"{len(new)} slots/attributes of registered ops that no op-matrix case exercises "
        f"(add a case with a reference / a gradient check): {new}")


def test_not_yet_covered_list_only_shrinks():
    found = set(all_gaps(CASES, GRAD_CASES))
    closed = sorted(set(NOT_YET_COVERED) - found)
    assert not closed, f"covered now, take them off coverage_pending.py: {closed}"


def test_exemptions_name_real_gaps():
    """An exemption names a registered op's slot or attribute (no stale entries)."""
    for gap in EXEMPT:
        op, what = gap.split(" ", 1)
        opdef = registry.get(op)
        kind, name = what.split(":", 1)
        names = {"in": [s.name for s in opdef.inputs], "out": [s.name for s in opdef.outputs],
                 "attr": [a.name for a in opdef.attrs]}[kind]
        assert name.split("=")[0] in names, gap
