"""Grad-block steps of element-wise products, differences, gate concatenations and the
sums of a memory's gradients, run without their kernels' dispatch in a plain run of
``recurrent_grad`` (issue #16).

A GRU or LSTM step net multiplies gates element-wise (``r * h_prev``, ``u * (c - h_prev)``,
``f * c_prev``), subtracts (``c - h_prev``) and splits its gate block; the generic
backward gives each frame an ``elementwise_mul_grad`` (dX = dOut * Y, dY = dOut * X), an
``elementwise_sub_grad`` (dX = dOut, dY = -dOut), a ``split_grad`` (the parts'
gradients concatenated along the split's axis) and a ``sum`` of the gradients each use
of a value gets (a GRU's h_{t-1}: four). On a small group's frame (32 x 128) the
way to the numpy calls costs about as much as they do: the plan's closure, the kernel's
wanted-outputs and broadcast checks, its result tuple (measured 4.3 us for a product's
gradient whose two multiplies take 3.3 us, 3.2 us for a concatenation of 2.1 us, 3.8 us
for a sum of four of 3.1 us).

A plain run (``RecurrentBackward.run``) calls the closures below instead: the kernel's
own fast-path condition written out (operands of one shape; a ``split_grad`` along the
last axis of 2-D parts, no AxisTensor; a ``sum`` whose first two arrays have one shape
and dtype) and then the very numpy calls the kernel makes
there, in its order, so the gradients have its bits; anything else runs the op as always.
The debugger and the NaN guard run every op as it is (tests/engine/test_recurrent_direct_grads.py
compares the bytes of the closures with the kernels').
"""
from __future__ import annotations

import numpy as np

from ..ir.registry import OUTPUTS_WANTED

DIRECT_KINDS = {"elementwise_mul_grad": "mul", "elementwise_sub_grad": "sub",
                "split_grad": "concat", "sum": "sum"}


def find_direct(grad, skip=()):
    """{position: kind} of the grad block ``grad``'s steps the closures below may run, but
    those in ``skip`` (batched products, row writers: they have their own plain runs)."""
    found = {}
    for pos, step in enumerate(grad.steps):
        kind = DIRECT_KINDS.get(step.type)
        if kind is None or pos in skip:
            continue
        if kind == "concat":
            parts = step.ins[1] if len(step.ins) == 2 else None
            if (not step.ins[0] and isinstance(parts, tuple) and parts and all(parts)
                    and len(step.outs) == 1 and isinstance(step.outs[0], int) and step.outs[0]
                    and step.attrs.get("axis") in (1, -1)):
                found[pos] = kind
        elif kind == "sum":
            (parts,) = step.ins if len(step.ins) == 1 else (None,)
            if (isinstance(parts, tuple) and len(parts) >= 2 and all(parts)
                    and len(step.outs) == 1 and isinstance(step.outs[0], int) and step.outs[0]):
                found[pos] = kind
        elif (len(step.ins) == 3 and len(step.outs) == 2
              and all(isinstance(s, int) for s in step.ins + step.outs)):
            found[pos] = kind
    return found


def direct_run(step, kind):
    """``run(gvals)`` of ``step`` (found by ``find_direct`` as ``kind``) for a plain run:
    the kernel's numpy calls where the kernel takes its fast path, else ``step.run``."""
    whole, ndarray = step.run, np.ndarray
    if kind == "concat":
        parts, (out,) = step.ins[1], step.outs
        concatenate = np.concatenate

        def run(gvals):
            douts = [gvals[s] for s in parts]
            for d in douts:
                if d.__class__ is not ndarray or d.ndim != 2:
                    whole(gvals)
                    return
            # kernels.shape: concatenate along the axis made non-negative (1 of 2-D parts)
            gvals[out] = concatenate(douts, axis=1)
        return run
    if kind == "sum":
        (parts,), (out,) = step.ins, step.outs
        first, second, rest = parts[0], parts[1], parts[2:]

        def run(gvals):
            a, b = gvals[first], gvals[second]
            if (a.__class__ is ndarray and b.__class__ is ndarray and a.ndim
                    and a.shape == b.shape and a.dtype == b.dtype):
                # kernels.reduce: the first add makes the result, the others add into it
                total = a + b
                for s in rest:
                    total += gvals[s]
                gvals[out] = total
            else:
                whole(gvals)
        return run
    (xs, ys, gs), (dxs, dys) = step.ins, step.outs
    want = step.attrs.get(OUTPUTS_WANTED) or (True, True)
    want_dx, want_dy = bool(want[0]) and dxs, bool(want[1]) and dys

    if kind == "mul":
        def run(gvals):
            x, y, g = gvals[xs], gvals[ys], gvals[gs]
            if (g.__class__ is ndarray and x.__class__ is ndarray and y.__class__ is ndarray
                    and x.shape == y.shape == g.shape):
                # kernels.elementwise: dX = dOut * Y, dY = dOut * X, each where wanted
                if dxs:
                    gvals[dxs] = g * y if want_dx else None
                if dys:
                    gvals[dys] = g * x if want_dy else None
            else:
                whole(gvals)
        return run

    def run(gvals):  # "sub"
        x, y, g = gvals[xs], gvals[ys], gvals[gs]
        if (g.__class__ is ndarray and x.__class__ is ndarray and y.__class__ is ndarray
                and x.shape == y.shape == g.shape):
            # kernels.elementwise: dX = dOut (the array itself), dY = -dOut
            if dxs:
                gvals[dxs] = g if want_dx else None
            if dys:
                gvals[dys] = -g if want_dy else None
        else:
            whole(gvals)
    return run


__all__ = ["find_direct", "direct_run", "DIRECT_KINDS"]
