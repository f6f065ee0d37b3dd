"""A block prepared for execution: the hot loop touches no protobuf and no names.

Every variable of the block gets a slot in a flat list (slot 0 always holds None, for
empty dispensable inputs and discarded outputs). Each op becomes a ``Step``: its
kernel bound to ``xp`` and to attributes parsed once, and a ``run(vals)`` closure
that gathers its inputs from slots, calls the kernel and scatters the outputs.

LoD lives in a parallel list ``lods`` (one entry per slot) that exists only when some
value has LoD or some step needs it. Steps of LoD-aware ops and control-flow ops have
``needs_lod`` set and run as ``run(vals, lods)``; the others only copy LoD along their
``lod_pairs``. A control-flow op's sub-blocks get plans of their own, made once with
the parent's and shared through ``PrepareContext``.

In a root plan on the CPU, a step whose op has a ``kernel_into`` is rebound by
``runtime.recycle``: it reuses arrays nobody else can reach, under the rule stated there.
"""
from __future__ import annotations

from operator import itemgetter

from ..ir import paddle_ops, registry
from ..ir.names import EMPTY_VAR as EMPTY
from ..ir.lookup import visible_vars
from ..ir.dtypes import to_numpy_dtype
from ..errors import FluidscopeError, SchemaError
from ..ir.proto import framework_pb2 as pb
from . import recycle

_HOLDER_TYPES = (pb.VarType.FEED_MINIBATCH, pb.VarType.FETCH_LIST, pb.VarType.RAW)
NONE_SLOT = 0


class Step:
    """One prepared op. ``run(vals)`` executes it on the slot list."""
    __slots__ = ("index", "type", "opdef", "attrs", "ins", "outs", "lod_pairs", "run", "desc",
                 "needs_lod", "control", "lod_agree", "kernel", "spare")

    def __init__(self, index, desc, opdef, attrs, ins, outs, lod_pairs):
        self.index, self.desc, self.opdef, self.type = index, desc, opdef, desc.type
        self.attrs, self.ins, self.outs, self.lod_pairs = attrs, ins, outs, lod_pairs
        self.needs_lod = opdef.lod
        self.lod_agree = ()  # (slot, name) pairs whose LoDs must match (see check_lod_agree)
        self.run = None
        self.kernel = None  # the bound kernel (None for a control-flow op)
        self.control = None  # what a control-flow op's prepare() returned
        self.spare = None  # output arrays kept for the next run (runtime.recycle), or None

    def input_slots(self):
        """Flat list of slot indices this step reads (for checks and the debugger)."""
        return [i for spec in self.ins for i in (spec if isinstance(spec, tuple) else (spec,)) if i]

    def output_slots(self):
        return [i for spec in self.outs for i in (spec if isinstance(spec, tuple) else (spec,)) if i]


def _gatherer(ins):
    """vals -> argument sequence for the kernel (None for empty, list for duplicable)."""
    if not ins:
        return lambda vals: ()
    if all(isinstance(i, int) for i in ins):
        if len(ins) == 1:
            (i,) = ins
            return lambda vals: (vals[i],)
        return itemgetter(*ins)  # a tuple, gathered in C
    empty_lists = [k for k, i in enumerate(ins) if i == ()]
    if len(empty_lists) == 1 and all(i == NONE_SLOT or i == () for i in ins):
        # nothing to read (fill_constant of attributes alone: every training step's loss
        # gradient): None for each empty slot and a new empty list for the duplicable one,
        # without the comprehensions below
        k = empty_lists[0]
        head, tail = (None,) * k, (None,) * (len(ins) - k - 1)
        return lambda vals: head + ([],) + tail
    return lambda vals: [[vals[j] for j in i] if isinstance(i, tuple) else vals[i] for i in ins]


