"""Generated backward: append the gradient ops of a block to it (reference/001).

``append_backward_desc`` is a generic rewriter over a ProgramDesc; it knows no op by
name. It walks the ops that lead to the loss in reverse, asks each op's registry
record for its gradient ops (pure desc -> descs makers), and then:

* names gradients ``x@GRAD``; a gradient nobody needs gets an empty argument list,
  and a grad op with no output left is dropped;
* where several grad ops write the same gradient (fan-in), renames each write to
  ``x@GRAD@RENAME@<block>@<k>`` and adds a ``sum`` before the gradient is read;
* where a grad op reads an output gradient no one produced, adds
  ``fill_zeros_like``;
* marks ops with ``op_role`` (backward 1, the loss seed 257) and ``op_role_var``;
* recurses into sub-blocks through ``GradContext.backward_block`` for control-flow
  ops whose makers ask for it.
"""
from __future__ import annotations

import inspect

from ..ir import registry
from ..ir.descs import add_block, add_var_typed_as, make_op, set_attr
from ..ir.proto import framework_pb2 as pb
from ..errors import FluidscopeError
from ..ir.registry import AttrType
from ..ir.lookup import visible_vars
from ..ir.names import EMPTY_VAR as EMPTY, GRAD_SUFFIX, grad_name, rename_of, seed_of, unseeded
from ..ir.roles import ROLE_ATTR, ROLE_VAR_ATTR, OpRole



# The grad ops of an op are a pure function of its desc (the makers read nothing else,
# unless they take a GradContext: control-flow ops, never kept). A rebuild after one edit
# asks again for the grad ops of the same op descs but one; both what a maker made and
# the OpDescs made from it are kept by the forward op's bytes, so a design's training
# build after an edit does not redo the unchanged ops' work (issue #16).
_MADE: dict = {}    # forward op bytes -> [GradOp]
_BUILT: dict = {}   # (forward op bytes, k, kept outputs) -> bytes of the grad OpDesc
MEMO_LIMIT = 20_000


def clear_memo():
    """Forget every kept grad op (tests build the same program with and without them)."""
    _MADE.clear()
    _BUILT.clear()


def _remember(memo, key, value):
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = value


def _grad_ops_of(op, opdef, ctx):
    """(key, [GradOp]) of forward ``op``; key None when the maker takes a context."""
    if _wants_ctx(opdef.grad_maker):
        return None, opdef.grad_maker(_op_view(op), ctx)
    key = op.SerializeToString()
    made = _MADE.get(key)
    if made is None:
        made = opdef.grad_maker(_op_view(op))
        _remember(_MADE, key, made)
    return key, made


def _grad_op_desc(key, k, g, outputs, op):
    """The OpDesc of the k-th GradOp ``g`` of ``op`` with its ``outputs`` (kept ones)."""
    if key is None:
        return _make_op(g.type, g.inputs, outputs, attrs_from=op, attrs=g.attrs)
    built_key = (key, k, tuple((slot, tuple(names)) for slot, names in outputs.items()))
    built = _BUILT.get(built_key)
    if built is None:
        desc = _make_op(g.type, g.inputs, outputs, attrs_from=op, attrs=g.attrs)
        _remember(_BUILT, built_key, desc.SerializeToString())
        return desc
    return pb.OpDesc.FromString(built)


def _op_view(op) -> registry.OpView:
    return registry.OpView(
        op.type,
        {v.parameter: list(v.arguments) for v in op.inputs},
        {v.parameter: list(v.arguments) for v in op.outputs},
        {a.name: registry.attr_from_proto(a) for a in op.attrs})


def _make_op(type, inputs, outputs, attrs_from=None, attrs=None, role=OpRole.BACKWARD):
    """A backward OpDesc. With ``attrs`` None a grad op carries the forward op's full
    attribute set (Paddle fills no defaults into grad ops); with ``attrs`` given (a maker
    that emits another op type, e.g. ``scale`` for ``sum``) it gets those plus the
    forward op's common attributes (namescope, device)."""
    op = make_op(type, inputs, outputs)
    if attrs_from is not None:
        op.attrs.extend(
            a for a in attrs_from.attrs
            if a.name not in (ROLE_ATTR, ROLE_VAR_ATTR, "op_callstack")
            and (attrs is None or a.name in registry.COMMON_ATTR_NAMES))
    if attrs:
        opdef = registry.get(type)
        for name, value in attrs.items():
            set_attr(op, name, opdef.attr_by_name[name].type, value)
    set_attr(op, ROLE_ATTR, AttrType.INT, int(role))
    return op


class GradContext:
    """What a gradient maker of a control-flow op may ask for."""

    def __init__(self, program_desc, no_grad):
        self.program_desc, self.no_grad = program_desc, no_grad

    def backward_block(self, fwd_block_idx, out_grads):
        """Create the grad block of ``fwd_block_idx`` (seeded by ``out_grads`` names)
        and return its index; used by ops that own a sub-block."""
        fwd = self.program_desc.blocks[fwd_block_idx]
        block = add_block(self.program_desc, fwd.parent_idx, forward_block_idx=fwd_block_idx)
        _append_grad_ops(self.program_desc, fwd_block_idx, block.idx, list(fwd.ops),
                         set(out_grads), self.no_grad)
        return block.idx


