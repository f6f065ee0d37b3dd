"""Run one op in isolation and check its gradient by central differences (reference/004).

Analytic gradients come from the op's own gradient maker and grad kernels, run by the
real executor, exactly as in training. Numeric gradients perturb each input element
by ±delta and differentiate ``L = sum_k sum(W_k * Out_k)`` with fixed random
weights ``W_k`` (which are also the seeds ``Out_k@GRAD`` of the analytic pass).
Use float64 inputs: in float32 the differences drown in rounding.
"""
from __future__ import annotations

import numpy as np

from ..ir import registry
from .backward import append_grad_ops
from ..ir.descs import add_op, add_var, new_program
from ..ir.dtypes import to_var_type
from ..executor import Executor
from ..ir.proto import framework_pb2 as pb
from ..ir.names import grad_name
from ..runtime.scope import Scope
from ..runtime.tensor import LoDTensor


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _array_of(value):
    return value.value if isinstance(value, LoDTensor) else np.asarray(value)


def _declare(block, name, array, lod_level=0, stop_gradient=True):
    return add_var(block, name, array.shape, array.dtype, lod_level=lod_level,
                   stop_gradient=stop_gradient)


def build_single_op(op_type, inputs, attrs=None, wrt=()):
    """A ProgramDesc holding one ``op_type`` op over ``inputs`` (slot -> array, list of
    arrays for duplicable slots, or LoDTensor). Returns (desc, feed, output names).

    Inputs named in ``wrt`` are declared differentiable (stop_gradient False)."""
    opdef = registry.get(op_type)
    desc, block = new_program()
    feed, in_names = {}, {}
    for slot in opdef.inputs:
        if slot.name not in inputs or inputs[slot.name] is None:
            continue
        names = []
        for i, value in enumerate(_as_list(inputs[slot.name])):
            name = f"{slot.name.lower()}_{i}"
            lod_level = len(value.lod()) if isinstance(value, LoDTensor) else 0
            _declare(block, name, _array_of(value), lod_level, stop_gradient=slot.name not in wrt)
            feed[name] = value
            names.append(name)
        in_names[slot.name] = names
    out_names = {}
    for slot in opdef.outputs:
        count = _duplicable_count(attrs or {}) if slot.duplicable else 1
        names = [f"{slot.name.lower()}_out_{i}" for i in range(count)]
        out_names[slot.name] = names
    checked = opdef.parse_attrs(attrs or {})
    add_op(block, op_type, in_names, out_names, {name: checked[name] for name in attrs or {}})
    metas = {s: [registry.VarMeta(tuple(_array_of(v).shape), to_var_type(_array_of(v).dtype),
                                  len(v.lod()) if isinstance(v, LoDTensor) else 0)
                 for v in _as_list(inputs[s])]
             for s in (sl.name for sl in opdef.inputs) if inputs.get(s) is not None}
    inferred = registry.run_infer_shape(opdef, metas, checked)
    for slot, names in out_names.items():
        for i, name in enumerate(names):
            metas_out = inferred.get(slot) or []
            meta = metas_out[i] if i < len(metas_out) else None
            add_var(block, name, meta.shape if meta else (),
                    meta.dtype if meta else pb.VarType.FP32)
    return desc, feed, out_names, inferred


def _duplicable_count(attrs):
    """How many outputs a duplicable output slot gets (split: num or len(sections))."""
    return max(attrs.get("num", 0), len(attrs.get("sections", []))) or 1


def run_op(op_type, inputs, attrs=None, place=None, return_lod=False):
    """Run one op; returns slot -> array (list of arrays for duplicable slots)."""
    desc, feed, out_names, _ = build_single_op(op_type, inputs, attrs)
    flat = [n for names in out_names.values() for n in names]
    values = Executor(place).run(desc, feed=feed, fetch_list=flat, scope=Scope(),
                                 return_numpy=not return_lod)
    by_name = dict(zip(flat, values))
    opdef = registry.get(op_type)
    return {slot: ([by_name[n] for n in names] if opdef.output_slot(slot).duplicable
                   else by_name[names[0]])
            for slot, names in out_names.items()}


