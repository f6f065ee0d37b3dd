"""Running a prepared block: places, tensors, scopes, plans, a ``Run`` and frame-driven ops.

* ``place``: ``CPUPlace`` / ``CUDAPlace`` and the array module ``xp`` they give kernels;
* ``tensor``: ``LoDTensor``; ``scope``: hierarchical ``Scope``;
* ``plan``: ``BlockPlan``, a block prepared once (slots, bound kernels);
* ``feed``: binding a run's inputs from the feed and the scope;
* ``run``: ``Run``, one execution of a plan, driven whole or step by step;
* ``replay``: ``PreparedRun``, the work around a training loop's plain runs done once;
* ``frames``: the interface of frame-driven ops (``recurrent``) both drivers use;
* ``nan_guard``: a run driven op by op that stops at the first NaN or Inf written
  (``Executor.run(check_nan_inf=True)``, ``FLAGS_check_nan_inf``).

The runtime never imports the debugger, the recurrent op or autodiff.
"""
