"""What the op matrix exercises of each registered op, slot by slot and attribute by
attribute (the meta-test in test_op_coverage.py asserts that nothing is left out).

A gap is named ``"<op> in:<slot>"``, ``"<op> out:<slot>"``, ``"<op> attr:<name>"`` or
``"<op> attr:<name>=<value>"`` (a value of a choice attribute). The rules:

Forward ops, over the cases that compare with something (a ``reference``; a ``check``,
which random ops use to assert their distribution; or a program case's ``expected``):
- an input slot is covered when a case gives it a value (in a program case: an op of
  that type in the program has an argument in the slot);
- an output slot is covered when a case's reference returns it, or a program case
  expects one of its variables; a ``check`` counts for every output (it receives all);
- an attribute is covered when a case sets it to a value other than its default (a
  default is the same run as leaving it out); a choice attribute (``registry.one_of``)
  needs each allowed value, an attribute left unset counting as its default.
Common attributes (op_role, op_namescope, ...) are bookkeeping, never read by a kernel.

Gradient ops are run by their forward op's gradient checks, so they are covered through
them: for every gradient-checked case the backward program the check runs is built the
way ``check_grad`` builds it (one op, seeds for its outputs, ``append_grad_ops``;
program cases: ``append_backward_desc``), and each grad op in it counts its slots that
hold an argument and its attributes not at default (grad ops carry the forward op's
attributes and their kernels read them). So ``<T>_grad out:X@GRAD`` covered means X's
gradient was compared with central differences, and ``<T>_grad in:Out@GRAD`` that Out
seeded the check. Choice values need a gradient-checked case each, as above.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine import registry
from fluidscope.engine.autodiff.backward import append_backward_desc, append_grad_ops
from fluidscope.engine.autodiff.gradcheck import build_single_op, differentiable_slots, run_op
from fluidscope.engine.ir.descs import add_var
from fluidscope.engine.ir.names import EMPTY_VAR, grad_name
from fluidscope.engine.ir.proto import framework_pb2 as pb


def choices(attr):
    """The allowed values of a choice attribute, or None."""
    return getattr(attr.checker, "choices", None)


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


class Seen:
    """Slots, non-default attributes and attribute values seen, per op type."""

    def __init__(self):
        self.slots, self.attrs, self.values = {}, {}, {}

    def slot(self, op, slot):
        self.slots.setdefault(op, set()).add(slot)

    def attr(self, op, name, value, given=True):
        spec = registry.get(op).attr_spec(name)
        if spec is None:
            return
        self.values.setdefault((op, name), set()).add(_hashable(value))
        if given and value != spec.default:
            self.attrs.setdefault(op, set()).add(name)

    def op_desc(self, op):
        """Record an OpDesc: its slots holding an argument, its attributes."""
        if not registry.has(op.type):
            return
        for var in list(op.inputs) + list(op.outputs):
            if any(a and a != EMPTY_VAR for a in var.arguments):
                self.slot(op.type, var.parameter)
        given = {a.name for a in op.attrs}
        for a in op.attrs:
            self.attr(op.type, a.name, registry.attr_from_proto(a))
        for spec in registry.get(op.type).attrs:
            if spec.name not in given and spec.default is not registry.REQUIRED:
                self.attr(op.type, spec.name, spec.default, given=False)


def _expected_slots(case):
    if case.reference is None:
        return set()
    ref = case.reference(case.inputs, case.attrs)
    return set(ref) if isinstance(ref, dict) else {"Out"}


def forward_seen(cases):
    seen = Seen()
    for case in cases:
        if case.program is not None:
            pc = case.program()
            for block in pc.desc.blocks:
                for op in block.ops:
                    if op.type != case.op:
                        continue
                    seen.op_desc(op)
                    for var in op.outputs:
                        if set(var.arguments) & set(pc.expected):
                            seen.slot(op.type, "out:" + var.parameter)
            continue
        if case.reference is None and case.check is None:
            continue
        opdef = registry.get(case.op)
        for name, value in case.inputs.items():
            if value is not None and not (isinstance(value, list) and not value):
                seen.slot(case.op, name)
        outs = ([s.name for s in opdef.outputs] if case.check is not None
                else _expected_slots(case))
        for name in outs:
            seen.slot(case.op, "out:" + name)
        for spec in opdef.attrs:
            seen.attr(case.op, spec.name, case.attrs.get(spec.name, spec.default),
                      given=spec.name in case.attrs)
    return seen


def _backward_of(case):
    """The ProgramDesc a gradient check of ``case`` runs (forward and grad ops)."""
    if case.program is not None:
        pc = case.program()
        desc = pb.ProgramDesc.FromString(pc.desc.SerializeToString())
        for block in desc.blocks:
            for var in block.vars:
                if var.name in pc.wrt:
                    var.stop_gradient = False
        append_backward_desc(desc, pc.loss)
        return desc
    wrt = differentiable_slots(case.op, case.inputs) if case.grad == "auto" else list(case.grad)
    desc, _, out_names, _ = build_single_op(case.op, case.inputs, case.attrs, wrt=wrt)
    outs = run_op(case.op, case.inputs, case.attrs)
    opdef = registry.get(case.op)
    block, seeded = desc.blocks[0], set()
    for slot in case.grad_outputs or [s.name for s in opdef.outputs if not s.intermediate]:
        values = outs[slot] if isinstance(outs[slot], list) else [outs[slot]]
        for name, value in zip(out_names[slot], values):
            value = np.asarray(value)
            add_var(block, grad_name(name), value.shape, value.dtype)
            seeded.add(grad_name(name))
    no_grad = {v.name for v in block.vars if v.stop_gradient}
    append_grad_ops(desc, 0, list(block.ops), seeded, no_grad)
    return desc


def grad_seen(grad_cases):
    seen = Seen()
    for case in grad_cases:
        for block in _backward_of(case).blocks:
            for op in block.ops:
                if registry.has(op.type) and registry.get(op.type).grad_of is not None:
                    seen.op_desc(op)
                    for var in op.outputs:
                        if any(a and a != EMPTY_VAR for a in var.arguments):
                            seen.slot(op.type, "out:" + var.parameter)
    return seen


def gaps(opdefs, seen):
    """Gap names of ``opdefs`` (type -> OpDef) that ``seen`` does not cover."""
    found = []
    for op, opdef in sorted(opdefs.items()):
        slots = seen.slots.get(op, set())
        found += [f"{op} in:{s.name}" for s in opdef.inputs if s.name not in slots]
        found += [f"{op} out:{s.name}" for s in opdef.outputs if "out:" + s.name not in slots]
        for spec in opdef.attrs:
            if spec.name in registry.COMMON_ATTR_NAMES:
                continue
            allowed = choices(spec)
            if allowed is None:
                if spec.name not in seen.attrs.get(op, set()):
                    found.append(f"{op} attr:{spec.name}")
                continue
            values = seen.values.get((op, spec.name), set())
            found += [f"{op} attr:{spec.name}={v!r}" for v in allowed if v not in values]
    return found


def all_gaps(cases, grad_cases):
    forward = {k: v for k, v in registry.all_ops().items() if v.grad_of is None}
    backward = {k: v for k, v in registry.all_ops().items() if v.grad_of is not None}
    return gaps(forward, forward_seen(cases)) + gaps(backward, grad_seen(grad_cases))
