"""The inspector's **check gradient**: a parameter's gradient at a debugger stop, float64
central differences against the backward the engine generates.

The session's program trains in float32, where central differences drown in rounding.
So the check runs on a float64 copy of the program's *forward* ops (the ops before the
loss seed of backward), with the parameters and feeds as the session holds them at its
stop, and hands that to ``engine.autodiff.gradcheck.program_grad_report``, the same
check the op matrix runs: the generic backward appended anew for the loss against
``(L(w + d) - L(w - d)) / 2d``. A large parameter is probed on a seeded sample of
elements (each costs two forward runs). Nothing in the session changes: the copy runs
in a scope of its own.

When the stop is after the run computed the parameter's gradient and before its optimizer
op updated it, the run's own (float32) gradient is compared with the same central
differences too (``run``): a kernel or grad rule that is wrong only in this program, its
dtype or its data shows there.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine.autodiff.gradcheck import program_grad_report, relative_error
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.descs import set_attr
from fluidscope.engine.ir.names import forward_name, grad_name, is_grad_name
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.roles import BACKWARD, FORWARD, OpRole, phase_of, role_of
from fluidscope.engine.runtime.place import to_host
from fluidscope.engine.runtime.scope import Scope
from fluidscope.engine.runtime.tensor import LoDTensor

SAMPLES = 24        # elements probed at most
TOLERANCE = 1e-4    # a floored relative error above this is reported as a mismatch
RUN_TOLERANCE = 1e-3  # the run's own gradient is float32: rounding alone reaches ~1e-5
FLOOR = 1e-3        # |a - n| / max(|a|, |n|, FLOOR): tiny gradients compare absolutely
DELTA = 1e-6
# int attributes that hold a data type: float32 ones become float64 in the copy
DTYPE_ATTRS = ("dtype", "in_dtype", "out_dtype")


def loss_of(program_desc) -> str:
    """The loss that block 0's backward differentiates: the output of the loss seed (the op
    whose role is Backward|Loss) less its gradient suffix."""
    seed_role = int(OpRole.BACKWARD | OpRole.LOSS)
    for op in program_desc.blocks[0].ops:
        if role_of(op) & seed_role == seed_role:
            for var in op.outputs:
                for name in var.arguments:
                    if is_grad_name(name):
                        return forward_name(name)
    raise FluidscopeError("check gradient: the program has no backward (no loss seed); "
                          "build it with optimizer.minimize(loss) or append_backward(loss)")


def float64_forward(program_desc):
    """A copy of ``program_desc`` holding block 0's forward ops only, float32 made float64
    (variables and dtype attributes) and random ops given a fixed seed, so that every
    run of the copy draws the same numbers (a dropout mask that changed between the two
    runs of a central difference would be all the difference measured)."""
    desc = pb.ProgramDesc.FromString(program_desc.SerializeToString())
    block = desc.blocks[0]
    kept = [op for op in block.ops if phase_of(op) == FORWARD]
    del block.ops[:]
    block.ops.extend(kept)
    fp32, fp64 = pb.VarType.FP32, pb.VarType.FP64
    for each in desc.blocks:
        for var in each.vars:
            tensor = var.type.dense_tensor.tensor
            if var.type.HasField("dense_tensor") and tensor.data_type == fp32:
                tensor.data_type = fp64
        for k, op in enumerate(each.ops):
            for attr in op.attrs:
                if attr.name in DTYPE_ATTRS and attr.i == fp32:
                    attr.i = fp64
            _fix_seed(op, k)
    return desc


def _fix_seed(op, k):
    """A random op draws from a seed of its own (seed 0 means the shared generator)."""
    opdef = registry.get(op.type)
    seed = opdef.attr_spec("seed")
    if seed is None:
        return
    current = next((a.i for a in op.attrs if a.name == "seed"), 0)
    if not current:
        set_attr(op, "seed", pb.AttrType.INT, 1 + k)
    if opdef.attr_spec("fix_seed") is not None:
        set_attr(op, "fix_seed", pb.AttrType.BOOLEAN, True)


def _float64(value):
    if isinstance(value, LoDTensor):
        array = to_host(value.value)
        lod = value.lod()
        return LoDTensor(array.astype(np.float64), lod) if array.dtype.kind == "f" else value
    array = np.asarray(value)
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def _sample(shape, samples, seed):
    size = int(np.prod(shape))
    if size <= samples:
        return list(np.ndindex(*shape))
    flat = np.sort(np.random.default_rng(seed).choice(size, samples, replace=False))
    return [tuple(int(k) for k in np.unravel_index(i, shape)) for i in flat]


def check_parameter_gradient(session, name, *, samples=SAMPLES, seed=0, delta=DELTA,
                             tolerance=TOLERANCE):
    """Check the gradient of parameter ``name`` at ``session``'s stop (see the module).

    Returns ``{"parameter", "loss", "where", "shape", "checked", "size", "max_error",
    "mean_error", "ok", "tolerance", "worst", "rows"}``: ``rows`` holds every probed
    element (``index``, ``analytic``, ``numeric``, ``error``), the worst first; ``worst``
    is the first row. Raises FluidscopeError naming the variable when it is not a
    parameter or has no value yet."""
    program = session.program
    if program is None:
        raise FluidscopeError("check gradient: the session has no program")
    desc = getattr(program, "desc", program)
    var = session.plan.var_descs.get(name)
    if var is None or not var.is_parameter:
        kind = "not a variable of block 0" if var is None else "not a parameter"
        raise FluidscopeError(f"check gradient: '{name}' is {kind}; pick a parameter "
                              f"(e.g. a weight such as fc_0.w_0)")
    loss = loss_of(desc)
    forward = float64_forward(desc)
    scope = Scope()
    for each in forward.blocks[0].vars:
        if not each.persistable or each.name in session.run.feed:
            continue
        tensor = session.tensor(each.name)
        if tensor is None or not hasattr(tensor, "lod"):
            if each.name == name:
                raise FluidscopeError(f"check gradient: '{name}' has no value at this stop; "
                                      f"run the startup program first")
            continue
        scope.var(each.name).get_tensor().set(_float64(tensor.numpy()))
    feed = {key: _float64(value) for key, value in session.run.feed.items()}
    shape = tuple(np.shape(scope.find_var(name).get_tensor().value))
    indices = _sample(shape, samples, seed)
    found = program_grad_report(forward, loss, feed, [name], scope, delta=delta, floor=FLOOR,
                                elements={name: indices})[name]
    error = found["error"]
    run, run_values, run_error = _run_gradient(session, desc, name, indices, found["numeric"])
    order = np.argsort(-np.nan_to_num(error, nan=np.inf), kind="stable")
    rows = [{"index": list(found["indices"][k]), "analytic": float(found["analytic"][k]),
             "numeric": float(found["numeric"][k]), "error": _finite(error[k]),
             "run": None if run_values is None else float(run_values[k]),
             "run_error": None if run_error is None else _finite(run_error[k])}
            for k in order]
    worst = _worst(error)
    return {"parameter": name, "loss": loss, "where": session.position.breadcrumb(),
            "shape": list(shape), "checked": len(indices), "size": int(np.prod(shape)),
            "max_error": _finite(worst), "mean_error": _finite(float(np.mean(error)))
            if error.size else 0.0, "ok": bool(worst <= tolerance), "tolerance": tolerance,
            "run": run, "worst": rows[0] if rows else None, "rows": rows}


def _worst(error):
    return float(np.nan_to_num(error, nan=np.inf).max()) if error.size else 0.0


def _top_op_index(position):
    while position.parent is not None:
        position = position.parent
    return position.op_index


def _run_gradient(session, desc, name, indices, numeric):
    """(summary, values, errors) of the run's own gradient of ``name`` at the probed
    indices; values and errors are None when the stop holds no usable gradient."""
    grad = session.tensor(grad_name(name)) if grad_name(name) in session.plan.var_descs else None
    if grad is None or not hasattr(grad, "lod"):
        return ({"available": False, "reason": f"the run has not computed {grad_name(name)} "
                                               f"at this stop (step into backward)"}, None, None)
    updated = next((k for k, op in enumerate(desc.blocks[0].ops)
                    if phase_of(op) not in (FORWARD, BACKWARD)
                    and any(name in v.arguments for v in op.outputs)), None)
    here = _top_op_index(session.position)
    if updated is not None and here is not None and here >= updated:
        return ({"available": False, "reason": f"op #{updated} "
                 f"{desc.blocks[0].ops[updated].type} has updated {name} since its gradient was "
                 f"computed: stop before it to compare the run's gradient"}, None, None)
    array = to_host(grad.value)
    values = np.array([array[idx] for idx in indices], dtype=np.float64)
    errors = relative_error(values, numeric, FLOOR)
    worst = _worst(errors)
    return ({"available": True, "reason": "", "max_error": _finite(worst),
             "ok": bool(worst <= RUN_TOLERANCE), "tolerance": RUN_TOLERANCE,
             "dtype": str(array.dtype)}, values, errors)


def _finite(value):
    value = float(value)
    return value if np.isfinite(value) else None


__all__ = ["check_parameter_gradient", "float64_forward", "loss_of", "SAMPLES", "TOLERANCE",
           "RUN_TOLERANCE"]