def _vars_needing_grad(program_desc, ops, block_idx, no_grad):
    """Forward pass over ``ops``: the vars through which a gradient flows.

    Leaves that need a gradient are trainable parameters and non-persistable inputs
    that are not stop_gradient; an op passes the need on to its outputs when one of
    its differentiable inputs needs it. Ops without a gradient stop the flow."""
    var_descs = _visible(program_desc, block_idx)
    produced = {n for op in ops for v in op.outputs for n in v.arguments}
    needs = {n for n, d in var_descs.items()
             if n not in no_grad and n not in produced and (d.is_parameter or not d.persistable)}
    for op in ops:
        opdef = registry.get(op.type)
        if opdef.grad_maker is None:
            continue
        differentiable = (n for v in op.inputs
                          if not getattr(opdef.input_slot(v.parameter), "no_grad", False)
                          for n in v.arguments)
        if any(n in needs for n in differentiable):
            needs.update(n for v in op.outputs for n in v.arguments if n not in no_grad)
    return needs


def _visible(program_desc, block_idx):
    return visible_vars(program_desc, block_idx)


def _ops_leading_to(ops, targets):
    """The ops (in order) whose outputs flow into ``targets``."""
    live, keep = set(targets), []
    for op in reversed(ops):
        outs = {n for v in op.outputs for n in v.arguments}
        if outs & live:
            keep.append(op)
            live.update(n for v in op.inputs for n in v.arguments)
    return list(reversed(keep))


def _append_grad_ops(program_desc, fwd_block_idx, target_block_idx, ops, seeded, no_grad):
    """Generate grad ops for ``ops`` (forward order) into the target block.

    ``seeded``: grad var names already available. Returns the set of grad names made.
    """
    target = program_desc.blocks[target_block_idx]
    needs = _vars_needing_grad(program_desc, ops, fwd_block_idx, no_grad)
    available = set(seeded)
    ctx = GradContext(program_desc, no_grad)
    grad_ops = []
    for op in reversed(ops):
        opdef = registry.get(op.type)
        if opdef.grad_maker is None:
            continue
        out_grads = {grad_name(n) for v in op.outputs for n in v.arguments}
        if not out_grads & available:
            continue
        key, made = _grad_ops_of(op, opdef, ctx)
        for k, g in enumerate(made):
            outputs = {slot: _keep_needed(names, needs) for slot, names in g.outputs.items()}
            if not any(n != EMPTY for names in outputs.values() for n in names):
                continue
            for slot, names in g.inputs.items():
                for n in names:
                    if n.endswith(GRAD_SUFFIX) and n not in available:
                        fwd_var = _strip(n)
                        grad_ops.append(_make_op("fill_zeros_like", {"X": [fwd_var]}, {"Out": [n]}))
                        available.add(n)
            grad_op = _grad_op_desc(key, k, g, outputs, op)
            grad_ops.append(grad_op)
            available.update(n for names in outputs.values() for n in names if n != EMPTY)
    # A seeded gradient that grad ops also write (a memory's state read again inside the
    # step net) must be summed with what they write, not overwritten: the seed comes in
    # as ``x@GRAD@SEED`` and joins the fan-in sum of ``x@GRAD``.
    written = {n for op in grad_ops for v in op.outputs for n in v.arguments}
    seeds_written = sorted(n for n in seeded if n in written)
    grad_ops = _add_sums_on_fan_in(grad_ops, target_block_idx, seeds_written)
    target.ops.extend(grad_ops)
    _declare_grad_vars(program_desc, fwd_block_idx, target, grad_ops)
    return available


def _keep_needed(names, needs):
    """Drop gradients no one needs: [] when none is, else ``@EMPTY@`` placeholders
    keep the positions of a duplicable slot (Paddle's convention)."""
    kept = [n if _strip(n) in needs else EMPTY for n in names]
    return kept if any(n != EMPTY for n in kept) else []


def _wants_ctx(maker):
    # unwrap: a maker behind functools.wraps (mutmut's trampoline, a user's decorator)
    # shows the wrapper's (*args, **kwargs), not the maker's own arguments
    code = getattr(inspect.unwrap(maker), "__code__", None)
    return code is not None and code.co_argcount >= 2


def _strip(name):
    """'x@GRAD@RENAME@0@1' -> 'x'."""
    return name.split(GRAD_SUFFIX)[0]