def analytic_grads(op_type, inputs, attrs, out_grads, wrt, place=None):
    """Gradients of ``wrt`` input slots given ``out_grads`` (slot -> array or list)."""
    desc, feed, out_names, _ = build_single_op(op_type, inputs, attrs, wrt=wrt)
    block = desc.blocks[0]
    seeded = set()
    for slot, grads in out_grads.items():
        for name, g in zip(out_names[slot], _as_list(grads)):
            _declare(block, grad_name(name), np.asarray(g))
            feed[grad_name(name)] = np.asarray(g)
            seeded.add(grad_name(name))
    no_grad = {v.name for v in block.vars if v.stop_gradient}
    append_grad_ops(desc, 0, list(block.ops), seeded, no_grad)
    wanted = [grad_name(n) for slot in wrt for n in _input_names(block.ops[0], slot)]
    values = Executor(place).run(desc, feed=feed, fetch_list=wanted, scope=Scope())
    out, k = {}, 0
    for slot in wrt:
        n = len(_input_names(block.ops[0], slot))
        out[slot] = values[k:k + n] if isinstance(inputs[slot], list) else values[k]
        k += n
    return out


def _input_names(op, slot):
    return next(list(v.arguments) for v in op.inputs if v.parameter == slot)


def numeric_grads(op_type, inputs, attrs, weights, wrt, delta=1e-6):
    """Central differences of L = sum_k sum(W_k * Out_k) for each input slot in ``wrt``."""
    def loss(current):
        outs = run_op(op_type, current, attrs)
        total = 0.0
        for slot, w in weights.items():
            for o, wk in zip(_as_list(outs[slot]), _as_list(w)):
                total += float(np.sum(np.asarray(o, dtype=np.float64) * wk))
        return total

    grads = {}
    for slot in wrt:
        per_tensor = []
        for t_index, value in enumerate(_as_list(inputs[slot])):
            base = _array_of(value).astype(np.float64)
            g = np.zeros_like(base)
            for idx in np.ndindex(base.shape):
                for sign in (1, -1):
                    probe = base.copy()
                    probe[idx] += sign * delta
                    g[idx] += sign * loss(_replace(inputs, slot, t_index, probe, value))
                g[idx] /= 2 * delta
            per_tensor.append(g)
        grads[slot] = per_tensor if isinstance(inputs[slot], list) else per_tensor[0]
    return grads


def _replace(inputs, slot, t_index, array, original):
    new = dict(inputs)
    if isinstance(original, LoDTensor):
        array = LoDTensor(array, original.lod())
    if isinstance(inputs[slot], list):
        items = list(inputs[slot])
        items[t_index] = array
        new[slot] = items
    else:
        new[slot] = array
    return new


def differentiable_slots(op_type, inputs):
    """Input slots of ``op_type`` that take a gradient and hold floating data."""
    opdef = registry.get(op_type)
    return [s.name for s in opdef.inputs
            if not s.no_grad and inputs.get(s.name) is not None
            and all(np.issubdtype(_array_of(v).dtype, np.floating) for v in _as_list(inputs[s.name]))]


def relative_error(analytic, numeric, floor):
    """|a - n| / max(|a|, |n|, floor) per element: NaN where one side is NaN or Inf and
    the other differs, so a NaN gradient never passes silently; 0 where both sides are
    NaN or the same Inf (a gradient that is undefined there either way)."""
    with np.errstate(invalid="ignore"):
        err = np.abs(analytic - numeric) / np.maximum(
            np.maximum(np.abs(analytic), np.abs(numeric)), floor)
    agree = (np.isnan(analytic) & np.isnan(numeric)) | (analytic == numeric)
    return np.where(agree, 0.0, err)


def _position(err):
    """Index (plain ints) of the worst element, a NaN counting as the worst."""
    flat = int(np.nan_to_num(err, nan=np.inf).argmax())
    return tuple(int(k) for k in np.unravel_index(flat, err.shape))


