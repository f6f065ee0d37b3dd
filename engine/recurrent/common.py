"""What the ``recurrent`` op and its gradient share: the attributes, and the step layout.

``RecurrentCommon`` reads a recurrent op's (or recurrent_grad's) slots and attributes
once: the in-links, memories (``ex_states`` -> ``states``), boot layers and parameters,
the prepared step block, and how a batch of sequences is cut into frames.
"""
from __future__ import annotations

from ..errors import ExecutionError, SchemaError
from ..ir.dtypes import to_numpy_dtype
from ..ir.registry import Attr, AttrType
from ..kernels.seqbatch import seq_batch

INLINK, MEMORY, OUTER = range(3)  # how a step-block input is bound in a frame


def slot_arguments(desc_op, slot, outputs=False):
    """The argument names of ``slot`` of an OpDesc (its outputs with ``outputs``)."""
    for v in (desc_op.outputs if outputs else desc_op.inputs):
        if v.parameter == slot:
            return list(v.arguments)
    return []


class RecurrentCommon:
    """What the forward and grad runtimes share: names, slots and the step layout."""

    def __init__(self, ctx, fwd_block_idx):
        step, attrs, op = ctx.step, ctx.step.attrs, ctx.step.desc
        self.where = f"op #{step.index} {step.type}"
        self.xp, self.parent = ctx.xp, ctx.plan
        self.reverse = attrs["reverse"]
        self.ex_states, self.states = list(attrs["ex_states"]), list(attrs["states"])
        if len(self.ex_states) != len(self.states):
            raise SchemaError(f"{self.where}: ex_states {self.ex_states} and states "
                              f"{self.states} must pair up")
        self.in_names = slot_arguments(op, "inputs")
        self.init_names = slot_arguments(op, "initial_states")
        self.param_names = slot_arguments(op, "parameters")
        if not self.in_names:
            raise SchemaError(f"{self.where}: needs at least one sequence in 'inputs'")
        if self.init_names and len(self.init_names) != len(self.ex_states):
            raise SchemaError(f"{self.where}: {len(self.init_names)} initial_states for "
                              f"{len(self.ex_states)} memories")
        self.fwd = ctx.sub_plan(fwd_block_idx)
        self._memory_metas = {}  # memory index -> (dtype, row shape): ``memory_meta``
        for inner in self.fwd.steps:
            if inner.needs_lod:  # a frame is one time step of each sequence: no LoD inside
                raise SchemaError(
                    f"{self.where}: its step block runs {inner.type} (op #{inner.index}), which "
                    "needs sequences; inside a step each input is one time step (nested "
                    "sub-sequence groups are not supported)")
        for s in self.states:
            if s not in self.fwd.slot:
                raise SchemaError(f"{self.where}: state '{s}' is not a variable of the step "
                                  f"block {fwd_block_idx}")

    def layout(self, lods, in_slots):
        """The SeqBatch of the in-links (which must all hold the same sequences)."""
        lod0 = lods[in_slots[0]] if lods is not None else None
        if not lod0:
            raise ExecutionError(
                f"{self.where}: input '{self.in_names[0]}' has no LoD; a recurrent group "
                "runs over sequences (feed a LoDTensor)")
        for name, s in zip(self.in_names[1:], in_slots[1:]):
            if lods[s] != lod0:
                raise ExecutionError(
                    f"{self.where}: inputs '{self.in_names[0]}' (LoD {lod0}) and '{name}' "
                    f"(LoD {lods[s]}) must hold the same sequences")
        return seq_batch(lod0[-1], self.reverse), lod0

    def memory_meta(self, i):
        """(dtype, row shape) of memory i, from the ex_state's VarDesc (read once: a
        memory without a boot layer asks every run)."""
        known = self._memory_metas
        if i not in known:
            known[i] = self._read_memory_meta(i)
        return known[i]

    def _read_memory_meta(self, i):
        name = self.ex_states[i]
        desc = self.fwd.var_descs.get(name)
        if desc is None or not desc.type.HasField("dense_tensor"):
            raise SchemaError(f"{self.where}: memory '{name}' is not declared in the step block")
        dims = tuple(desc.type.dense_tensor.tensor.dims)[1:]
        if any(d < 0 for d in dims):
            raise SchemaError(f"{self.where}: memory '{name}' has unknown size {list(dims)}; "
                              "give it a boot layer or a size")
        return to_numpy_dtype(desc.type.dense_tensor.tensor.data_type), dims


RECURRENT_ATTRS = [
    Attr("sub_block", AttrType.BLOCK, doc="the step net of one time step"),
    Attr("ex_states", AttrType.STRINGS, [], doc="memories as read in a step (previous value)"),
    Attr("states", AttrType.STRINGS, [], doc="the step-net vars the memories link to"),
    Attr("reverse", AttrType.BOOLEAN, False, doc="walk each sequence from its end"),
    Attr("is_train", AttrType.BOOLEAN, True),
    Attr("has_states", AttrType.BOOLEAN, False),
    Attr("skip_eager_deletion_vars", AttrType.STRINGS, [], extra=True),
]