def _add_sums_on_fan_in(grad_ops, block_idx, seeds_written=()):
    """Rename repeated writes of one gradient and sum them before it is read; a seed in
    ``seeds_written`` counts as one more write, read from ``<name>@SEED``."""
    writers = {}
    for op in grad_ops:
        for v in op.outputs:
            for n in v.arguments:
                if n != EMPTY:
                    writers[n] = writers.get(n, 0) + 1
    pending, counter, out = {}, {}, []
    for n in seeds_written:
        writers[n] += 1
        pending[n] = [seed_of(n)]

    def flush(name):
        parts = pending.pop(name)
        out.append(_make_op("sum", {"X": parts}, {"Out": [name]}))

    for op in grad_ops:
        for v in op.inputs:
            for n in v.arguments:
                if n in pending and len(pending[n]) == writers[n]:
                    flush(n)
        for v in op.outputs:
            args, renamed = list(v.arguments), False
            for i, n in enumerate(args):
                if n != EMPTY and writers.get(n, 0) > 1:
                    k = counter[n] = counter.get(n, -1) + 1
                    args[i] = rename_of(n, block_idx, k)
                    pending.setdefault(n, []).append(args[i])
                    renamed = True
            if renamed:  # most ops write each gradient alone: leave their descs be
                del v.arguments[:]
                v.arguments.extend(args)
        out.append(op)
    for name in list(pending):
        flush(name)
    return out


def _declare_grad_vars(program_desc, fwd_block_idx, target, grad_ops):
    """Give every gradient var a VarDesc shaped like its forward var (not persistable)."""
    fwd = _visible(program_desc, fwd_block_idx)
    known = {v.name for v in target.vars}
    seeds = [n for op in grad_ops for v in op.inputs for n in v.arguments
             if unseeded(n) != n]
    outputs = [n for op in grad_ops for v in op.outputs for n in v.arguments]
    for n in seeds + outputs:
        if n == EMPTY or n in known:
            continue
        src = fwd.get(_strip(n))
        add_var_typed_as(target, n, src.type if src is not None else None)
        known.add(n)


def append_grad_ops(program_desc, block_idx, ops, seeded, no_grad=()):
    """Append the grad ops of ``ops`` to their block, given the gradients ``seeded``
    (names already available); used by gradient checks and control-flow makers."""
    return _append_grad_ops(program_desc, block_idx, block_idx, ops, set(seeded), set(no_grad))


def append_backward_desc(program_desc, loss_name, block_idx=0, parameter_list=None,
                         no_grad_set=None):
    """Append the backward of ``loss_name`` to block ``block_idx`` of ``program_desc``.

    Returns [(param_name, grad_name)] for the trainable parameters (or
    ``parameter_list``) that received a gradient, in declaration order.
    """
    block = program_desc.blocks[block_idx]
    var_descs = _visible(program_desc, block_idx)
    if loss_name not in var_descs:
        raise FluidscopeError(f"append_backward: loss '{loss_name}' is not a variable of block {block_idx}")
    ops = list(block.ops)
    producers = [op for op in ops if any(loss_name in v.arguments for v in op.outputs)]
    if not producers:
        raise FluidscopeError(f"append_backward: no op computes the loss '{loss_name}'")
    last = max(ops.index(op) for op in producers)
    for op in ops[:last + 1]:
        if op is producers[-1]:
            set_attr(op, ROLE_ATTR, AttrType.INT, int(OpRole.LOSS))
    fwd_ops = _ops_leading_to(ops[:last + 1], {loss_name})
    loss_desc = var_descs[loss_name]
    dims = list(loss_desc.type.dense_tensor.tensor.dims)
    no_grad = set(no_grad_set or ())
    for name, v in var_descs.items():
        if v.stop_gradient and not v.is_parameter:
            no_grad.add(name)
    if parameter_list is not None:
        wanted = set(parameter_list)
        no_grad.update(n for n, v in var_descs.items() if v.is_parameter and n not in wanted)
    seed = _make_op("fill_constant", {}, {"Out": [grad_name(loss_name)]},
                    attrs={"shape": dims, "value": 1.0,
                           "dtype": loss_desc.type.dense_tensor.tensor.data_type},
                    role=OpRole.BACKWARD | OpRole.LOSS)
    block.ops.append(seed)
    _declare_grad_vars(program_desc, block_idx, block, [seed])
    first_grad = len(block.ops)
    _append_grad_ops(program_desc, block_idx, block_idx, fwd_ops, {grad_name(loss_name)}, no_grad)
    params = [v.name for v in block.vars if v.is_parameter and v.name not in no_grad]
    made = {n for op in block.ops[first_grad:] for v in op.outputs for n in v.arguments}
    pairs = [(p, grad_name(p)) for p in params if grad_name(p) in made]
    _mark_role_vars(block.ops[first_grad:], dict(pairs))
    return pairs


def _mark_role_vars(grad_ops, param_grads):
    """op_role_var=[param, param@GRAD] on the op that finally writes each param grad."""
    by_grad = {g: p for p, g in param_grads.items()}
    for op in grad_ops:
        pairs = []
        for v in op.outputs:
            for n in v.arguments:
                if n in by_grad:
                    pairs += [by_grad[n], n]
        if pairs:
            set_attr(op, ROLE_VAR_ATTR, AttrType.STRINGS, pairs)