def _bind(step: Step, kernel, xp):
    """Build the specialised ``run(vals)`` closure of a step (fast paths for 1-2 inputs)."""
    attrs, ins, outs = step.attrs, step.ins, step.outs
    simple_in = all(isinstance(i, int) for i in ins)
    # a single output with no variable (slot 0) takes the general path, which drops it:
    # slot 0 must stay None, it is every empty input's value
    if len(outs) == 1 and isinstance(outs[0], int) and outs[0] != NONE_SLOT:
        o = outs[0]
        if simple_in and len(ins) == 1:
            a = ins[0]

            def run(vals):
                vals[o] = kernel(xp, attrs, vals[a])
        elif simple_in and len(ins) == 2:
            a, b = ins

            def run(vals):
                vals[o] = kernel(xp, attrs, vals[a], vals[b])
        elif simple_in and len(ins) == 3:  # scale, fill_constant: X + two optional tensors
            a, b, c = ins

            def run(vals):
                vals[o] = kernel(xp, attrs, vals[a], vals[b], vals[c])
        else:
            gather = _gatherer(ins)

            def run(vals):
                vals[o] = kernel(xp, attrs, *gather(vals))
    elif len(outs) == 2 and all(isinstance(o, int) for o in outs):
        # two plain outputs (elementwise_add_grad, softmax_with_cross_entropy and its
        # grad in every training step): stored without the general loop below, an
        # output with no variable (slot 0) dropped as there
        o0, o1 = outs
        gather = _gatherer(ins)

        def run(vals):
            result = kernel(xp, attrs, *gather(vals))
            if o0:
                vals[o0] = result[0]
            if o1:
                vals[o1] = result[1]
    else:
        gather = _gatherer(ins)
        single = len(outs) == 1

        def run(vals):
            result = kernel(xp, attrs, *gather(vals))
            for spec, value in zip(outs, (result,) if single else result):
                if isinstance(spec, tuple):
                    for j, v in zip(spec, value or ()):
                        if j:  # slot 0 must stay None: it stands for "no variable"
                            vals[j] = v
                elif spec:
                    vals[spec] = value
    return run


def _bind_lod(step: Step, kernel, xp):
    """``run(vals, lods)`` of a LoD-aware kernel: LoD in through ``LodArgs``, out by the
    kernel's ``lod.outputs`` or else the op's share_lod pairs."""
    attrs, ins, outs, pairs = step.attrs, step.ins, step.outs, step.lod_pairs
    gather, single, op_type = _gatherer(ins), len(outs) == 1, step.type
    slot_names = tuple(s.name for s in step.opdef.inputs)

    def run(vals, lods):
        lod = registry.LodArgs(op_type, slot_names, tuple(
            [lods[j] for j in i] if isinstance(i, tuple) else lods[i] for i in ins), len(outs))
        result = kernel(xp, attrs, lod, *gather(vals))
        for a, b in pairs:
            lods[b] = lods[a]
        for spec, value, out_lod in zip(outs, (result,) if single else result, lod.outputs):
            if isinstance(spec, tuple):
                for j, v in zip(spec, value or ()):
                    if j:
                        vals[j] = v
                        if out_lod is not None:
                            lods[j] = out_lod
            elif spec:
                vals[spec] = value
                if out_lod is not None:
                    lods[spec] = out_lod
    return run


def check_lod_agree(step, lods):
    """Inputs of ``step.lod_agree`` that carry LoD must carry the same (adding two batches
    of sequences cut differently is a bug, not a broadcast)."""
    seen = None
    for slot, what in step.lod_agree:
        lod = lods[slot]
        if not lod:
            continue
        if seen is None:
            seen = (what, lod)
        elif lod != seen[1]:
            raise FluidscopeError(
                f"{seen[0]} has LoD {seen[1]} but {what} has LoD {lod}; they must hold "
                "the same sequences")


class PrepareContext:
    """What a control-flow op's ``prepare(ctx)`` gets: its step, the program, the place,
    the parent plan and ``sub_plan(block_idx)`` (prepared once, shared by every op that
    runs that block, e.g. ``recurrent`` and the debugger)."""

    def __init__(self, plan, step, program_desc):
        self.plan, self.step, self.program_desc, self.place = plan, step, program_desc, plan.place
        self.xp = plan.place.xp

    def sub_plan(self, block_idx) -> "BlockPlan":
        plans = self.plan.sub_plans
        if block_idx not in plans:
            if not 0 < block_idx < len(self.program_desc.blocks):
                raise SchemaError(
                    f"op #{self.step.index} {self.step.type}: sub-block {block_idx} does not exist")
            plans[block_idx] = BlockPlan(self.program_desc, block_idx, self.place,
                                         sub_plans=plans)
        return plans[block_idx]


