"""Buffer reuse in a plain run: which array a kernel may write its output into.

Kernels are pure: each output is a fresh array. For the small, hot programs people train
(an MLP step is a dozen products of 128 x 256 floats) the fresh arrays cost more than the
arithmetic around them: the allocator hands big blocks back to the system between steps
and each new one page-faults in again (issue #16: 70 page faults per MLP step, none in
the hand-written numpy loop), and a fresh array is cold in the cache where the
hand-written ``h += b`` writes into one the product just wrote.

``bind_plan`` rebinds each step of a root CPU plan whose op has a ``kernel_into``
(``ir.registry``) so that it hands the kernel buffers of two kinds:

* **its spare**: per output slot, the array that slot got in the previous run (for an
  update whose output variable is its input variable, sgd's ParamOut, the array it
  displaced: the old parameter, which the scope lets go at write-back);
* **a dead input** (a plain ``Executor.run`` only, which knows what it will fetch): for
  an ``inplace`` pair (input slot, output slot) of the op, the input's own array when
  that variable is not fetched, not persistable, written by one op and read by no later
  op (a later op may still read its shape: ``shape_only``; the slot keeps the array,
  whose shape and dtype do not change). This is Paddle's inplace pass: ``relu`` writes
  into the biased sum, ``sgd`` into the dead gradient.

**The ownership rule**: an array is handed over only when the interpreter's reference
count shows that nothing else can reach it: no run but this one holds it (a run's slot
list dies with the run; a debugger session holds its run, and its undo history holds
every value it recorded), no one fetched it and still holds it, no scope or LoDTensor
holds it, and no view of it exists (a numpy view references the array that owns its
memory); besides, it owns its memory, is C-contiguous and writeable. For a spare the
count must be that of an array nobody holds; for a dead input, that of its slot plus the
holders the plan knows of: the spares of the ops that made it and the dead slots it went
through (a slot the run keeps must not be one).

So a value fetched by the user never changes after it is returned, a value the debugger
recorded is never overwritten, and the arrays the scope holds (parameters) are never
written in place: a run that fails or stops at a NaN leaves the scope as it was. A
parameter ends up in one of two arrays, swapped each step. (Updating it in place when
only the scope holds it, as the hand-written loop does, was measured on the MLP step of
``benchmarks/mlp_step.py`` (a prototype with no checks at all) and gained nothing beyond
the noise of a 2-core machine, nor did the hand-written loop gain from its own in-place
update over swapped arrays (within 1-2%): no cache effect showed. The time over that loop
is the interpreter's work per op: ``benchmarks/mlp_step_ops.py``.)

Where reference counts cannot be read (an interpreter without ``sys.getrefcount``, or
CPython without its GIL, where another thread may hold a reference the count does not
show yet) nothing is handed over and every output is fresh, as before. A plan with a
control-flow op (its sub-blocks may read variables its slots do not name) gets spares
but no dead inputs.
"""
from __future__ import annotations

import sys
from operator import itemgetter

_getrefcount = getattr(sys, "getrefcount", None)


def _count_alone():
    """The reference count ``take`` reads for an array held by nobody else: the same code
    shape as ``take`` on an object no one else holds (the interpreter's own counting of
    locals and call arguments is in both alike)."""
    spare = [object()]
    buf = spare[0]
    spare[0] = None
    return _getrefcount(buf)


def _supported():
    if _getrefcount is None:
        return False
    gil = getattr(sys, "_is_gil_enabled", None)
    return gil is None or gil()


ENABLED = _supported()
ALONE = _count_alone() if ENABLED else None


def take(spare, k):
    """Empty ``spare[k]`` and return the array it held when the ownership rule lets a
    kernel write into it (see the module docstring), else None."""
    buf = spare[k]
    spare[k] = None
    if buf is not None and _getrefcount(buf) == ALONE:
        flags = getattr(buf, "flags", None)
        if flags is not None and flags.owndata and flags.c_contiguous and flags.writeable:
            return buf
    return None


# vals[KEEP]: the slots a plain run must keep intact (what it fetches), set by
# ``Run.run_to_end(keep=...)``; None in every other run (the debugger, the NaN guard),
# where no input is written into.
KEEP = -1


def bind_plan(plan):
    """Rebind the steps of ``plan`` (a root BlockPlan on the CPU) whose ops have a
    ``kernel_into``; sets their ``spare``."""
    if not ENABLED:
        return
    steps = plan.steps
    for step in steps:
        if step.opdef.kernel_into is not None and step.kernel is not None and not step.needs_lod:
            step.spare = [None] * len(step.outs)
    dead_ok = all(step.control is None for step in steps)
    last_read, shape_read, writers = _liveness(steps)
    inputs = {s for s, _ in plan.inputs}
    chains = {}  # (position, output index) -> (spares, dead slots) that may hold its array
    for pos, step in enumerate(steps):
        if step.spare is None:
            continue
        cands = []
        for in_name, out_name in step.opdef.inplace if dead_ok else ():
            k = _index(step.opdef.outputs, out_name)
            s = step.ins[_index(step.opdef.inputs, in_name)]
            o = step.outs[k]
            if not (isinstance(s, int) and isinstance(o, int) and s and o and s != o):
                continue
            producers = writers.get(s, ())
            if (s in inputs or plan.is_persistable(plan.names[s]) or len(producers) != 1
                    or producers[0] >= pos or last_read.get(s) != pos
                    or s in step.output_slots()):
                continue
            spares, deads = _chain(steps, producers[0], s, chains)
            chains[(pos, k)] = (spares, deads + (s,))
            cands.append((k, s, spares, deads))
        step.run = _bind(plan, step, tuple(cands))


