"""A plain run prepared once for a training loop: what ``Executor.run`` does around the ops.

A training loop calls ``exe.run(main, feed={...}, fetch_list=[loss], scope=scope)`` every
step with arrays of one shape and dtype, on one scope, asking for the same values. Around
its ops each such run converted and checked the feed, matched the scope's variables, chose
the slots to keep, wrote the parameters back and fetched: for an MLP step of 27 small ops
that was about as much time as the ops' own Python (issue #16). After a plain run went the
general way, ``PreparedRun.after`` keeps what that work found for these conditions:

* the **scope** (its id and ``Scope.generation``: the Variable a name finds stays the same
  until it changes), a root scope holding every input as a LoDTensor without LoD;
* the **feed**: a dict of the same names in the same order, each a numpy array of the same
  shape and dtype that ``convert_feed`` accepted as it was (no cast, no copy);
* the **fetch list** (the same names, or None both times) and ``return_numpy=True``.

``start`` checks them all and binds the slot list directly (returns None on any
difference: the general path runs, and prepares again). The ops themselves run exactly as
in the general path: ``Run.run_to_end`` over the plan's own step closures, each checking
the buffer-reuse rule of ``runtime.recycle`` as always, and an op's error becomes the same
``ExecutionError`` (op, slots, shapes), raised by the same code from the same slot list.
Nothing here holds an array between runs: only Variables, slots, names and shapes. A
program edit makes a new plan (``Executor.prepare``), which starts with no prepared run;
the NaN guard and the debugger drive their own ``Run`` and never come here.
"""
from __future__ import annotations

import numpy as np

from .feed import written_vars
from .run import Run, host_values
from .tensor import LoDTensor


def fetch_names(fetch_list):
    """The names of ``fetch_list`` as a tuple (None for None): what a prepared run compares."""
    if fetch_list is None:
        return None
    return tuple([getattr(item, "name", item) for item in fetch_list])


class PreparedRun:
    """What the plain runs of one plan share while the feed, scope and fetch list keep
    their shape (see the module docstring). Made by ``after``; used by ``start``."""
    __slots__ = ("scope_id", "generation", "fed", "reads", "writes", "keep", "fetch_names",
                 "fetch_slots", "size")

    @classmethod
    def after(cls, run: Run, fetch_list, return_numpy) -> PreparedRun | None:
        """The prepared run for runs like ``run`` (a plain run just written back and
        fetched), or None when such runs cannot skip the general path."""
        plan, scope = run.plan, run.scope
        binding = plan.scope_binding
        writes = written_vars(plan, scope)  # None unless the binding is this scope's, now
        if (not return_numpy or run.lods is not None or plan.uses_lod or writes is None
                or binding is None or plan.place.device != "cpu"):
            return None
        accepted, slot_of_fed = plan.accepted_feeds, {}
        for slot, name, var in binding.reads:
            if var is None:
                slot_of_fed[name] = slot
        fed = []
        for name, value in run.feed.items():
            seen = accepted.get(name)
            if (value.__class__ is not np.ndarray or seen is None
                    or seen != (value.shape, value.dtype)):
                return None  # cast, converted or checked: the general path each time
            fed.append((name, slot_of_fed.get(name), value.shape, value.dtype))
        if binding.key[2] != tuple(run.feed):
            return None
        self = cls()
        self.scope_id, self.generation = id(scope), scope.generation
        self.fed = tuple(fed)  # (name, slot or None, shape, dtype) in the feed's order
        self.size = len(plan.names) + 1  # + the keep entry (runtime.recycle.KEEP)
        self.reads = tuple((slot, var) for slot, _, var in binding.reads if var is not None)
        self.writes = writes
        self.fetch_names = fetch_names(fetch_list)
        self.keep = run.keep_slots(fetch_list)
        self.fetch_slots = tuple(
            plan.fetch_cols[c] for c in sorted(plan.fetch_cols)) if fetch_list is None \
            else tuple(plan.slot[n] for n in self.fetch_names)
        return self

    def start(self, plan, scope, feed, fetch_list) -> Run | None:
        """A ``Run`` of ``plan`` bound as ``bind_inputs`` would bind it, or None when
        anything differs from the runs this was prepared for."""
        if (scope.generation != self.generation or id(scope) != self.scope_id
                or not self.fetches(fetch_list)):
            return None
        feed = feed if feed is not None else {}
        if feed.__class__ is not dict or len(feed) != len(self.fed):
            return None  # (another mapping or a list: the general path reads it)
        vals = [None] * self.size
        # the fed names in the prepared order, each an array of the prepared shape and
        # dtype (a dtype is mostly the very object it was: ``is`` first, then ``==``)
        for (name, slot, shape, dtype), (key, value) in zip(self.fed, feed.items()):
            if key != name or value.__class__ is not np.ndarray or value.shape != shape:
                return None
            seen = value.dtype
            if seen is not dtype and seen != dtype:
                return None
            if slot is not None:
                vals[slot] = value
        # ``_value`` and ``_lod``: what Variable.get_value and LoDTensor.lod_offsets return,
        # read as the slots they are (this package's own classes): two calls less per input
        # of every step of a training loop
        for slot, var in self.reads:
            tensor = var._value
            if tensor.__class__ is not LoDTensor:
                return None  # unset, or replaced by another kind of value
            value = tensor.value
            if value is None or tensor._lod:
                return None  # unset, or with LoD
            vals[slot] = value
        return Run.bound(plan, scope, feed, vals)

    def fetches(self, fetch_list) -> bool:
        """True when ``fetch_list`` names what the prepared runs fetched (as
        ``fetch_names(fetch_list) == self.fetch_names``, without building the tuple).
        Only a list or a tuple (``Executor.run`` reads any other iterable into a list
        first); anything else is left unread for the general path."""
        names = self.fetch_names
        if fetch_list is None or names is None:
            return fetch_list is None and names is None
        if fetch_list.__class__ is not list and fetch_list.__class__ is not tuple:
            return False
        if len(fetch_list) != len(names):
            return False
        for item, name in zip(fetch_list, names):
            if (item if item.__class__ is str else getattr(item, "name", item)) != name:
                return False
        return True

    def finish(self, run: Run) -> list:
        """Write ``run``'s persistable results back and return the fetched values, as
        ``Run.write_back`` and ``Run.fetch`` do for these variables and slots."""
        vals, place = run.vals, run.plan.place
        for slot, var in self.writes:
            tensor = var._value  # as start reads it; get_tensor makes one where none is
            if tensor is None:
                tensor = var.get_tensor()
            tensor.value, tensor.place = vals[slot], place
        return host_values(vals, self.fetch_slots)


__all__ = ["PreparedRun", "fetch_names"]
