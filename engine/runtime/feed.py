"""Binding a run's inputs: the feed (checked against the program's declarations), else the scope.

``bind_inputs(plan, feed, scope)`` returns the run's slot lists ``(vals, lods)``: every
slot a step reads before any step writes it holds the fed value or the scope's, and
``lods`` (None when nothing in the block has LoD) holds their LoD offsets.
"""
from __future__ import annotations

import difflib

import numpy as np

from ..errors import ExecutionError, FluidscopeError
from .tensor import LoDTensor, check_lod


def bind_inputs(plan, feed, scope):
    """(vals, lods) of a fresh run of ``plan``; raises ExecutionError for an input nothing
    set and FluidscopeError for a feed the program does not declare that way."""
    # one more entry than slots: the run's keep set (runtime.recycle.KEEP), None here
    vals = [None] * (len(plan.names) + 1)
    lods = [None] * len(plan.names) if plan.uses_lod else None
    fed = convert_feed(plan, feed)
    binding = _binding(plan, scope, tuple(fed))
    for slot, name, var in binding.reads if binding is not None else _reads(plan, scope, fed):
        if var is None:
            value, lod = fed[name]
        else:
            tensor = var.get_value()
            if tensor.__class__ is not LoDTensor or tensor.value is None:
                tensor = _initialized_tensor(plan, slot, name, var)
            value, lod = tensor.value, tensor.lod_offsets
        vals[slot] = value
        if lod:
            lods = lods or [None] * len(plan.names)
            lods[slot] = lod
    return vals, lods


def _reads(plan, scope, fed):
    """(slot, name, Variable or None when fed) of each input ``plan`` reads."""
    return [(slot, name, None if name in fed else scope.find_var(name) or _Missing(name))
            for slot, name in plan.inputs]


