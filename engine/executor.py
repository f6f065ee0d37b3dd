"""The Executor: runs a block of a ProgramDesc on a place, over a scope.

``Executor(place).run(program, feed, fetch_list, scope)`` prepares the block once into
a ``BlockPlan`` (cached per program version and place), binds its inputs from the
feed and the scope, runs every step on a flat list of slots, writes persistable
results back to the root scope and returns the fetched values.

Persistable variables (parameters, optimizer state) live in the root scope. The
run's temporaries live only in the slot list, which plays the part of Paddle's kid
scope: like Paddle's, it is dropped at the end of the run, so nothing outside can
see the difference, and the hot loop pays for no dictionary.
"""
from __future__ import annotations

import numpy as np

from .errors import ExecutionError, FluidscopeError
from .place import CPUPlace, to_host
from .plan import BlockPlan, check_lod_agree
from .scope import global_scope
from .tensor import LoDTensor, check_lod


def program_desc_of(program):
    """(ProgramDesc, revision or None) of a designer Program or a bare ProgramDesc.

    A designer Program's ``revision`` changes on every edit; a bare desc has none."""
    if hasattr(program, "desc"):
        return program.desc, getattr(program, "revision", None)
    if not hasattr(program, "blocks"):
        raise FluidscopeError(f"expected a Program or ProgramDesc, got {type(program).__name__}")
    return program, None


