"""``append_backward`` for designer Programs (the generic rewriter is the engine's)."""
from fluidscope.engine.autodiff.backward import append_backward_desc
from fluidscope.engine.errors import DesignError, FluidscopeError
from fluidscope.engine.ir.names import grad_name

from .callsite import reports_at_user_line


@reports_at_user_line
def append_backward(loss, parameter_list=None, no_grad_set=None):
    """Append the gradient ops of ``loss`` to its program.

    parameter_list: parameters (or names) to differentiate (default: all trainable);
    no_grad_set: variables (or names) whose gradient is not wanted.
    Returns [(Parameter, gradient Variable)].
    """
    program = loss.block.program
    if loss.shape not in ((), (1,)):
        raise DesignError(
            f"append_backward: loss '{loss.name}' has shape {list(loss.shape)}; reduce it to a "
            "scalar first (e.g. with mean)")
    names = None if parameter_list is None else [getattr(p, "name", p) for p in parameter_list]
    no_grad = {getattr(v, "name", v) for v in (no_grad_set or ())}
    try:
        pairs = append_backward_desc(program.desc, loss.name, loss.block.idx, names, no_grad)
    except FluidscopeError as exc:
        raise DesignError(f"append_backward: {exc}\n--- program ---\n{program.to_string()}") from exc
    program.sync_blocks()
    block = program.global_block()
    return [(block.var(p), block.var(g)) for p, g in pairs]


@reports_at_user_line
def gradients(targets, inputs, no_grad_set=None):
    """Gradient Variables of scalar ``targets[0]`` w.r.t. ``inputs`` (stop_gradient is
    lifted on them for the purpose)."""
    target = targets[0] if isinstance(targets, (list, tuple)) else targets
    inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    for x in inputs:
        x.stop_gradient = False
    append_backward(target, parameter_list=[], no_grad_set=no_grad_set)
    block = target.block
    return [block.var(grad_name(x.name)) if block.has_var(grad_name(x.name)) else None
            for x in inputs]
