"""Optimizers as ops: ``sgd``, ``momentum``, ``adam`` (Paddle's slots and formulas).

Kernels are pure: they return new arrays. A program names ``ParamOut`` like ``Param``
(and ``VelocityOut`` like ``Velocity``...), so the executor's write of the output is
the update. The learning rate is a tensor of one element. ``sgd`` also has a
``kernel_into``: a plain run hands it the parameter array of the step before last, which
nobody can reach any more (``runtime.recycle``), and the update is written there rather
than into a fresh array; the array the scope holds is never written.

With ``multi_precision`` and a ``MasterParam`` (a float32 copy of a float16
parameter) the update runs on the master copy and ``ParamOut`` is its cast.
"""
from ..errors import ExecutionError
from ..ir.registry import Attr, AttrType, Slot, one_of, register


def _scalar(xp, tensor, dtype):
    """A one-element tensor as a 0-d array of ``dtype``, so that arithmetic with it
    keeps the parameter's dtype (a float64 0-d array would promote float32 arrays)."""
    return tensor.reshape(()).astype(dtype, copy=False)


def _working_copy(attrs, param, master, grad):
    """(param, grad) the update runs on: the master copy under multi_precision."""
    if attrs["multi_precision"] and master is not None:
        return master, grad.astype(master.dtype, copy=False)
    return param, grad


def _outputs(attrs, param, master, new_param):
    """(ParamOut, MasterParamOut) from the updated working copy; an unused master
    passes through unchanged (its out var is usually the same var)."""
    if attrs["multi_precision"] and master is not None:
        return new_param.astype(param.dtype), new_param
    return new_param, master


# ------------------------------------------------------------------------ sgd
def _sgd(xp, attrs, param, lr, grad, master):
    work, grad = _working_copy(attrs, param, master, grad)
    out = grad * _scalar(xp, lr, work.dtype)  # the only full-size allocation
    xp.subtract(work, out, out=out)
    return _outputs(attrs, param, master, out)


# The learning rate of the last sgd call and its 0-d view: a training step's updates all
# read one rate variable, and the view (which shares its memory, so it sees a rate written
# in place) spares each of them a reshape; multiplying by the 0-d view rather than by the
# [1] rate keeps numpy's scalar loop (a broadcast [1] operand costs more than the reshape).
_last_rate = [(None, None)]  # [(rate, its 0-d view)]: one tuple, replaced whole (threads)


def _rate(lr):
    """``lr`` (one element) as a 0-d array, the view kept from the last call when ``lr``
    is the same array."""
    kept, view = _last_rate[0]
    if kept is lr:
        return view
    view = lr.reshape(())
    _last_rate[0] = (lr, view)
    return view


def _sgd_into(xp, attrs, bufs, param, lr, grad, master):
    """``_sgd`` writing ParamOut into ``bufs[0]`` when it fits (not under multi_precision).
    The buffer may be Grad's own array (a dead gradient: the ``inplace`` pair), as the
    hand-written ``grad *= lr; param -= grad`` does: element-wise, so that is safe."""
    out = bufs[0]  # checks written out: six calls a step for an MLP (as fitting)
    dtype = param.dtype
    if out is grad and master is None:
        # the dead gradient (every update of a plain training step): the buffer is Grad,
        # so its shape and dtype are Grad's, which Param's must equal (dtypes are mostly
        # the same object: ``is`` first); fewer reads after a large product has evicted
        # the interpreter's data, the same ufunc calls
        seen = grad.dtype
        if (seen is dtype or seen == dtype) and grad.shape == param.shape:
            rate = _rate(lr)
            seen = rate.dtype
            xp.multiply(grad, rate if seen is dtype or seen == dtype else rate.astype(dtype),
                        out=out)
            xp.subtract(param, out, out=out)
            return out, master
    if (out is None or (master is not None and attrs["multi_precision"])
            or grad.dtype != dtype or out.dtype != dtype
            or grad.shape != param.shape or out.shape != param.shape):
        return _sgd(xp, attrs, param, lr, grad, master)
    rate = _rate(lr)  # _scalar: a cast only when the rate has another dtype
    xp.multiply(grad, rate if rate.dtype == dtype else rate.astype(dtype), out=out)
    xp.subtract(param, out, out=out)
    return out, master