class Executor:
    """Runs programs on ``place`` (``CPUPlace()`` by default)."""

    def __init__(self, place=None):
        self.place = place or CPUPlace()
        self._plans = {}

    # ------------------------------------------------------------------ plans
    def prepare(self, program, block_idx=0) -> BlockPlan:
        """The cached plan of ``program``'s block; rebuilt when the program changed.

        A designer Program is keyed by its revision; a bare ProgramDesc by its
        serialized bytes, so edits are never missed."""
        desc, revision = program_desc_of(program)
        key = (id(desc), block_idx, revision if revision is not None else desc.SerializeToString())
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 64:
                self._plans.clear()
            plan = self._plans[key] = BlockPlan(desc, block_idx, self.place)
        return plan

    # -------------------------------------------------------------------- run
    def run(self, program=None, feed=None, fetch_list=None, scope=None, return_numpy=True):
        """Run block 0 of ``program``.

        feed: name -> numpy array, LoDTensor or nested list. fetch_list: Variables or
        names (None: what the program's fetch ops name). Returns a list of numpy
        arrays (``return_numpy=False``: LoDTensors)."""
        if program is None:
            raise FluidscopeError("Executor.run needs a program (e.g. fd.default_main_program())")
        plan = self.prepare(program)
        scope = scope if scope is not None else global_scope()
        vals, lods = self._bind_inputs(plan, feed or {}, scope)
        self._run_steps(plan, vals, lods)
        self._write_back(plan, vals, lods, scope)
        return self._fetch(plan, vals, lods, fetch_list, return_numpy)

    def debug(self, program=None, feed=None, fetch_list=None, scope=None, **options):
        """A debugger ``Session`` of the run ``run(program, feed, fetch_list, scope)`` would
        make, paused before its first op (see ``engine.debugger``). ``options``:
        ``history_bytes``, the memory ``back()`` may keep alive."""
        from .debugger import Session  # the plain run path never imports the debugger
        if program is None:
            raise FluidscopeError("Executor.debug needs a program (e.g. fd.default_main_program())")
        return Session(self, program, feed, fetch_list, scope, **options)

    def _bind_inputs(self, plan, feed, scope):
        vals = [None] * len(plan.names)
        lods = [None] * len(plan.names) if plan.uses_lod else None
        fed = self._convert_feed(plan, feed)
        for slot, name in plan.inputs:
            if name in fed:
                value, lod = fed[name]
            else:
                var = scope.find_var(name)
                if var is None or not var.is_initialized():
                    raise ExecutionError(self._missing_input_message(plan, slot, name))
                tensor = var.get_tensor()
                value, lod = tensor.value, tensor._lod
            vals[slot] = value
            if lod:
                lods = lods or [None] * len(plan.names)
                lods[slot] = lod
        return vals, lods

    def _convert_feed(self, plan, feed):
        out = {}
        xp = self.place.xp
        for name, value in feed.items():
            if name not in plan.slot and name not in plan.var_descs:
                raise FluidscopeError(
                    f"feed '{name}' is not a variable of this program; it reads "
                    f"{sorted(n for _, n in plan.inputs if n in plan.var_descs)}")
            lod = []
            if isinstance(value, LoDTensor):
                lod, value = value._lod, value.value
            array = xp.asarray(value)
            array = self._check_feed(plan, name, array)
            if lod:
                check_lod(lod, array.shape[0], f"feed '{name}'")
            out[name] = (array, lod)
        return out

    @staticmethod
    def _check_feed(plan, name, array):
        want, dims = plan.feed_meta(name)
        if want is not None and array.dtype != want:
            if not np.can_cast(array.dtype, want, "same_kind"):
                raise FluidscopeError(
                    f"feed '{name}': got dtype {array.dtype}, the program declares {want}; "
                    f"convert it with .astype('{want}')")
            array = array.astype(want)
        if dims is not None and dims and (
                len(dims) != array.ndim or any(d >= 0 and d != a for d, a in zip(dims, array.shape))):
            raise FluidscopeError(
                f"feed '{name}': got shape {list(array.shape)}, the program declares {list(dims)} "
                f"(-1 means any size)")
        return array

    @staticmethod
    def _missing_input_message(plan, slot, name):
        step = next(s for s in plan.steps if slot in s.input_slots())
        what = "parameter" if plan._is_persistable(name) else "variable"
        hint = ("run the startup program first" if plan._is_persistable(name)
                else "feed it or compute it before this op")
        return (f"op #{step.index} {step.type} reads {what} '{name}', which nothing has "
                f"set: {hint}")

    def _run_steps(self, plan, vals, lods):
        step = None
        try:
            if lods is None:
                for step in plan.steps:
                    step.run(vals)
            else:
                for step in plan.steps:
                    if step.needs_lod:
                        step.run(vals, lods)
                        continue
                    if step.lod_agree:
                        check_lod_agree(step, lods)
                    step.run(vals)
                    for a, b in step.lod_pairs:
                        lods[b] = lods[a]
        except FluidscopeError as exc:
            raise ExecutionError(f"{_describe(plan, step, vals)}: {exc}") from exc
        except Exception as exc:  # a kernel failed: say where, with the shapes it saw
            raise ExecutionError(
                f"{_describe(plan, step, vals)}: {type(exc).__name__}: {exc}") from exc

    @staticmethod
    def _write_back(plan, vals, lods, scope):
        for slot, name in plan.persistable_outputs:
            var = scope.find_var(name) or scope.var(name)
            tensor = var.get_tensor()
            tensor.value = vals[slot]
            tensor.place = plan.place
            if lods is not None and lods[slot]:
                tensor._lod = lods[slot]

    def _fetch(self, plan, vals, lods, fetch_list, return_numpy):
        if fetch_list is None:
            slots = [plan.fetch_cols[c] for c in sorted(plan.fetch_cols)]
        else:
            slots = []
            for item in fetch_list:
                name = getattr(item, "name", item)
                if name not in plan.slot:
                    raise FluidscopeError(
                        f"cannot fetch '{name}': no op of this program reads or writes it")
                slots.append(plan.slot[name])
        out = []
        for s in slots:
            value = vals[s]
            if not hasattr(value, "dtype"):  # a holder such as a recurrent op's StepScopes
                out.append(value)
            elif return_numpy:
                out.append(to_host(value))
            else:
                out.append(LoDTensor(value, (lods[s] if lods else None) or None, self.place))
        return out


def _describe(plan, step, vals):
    """'op #3 mul (X: x [4, 3], Y: fc_0.w_0 [5, 2])' for error messages."""
    if step is None:
        return "executor"
    parts = []
    for var in step.desc.inputs:
        for name in var.arguments:
            value = vals[plan.slot[name]] if name in plan.slot else None
            shape = list(value.shape) if hasattr(value, "shape") else "unset"
            parts.append(f"{var.parameter}: {name} {shape}")
    namescope = step.attrs.get("op_namescope", "")
    layer = f" in layer {namescope.strip('/')}" if namescope not in ("", "/") else ""
    return f"op #{step.index} {step.type}{layer} ({', '.join(parts)})"