def _index(slots, name):
    return next(i for i, slot in enumerate(slots) if slot.name == name)


def _liveness(steps):
    """(slot -> position of the last step reading its values, slot -> position of the
    last step reading its shape only, slot -> positions of the steps writing it)."""
    last_read, shape_read, writers = {}, {}, {}
    for pos, step in enumerate(steps):
        shape_only = step.opdef.shape_only
        for spec, slot in zip(step.ins, step.opdef.inputs):
            table = shape_read if slot.name in shape_only else last_read
            for s in spec if isinstance(spec, tuple) else (spec,):
                if s:
                    table[s] = pos
        for s in step.output_slots():
            writers.setdefault(s, []).append(pos)
    return last_read, shape_read, writers


def _chain(steps, pos, slot, chains):
    """Where else the array step ``pos`` wrote into ``slot`` may be held, besides that
    slot: (spares, dead slots). Its own spare (it keeps what it wrote), and, when it
    wrote into a dead input, that input's slot and what held that input's array."""
    producer = steps[pos]
    if producer.spare is None:
        return (), ()
    k = next(i for i, o in enumerate(producer.outs) if o == slot)
    spares, deads = chains.get((pos, k), ((), ()))
    return ((producer.spare, k),) + spares, deads


def _getter(slots):
    """vals -> tuple of the values in ``slots`` (one C call, no Python frame)."""
    if len(slots) == 1:
        (slot,) = slots
        return lambda vals: (vals[slot],)
    return itemgetter(*slots)


def _dead_check(s, spares, deads):
    """``check(vals, keep)``: the array of dead slot ``s`` when the ownership rule (the
    module docstring) lets a kernel write into it, else None; ``spares`` and ``deads``:
    where else the chain may hold it (``_chain``). The one place the rule for a dead input
    is written.

    The count of references the chain accounts for is taken inline (no helper call: most
    ops of a training step run this once per call): the dead slot's own, one per spare
    of the chain and one per dead slot it went through that holds the very array; a dead
    slot the run keeps refuses it."""
    getrefcount, alone = _getrefcount, ALONE

    def check(vals, keep):
        a = None if s in keep else vals[s]
        if a is not None:
            # read first: ``a`` is held by this frame (``alone`` counts that) and its slot
            extra = getrefcount(a) - alone - 1
            for sp, j in spares:
                if sp[j] is a:
                    extra -= 1
            for t in deads:
                if vals[t] is a:
                    if t in keep:
                        return None
                    extra -= 1
            if not extra:
                flags = a.flags
                if flags.owndata and flags.c_contiguous and flags.writeable:
                    return a
        return None
    return check


