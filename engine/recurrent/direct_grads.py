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

A plain run (``RecurrentBackward.run``) calls the kernels' own functions instead, with
nothing around them: an element-wise gradient's ``same_shapes`` (what its kernel computes
when nothing is broadcast) once the closure has seen one shape in X, Y and dOut, and the
``sum`` and ``split_grad`` kernels on the gathered numpy arrays (their checks are their
own), so the gradients are the kernels' bits by construction; anything else (a missing
part, a device array) runs the op as always. The debugger and the NaN guard run every op
through its plan (tests/engine/test_recurrent_direct_grads.py compares the bytes).
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
              and all(isinstance(s, int) for s in step.ins + step.outs)
              and getattr(step.kernel, "same_shapes", None) is not None):
            found[pos] = kind
    return found


def direct_run(step, kind):
    """``run(gvals)`` of ``step`` (found by ``find_direct`` as ``kind``) for a plain run:
    the kernel's own function without the plan's dispatch (module docstring)."""
    kernel, attrs, whole, ndarray = step.kernel, step.attrs, step.run, np.ndarray
    if kind in ("concat", "sum"):
        parts, (out,) = step.ins[-1], step.outs
        # split_grad(xp, attrs, AxisTensor, douts); sum(xp, attrs, xs)
        lead = (None,) if kind == "concat" else ()

        def run(gvals):
            arrays = [gvals[s] for s in parts]
            for a in arrays:
                if a.__class__ is not ndarray:  # a missing part, a device array: the op
                    whole(gvals)
                    return
            gvals[out] = kernel(np, attrs, *lead, arrays)
        return run
    same_shapes = kernel.same_shapes
    (xs, ys, gs), (dxs, dys) = step.ins, step.outs
    want = step.attrs.get(OUTPUTS_WANTED) or (True, True)
    want = (bool(want[0] and dxs), bool(want[1] and dys))

    def run(gvals):
        x, y, g = gvals[xs], gvals[ys], gvals[gs]
        if (g.__class__ is ndarray and x.__class__ is ndarray and y.__class__ is ndarray
                and x.shape == y.shape == g.shape):
            dx, dy = same_shapes(np, x, y, g, want)
            if dxs:
                gvals[dxs] = dx
            if dys:
                gvals[dys] = dy
        else:
            whole(gvals)
    return run


__all__ = ["find_direct", "direct_run", "DIRECT_KINDS"]
