"""Grad-block steps that hand a gradient on unchanged, run without their kernel's dispatch
in a plain run of ``recurrent_grad`` (issue #16).

The generic backward of a step net makes ops whose output is their input itself: the
``elementwise_add_grad`` of a sum of two equal-shaped values (an LSTM's ``c = f * c_prev +
i * c~``, its gates' ``x_proj + h_prev @ W``) returns dOut as dX and as dY, and the
identity ``scale`` that is the gradient of ``sum`` (an fc of two inputs) returns X.
Their kernels (``kernels.elementwise``) return those very arrays after checking attributes
and shapes, reading the wanted outputs and building a result tuple: ~1-1.5 us per op per
frame, against ~6 us for all the numpy work of a small hand-written BPTT frame.

A plain run (``RecurrentBackward.run``) calls the closures below instead: the same checks
written out once per step, the same arrays stored in the same slots (so the gradients
have the kernel's bits and the very arrays: a ``row_writers`` view is handed on as before),
and the op's own ``run`` wherever the operands are not the plain case. The debugger and
the NaN guard run every op as it is.
"""
from __future__ import annotations

import numpy as np

from ..ir.registry import OUTPUTS_WANTED


def _identity_scale(step):
    attrs = step.attrs
    return (attrs.get("scale") == 1.0 and attrs.get("bias") == 0.0 and len(step.ins) == 3
            and not step.ins[1] and not step.ins[2] and len(step.outs) == 1)


def _plain_slots(step):
    return all(isinstance(s, int) for s in step.ins + step.outs)


def find_pass_throughs(grad, skip=()):
    """{position: kind} of the grad block ``grad``'s steps that may hand their input on
    ("add": elementwise_add_grad, "scale": identity scale), but those in ``skip``."""
    found = {}
    for pos, step in enumerate(grad.steps):
        if pos in skip or not _plain_slots(step):
            continue
        if step.type == "elementwise_add_grad" and len(step.ins) == 3 and len(step.outs) == 2:
            found[pos] = "add"
        elif step.type == "scale" and _identity_scale(step):
            found[pos] = "scale"
    return found


def pass_through_run(step, kind):
    """``run(gvals)`` of ``step`` (found by ``find_pass_throughs`` as ``kind``) for a plain
    run: its input handed on where the kernel would return it, else ``step.run``."""
    whole, ndarray = step.run, np.ndarray
    if kind == "scale":
        (xs, _, _), (out,) = step.ins, step.outs

        def run(gvals):
            x = gvals[xs]
            if x.__class__ is ndarray and x.dtype.kind == "f":
                gvals[out] = x  # what the identity scale returns
            else:
                whole(gvals)
        return run
    (xs, ys, gs), (dxs, dys) = step.ins, step.outs
    want = step.attrs.get(OUTPUTS_WANTED) or (True, True)
    want_dx, want_dy = bool(want[0]), bool(want[1])

    def run(gvals):
        x, y, g = gvals[xs], gvals[ys], gvals[gs]
        if (g.__class__ is ndarray and x is not None and y is not None
                and x.shape == g.shape and y.shape == g.shape):
            # nothing broadcast: dX = dY = dOut, each where wanted (else None), as the
            # kernel returns them
            if dxs:
                gvals[dxs] = g if want_dx else None
            if dys:
                gvals[dys] = g if want_dy else None
        else:
            whole(gvals)
    return run


__all__ = ["find_pass_throughs", "pass_through_run"]