class _Missing:
    """Stands for a variable the scope lacks; ``_initialized_tensor`` reports it."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def get_value(self):
        return None


def _initialized_tensor(plan, slot, name, var):
    """The LoDTensor of ``var`` (get_tensor makes one for a non-tensor value, as before),
    or the ExecutionError a missing or unset input gets."""
    if isinstance(var, _Missing) or not var.is_initialized():
        raise ExecutionError(missing_input_message(plan, slot, name))
    return var.get_tensor()


class ScopeBinding:
    """The Variables a plan reads from a root scope (``reads``: slot, name, Variable, or
    None for a fed name) and writes back to it (``writes``: slot, Variable; None while
    one does not exist yet), for one generation of that scope (``Scope.generation``:
    the Variable a name finds stays the same until it changes) and one set of fed
    names: a training loop's runs look no name up (issue #16: the time a small
    program spends outside its ops). It holds the Variables of the last scope the plan
    ran on until a run on another scope replaces it."""
    __slots__ = ("key", "reads", "writes")

    def __init__(self, key, reads, writes):
        self.key, self.reads, self.writes = key, reads, writes


def _binding(plan, scope, fed_names):
    """``plan``'s ScopeBinding for ``scope`` and these fed names, made on first use and
    again after the scope changed; None for a scope with a parent (whose parents may
    change apart from it), or when an input is missing (the caller reports it)."""
    if scope.parent is not None:
        return None
    key = (id(scope), scope.generation, fed_names)
    binding = plan.scope_binding
    if binding is not None and binding.key == key:
        return binding
    reads = tuple(_reads(plan, scope, fed_names))
    if any(isinstance(var, _Missing) for _, _, var in reads):
        return None
    writes = [(slot, scope.find_var(name)) for slot, name in plan.persistable_outputs]
    writes = None if any(var is None for _, var in writes) else tuple(writes)
    plan.scope_binding = ScopeBinding(key, reads, writes)
    return plan.scope_binding


def written_vars(plan, scope):
    """(slot, Variable) of each persistable output of ``plan`` in ``scope``, from the
    binding of its last run when the scope has not changed since; else None."""
    binding = plan.scope_binding
    if (binding is None or binding.writes is None or scope.parent is not None
            or binding.key[:2] != (id(scope), scope.generation)):
        return None
    return binding.writes


def convert_feed(plan, feed):
    """name -> (array on the plan's place, LoD offsets) of ``feed``, checked."""
    out = {}
    xp = plan.place.xp
    accepted = plan.accepted_feeds
    for name, value in feed.items():
        # A training loop feeds arrays of one dtype and shape every step: one the plan
        # accepted as they are (no cast) passes again with two comparisons.
        seen = accepted.get(name)
        if (seen is not None and value.__class__ is xp.ndarray and value.shape == seen[0]
                and value.dtype == seen[1]):
            out[name] = (value, [])
            continue
        if name not in plan.slot and name not in plan.var_descs:
            raise FluidscopeError(unknown_feed_message(plan, name))
        lod = []
        if isinstance(value, LoDTensor):
            lod, value = value.lod_offsets, value.value
        try:
            array = xp.asarray(value)
        except ValueError:
            if not isinstance(value, (list, tuple)):
                raise
            raise FluidscopeError(ragged_feed_message(name, value)) from None
        checked = check_feed(plan, name, array)
        if lod:
            check_lod(lod, checked.shape[0], f"feed '{name}'")
        elif checked is value and value.__class__ is xp.ndarray:
            accepted[name] = (value.shape, value.dtype)
        out[name] = (checked, lod)
    return out


def feedable_names(plan):
    """The inputs a person feeds: what the run reads before writing and that is not
    persistable (data vars; parameters and optimizer state come from the scope)."""
    return sorted(n for _, n in plan.inputs if n in plan.var_descs and not plan.is_persistable(n))


def unknown_feed_message(plan, name):
    """What to tell a person who feeds ``name``, which the program does not declare: the
    names it can be fed (not the parameters and optimizer state it also reads), and the
    nearest one when the name looks like a typo of it."""
    feedable = feedable_names(plan)
    close = difflib.get_close_matches(name, feedable, n=1) or difflib.get_close_matches(
        name, [n for n in plan.var_descs if not plan.is_persistable(n)], n=1)
    guess = f"did you mean '{close[0]}'? " if close else ""
    listed = f"it can be fed {feedable}" if feedable else "it reads no data to feed"
    return f"feed '{name}' is not a variable of this program; {guess}{listed}"


def ragged_feed_message(name, value):
    """What to tell a person who feeds a list whose rows differ in length: sequences of
    different lengths go in one LoDTensor, rows concatenated, lengths given apart."""
    lengths = [len(row) if hasattr(row, "__len__") else 1 for row in value]
    if len(set(lengths)) < 2:
        return (f"feed '{name}': the nested list is ragged below its rows (items of "
                f"different shapes), so it makes no array; give a numpy array of one shape, "
                f"or a LoDTensor for sequences of different lengths (fd.create_lod_tensor)")
    listed = ", ".join(map(str, lengths[:8])) + (", ..." if len(lengths) > 8 else "")
    of_scalars = all(isinstance(row, (list, tuple)) and all(np.ndim(item) == 0 for item in row)
                     for row in value)
    # a list of id sequences becomes Paddle's [N, 1] column; rows of vectors concatenate
    rows = "rows" if of_scalars else "np.concatenate(rows)"
    return (f"feed '{name}': its rows have different lengths [{listed}], so they make no "
            f"array. Sequences of different lengths are fed as one LoDTensor holding the rows "
            f"one after another (rows being this list): "
            f"fd.create_lod_tensor({rows}, [[{listed}]]) (lengths), or "
            f"fd.LoDTensor(np.concatenate(rows), [[0, {lengths[0]}, ...]]) (offsets); "
            f"or pad the rows to one length")


def check_feed(plan, name, array):
    """``array`` cast to the declared dtype where that loses nothing; a clear error for a
    dtype or shape the program does not accept."""
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


def missing_input_message(plan, slot, name):
    """What to tell a person whose run reads ``name``, which nothing set."""
    step = next(s for s in plan.steps if slot in s.input_slots())
    persistable = plan.is_persistable(name)
    what = "parameter" if persistable else "variable"
    hint = "run the startup program first" if persistable else "feed it or compute it before this op"
    return f"op #{step.index} {step.type} reads {what} '{name}', which nothing has set: {hint}"


__all__ = ["bind_inputs", "written_vars", "ScopeBinding", "convert_feed", "check_feed",
           "feedable_names", "unknown_feed_message", "ragged_feed_message",
           "missing_input_message"]
