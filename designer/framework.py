"""Program, Block, Variable, Operator: thin views over the protobuf descs.

The ProgramDesc is the only copy of the program; these classes read and write it
and never keep a second one (no ``sync_with_cpp``). ``Block.append_op`` checks slots
and attributes against the registry and runs shape inference at once, so a mistake
surfaces where the user made it, with the layer, op, slot, shapes and the user's
own file:line in the message.
"""
from __future__ import annotations

import contextlib
import copy

from fluidscope.engine.errors import DesignError, FluidscopeError, SchemaError, ShapeError
from fluidscope.engine.ir import descs, op_attrs, paddle_ops, registry
from fluidscope.engine.ir.lookup import owner_block
from fluidscope.engine.ir.names import EMPTY_VAR, is_grad_name
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType
from fluidscope.engine.ir.roles import ROLE_ATTR, OpRole, is_training_role, role_of

from . import unique_name
from .callsite import reports_at_user_line, user_frame
from .name_scopes import namescope_of
from .op_slots import design_message, names_by_slot, shapes_compatible
from .views import Operator, Parameter, Variable

VarType = pb.VarType
PADDLE_VERSION = 3003001  # Version written into programs: Paddle 3.3.1's number


# -------------------------------------------------------------------- Block
class Block:
    """A view of one BlockDesc. Holds a name -> VarDesc index (an index, not a copy)."""

    def __init__(self, program: "Program", idx: int):
        self.program, self.idx = program, idx
        self._index = None

    @property
    def desc(self):
        return self.program.desc.blocks[self.idx]

    @property
    def parent_idx(self):
        return self.desc.parent_idx

    @property
    def forward_block_idx(self):
        return self.desc.forward_block_idx

    def _reindex(self):
        self._index = {v.name: v for v in self.desc.vars}

    def _var_desc(self, name):
        if self._index is None or name not in self._index and self._stale():
            self._reindex()
        try:
            return self._index[name]
        except KeyError:
            raise FluidscopeError(f"block {self.idx} has no variable '{name}'") from None

    # ------------------------------------------------------------ variables
    def has_var(self, name):
        if self._index is None or name not in self._index and self._stale():
            self._reindex()
        return name in self._index

    def var_names(self):
        """The names of this block's variables (a view of the index, kept fresh)."""
        if self._index is None or self._stale():
            self._reindex()
        return self._index.keys()

    def note_appended_vars(self, var_descs):
        """Index VarDescs that were appended to ``desc`` directly (a design's replayed
        layer), so lookups need not re-read the whole block."""
        if self._index is not None:
            for var in var_descs:
                self._index[var.name] = var

    def forget_index(self):
        """Drop the name index (vars were removed from ``desc``); rebuilt on next use."""
        self._index = None

    def _stale(self):
        """Whether vars were added to or removed from the desc behind the index's back
        (a miss re-reads the desc only then: re-reading on every miss is quadratic)."""
        return len(self._index) != len(self.desc.vars)

    def _find_var_recursive(self, name):
        """The Variable ``name`` as this block sees it (``ir.lookup``'s search), or None."""
        if self.has_var(name):
            return self.var(name)
        idx = owner_block(self.program.desc, self.idx, name)
        return None if idx is None else self.program.block(idx).var(name)

    def _find_desc_recursive(self, name):
        """The VarDesc of ``name`` as this block sees it, or None (no view made: op
        appends look up every input and output)."""
        if self.has_var(name):
            return self._index[name]
        idx = owner_block(self.program.desc, self.idx, name)
        return None if idx is None else self.program.block(idx)._var_desc(name)

    def var(self, name) -> Variable:
        desc = self._var_desc(name)
        return (Parameter if desc.is_parameter else Variable)(self, name)

    @property
    def vars(self):
        return {v.name: self.var(v.name) for v in self.desc.vars}

    def iter_parameters(self):
        return [self.var(v.name) for v in self.desc.vars if v.is_parameter]

    all_parameters = iter_parameters

    def create_var(self, name=None, shape=None, dtype="float32", lod_level=0,
                   persistable=False, stop_gradient=False, type=VarType.DENSE_TENSOR,
                   is_parameter=False, need_check_feed=False) -> Variable:
        """Declare a variable (or return the existing one of that name).

        shape None leaves the dims to shape inference of the op that writes it."""
        name = name or unique_name.generate("_generated_var")
        if self.has_var(name):
            return self.var(name)
        v = descs.add_var(self.desc, name, shape, dtype, persistable=persistable,
                          is_parameter=is_parameter, stop_gradient=stop_gradient,
                          lod_level=lod_level, kind=type, need_check_feed=need_check_feed)
        if self._index is not None:
            self._index[name] = v
        self.program.bump_revision()
        return (Parameter if v.is_parameter else Variable)(self, name)  # what var(name) gives

    def create_parameter(self, name, shape, dtype="float32", trainable=True) -> Parameter:
        if any(d is None or d < 0 for d in shape):
            raise DesignError(f"parameter {name}: shape {list(shape)} must be fully known")
        var = self.create_var(name=name, shape=shape, dtype=dtype, persistable=True,
                              stop_gradient=not trainable, is_parameter=True)
        return var

    # ------------------------------------------------------------------ ops
    @property
    def ops(self):
        return [Operator(self, op) for op in self.desc.ops]

    @reports_at_user_line
    def append_op(self, type, inputs=None, outputs=None, attrs=None, *, layer=None) -> Operator:
        """Add an op: slots and attributes are checked against the registry and the
        outputs' shapes inferred now. ``inputs``/``outputs``: slot -> Variable, name or
        list of them. Raises DesignError naming layer, op, slot, shapes and call site."""
        return self._insert_op(len(self.desc.ops), type, inputs, outputs, attrs, layer)

    @reports_at_user_line
    def prepend_op(self, type, inputs=None, outputs=None, attrs=None, *, layer=None):
        return self._insert_op(0, type, inputs, outputs, attrs, layer)

    def _insert_op(self, position, type, inputs, outputs, attrs, layer):
        site = user_frame()
        try:
            opdef = registry.get(type)
            ins = names_by_slot(inputs, opdef, "input")
            outs = names_by_slot(outputs, opdef, "output")
            given_attrs = dict(attrs or {})
            given_attrs.setdefault(ROLE_ATTR, self.program._op_role)
            given_attrs.setdefault("op_namescope", namescope_of(layer))
            given_attrs.setdefault("op_callstack", [site] if site else [])
            checked, attr_bytes = op_attrs.checked_and_encoded(opdef, given_attrs)
            metas = {slot: [self._meta(n) for n in names] for slot, names in ins.items()}
            inferred = registry.run_infer_shape(opdef, metas, checked)
        except (SchemaError, ShapeError, FluidscopeError) as exc:
            if isinstance(exc, DesignError):
                raise
            raise DesignError(design_message(layer, type, site, exc)) from None
        self._apply_inferred(outs, inferred, layer, type, site)
        ops = self.desc.ops
        if position >= len(ops):
            position = len(ops)
            # filled in place: appending a made op would copy it once more
            op = ops.add()
            try:
                if not descs.fill_op_encoded(op, type, ins, outs, attr_bytes):
                    descs.fill_op(op, type, ins, outs, {n: checked[n] for n in given_attrs})
            except BaseException:
                del ops[-1]
                raise
        else:  # repeated message fields cannot insert: rebuild the tail
            op = descs.make_op(type, ins, outs, {n: checked[n] for n in given_attrs})
            tail = [pb.OpDesc.FromString(o.SerializeToString()) for o in ops[position:]]
            del ops[position:]
            ops.extend([op] + tail)
        self.program.bump_revision()
        return Operator(self, ops[position])

    def _meta(self, name):
        if name == EMPTY_VAR:  # a position left empty on purpose: nothing to infer
            return None
        desc = self._find_desc_recursive(name)
        if desc is None:
            raise FluidscopeError(f"variable '{name}' is not declared in block {self.idx} or its parents")
        t = desc.type
        if not t.HasField("dense_tensor"):
            return registry.VarMeta((), t.type, 0)
        dt = t.dense_tensor
        return registry.VarMeta(tuple(dt.tensor.dims), dt.tensor.data_type, dt.legacy_lod_level)

    def _apply_inferred(self, outs, inferred, layer, type, site):
        """Write inferred metas into output VarDescs; a clash with a declared shape is a
        design error (the op would produce something else than the var promises)."""
        for slot, names in outs.items():
            metas = inferred.get(slot) or ()
            for i, name in enumerate(names):
                meta = metas[i] if i < len(metas) else None
                desc = self._find_desc_recursive(name)
                if desc is None:
                    desc = self.create_var(name=name).desc
                if meta is None:
                    continue
                var_type = desc.type
                if not var_type.HasField("dense_tensor"):
                    continue
                dt = var_type.dense_tensor
                tensor = dt.tensor
                if desc.persistable:
                    declared = list(tensor.dims)
                    if declared:  # a parameter's shape is the parameter's, not the op's
                        if not shapes_compatible(declared, meta.shape):
                            raise DesignError(design_message(
                                layer, type, site,
                                f"slot {slot}: output '{name}' is declared {declared} but the "
                                f"op produces {list(meta.shape)}"))
                        continue
                dims = tensor.dims
                if len(dims):
                    del dims[:]
                dims.extend(meta.shape)
                tensor.data_type = meta.dtype
                if meta.lod_level:
                    dt.legacy_lod_level = meta.lod_level


