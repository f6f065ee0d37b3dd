"""Recurrent groups: the ``recurrent`` op and its gradient, run frame by frame.

* ``common``: what both share (attributes, the step layout, memories' metadata);
* ``op``: the forward (``RecurrentForward`` -> ``Unroll``), RecurrentGradientMachine
  frame unrolling;
* ``grad``: ``recurrent_grad`` (``RecurrentBackward`` -> ``BackUnroll``), the frames in
  reverse;
* ``step_scopes``: ``StepScopes``, the frames a forward run keeps.

Both ops implement ``runtime.frames.FrameDrivenOp``, the interface ``Run`` and the
debugger drive. Importing this package registers both ops.
"""
from . import grad, op  # noqa: F401  (registers recurrent and recurrent_grad)
from .step_scopes import StepScopes

__all__ = ["StepScopes"]