class BlockPlan:
    """A block of a ProgramDesc prepared for one place.

    Attributes: ``names`` (slot -> var name), ``slot`` (name -> slot), ``steps``,
    ``inputs`` (slots read before any op writes them: feeds, parameters, scope values),
    ``persistable_outputs`` (slots written back to the root scope), ``fetch_cols``
    (fetch op col -> slot) and ``feed_cols`` (feed op col -> var name).
    """

    def __init__(self, program_desc, block_idx, place, sub_plans=None):
        if sub_plans is None:  # the root plan: refuse, once, what no step could run
            check_implemented(program_desc, block_idx)
        self.var_descs = _visible_vars(program_desc, block_idx)  # refuses a bad index
        block = program_desc.blocks[block_idx]
        self.block_idx, self.place, self.program_desc = block_idx, place, program_desc
        self.sub_plans = {} if sub_plans is None else sub_plans  # shared with sub-blocks
        # Only a root plan recycles output buffers (runtime.recycle): a sub-block's steps
        # run once per frame, and the frames keep what they wrote.
        self.recycles = sub_plans is None and place.device == "cpu"
        self.names, self.slot, self._feed_meta = [None], {}, {}
        self.steps, self.fetch_cols, self.feed_cols = [], {}, {}
        written = set()
        self.inputs = []
        for index, op in enumerate(block.ops):
            if op.type in ("feed", "fetch"):
                self._note_holder_op(op)
                continue
            step = self._prepare_op(index, op, place)
            for s in step.input_slots():
                if s not in written and s not in {i for i, _ in self.inputs}:
                    self.inputs.append((s, self.names[s]))
            written.update(step.output_slots())
            self.steps.append(step)
        self.persistable_outputs = [
            (s, self.names[s]) for s in sorted(written)
            if self.is_persistable(self.names[s])]
        self.persistable_slots = frozenset(s for s, _ in self.persistable_outputs)
        if self.recycles:
            recycle.bind_plan(self)
        self.uses_lod = any(step.needs_lod for step in self.steps)
        # Whether every matrix product is small (runtime.threads; None: not yet measured).
        self.small_products = None
        # The scope variables its last run bound (runtime.feed.ScopeBinding), and per
        # tuple of fetched names the slots (run._fetch_plan).
        self.scope_binding = None
        self.fetch_plans = {}
        # fed name -> (shape, dtype) of an array convert_feed took as it was
        self.accepted_feeds = {}
        # What Executor.run's next plain runs may skip (runtime.replay), or None.
        self.prepared_run = None

    def release_buffers(self):
        """Drop the arrays its steps keep for the next run (``runtime.recycle``); the
        next run allocates afresh."""
        for step in self.steps:
            if step.spare is not None:
                step.spare[:] = [None] * len(step.spare)

    # ------------------------------------------------------------- preparation
    def slot_of(self, name):
        s = self.slot.get(name)
        if s is None:
            s = self.slot[name] = len(self.names)
            self.names.append(name)
        return s

    def is_persistable(self, name):
        """True for a persistable variable of the program (a holder such as feed is not)."""
        v = self.var_descs.get(name)
        return bool(v is not None and v.persistable and v.type.type not in _HOLDER_TYPES)

    def feed_meta(self, name):
        """(dtype, dims) the program declares for a fed var, looked up once per plan."""
        meta = self._feed_meta.get(name)
        if meta is None:
            meta = self._feed_meta[name] = (self.declared_dtype(name), self.declared_dims(name))
        return meta

    def declared_dtype(self, name):
        v = self.var_descs.get(name)
        if v is None or not v.type.HasField("dense_tensor"):
            return None
        return to_numpy_dtype(v.type.dense_tensor.tensor.data_type)

    def declared_dims(self, name):
        v = self.var_descs.get(name)
        if v is None or not v.type.HasField("dense_tensor"):
            return None
        return tuple(v.type.dense_tensor.tensor.dims)

    def _note_holder_op(self, op):
        col = next((a.i for a in op.attrs if a.name == "col"), None)
        if col is None:
            raise SchemaError(f"{op.type} op has no 'col' attribute")
        if op.type == "feed":
            self.feed_cols[col] = op.outputs[0].arguments[0]
        else:
            self.fetch_cols[col] = self.slot_of(op.inputs[0].arguments[0])

    def _check_attr_values(self, index, opdef, attrs):
        """Refuse a value an attribute's checker refuses (a desc edited by hand after it
        was loaded or built: ``append_op``, load and save check them; the kernel would run
        with it), as ``ir.validate`` words it."""
        for name, value in attrs.items():
            spec = opdef.attr_by_name.get(name)
            if spec is not None and spec.checker is not None:
                problem = spec.checker(value)
                if problem:
                    raise SchemaError(f"block {self.block_idx}, op #{index} ({opdef.type}): "
                                      f"attribute '{name}'={value!r} {problem}")

    def _prepare_op(self, index, op, place):
        opdef = registry.get(op.type)
        attrs = opdef.parse_attrs(
            {a.name: registry.attr_from_proto(a) for a in op.attrs}, check=False)
        self._check_attr_values(index, opdef, attrs)
        given_in = {v.parameter: list(v.arguments) for v in op.inputs}
        given_out = {v.parameter: list(v.arguments) for v in op.outputs}
        ins = tuple(self._slot_spec(s, given_in.get(s.name, [])) for s in opdef.inputs)
        outs = tuple(self._slot_spec(s, given_out.get(s.name, [])) for s in opdef.outputs)
        lod_pairs = tuple(
            (self.slot_of(a), self.slot_of(b)) for src, dst in opdef.share_lod
            for a, b in _lod_links(given_in.get(src) or [], given_out.get(dst) or []))
        # Kernels may skip outputs nobody reads (mul_grad's dX for a data input).
        attrs[registry.OUTPUTS_WANTED] = tuple(
            any(spec) if isinstance(spec, tuple) else bool(spec) for spec in outs)
        step = Step(index, op, opdef, attrs, ins, outs, lod_pairs)
        step.lod_agree = tuple((self.slot_of(n), f"{slot} '{n}'") for slot in opdef.lod_agree
                               for n in given_in.get(slot, []) if n != EMPTY)
        if opdef.prepare is not None:
            step.control = opdef.prepare(PrepareContext(self, step, self.program_desc))
            step.run = step.control.run
            return step
        dtype = self.declared_dtype(_first(given_in)) if given_in else None
        kernel = step.kernel = opdef.kernel_for(place.device,
                                                dtype.name if dtype is not None else "any")
        step.run = (_bind_lod if opdef.lod else _bind)(step, kernel, place.xp)
        return step

    def _slot_spec(self, slot, names):
        if slot.duplicable:
            return tuple(NONE_SLOT if n == EMPTY else self.slot_of(n) for n in names)
        if names and names[0] == EMPTY:
            return NONE_SLOT
        if not names:
            return NONE_SLOT
        return self.slot_of(names[0])