# ------------------------------------------------------------------- Program
class Program:
    """A ProgramDesc and views of its blocks. ``revision`` changes on every edit, so
    executors re-prepare only when needed."""

    def __init__(self, desc=None):
        self.desc = desc if desc is not None else _new_desc()
        self.revision = 0
        self.random_seed = 0
        # ParamAttr learning-rate multipliers: optimizer settings, not part of the IR.
        self.param_learning_rates = {}
        # The user's layer calls, for Design.from_program (designer/recording.py); never
        # written into the ProgramDesc.
        self.layer_calls = []
        self._op_role = OpRole.FORWARD
        self._current_block_idx = 0
        self._blocks = [Block(self, i) for i in range(len(self.desc.blocks))]

    @classmethod
    def from_desc(cls, desc):
        """Wrap an existing ProgramDesc (e.g. one loaded from a file)."""
        return cls(desc)

    def bump_revision(self):
        """Say that ``desc`` changed (executors re-prepare a program whose revision moved)."""
        self.revision += 1

    def sync_blocks(self):
        """Call after editing ``desc`` directly (backward adds blocks and vars)."""
        self._blocks = [Block(self, i) for i in range(len(self.desc.blocks))]
        self.bump_revision()

    def size_marks(self):
        """[(ops, vars)] of every block: where ``truncate`` cuts back to."""
        return [(len(b.ops), len(b.vars)) for b in self.desc.blocks]

    def truncate(self, marks):
        """Remove every block, op and var added since ``size_marks()`` gave ``marks`` (a
        layer that failed half-way leaves nothing behind). Views of the blocks that stay
        stay valid; building continues in the global block."""
        del self.desc.blocks[len(marks):]
        for block, (ops, vars_) in zip(self.desc.blocks, marks):
            del block.ops[ops:]
            del block.vars[vars_:]
        del self._blocks[len(marks):]
        for view in self._blocks:
            view.forget_index()  # it may list removed variables
        self._current_block_idx = 0
        self.bump_revision()

    # ----------------------------------------------------------- blocks
    @property
    def blocks(self):
        return list(self._blocks)

    @property
    def num_blocks(self):
        return len(self._blocks)

    def global_block(self) -> Block:
        return self._blocks[0]

    def block(self, idx) -> Block:
        return self._blocks[idx]

    def current_block(self) -> Block:
        return self._blocks[self._current_block_idx]

    def _create_block(self, parent_idx=None) -> Block:
        parent = self._current_block_idx if parent_idx is None else parent_idx
        self.desc.blocks.add(idx=len(self.desc.blocks), parent_idx=parent)
        self._blocks.append(Block(self, len(self._blocks)))
        self._current_block_idx = len(self._blocks) - 1
        self.bump_revision()
        return self.current_block()

    def _rollback(self):
        self._current_block_idx = self.current_block().parent_idx

    @contextlib.contextmanager
    def _op_role_guard(self, role):
        saved, self._op_role = self._op_role, role
        try:
            yield
        finally:
            self._op_role = saved

    # --------------------------------------------------------- queries
    def all_parameters(self):
        return self.global_block().all_parameters()

    def list_vars(self):
        for block in self._blocks:
            yield from block.vars.values()

    def clone(self, for_test=False) -> "Program":
        """A deep copy. ``for_test``: without backward and optimizer ops and their
        gradient vars, with ``is_test`` set on ops that have it (dropout)."""
        desc = pb.ProgramDesc()
        desc.CopyFrom(self.desc)
        if for_test:
            _strip_training(desc)
        clone = Program(desc)
        clone.random_seed = self.random_seed
        clone.param_learning_rates = dict(self.param_learning_rates)
        return clone

    def to_string(self, throw_on_error=False, with_details=False) -> str:
        from .printer import program_to_string
        return program_to_string(self, with_details=with_details)

    def __str__(self):
        return self.to_string()

    def __deepcopy__(self, memo):
        return self.clone()

    __copy__ = clone


