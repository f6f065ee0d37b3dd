"""Consecutive ``sgd`` updates of a plain run as one step: one dispatch for all of them.

A training program ends with one ``sgd`` op per parameter, back to back (six for a
three-layer MLP). In ``Run.run_to_end`` each was a step of its own: a trip through the
hot loop, a closure call and a kernel call with its checks around two numpy calls, per
parameter (issue #16: the MLP step's time over the numpy floor is per-op interpreter
work). ``fuse_plan`` gives a root plan ``run_steps``: its steps with every run of two or
more consecutive ``sgd`` steps that ``runtime.recycle`` bound as one output with one
dead input (``_one_candidate_run``: ParamOut written into the dead Grad) replaced by one
``FusedUpdates`` step. It does, member after member in program order, what the member's
own ``run`` does: the member's ``_dead_check`` (the ownership rule, still written once,
in ``runtime.recycle``), the update with the same buffer and the same numpy calls as
``kernels.optimizer._sgd_into`` (``multiply(grad, rate, out=buf)`` then
``subtract(param, buf, out=buf)``; any case that check does not cover, a master copy,
another dtype or shape, no buffer, goes to the kernel itself), and the same bookkeeping
of spares. So every output holds the same bytes and the ownership rule's guarantees hold
as before (``tests/engine/test_fused_sgd_updates.py``). Measured: the six updates of the
MLP step of ``benchmarks/mlp_step.py`` take ~4 us less (~105 -> ~101 us).

Only ``run_to_end`` without LoD from the first step uses ``run_steps``: the debugger,
the NaN guard and a run resumed part-way drive ``plan.steps``, one op at a time. An error
in a member is reported as that member's (``FusedUpdates.failed``).
"""
from __future__ import annotations

from .recycle import KEEP, take


class FusedUpdates:
    """Stands in ``plan.run_steps`` for the consecutive ``sgd`` steps ``members``."""
    __slots__ = ("members", "run", "failed", "needs_lod", "lod_agree", "lod_pairs")

    def __init__(self, bound):
        """``bound``: per member, the ``member`` tuple ``_one_candidate_run`` noted."""
        self.members = tuple(b[0] for b in bound)
        self.failed = None  # the member whose error the last run raised
        self.needs_lod, self.lod_agree, self.lod_pairs = False, (), ()
        self.run = self._bind(tuple(bound))

    def _bind(self, bound):
        def run(vals):
            keep = vals[KEEP]
            last_lr = rate = None  # the members share one LearningRate: reshaped once
            step = None
            try:
                for (step, o, spare, args, attrs, into, xp, displace, persist, dead_input,
                     spares) in bound:
                    # _one_candidate_run's body for ParamOut without MasterParamOut
                    buf = None if keep is None else dead_input(vals, keep)
                    if buf is None:
                        taken = False
                        buf = take(spare, 0)
                    else:
                        taken = True
                        spare[0] = None
                    param, lr, grad, master = args(vals)
                    dtype = param.dtype
                    if (master is None and buf is not None and grad.dtype is dtype
                            and buf.dtype is dtype and lr.dtype is dtype
                            and grad.shape == param.shape == buf.shape):
                        if lr is not last_lr:  # _sgd_into's rate, without a cast
                            last_lr, rate = lr, lr.reshape(())
                        xp.multiply(grad, rate, out=buf)
                        xp.subtract(param, buf, out=buf)
                        value = buf
                    else:
                        value = into(xp, attrs, (buf, None), param, lr, grad, master)[0]
                    old = vals[o]
                    vals[o] = value
                    if not taken or value is not buf:
                        spare[0] = old if displace else value
                    elif persist:  # the scope holds value from write-back
                        for sp, j in spares:
                            if sp[j] is value:
                                sp[j] = old
                                break
                        else:
                            spare[0] = old
            except Exception:
                self.failed = step
                raise
        return run


def fuse_plan(plan):
    """Set ``plan.run_steps``: ``plan.steps`` with each run of two or more consecutive
    fusable ``sgd`` steps (see the module docstring) replaced by one ``FusedUpdates``."""
    out, group = [], []
    for step in plan.steps + [None]:
        bound = None if step is None else getattr(step.run, "member", None)
        if bound is not None and step.type == "sgd" and not step.needs_lod:
            group.append(bound)
            continue
        if len(group) >= 2:
            out.append(FusedUpdates(group))
        else:
            out.extend(b[0] for b in group)
        group = []
        if step is not None:
            out.append(step)
    plan.run_steps = out


__all__ = ["FusedUpdates", "fuse_plan"]
