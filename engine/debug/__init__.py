"""The step-through debugger: ``Session`` over a ``Run`` (``Executor.debug`` makes one).

* ``session``: ``Session``, the public API (step, step_into, step_out, continue_, run_to,
  back, breakpoints, reading tensors and frames);
* ``stepper``: ``Stepper``, which drives the run one event at a time and undoes events;
* ``history``: ``History`` and ``UndoRecord``, the bounded undo log;
* ``types``: ``Position``, ``Breakpoint``, ``FrameInfo``.
"""