def _new_desc():
    desc = pb.ProgramDesc()
    desc.blocks.add(idx=0, parent_idx=-1)
    desc.version.version = PADDLE_VERSION
    return desc


def _strip_training(desc):
    """Remove backward/optimize ops and @GRAD vars; set is_test where an op has it."""
    for block in desc.blocks:
        keep = []
        for op in block.ops:
            if is_training_role(role_of(op)):
                continue
            if ("is_test" in registry.get(op.type).attr_by_name if registry.has(op.type)
                    else paddle_ops.declares(op.type, "is_test")):  # a loaded model's op
                descs.set_attr(op, "is_test", AttrType.BOOLEAN, True)
            kept = copy.deepcopy(op)
            keep.append(kept)
        del block.ops[:]
        block.ops.extend(keep)
        used = {n for op in block.ops for v in list(op.inputs) + list(op.outputs) for n in v.arguments}
        grads = [v for v in block.vars if is_grad_name(v.name) and v.name not in used]
        for v in grads:
            block.vars.remove(v)


# ------------------------------------------------------ default programs
_main_program = Program()
_startup_program = Program()


def default_main_program() -> Program:
    """The program layers add to (inside ``program_guard``: the guarded one)."""
    return _main_program


def default_startup_program() -> Program:
    """The program initializers add to."""
    return _startup_program


def switch_main_program(program):
    global _main_program
    saved, _main_program = _main_program, program
    return saved


def switch_startup_program(program):
    global _startup_program
    saved, _startup_program = _startup_program, program
    return saved


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    """Build into ``main_program`` (and ``startup_program``) inside the ``with`` block."""
    if not isinstance(main_program, Program):
        raise DesignError(f"program_guard expects a Program, got {type(main_program).__name__}")
    saved_main = switch_main_program(main_program)
    saved_startup = switch_startup_program(startup_program) if startup_program is not None else None
    try:
        yield
    finally:
        switch_main_program(saved_main)
        if startup_program is not None:
            switch_startup_program(saved_startup)
