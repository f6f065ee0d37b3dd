"""A run: one execution of a prepared block, as a public object two drivers share.

``Run(plan, scope, feed)`` binds the block's inputs (the feed, else the scope) into a
flat slot list and stands before the first step. ``Executor.run`` drives it to the end
in one tight loop (``run_to_end``); the debugger drives it one step at a time
(``step``), moves it back (``seek``) after restoring the slots it saved, and drives a
frame-driven step frame by frame through the ``FrameRun`` that ``unroll_next`` returns.
At the end ``write_back`` stores the persistable results in the scope and ``fetch``
reads the values asked for.

The slot list plays the part of Paddle's kid scope: the run's temporaries live only
there and are dropped with the run, so the hot loop pays for no dictionary.
"""
from __future__ import annotations

from numpy import ndarray

from ..errors import ExecutionError, FluidscopeError
from .feed import bind_inputs, written_vars
from .heap import settle as settle_heap
from .frames import FrameDrivenOp, FrameRun
from .place import to_host
from .plan import BlockPlan, check_lod_agree
from .recycle import KEEP
from .tensor import LoDTensor
from .threads import RunThreads, decide


class Run:
    """One execution of ``plan`` over ``scope`` with ``feed`` (name -> array or LoDTensor).

    State: ``vals`` / ``lods`` (the slot lists; ``lods`` is None when nothing in the
    block has LoD) and ``next_step`` (index into ``plan.steps`` of the step to run next).
    """
    # slots: a training loop makes one Run per step (no instance dict to build)
    __slots__ = ("plan", "scope", "feed", "vals", "lods", "next_step", "kept", "__weakref__")

    def __init__(self, plan: BlockPlan, scope, feed=None):
        self.plan, self.scope, self.feed = plan, scope, dict(feed or {})
        self.vals, self.lods, self.next_step = None, None, 0
        self.kept = None  # the slots run_to_end(keep) promised to keep; None: all
        self.bind()

    @classmethod
    def bound(cls, plan: BlockPlan, scope, feed, vals) -> "Run":
        """A run whose slot list ``vals`` the caller bound as ``bind`` would (no LoD):
        ``runtime.replay``'s prepared runs."""
        run = cls.__new__(cls)
        run.plan, run.scope, run.feed = plan, scope, feed
        run.vals, run.lods, run.next_step, run.kept = vals, None, 0, None
        return run

    # --------------------------------------------------------------- position
    def bind(self):
        """Bind the inputs again (feed first, then the scope) and stand before step 0."""
        self.vals, self.lods = bind_inputs(self.plan, self.feed, self.scope)
        self.next_step, self.kept = 0, None

    @property
    def finished(self) -> bool:
        """True when every step has run."""
        return self.next_step >= len(self.plan.steps)

    def seek(self, index):
        """Stand before step ``index`` (the debugger restores the slots itself)."""
        if not 0 <= index <= len(self.plan.steps):
            raise FluidscopeError(f"seek: step {index} does not exist; the block has "
                                  f"{len(self.plan.steps)}")
        self.next_step = index

    # ------------------------------------------------------------------ steps
    def run_to_end(self, keep=None):
        """Run every remaining step (the executor's hot loop).

        ``keep``: when given, the slots (``keep_slots``) whose values the caller will
        read afterwards; ops may then write into the arrays of other variables that are
        dead (``runtime.recycle``), and ``fetch`` refuses the rest.

        The body of ``step()`` is written out here on purpose: a method call per op
        costs about as much as a small kernel, and this loop is what ``exe.run`` pays."""
        plan, vals, lods = self.plan, self.vals, self.lods
        if keep is not None:
            self.kept = vals[KEEP] = frozenset(keep)
        steps = plan.steps if self.next_step == 0 else plan.steps[self.next_step:]
        step, threads = None, RunThreads()
        if plan.small_products is None:  # a plan's first run
            decide(plan, vals)
            settle_heap()  # the heap keeps what a step frees for the next (runtime.heap)
        threads.enter(plan)  # one BLAS thread for a plan of small products (runtime.threads)
        try:
            if lods is None:
                for step in steps:
                    step.run(vals)
            else:
                for step in steps:
                    if step.needs_lod:
                        step.run(vals, lods)
                        continue
                    if step.lod_agree:
                        check_lod_agree(step, lods)
                    step.run(vals)
                    for a, b in step.lod_pairs:
                        lods[b] = lods[a]
        except Exception as exc:
            raise self.error_at(step, exc) from exc
        finally:
            threads.leave()
            vals[KEEP] = None
        self.next_step = len(plan.steps)

    def step(self):
        """Run the next step whole; returns it."""
        step, vals, lods = self.plan.steps[self.next_step], self.vals, self.lods
        threads = RunThreads()
        if self.plan.small_products is None:
            decide(self.plan, vals)
            settle_heap()
        threads.enter(self.plan)
        try:
            if lods is None:
                step.run(vals)
            elif step.needs_lod:
                step.run(vals, lods)
            else:
                if step.lod_agree:
                    check_lod_agree(step, lods)
                step.run(vals)
                for a, b in step.lod_pairs:
                    lods[b] = lods[a]
        except Exception as exc:
            raise self.error_at(step, exc) from exc
        finally:
            threads.leave()
        self.next_step += 1
        return step

    def unroll_next(self) -> FrameRun | None:
        """The next step's execution as frames when it is a frame-driven op (the caller
        drives it and then calls ``complete_frames``); None for any other step."""
        control = self.plan.steps[self.next_step].control
        if not isinstance(control, FrameDrivenOp):
            return None
        return control.unroll(self.vals, self.lods)

    def complete_frames(self, frames: FrameRun):
        """Finish the frame-driven step ``unroll_next`` gave, and move past it."""
        frames.finish()
        self.next_step += 1

    # ---------------------------------------------------------------- results
    def write_back(self):
        """Store the persistable results in the scope (parameters, optimizer state)."""
        plan, vals, lods, scope = self.plan, self.vals, self.lods, self.scope
        targets = written_vars(plan, scope) if lods is None else None
        if targets is not None:  # the variables bind_inputs found (the scope is unchanged)
            place = plan.place
            for slot, var in targets:
                tensor = var.get_tensor()  # assign() with its own LoD: only these two change
                tensor.value, tensor.place = vals[slot], place
            return
        for slot, name in plan.persistable_outputs:
            var = scope.find_var(name) or scope.var(name)
            tensor = var.get_tensor()
            lod = lods[slot] if lods is not None and lods[slot] else tensor.lod_offsets
            tensor.assign(vals[slot], lod, plan.place)

    def keep_slots(self, fetch_list=None) -> frozenset:
        """The slots ``fetch(fetch_list)`` reads (names this block does not know are left
        out: ``fetch`` reports them)."""
        plan = self.plan
        if fetch_list is None:
            return frozenset(plan.fetch_cols.values())
        return _fetch_plan(plan, fetch_list)[1]

    def fetch_names(self, fetch_list=None) -> list:
        """Names ``fetch(fetch_list)`` reads: ``fetch_list``'s, or the fetch ops'."""
        if fetch_list is None:
            return [self.plan.names[self.plan.fetch_cols[c]] for c in sorted(self.plan.fetch_cols)]
        return [getattr(item, "name", item) for item in fetch_list]

    def fetch(self, fetch_list=None, return_numpy=True) -> list:
        """Values of ``fetch_list`` (Variables or names; None: what the fetch ops name):
        numpy arrays, or LoDTensors with ``return_numpy=False``."""
        plan, vals, lods = self.plan, self.vals, self.lods
        if fetch_list is None:
            slots = [plan.fetch_cols[c] for c in sorted(plan.fetch_cols)]
        else:
            slots = _fetch_plan(plan, fetch_list)[0]
            if slots is None:
                name = next(n for n in map(_name_of, fetch_list) if n not in plan.slot)
                raise FluidscopeError(
                    f"cannot fetch '{name}': no op of this program reads or writes it")
        if self.kept is not None and not self.kept.issuperset(slots):
            names = [plan.names[s] for s in slots if s not in self.kept]
            raise FluidscopeError(
                f"cannot fetch {names}: this run kept only what it was asked to fetch "
                f"({sorted(plan.names[s] for s in self.kept)}); its other values may have "
                f"been overwritten once dead")
        if return_numpy:
            return host_values(vals, slots)
        out = []
        for s in slots:
            value = vals[s]
            if not hasattr(value, "dtype"):  # a holder such as a recurrent op's StepScopes
                out.append(value)
            else:
                out.append(LoDTensor(value, (lods[s] if lods else None) or None, plan.place))
        return out

    # --------------------------------------------------------------- messages
    def describe(self, step) -> str:
        """'op #3 mul (X: x [4, 3], Y: fc_0.w_0 [5, 2])' for error messages."""
        if step is None:
            return "executor"
        plan, vals, parts = self.plan, self.vals, []
        for var in step.desc.inputs:
            for name in var.arguments:
                value = vals[plan.slot[name]] if name in plan.slot else None
                shape = list(value.shape) if hasattr(value, "shape") else "unset"
                parts.append(f"{var.parameter}: {name} {shape}")
        namescope = step.attrs.get("op_namescope", "")
        layer = f" in layer {namescope.strip('/')}" if namescope not in ("", "/") else ""
        return f"op #{step.index} {step.type}{layer} ({', '.join(parts)})"

    def error_at(self, step, exc) -> ExecutionError:
        """The ExecutionError for ``exc`` raised by ``step``: where, with the shapes it saw
        (a kernel's own exception also names its type)."""
        if isinstance(exc, FluidscopeError):
            return ExecutionError(f"{self.describe(step)}: {exc}")
        return ExecutionError(f"{self.describe(step)}: {type(exc).__name__}: {exc}")


def host_values(vals, slots) -> list:
    """The values of ``slots`` as ``fetch`` returns them with ``return_numpy``: numpy
    arrays (a holder such as a recurrent op's StepScopes as it is)."""
    out = []
    for s in slots:
        value = vals[s]
        if value.__class__ is not ndarray:  # a numpy array as it is: to_host's first case
            value = to_host(value) if hasattr(value, "dtype") else value
        out.append(value)
    return out


def _name_of(item):
    return getattr(item, "name", item)


def _fetch_plan(plan, fetch_list):
    """(slots in order, or None when a name is not in the block; frozenset of the slots it
    knows) of ``fetch_list``, kept per tuple of names: a training loop fetches the same
    names every step."""
    names = tuple(map(_name_of, fetch_list))
    found = plan.fetch_plans.get(names)
    if found is None:
        if len(plan.fetch_plans) >= 64:
            plan.fetch_plans.clear()
        known = [plan.slot[n] for n in names if n in plan.slot]
        found = plan.fetch_plans[names] = (
            tuple(known) if len(known) == len(names) else None, frozenset(known))
    return found


__all__ = ["Run", "host_values"]