def check_grad(op_type, inputs, attrs=None, wrt=None, outputs=None, delta=1e-6,
               rtol=1e-5, floor=1e-3, seed=0):
    """Compare analytic and numeric gradients; raise AssertionError naming the slot,
    the element and both values when the floored relative error exceeds ``rtol``.
    Returns the largest error seen."""
    rng = np.random.default_rng(seed)
    wrt = list(wrt) if wrt is not None else differentiable_slots(op_type, inputs)
    opdef = registry.get(op_type)
    base = run_op(op_type, inputs, attrs)
    outputs = outputs or [s.name for s in opdef.outputs if not s.intermediate]
    weights = {s: [rng.uniform(0.5, 1.5, np.shape(o)) for o in _as_list(base[s])] for s in outputs}
    weights = {s: (w if isinstance(base[s], list) else w[0]) for s, w in weights.items()}
    analytic = analytic_grads(op_type, inputs, attrs, weights, wrt)
    numeric = numeric_grads(op_type, inputs, attrs, weights, wrt, delta)
    worst = 0.0
    for slot in wrt:
        for i, (a, n) in enumerate(zip(_as_list(analytic[slot]), _as_list(numeric[slot]))):
            a = np.asarray(a, dtype=np.float64)
            if a.shape != n.shape:
                raise AssertionError(
                    f"{op_type}: gradient of {slot}[{i}] has shape {a.shape}, input has {n.shape}")
            err = relative_error(a, n, floor)
            if err.size and not err.max() <= rtol:  # a NaN error fails too
                at = _position(err)
                raise AssertionError(
                    f"{op_type}: gradient of {slot}[{i}] at {at}: analytic {a[at]:.8g}, "
                    f"numeric {n[at]:.8g} (relative error {err.max():.3g} > {rtol})")
            worst = max(worst, float(err.max()) if err.size else 0.0)
    return worst


def program_grad_report(program_desc, loss_name, feed, wrt, scope, delta=1e-6, floor=1e-3,
                        elements=None):
    """The generated backward of ``loss_name`` against central differences, unjudged.

    ``wrt``: names of fed variables or of parameters already set in ``scope`` (float64).
    ``elements``: name -> index tuples to probe (default: every element; a large
    parameter is checked on a sample, since each element costs two forward runs).
    Returns name -> ``{"indices", "analytic", "numeric", "error"}``: the probed indices
    and, per index, both gradients and the floored relative error (float64 arrays).
    The values in ``scope`` and ``feed`` are restored after each probe."""
    from .backward import append_backward_desc  # local: backward imports nothing from here

    grad_desc = pb.ProgramDesc.FromString(program_desc.SerializeToString())
    for block in grad_desc.blocks:
        for v in block.vars:
            if v.name in wrt:
                v.stop_gradient = False
    append_backward_desc(grad_desc, loss_name)
    exe = Executor()
    analytic = exe.run(grad_desc, feed=feed, fetch_list=[grad_name(n) for n in wrt], scope=scope)

    def loss():
        return float(np.sum(exe.run(program_desc, feed=feed, fetch_list=[loss_name],
                                    scope=scope)[0]))

    report = {}
    for name, a in zip(wrt, analytic):
        if name in feed:
            holder = feed[name]
            array = holder.value if isinstance(holder, LoDTensor) else holder
        else:
            array = scope.find_var(name).get_tensor().value
        chosen = (elements or {}).get(name)
        indices = list(np.ndindex(array.shape)) if chosen is None else [tuple(i) for i in chosen]
        numeric = np.zeros(len(indices))
        for k, idx in enumerate(indices):
            saved = array[idx]
            for sign in (1, -1):
                array[idx] = saved + sign * delta
                numeric[k] += sign * loss()
            array[idx] = saved
            numeric[k] /= 2 * delta
        a = np.asarray(a, dtype=np.float64)
        picked = np.array([a[idx] for idx in indices], dtype=np.float64)
        report[name] = {"indices": indices, "analytic": picked, "numeric": numeric,
                        "error": relative_error(picked, numeric, floor)}
    return report


def check_program_grad(program_desc, loss_name, feed, wrt, scope, delta=1e-6, rtol=1e-6,
                       floor=1e-3, elements=None):
    """Whole-program gradient check: the backward the generic ``append_backward`` builds
    for ``loss_name`` against central differences of the forward program.

    ``wrt``: names of fed variables or of parameters already set in ``scope`` (float64);
    ``elements`` as in ``program_grad_report``.
    Works for any program, control flow included (recurrent groups). Raises
    AssertionError naming the variable, the element and both values; returns the largest
    floored relative error."""
    report = program_grad_report(program_desc, loss_name, feed, wrt, scope, delta, floor,
                                 elements)
    worst = 0.0
    for name in wrt:
        found = report[name]
        err = found["error"]
        if err.size and not err.max() <= rtol:  # a NaN error fails too
            k = _position(err)[0]
            raise AssertionError(
                f"gradient of {name} at {found['indices'][k]}: analytic "
                f"{found['analytic'][k]:.8g}, numeric {found['numeric'][k]:.8g} "
                f"(relative error {err.max():.3g} > {rtol})")
        worst = max(worst, float(err.max()) if err.size else 0.0)
    return worst
