"""The Executor: runs a block of a ProgramDesc on a place, over a scope.

``Executor(place).run(program, feed, fetch_list, scope)`` prepares the block once into
a ``BlockPlan`` (cached per program version and place), makes a ``Run`` of it (its
inputs bound from the feed and the scope), drives the run to the end, writes the
persistable results back to the scope and returns the fetched values.
``Executor.debug`` makes the same run a debugger ``Session`` instead; with
``check_nan_inf`` (or ``FLAGS_check_nan_inf=1``) the run is driven by the NaN/Inf guard
(``runtime.nan_guard``), which stops at the first op writing a NaN or an Inf.

Persistable variables (parameters, optimizer state) live in the root scope; the run's
temporaries live only in its slot list (see ``runtime.run``).

This module sits above both drivers of a run (``runtime`` and ``debug``): the runtime
never imports the debugger.
"""
from __future__ import annotations

from .debug.session import DEFAULT_HISTORY_BYTES, Session
from .errors import FluidscopeError
from .runtime.nan_guard import flag_from_env, run_guarded
from .runtime.place import CPUPlace
from .runtime.plan import BlockPlan, program_desc_of
from .runtime.replay import PreparedRun
from .runtime.run import Run
from .runtime.scope import global_scope

MAX_CACHED_PLANS = 64


class Executor:
    """Runs programs on ``place`` (``CPUPlace()`` by default).

    ``check_nan_inf``: the default of ``run``'s argument of that name; it starts as the
    environment variable ``FLAGS_check_nan_inf`` says when the Executor is made (as Paddle
    reads its flags when it starts; reading it once keeps it off every run's path)."""

    def __init__(self, place=None):
        self.place = place or CPUPlace()
        self.check_nan_inf = flag_from_env()
        self._plans = {}
        # (program, its desc, its revision, plan) of the last designer Program prepared:
        # a training loop runs one program, and finds its plan without building a key
        self._last = None

    def prepare(self, program, block_idx=0) -> BlockPlan:
        """The cached plan of ``program``'s block; rebuilt when the program changed.

        A designer Program is keyed by its revision; a bare ProgramDesc by its
        serialized bytes, so edits are never missed."""
        last = self._last
        if (last is not None and last[0] is program and last[1] is program.desc
                and last[2] == program.revision and block_idx == 0):
            return last[3]  # a training loop's program, unchanged since its last run
        desc, revision = program_desc_of(program)
        key = (id(desc), block_idx, revision if revision is not None else desc.SerializeToString())
        plan = self._plans.get(key)
        if revision is not None and block_idx == 0:
            self._last = None  # set again below, once the plan is known
        if plan is None:
            if len(self._plans) > MAX_CACHED_PLANS:
                self._plans.clear()
            for old_key, old in self._plans.items():  # an edited program's older versions:
                if old_key[:2] == key[:2]:            # their recycled buffers are dead weight
                    old.release_buffers()
            plan = self._plans[key] = BlockPlan(desc, block_idx, self.place)
        if revision is not None and block_idx == 0:
            self._last = (program, desc, revision, plan)
        return plan

    def start(self, program, feed=None, scope=None) -> Run:
        """A ``Run`` of block 0 of ``program``, inputs bound, before its first step."""
        if program is None:
            raise FluidscopeError("Executor needs a program (e.g. fd.default_main_program())")
        return Run(self.prepare(program), scope if scope is not None else global_scope(), feed)

    def run(self, program=None, feed=None, fetch_list=None, scope=None, return_numpy=True,
            check_nan_inf=None):
        """Run block 0 of ``program``.

        feed: name -> numpy array, LoDTensor or nested list. fetch_list: Variables or
        names (None: what the program's fetch ops name). Returns a list of numpy
        arrays (``return_numpy=False``: LoDTensors). check_nan_inf: raise
        ``NonFiniteError`` at the first op that writes a NaN or an Inf, before any later
        op runs and with nothing written back to the scope (None: the Executor's
        ``check_nan_inf``, from ``FLAGS_check_nan_inf``)."""
        if program is None:
            raise FluidscopeError("Executor.run needs a program (e.g. fd.default_main_program())")
        if fetch_list is not None and fetch_list.__class__ is not list:
            fetch_list = fetch_list_of(fetch_list, "Executor.run")
        plan = self.prepare(program)
        scope = scope if scope is not None else global_scope()
        if check_nan_inf or (check_nan_inf is None and self.check_nan_inf):
            run = Run(plan, scope, feed)
            run_guarded(run)
            run.write_back()
            return run.fetch(fetch_list, return_numpy)
        # A training loop's runs after the first: the work around the ops prepared once
        # (runtime.replay); the ops run as in the general path below.
        prepared = plan.prepared_run
        if prepared is not None and return_numpy:
            run = prepared.start(plan, scope, feed, fetch_list)
            if run is not None:
                run.run_to_end(keep=prepared.keep)
                return prepared.finish(run)
        run = Run(plan, scope, feed)
        run.run_to_end(keep=run.keep_slots(fetch_list))
        run.write_back()
        fetched = run.fetch(fetch_list, return_numpy)
        plan.prepared_run = PreparedRun.after(run, fetch_list, return_numpy)
        return fetched

    def debug(self, program=None, feed=None, fetch_list=None, scope=None,
              history_bytes=DEFAULT_HISTORY_BYTES):
        """A debugger ``Session`` of the run ``run(program, feed, fetch_list, scope)`` would
        make, paused before its first op (see ``engine.debug``). ``history_bytes``: the
        memory ``back()`` may keep alive."""
        if program is None:
            raise FluidscopeError("Executor.debug needs a program (e.g. fd.default_main_program())")
        if fetch_list is not None:
            fetch_list = fetch_list_of(fetch_list, "Executor.debug")
        return Session(self.start(program, feed, scope), program, fetch_list,
                       history_bytes=history_bytes)


def fetch_list_of(fetch_list, where):
    """``fetch_list`` as a list or tuple: any other iterable (a generator, a dict's keys)
    read once into a list, so that every path that reads it (the keep set, the fetch, the
    prepared run's key) sees every item; a lone name or Variable is refused, since
    iterating a name would fetch its characters."""
    if isinstance(fetch_list, (list, tuple)):
        return fetch_list
    if isinstance(fetch_list, str) or hasattr(fetch_list, "name"):
        raise FluidscopeError(
            f"{where}: fetch_list must be a list of Variables or names, got "
            f"{type(fetch_list).__name__} {getattr(fetch_list, 'name', fetch_list)!r}; "
            f"write [{getattr(fetch_list, 'name', fetch_list)!r}]")
    try:
        return list(fetch_list)
    except TypeError:
        raise FluidscopeError(f"{where}: fetch_list must be a list of Variables or names, "
                              f"got {type(fetch_list).__name__}") from None


__all__ = ["Executor"]