def _bind(plan, step, cands):
    """``run(vals)`` of a recycling step (see the module docstring). ``cands``: (output
    index, dead input slot, spares, dead slots) the output may be written into."""
    into, attrs, ins, outs, xp = step.opdef.kernel_into, step.attrs, step.ins, step.outs, \
        plan.place.xp
    spare, n = step.spare, len(outs)
    read = set(step.input_slots())
    displaces = tuple(isinstance(o, int) and o != 0 and o in read for o in outs)
    persists = tuple(isinstance(o, int) and o in plan.persistable_slots for o in outs)
    kept = tuple(k for k, o in enumerate(outs) if isinstance(o, int) and o)
    simple = all(isinstance(i, int) for i in ins)

    checks = tuple((k, _dead_check(s, spares, deads), spares) for k, s, spares, deads in cands)

    def dead_input(vals, keep):
        """(output index, array, spares) of the first candidate the rule allows, or None."""
        for k, check, spares in checks:
            a = check(vals, keep)
            if a is not None:
                return k, a, spares
        return None

    def settle(k, value, old, taken):
        """After output k got ``value`` (``old`` displaced): what the spares keep."""
        if taken is not None and value is taken[1]:  # written into the dead input
            if persists[k]:  # the scope holds it from write-back: give the spare the old one
                for sp, j in taken[2]:
                    if sp[j] is value:
                        sp[j] = old
                        return
                spare[k] = old
        else:
            spare[k] = old if displaces[k] else value

    if n == 1 and kept == (0,) and simple and ins:
        o = outs[0]
        args = _getter(ins)

        if not cands:
            displace = displaces[0]

            def run(vals):
                value = into(xp, attrs, (take(spare, 0),), *args(vals))
                old = vals[o]
                vals[o] = value
                spare[0] = old if displace else value
            return run

        if len(cands) == 1:
            return _one_candidate_run(plan, step, 0, args, displaces[0], persists[0],
                                      *checks[0][1:])

        def run(vals):
            keep = vals[KEEP]
            taken = None if keep is None else dead_input(vals, keep)
            if taken is None:
                buf = take(spare, 0)
            else:
                buf = taken[1]
                spare[0] = None
            value = into(xp, attrs, (buf,), *args(vals))
            old = vals[o]
            vals[o] = value
            settle(0, value, old, taken)
        return run

    gather = _getter(ins) if simple and ins else (
        lambda vals: [[vals[j] for j in i] if isinstance(i, tuple) else vals[i] for i in ins])

    if n == 2 and not cands and simple and ins and all(isinstance(o, int) for o in outs):
        # also when one of the two has no variable (mul_grad without dX, the first
        # layer's: no settle to call, as the loop below would)
        return _two_outputs_run(plan, step, gather, displaces)

    if n > 1 and len(kept) == 1 and all(isinstance(o, int) for o in outs):
        # one output has a variable and a dead input to write into (sgd without a
        # master copy)
        k0 = kept[0]
        o = outs[k0]
        before, after = (None,) * k0, (None,) * (n - k0 - 1)
        if len(cands) == 1 and cands[0][0] == k0 and simple and ins:
            return _one_candidate_run(plan, step, k0, gather, displaces[k0], persists[k0],
                                      *checks[0][1:])

        def run(vals):
            keep = vals[KEEP]
            taken = dead_input(vals, keep) if cands and keep is not None else None
            if taken is None:
                buf = take(spare, k0)
            else:
                buf = taken[1]
                spare[k0] = None
            value = into(xp, attrs, before + (buf,) + after, *gather(vals))[k0]
            old = vals[o]
            vals[o] = value
            settle(k0, value, old, taken)
        return run

    def run(vals):
        bufs = [None] * n
        keep = vals[KEEP]
        taken = dead_input(vals, keep) if cands and keep is not None else None
        if taken is not None:
            bufs[taken[0]] = taken[1]
            spare[taken[0]] = None
        for k in kept:
            if bufs[k] is None:
                bufs[k] = take(spare, k)
        result = into(xp, attrs, tuple(bufs), *gather(vals))
        for k, (spec, value) in enumerate(zip(outs, (result,) if n == 1 else result)):
            if isinstance(spec, tuple):
                for j, v in zip(spec, value or ()):
                    if j:
                        vals[j] = v
            elif spec:
                old = vals[spec]
                vals[spec] = value
                settle(k, value, old, taken if taken is not None and taken[0] == k else None)
    return run


def _two_outputs_run(plan, step, args, displaces):
    """``run(vals)`` of a step with two outputs and no dead input to write into (mul_grad
    with dX and dY, or with dY alone: an output with no variable gets no buffer and is
    dropped): ``_bind``'s general loop written out for two (no settle: without a dead
    input each spare keeps the output, or what it displaced)."""
    into, attrs, xp, spare = step.opdef.kernel_into, step.attrs, plan.place.xp, step.spare
    o0, o1 = step.outs
    d0, d1 = displaces

    def run(vals):
        r0, r1 = into(xp, attrs, (take(spare, 0) if o0 else None,
                                  take(spare, 1) if o1 else None), *args(vals))
        if o0:
            old = vals[o0]
            vals[o0] = r0
            spare[0] = old if d0 else r0
        if o1:
            old = vals[o1]
            vals[o1] = r1
            spare[1] = old if d1 else r1
    return run


def _one_candidate_run(plan, step, k0, args, displace, persist, dead_input, spares):
    """``run(vals)`` of a step with one output variable (index ``k0``) and one dead input
    it may write into (``dead_input``: its ``_dead_check``, the one place the ownership
    rule is checked; ``spares``: the chain's spares that may hold that input's array):
    ``_bind``'s settle written out for that case (relu into the biased sum, the bias add
    into the product, relu_grad into dOut, sgd into the gradient: most ops of a training
    step run here, so no tuple is built and no candidate loop runs per call)."""
    into, attrs, xp, spare = step.opdef.kernel_into, step.attrs, plan.place.xp, step.spare
    o, n = step.outs[k0], len(step.outs)
    before, after = (None,) * k0, (None,) * (n - k0 - 1)
    first_of_two = n == 2 and k0 == 0

    def run(vals):
        keep = vals[KEEP]
        buf = None if keep is None else dead_input(vals, keep)
        if buf is None:
            taken = False
            buf = take(spare, k0)
        else:
            taken = True
            spare[k0] = None
        if n == 1:
            value = into(xp, attrs, (buf,), *args(vals))
        elif first_of_two:  # sgd: ParamOut, and no MasterParamOut
            value = into(xp, attrs, (buf, None), *args(vals))[0]
        else:
            value = into(xp, attrs, before + (buf,) + after, *args(vals))[k0]
        old = vals[o]
        vals[o] = value
        if not taken or value is not buf:
            spare[k0] = old if displace else value
        elif persist:  # the scope holds value from write-back: a spare gets the old one
            for sp, j in spares:
                if sp[j] is value:
                    sp[j] = old
                    return
            spare[k0] = old
    return run


__all__ = ["ENABLED", "ALONE", "KEEP", "take", "bind_plan"]