# ------------------------------------------------------------------- momentum
def _momentum(xp, attrs, param, grad, velocity, lr, master):
    work, grad = _working_copy(attrs, param, master, grad)
    mu = attrs["mu"]
    if attrs["rescale_grad"] != 1.0:
        # As documented and as Paddle's GPU kernel does; its CPU kernel ignores it.
        grad = grad * attrs["rescale_grad"]
    if attrs["regularization_method"] == "l2_decay":
        grad = grad + attrs["regularization_coeff"] * work
    velocity_out = velocity * mu
    velocity_out += grad
    rate = _scalar(xp, lr, work.dtype)
    if attrs["use_nesterov"]:
        step = velocity_out * mu
        step += grad
        step *= rate
    else:
        step = velocity_out * rate
    xp.subtract(work, step, out=step)
    param_out, master_out = _outputs(attrs, param, master, step)
    return param_out, velocity_out, master_out


# ----------------------------------------------------------------------- adam
def _adam(xp, attrs, param, grad, lr, moment1, moment2, moment2_max, beta1_pow, beta2_pow,
          master, skip_update, beta1_tensor, beta2_tensor, epsilon_tensor):
    if skip_update is not None and bool(skip_update.reshape(())):
        return param, moment1, moment2, moment2_max, beta1_pow, beta2_pow, master
    work, grad = _working_copy(attrs, param, master, grad)
    dtype = work.dtype
    beta1 = attrs["beta1"] if beta1_tensor is None else _scalar(xp, beta1_tensor, dtype)
    beta2 = attrs["beta2"] if beta2_tensor is None else _scalar(xp, beta2_tensor, dtype)
    eps = attrs["epsilon"] if epsilon_tensor is None else _scalar(xp, epsilon_tensor, dtype)
    b1p, b2p = _scalar(xp, beta1_pow, dtype), _scalar(xp, beta2_pow, dtype)
    # Paddle's placement: the bias corrections fold into the rate, and epsilon is
    # scaled by sqrt(1 - beta2^t) so it sits where it would on the corrected moment.
    correction = xp.sqrt(1 - b2p)
    rate = _scalar(xp, lr, dtype) * correction / (1 - b1p)
    m1 = moment1 * beta1
    m1 += (1 - beta1) * grad
    m2 = moment2 * beta2
    m2 += (1 - beta2) * grad * grad
    if attrs["amsgrad"]:
        if moment2_max is None:
            raise ExecutionError("op adam: amsgrad=True needs the Moment2Max input")
        m2_max = xp.maximum(m2, moment2_max)
        denom = xp.sqrt(m2_max)
    else:
        m2_max = moment2_max  # passes through: its out var is usually the same var
        denom = xp.sqrt(m2)
    denom += eps * correction
    step = m1 / denom
    step *= rate
    xp.subtract(work, step, out=step)
    if attrs["use_global_beta_pow"]:
        b1p_out, b2p_out = beta1_pow, beta2_pow  # updated elsewhere, once for all params
    else:
        b1p_out, b2p_out = beta1_pow * beta1, beta2_pow * beta2
    param_out, master_out = _outputs(attrs, param, master, step)
    return param_out, m1, m2, m2_max, b1p_out, b2p_out, master_out


# ------------------------------------------------------------ shape inference
def _same(ctx, slot, ref, ref_slot="Param"):
    meta = ctx.input(slot)
    if meta is None:
        ctx.fail(f"needs {slot}", slot=slot)
    if len(meta.shape) != len(ref.shape) or any(
            a != b and a >= 0 and b >= 0 for a, b in zip(meta.shape, ref.shape)):
        ctx.fail(f"{slot} {list(meta.shape)} must have {ref_slot}'s shape {list(ref.shape)}",
                 slot=slot)
    return meta


def _one_element(ctx, slot):
    meta = ctx.input(slot)
    if meta is None:
        ctx.fail(f"needs {slot}", slot=slot)
    n = 1
    for d in meta.shape:
        n = -1 if d < 0 or n < 0 else n * d
    if n not in (1, -1):
        ctx.fail(f"{slot} {list(meta.shape)} must hold one element", slot=slot)
    return meta


def _infer_optimizer(state_pairs, scalar_pairs=()):
    """infer_shape for an optimizer: ParamOut like Param, each (in, out) state pair like
    its input (checked against Param), each one-element (in, out) pair like its input."""
    def infer(ctx):
        param = ctx.input("Param")
        _same(ctx, "Grad", param)
        _one_element(ctx, "LearningRate")
        ctx.set_output("ParamOut", param.shape, like=param)
        for slot_in, slot_out in state_pairs:
            meta = ctx.input(slot_in)
            if meta is not None:
                _same(ctx, slot_in, param)
                ctx.set_output(slot_out, meta.shape, like=meta)
        for slot_in, slot_out in scalar_pairs:
            meta = _one_element(ctx, slot_in)
            ctx.set_output(slot_out, meta.shape, like=meta)
        master = ctx.input("MasterParam")
        if master is not None:
            _same(ctx, "MasterParam", param)
            ctx.set_output("MasterParamOut", master.shape, like=master)
    return infer