def check_implemented(program_desc, block_idx=0):
    """Raise one ``UnimplementedOpError`` naming, with counts, every op type of block
    ``block_idx`` and the sub-blocks its ops run that fluidscope has no record of (a
    loaded Paddle model may hold many), before anything is prepared or run."""
    missing, todo, seen = [], [block_idx], set()
    while todo:
        b = todo.pop()
        if b in seen or not 0 <= b < len(program_desc.blocks):
            continue  # a bad index is reported where the op is prepared
        seen.add(b)
        for op in program_desc.blocks[b].ops:
            if op.type not in ("feed", "fetch") and not registry.has(op.type):
                missing.append(op.type)
            for a in op.attrs:
                if a.type == pb.AttrType.BLOCK:
                    todo.append(a.block_idx)
                elif a.type == pb.AttrType.BLOCKS:
                    todo.extend(a.blocks_idx)
    error = paddle_ops.unimplemented_error(missing)
    if error is not None:
        raise error


def _lod_links(srcs, dsts):
    """(input, output) name pairs that share LoD: position by position for duplicable
    slots, one input to every output otherwise; empty positions are skipped."""
    if len(srcs) == 1:
        srcs = srcs * len(dsts)
    return [(a, b) for a, b in zip(srcs, dsts) if a != EMPTY and b != EMPTY]


def _first(given):
    for names in given.values():
        if names:
            return names[0]
    return None


def _visible_vars(program_desc, block_idx):
    """name -> VarDesc for a block, its forward block and its ancestors (nearest wins)."""
    if not 0 <= block_idx < len(program_desc.blocks):
        raise FluidscopeError(f"block {block_idx} does not exist; the program has "
                              f"{len(program_desc.blocks)} block(s)")
    return visible_vars(program_desc, block_idx)


def program_desc_of(program):
    """(ProgramDesc, revision or None) of a designer Program or a bare ProgramDesc.

    A designer Program's ``revision`` changes on every edit; a bare desc has none."""
    if hasattr(program, "desc"):
        return program.desc, getattr(program, "revision", None)
    if not hasattr(program, "blocks"):
        raise FluidscopeError(f"expected a Program or ProgramDesc, got {type(program).__name__}")
    return program, None