def _d(name, doc=""):
    return Slot(name, dispensable=True, no_grad=True, doc=doc)


_MULTI_PRECISION = Attr("multi_precision", AttrType.BOOLEAN, False,
                        doc="update the float32 MasterParam; ParamOut is its cast")

register(
    "sgd",
    inputs=["Param", Slot("LearningRate", doc="[1]"), "Grad",
            _d("MasterParam", "float32 copy of a float16 Param")],
    outputs=["ParamOut", Slot("MasterParamOut", dispensable=True)],
    attrs=[_MULTI_PRECISION],
    infer_shape=_infer_optimizer(()), kernel=_sgd, kernel_into=_sgd_into,
    inplace=(("Grad", "ParamOut"),), share_lod=(),
    doc="ParamOut = Param - LearningRate * Grad", category="optimizer")

register(
    "momentum",
    inputs=["Param", "Grad", "Velocity", Slot("LearningRate", doc="[1]"), _d("MasterParam")],
    outputs=["ParamOut", "VelocityOut", Slot("MasterParamOut", dispensable=True)],
    attrs=[Attr("mu", AttrType.FLOAT, doc="momentum factor"),
           Attr("use_nesterov", AttrType.BOOLEAN, False),
           Attr("regularization_method", AttrType.STRING, "", checker=one_of("", "l2_decay")),
           Attr("regularization_coeff", AttrType.FLOAT, 0.0),
           _MULTI_PRECISION,
           Attr("rescale_grad", AttrType.FLOAT, 1.0, doc="Grad is multiplied by it first")],
    infer_shape=_infer_optimizer((("Velocity", "VelocityOut"),)), kernel=_momentum,
    share_lod=(),
    doc="VelocityOut = mu*Velocity + Grad; ParamOut = Param - lr*VelocityOut "
        "(Nesterov: Param - lr*(Grad + mu*VelocityOut))",
    category="optimizer")

register(
    "adam",
    inputs=["Param", "Grad", Slot("LearningRate", doc="[1]"), "Moment1", "Moment2",
            _d("Moment2Max", "running max of Moment2 (amsgrad)"),
            Slot("Beta1Pow", doc="[1]: beta1^t"), Slot("Beta2Pow", doc="[1]: beta2^t"),
            _d("MasterParam"), _d("SkipUpdate", "bool [1]: true leaves everything as is"),
            _d("Beta1Tensor", "[1]: overrides beta1"), _d("Beta2Tensor", "[1]: overrides beta2"),
            _d("EpsilonTensor", "[1]: overrides epsilon")],
    outputs=["ParamOut", "Moment1Out", "Moment2Out", Slot("Moment2MaxOut", dispensable=True),
             "Beta1PowOut", "Beta2PowOut", Slot("MasterParamOut", dispensable=True)],
    attrs=[Attr("beta1", AttrType.FLOAT, 0.8999999761581421),
           Attr("beta2", AttrType.FLOAT, 0.9990000128746033),
           Attr("epsilon", AttrType.FLOAT, 9.99999993922529e-09),
           Attr("lazy_mode", AttrType.BOOLEAN, False, doc="sparse gradients only; no effect"),
           Attr("min_row_size_to_use_multithread", AttrType.LONG, 1000, doc="no effect here"),
           _MULTI_PRECISION,
           Attr("use_global_beta_pow", AttrType.BOOLEAN, False,
                doc="leave Beta1Pow/Beta2Pow as they are (updated elsewhere)"),
           Attr("amsgrad", AttrType.BOOLEAN, False, doc="divide by the running max of Moment2")],
    infer_shape=_infer_optimizer(
        (("Moment1", "Moment1Out"), ("Moment2", "Moment2Out"), ("Moment2Max", "Moment2MaxOut")),
        (("Beta1Pow", "Beta1PowOut"), ("Beta2Pow", "Beta2PowOut"))),
    kernel=_adam, share_lod=(),
    doc="ParamOut = Param - lr*sqrt(1-b2^t)/(1-b1^t) * m1 / (sqrt(m2) + eps*sqrt(1-b2^t))",
    category="optimizer")

