"""The op registry: the single source of truth for every op fluidscope knows.

One immutable ``OpDef`` per op type holds its slots, attributes, shape inference,
kernels keyed by (device, dtype), gradient maker, a doc line and palette metadata.
Layers, backward, validation, the executor, the renderer, the canvas palette and the
test matrix all read it; nothing else keeps a list of ops.

Kernel convention (written once against ``xp``, numpy or cupy)::

    kernel(xp, attrs, *inputs) -> output | tuple of outputs

``inputs`` come one per input slot in declared order: an array, ``None`` for an
empty dispensable slot, or a list of arrays for a duplicable slot. An op with one
output slot returns that value; otherwise a tuple in declared output order (``None``
for an output not produced).

The executor also puts ``attrs[OUTPUTS_WANTED]``: one bool per output slot, False when
the slot has no variable. A kernel may skip computing such an output (return None
there), as Paddle's kernels skip a null ``dx``; called without it, compute everything.

LoD-aware ops (``register(..., lod=True)``: the sequence ops, the fused RNNs) take one
more argument, a ``LodArgs``, before their inputs::

    kernel(xp, attrs, lod, *inputs)

``lod.inputs[i]`` is input slot i's LoD (offset lists, ``[]`` when it has none; a list
of those for a duplicable slot), ``lod.offsets(i)`` its last level or a clear error, and
a kernel sets ``lod.outputs[j]`` for an output whose LoD it computes; outputs it leaves
``None`` get their LoD from the op's ``share_lod`` pairs.

An op may also give ``kernel_into`` (``register(..., kernel_into=...)``, or in a
``GradSpec``): the same kernel, with one more argument before the inputs::

    kernel_into(xp, attrs, bufs, *inputs) -> exactly what kernel returns

``bufs`` holds one entry per output slot: None, or an array nobody else can see (a
buffer the executor recycled from an earlier run: ``runtime.recycle`` states the rule),
of unknown shape and dtype. The kernel may write output k into ``bufs[k]`` only when
that array has exactly the shape and dtype the output has (``kernels._util.fitting``),
and must then return it; the values must be bit for bit those ``kernel`` returns.
``inplace`` pairs (input slot, output slot) say that kernel_into may also be handed that
input's own array as the buffer of that output (written element by element, so the
aliasing is harmless), which a plain run does when the input is dead after the op
(Paddle's inplace pass). ``shape_only`` names input slots whose values the kernel never
reads, only their shape and dtype (Paddle's no_need_buffer vars).

Control-flow ops (``recurrent``) own a sub-block and cannot be a pure kernel; they give
``prepare(ctx)`` instead, returning an object with ``run(vals, lods)``, where ``ctx``
(``runtime.plan.PrepareContext``) hands them the program, the place and prepared plans
of their sub-blocks. An op whose sub-block runs once per time step returns a
``runtime.frames.FrameDrivenOp``, which the executor and the debugger both drive.

Gradient ops are ordinary registered ops named ``<type>_grad`` with Paddle's slot
names (``X``, ``Out``, ``Out@GRAD`` -> ``X@GRAD``); ``GradSpec`` declares the usual
shape of one and registers it next to its forward op.
"""
from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SchemaError, ShapeError
from . import paddle_ops
from .names import grad_name
from .proto import framework_pb2 as pb
from .roles import ROLE_ATTR, ROLE_VAR_ATTR, OpRole

AttrType = pb.AttrType
REQUIRED = object()  # marks an attribute without default
OUTPUTS_WANTED = "__outputs_wanted__"  # runtime hint in a kernel's attrs, see above


def wanted(attrs, index):
    """True unless the executor said output slot ``index`` has no variable."""
    flags = attrs.get(OUTPUTS_WANTED)
    return flags is None or flags[index]


# --------------------------------------------------------------------- schema
@dataclass(frozen=True)
class Slot:
    """One input or output slot of an op.

    duplicable: takes a list of variables; dispensable: may be empty;
    intermediate: an output kept for backward only; no_grad: never differentiated.
    """
    name: str
    duplicable: bool = False
    dispensable: bool = False
    intermediate: bool = False
    no_grad: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Attr:
    """An attribute: name, AttrType, default (``REQUIRED`` if none) and checker.

    ``checker(value)`` returns an error string or None. ``extra`` marks runtime-only
    attributes (Paddle's [X]) that the exported file need not carry.
    """
    name: str
    type: int
    default: Any = REQUIRED
    checker: Callable[[Any], str | None] | None = None
    doc: str = ""
    extra: bool = False


def one_of(*choices):
    """Checker: the value must be one of ``choices``."""
    def check(value):
        return None if value in choices else f"must be one of {list(choices)}"
    check.choices = choices  # read by the op matrix's coverage meta-test (every value run)
    return check


def at_least(low):
    def check(value):
        return None if value >= low else f"must be >= {low}"
    return check


def in_range(low, high):
    def check(value):
        return None if low <= value <= high else f"must be in [{low}, {high}]"
    return check


# Attributes every Paddle op may carry (paddle_compat.md: common attrs).
COMMON_ATTRS = (
    Attr(ROLE_ATTR, AttrType.INT, int(OpRole.FORWARD), doc="OpRole bits (see ir.roles)"),
    Attr(ROLE_VAR_ATTR, AttrType.STRINGS, [], doc="[param, param@GRAD] pairs"),
    Attr("op_namescope", AttrType.STRING, "/", doc="layer that made the op"),
    Attr("op_callstack", AttrType.STRINGS, [], doc="user source lines"),
    Attr("op_device", AttrType.STRING, ""),
    Attr("with_quant_attr", AttrType.BOOLEAN, False),
)
COMMON_ATTR_NAMES = frozenset(a.name for a in COMMON_ATTRS)


# ------------------------------------------------------------ attribute values
_SCALAR_TYPES = {
    AttrType.INT: int, AttrType.LONG: int, AttrType.FLOAT: float,
    AttrType.FLOAT64: float, AttrType.STRING: str, AttrType.BOOLEAN: bool,
    AttrType.BLOCK: int, AttrType.VAR: str,
}
_LIST_TYPES = {
    AttrType.INTS: int, AttrType.LONGS: int, AttrType.FLOATS: float,
    AttrType.FLOAT64S: float, AttrType.STRINGS: str, AttrType.BOOLEANS: bool,
    AttrType.BLOCKS: int, AttrType.VARS: str,
}
_INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _coerce_one(kind, value):
    """Python value -> ``kind`` without silent loss; raises TypeError/ValueError."""
    if kind is bool:
        if isinstance(value, bool) or (hasattr(value, "dtype") and value.dtype == bool):
            return bool(value)
        raise TypeError(f"expected a bool, got {type(value).__name__} {value!r}")
    if kind is int:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        return int(value)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
            raise TypeError(f"expected a number, got {type(value).__name__} {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__} {value!r}")
    return value


# Read once: each protobuf enum lookup (AttrType.INT) is a Python-level __getattr__,
# and coerce_attr runs ~26,000 times in a cold build of a 1,000-layer design.
_INT32_CHECKED = frozenset((AttrType.INT, AttrType.BLOCK))


def coerce_attr(attr_type: int, value):
    """Check and normalise a Python value for an attribute of ``attr_type``."""
    if attr_type in _SCALAR_TYPES:
        out = _coerce_one(_SCALAR_TYPES[attr_type], value)
        if attr_type in _INT32_CHECKED and not _INT32[0] <= out <= _INT32[1]:
            raise ValueError(f"{out} does not fit in int32")
        return out
    if attr_type in _LIST_TYPES:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"expected a list, got {type(value).__name__} {value!r}")
        kind = _LIST_TYPES[attr_type]
        return [_coerce_one(kind, v) for v in value]
    if attr_type == AttrType.SCALAR:
        return _coerce_scalar(value)
    if attr_type == AttrType.SCALARS:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"expected a list, got {type(value).__name__} {value!r}")
        return [_coerce_scalar(v) for v in value]
    raise TypeError(f"attribute type {AttrType.Name(attr_type)} is not supported")


def _coerce_scalar(value):
    """A Paddle ``Scalar`` (SCALAR/SCALARS attributes, e.g. assign_value's values): a
    Python bool, int or float, kept as that kind (it decides the Scalar's type)."""
    if isinstance(value, bool) or (hasattr(value, "dtype") and value.dtype == bool):
        return bool(value)
    if hasattr(value, "__index__"):
        return int(value)
    if isinstance(value, (int, float)) or hasattr(value, "__float__"):
        return float(value)
    raise TypeError(f"expected a bool, int or float, got {type(value).__name__} {value!r}")


def _scalar_to_proto(value, msg):
    """bool -> BOOLEAN (b), int -> LONG (i), float -> FLOAT64 (r), as Paddle writes them."""
    if isinstance(value, bool):
        msg.type, msg.b = pb.Scalar.BOOLEAN, value
    elif isinstance(value, int):
        msg.type, msg.i = pb.Scalar.LONG, value
    else:
        msg.type, msg.r = pb.Scalar.FLOAT64, value
    return msg


def _scalar_from_proto(msg):
    if msg.type == pb.Scalar.BOOLEAN:
        return bool(msg.b)
    if msg.type == pb.Scalar.LONG:
        return int(msg.i)
    if msg.type == pb.Scalar.FLOAT64:
        return float(msg.r)
    raise SchemaError(f"Scalar of type {pb.Scalar.Type.Name(msg.type)} is not supported")


# Built once: a program build writes ~13,000 attributes, and each protobuf enum lookup
# (AttrType.INT) is a Python-level __getattr__.
_SCALAR_FIELD = {AttrType.INT: "i", AttrType.LONG: "l", AttrType.FLOAT: "f",
                 AttrType.FLOAT64: "float64", AttrType.STRING: "s", AttrType.BOOLEAN: "b",
                 AttrType.BLOCK: "block_idx", AttrType.VAR: "var_name"}
_LIST_FIELD = {AttrType.INTS: "ints", AttrType.LONGS: "longs", AttrType.FLOATS: "floats",
               AttrType.FLOAT64S: "float64s", AttrType.STRINGS: "strings",
               AttrType.BOOLEANS: "bools", AttrType.BLOCKS: "blocks_idx",
               AttrType.VARS: "vars_name"}


def attr_to_proto(name: str, attr_type: int, value, msg=None):
    """Encode a (checked) Python value into an ``OpDesc.Attr`` message."""
    msg = msg if msg is not None else pb.OpDesc.Attr()
    msg.name, msg.type = name, attr_type
    field = _SCALAR_FIELD.get(attr_type)
    if field is not None:
        setattr(msg, field, value)
    elif attr_type in _LIST_FIELD:
        getattr(msg, _LIST_FIELD[attr_type]).extend(value)
    elif attr_type == AttrType.SCALAR:
        _scalar_to_proto(value, msg.scalar)
    elif attr_type == AttrType.SCALARS:
        for v in value:
            _scalar_to_proto(v, msg.scalars.add())
    else:
        raise SchemaError(f"attribute {name}: type {AttrType.Name(attr_type)} cannot be written")
    return msg


_READ_FIELD = {
    AttrType.INT: "i", AttrType.LONG: "l", AttrType.FLOAT: "f", AttrType.FLOAT64: "float64",
    AttrType.STRING: "s", AttrType.BOOLEAN: "b", AttrType.BLOCK: "block_idx",
    AttrType.VAR: "var_name", AttrType.INTS: "ints", AttrType.LONGS: "longs",
    AttrType.FLOATS: "floats", AttrType.FLOAT64S: "float64s", AttrType.STRINGS: "strings",
    AttrType.BOOLEANS: "bools", AttrType.BLOCKS: "blocks_idx", AttrType.VARS: "vars_name",
}


def attr_from_proto(msg):
    """Decode an ``OpDesc.Attr`` message into a Python value."""
    if msg.type == AttrType.SCALAR:
        return _scalar_from_proto(msg.scalar)
    if msg.type == AttrType.SCALARS:
        return [_scalar_from_proto(s) for s in msg.scalars]
    field_name = _READ_FIELD.get(msg.type)
    if field_name is None:
        raise SchemaError(f"attribute {msg.name}: type {AttrType.Name(msg.type)} is not supported")
    value = getattr(msg, field_name)
    return list(value) if msg.type in _LIST_TYPES else value


# --------------------------------------------------------------- shape infer
@dataclass(frozen=True)
class VarMeta:
    """What shape inference knows of a variable: dims (-1 unknown), dtype, LoD level."""
    shape: tuple
    dtype: int = pb.VarType.FP32
    lod_level: int = 0


class InferContext:
    """Handed to ``infer_shape``: input metas by slot, attributes, output setters."""

    def __init__(self, op_type, inputs, attrs):
        self.op_type, self._inputs, self.attrs = op_type, inputs, attrs
        self.outputs: dict[str, list] = {}

    def input(self, slot):
        metas = self._inputs.get(slot) or []
        return metas[0] if metas else None

    def inputs(self, slot):
        return list(self._inputs.get(slot) or [])

    def attr(self, name):
        return self.attrs[name]

    def set_output(self, slot, shape, dtype=None, lod_level=None, like=None, index=None):
        """Declare output ``slot``'s meta; dtype and LoD level default to ``like``."""
        if like is None:
            first_slot = next(iter(self._inputs), None)
            like = self.input(first_slot) if first_slot else None
        meta = VarMeta(tuple(int(d) for d in shape),
                       dtype if dtype is not None else (like.dtype if like else pb.VarType.FP32),
                       lod_level if lod_level is not None else (like.lod_level if like else 0))
        outs = self.outputs.setdefault(slot, [])
        if index is None:
            outs.append(meta)
        else:
            outs.extend([None] * (index + 1 - len(outs)))
            outs[index] = meta

    def fail(self, message, slot=None):
        where = f"slot {slot}: " if slot else ""
        raise ShapeError(f"op {self.op_type}: {where}{message}")


def same_as(slot_in="X", slot_out="Out"):
    """infer_shape: ``slot_out`` has the meta of ``slot_in`` (element-wise ops)."""
    def infer(ctx):
        x = ctx.input(slot_in)
        ctx.set_output(slot_out, x.shape, like=x)
    return infer


# ------------------------------------------------------------------ gradients
@dataclass(frozen=True)
class OpView:
    """Read-only view of a forward op handed to a gradient maker."""
    type: str
    inputs: dict
    outputs: dict
    attrs: dict

    def input(self, slot):
        return list(self.inputs.get(slot, []))

    def output(self, slot):
        return list(self.outputs.get(slot, []))


@dataclass
class GradOp:
    """A gradient op a maker returns: type, slot -> names maps, attrs (fwd's when None)."""
    type: str
    inputs: dict
    outputs: dict
    attrs: dict | None = None


@dataclass(frozen=True)
class GradSpec:
    """Declares the usual ``T_grad`` op: it reads forward slots ``inputs`` and ``outputs``
    plus ``<out>@GRAD`` for ``out_grads``, and writes ``<in>@GRAD`` for ``in_grads``.
    ``kernel`` follows the kernel convention over the grad op's slots in that order.
    """
    kernel: Callable
    inputs: tuple = ("X",)
    outputs: tuple = ()
    out_grads: tuple = ("Out",)
    in_grads: tuple = ("X",)
    kernel_into: Callable | None = None  # the kernel writing into recycled buffers
    inplace: tuple = ()     # (input slot, output slot) pairs kernel_into may alias
    shape_only: tuple = ()  # input slots the kernel reads the shape of, not the values


def standard_grad_maker(spec: GradSpec, grad_type: str):
    def make(op: OpView):
        ins = {s: op.input(s) for s in spec.inputs}
        ins.update({s: op.output(s) for s in spec.outputs})
        ins.update({grad_name(s): [grad_name(n) for n in op.output(s)] for s in spec.out_grads})
        outs = {grad_name(s): [grad_name(n) for n in op.input(s)] for s in spec.in_grads}
        return [GradOp(grad_type, ins, outs)]
    return make


# ------------------------------------------------------------------------ LoD
class LodArgs:
    """The LoD side of one call of a LoD-aware kernel (see the module docstring)."""
    __slots__ = ("op_type", "slot_names", "inputs", "outputs")

    def __init__(self, op_type, slot_names, inputs, n_outputs):
        self.op_type, self.slot_names, self.inputs = op_type, slot_names, inputs
        self.outputs = [None] * n_outputs

    def offsets(self, i, level=-1):
        """Offsets of input slot ``i``'s LoD at ``level`` (last by default); a clear
        error when that input carries no LoD."""
        lod = self.inputs[i]
        if not lod:
            raise ShapeError(
                f"op {self.op_type}: input {self.slot_names[i]} has no LoD; it needs sequences: "
                "feed a LoDTensor (e.g. create_lod_tensor(data, [[3, 4]])) or a var computed "
                "from one")
        return lod[level]


# ------------------------------------------------------------------ op record
@dataclass(frozen=True)
class OpDef:
    """Everything fluidscope knows about one op type."""
    type: str
    inputs: tuple
    outputs: tuple
    attrs: tuple
    infer_shape: Callable | None
    kernels: dict
    grad_maker: Callable | None = None
    doc: str = ""
    category: str = "misc"
    paddle: bool = True           # False: an op of our own, absent from Paddle
    grad_of: str | None = None    # set on T_grad records: the forward op type
    share_lod: tuple = ()         # (input slot, output slot) pairs whose LoD is copied
    lod: bool = False             # kernel takes a LodArgs (sequence ops)
    lod_agree: tuple = ()         # input slots whose LoDs, where given, must be equal
    prepare: Callable | None = None  # control-flow ops: prepare(ctx) -> run(vals, lods)
    site: str = ""                # where it was registered, for error messages
    attr_by_name: dict = field(default_factory=dict, compare=False, repr=False)
    kernel_into: Callable | None = None  # see the module docstring (buffer reuse)
    inplace: tuple = ()           # (input slot, output slot) kernel_into may alias
    shape_only: tuple = ()        # input slots whose values the kernel never reads

    @property
    def has_grad(self):
        return self.grad_maker is not None

    def input_slot(self, name):
        return next((s for s in self.inputs if s.name == name), None)

    def output_slot(self, name):
        return next((s for s in self.outputs if s.name == name), None)

    def kernel_for(self, device="cpu", dtype="any"):
        for key in ((device, dtype), (device, "any"), ("any", dtype), ("any", "any")):
            if key in self.kernels:
                return self.kernels[key]
        raise SchemaError(f"op {self.type} has no kernel for device {device}, dtype {dtype}")

    def attr_spec(self, name):
        """The Attr of ``name``: a declared one, or one of Paddle's runtime-only "extra"
        attributes of this op type (``paddle_ops.extra_attrs``: use_cudnn, use_mkldnn...;
        ``extra=True``), which files written by Paddle carry; None when neither."""
        spec = self.attr_by_name.get(name)
        if spec is None and self.paddle:
            spec = _extra_specs(self.type, self.grad_of).get(name)
        return spec

    def parse_attrs(self, given: dict, *, check=True):
        """Fill defaults and check ``given`` (name -> value); returns a new dict.

        Paddle's extra attributes of this op type are accepted and passed through
        (checked against the type Paddle writes); kernels never read them."""
        out = {}
        for name, value in given.items():
            spec = self.attr_spec(name)
            if spec is None:
                raise SchemaError(
                    f"op {self.type}: unknown attribute '{name}'; it takes "
                    f"{sorted(a.name for a in self.attrs)}")
            out[name] = self._check_attr(spec, value) if check else value
        for spec in self.attrs:
            if spec.name not in out:
                if spec.default is REQUIRED:
                    raise SchemaError(f"op {self.type}: attribute '{spec.name}' is required")
                out[spec.name] = _copy_default(spec.default)
        return out

    def check_attr(self, name, value):
        """``value`` checked and normalised for attribute ``name`` (as ``parse_attrs``
        does for each given attribute)."""
        spec = self.attr_spec(name)
        if spec is None:
            raise SchemaError(f"op {self.type}: unknown attribute '{name}'; it takes "
                              f"{sorted(a.name for a in self.attrs)}")
        return self._check_attr(spec, value)

    def _check_attr(self, spec, value):
        try:
            value = coerce_attr(spec.type, value)
        except (TypeError, ValueError) as exc:
            raise SchemaError(
                f"op {self.type}: attribute '{spec.name}' ({AttrType.Name(spec.type)}): {exc}"
            ) from None
        if spec.checker is not None:
            problem = spec.checker(value)
            if problem:
                raise SchemaError(f"op {self.type}: attribute '{spec.name}'={value!r} {problem}")
        return value


@functools.lru_cache(maxsize=None)
def _extra_specs(op_type, grad_of=None):
    """name -> Attr(extra=True) of Paddle's extra attributes of ``op_type`` (and, for a
    gradient op, of its forward op: backward copies the forward op's attributes)."""
    found = dict(paddle_ops.extra_attrs(grad_of)) if grad_of else {}
    found.update(paddle_ops.extra_attrs(op_type))
    return {name: Attr(name, attr_type, _copy_default(default), doc="Paddle runtime-only "
                       "attribute (extra); fluidscope keeps it and ignores it", extra=True)
            for name, (attr_type, default) in found.items()}


def _copy_default(value):
    return list(value) if isinstance(value, list) else value


_OPS: dict[str, OpDef] = {}


def _site(depth=2):
    # Walk f_back from inspect.currentframe(), not inspect.stack(): stack() reads the source
    # of every frame and made importing the ~480 registrations take seconds.
    frame = inspect.currentframe()
    for _ in range(depth):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def register(type, *, inputs=(), outputs=(), attrs=(), infer_shape=None, kernel=None,
             kernels=None, grad=None, doc="", category="misc", paddle=True,
             share_lod=None, grad_of=None, lod=False, prepare=None, lod_agree=(),
             kernel_into=None, inplace=(), shape_only=()):
    """Register an op. ``inputs``/``outputs`` are Slots or names; ``grad`` is a GradSpec
    (registers ``<type>_grad`` too), a maker function ``OpView -> [GradOp]``, or None.
    ``lod``: the kernel takes a ``LodArgs``; ``prepare``: a control-flow op (no kernel);
    ``lod_agree``: input slots that must hold the same sequences when they carry LoD;
    ``kernel_into``, ``inplace``, ``shape_only``: buffer reuse (module docstring).
    Returns the OpDef."""
    if type in _OPS:
        raise SchemaError(f"op {type} is registered twice ({_OPS[type].site} and {_site()})")
    ins = tuple(s if isinstance(s, Slot) else Slot(s) for s in inputs)
    outs = tuple(s if isinstance(s, Slot) else Slot(s) for s in outputs)
    all_attrs = tuple(attrs) + tuple(a for a in COMMON_ATTRS if a.name not in {x.name for x in attrs})
    table = dict(kernels or {})
    if kernel is not None:
        table[("any", "any")] = kernel
    if share_lod is None:
        share_lod = (("X", "Out"),) if any(s.name == "X" for s in ins) and any(
            s.name == "Out" for s in outs) else ()
    in_names, out_names = {s.name for s in ins}, {s.name for s in outs}
    for a, b in inplace:
        if a not in in_names or b not in out_names:
            raise SchemaError(f"op {type}: inplace pair ({a!r}, {b!r}) names no input and "
                              f"output slot of it (inputs {sorted(in_names)}, outputs "
                              f"{sorted(out_names)})")
    if not set(shape_only) <= in_names:
        raise SchemaError(f"op {type}: shape_only {sorted(set(shape_only) - in_names)} are "
                          f"not input slots of it")
    maker = grad
    if isinstance(grad, GradSpec):
        maker = standard_grad_maker(grad, type + "_grad")
    opdef = OpDef(type, ins, outs, all_attrs, infer_shape, table, maker, doc, category,
                  paddle, grad_of, tuple(share_lod), bool(lod or prepare), tuple(lod_agree),
                  prepare, _site(),
                  {a.name: a for a in all_attrs}, kernel_into, tuple(inplace),
                  tuple(shape_only))
    _OPS[type] = opdef
    if isinstance(grad, GradSpec):
        _register_standard_grad(opdef, grad)
    return opdef


def _register_standard_grad(fwd: OpDef, spec: GradSpec):
    # A sequence op's gradient reads the forward LoD, and its input gradients carry it.
    dup_in = {s.name for s in fwd.inputs if s.duplicable}
    dup_out = {s.name for s in fwd.outputs if s.duplicable}
    in_slots = [Slot(s, dispensable=True, duplicable=s in dup_in) for s in spec.inputs]
    in_slots += [Slot(s, dispensable=True, duplicable=s in dup_out) for s in spec.outputs]
    in_slots += [Slot(grad_name(s), dispensable=True, duplicable=s in dup_out)
                 for s in spec.out_grads]
    out_slots = [Slot(grad_name(s), dispensable=True, duplicable=s in dup_in)
                 for s in spec.in_grads]

    def infer_grad(ctx):
        # A gradient has its forward var's meta; a grad op that does not read the
        # forward var (scale_grad reads only Out@GRAD) takes the out-gradient's.
        fallback = ctx.inputs(grad_name(spec.out_grads[0])) if spec.out_grads else []
        for s in spec.in_grads:
            for i, meta in enumerate(ctx.inputs(s) or fallback):
                ctx.set_output(grad_name(s), meta.shape, like=meta, index=i)

    register(fwd.type + "_grad", inputs=in_slots, outputs=out_slots,
             attrs=[a for a in fwd.attrs if a.name not in COMMON_ATTR_NAMES],
             infer_shape=infer_grad, kernel=spec.kernel, kernel_into=spec.kernel_into,
             inplace=spec.inplace, shape_only=spec.shape_only,
             doc=f"gradient of {fwd.type}",
             category="gradient", paddle=fwd.paddle, grad_of=fwd.type, lod=fwd.lod,
             share_lod=tuple((s, grad_name(s)) for s in spec.in_grads if s in spec.inputs))


def get(type) -> OpDef:
    """The OpDef of ``type``. An unknown type raises SchemaError: for an op Paddle has,
    saying fluidscope does not implement it; for anything else, with close matches."""
    try:
        return _OPS[type]
    except KeyError:
        if paddle_ops.is_paddle_op(type):
            raise SchemaError(
                f"op type '{type}' is a PaddlePaddle {paddle_ops.paddle_version()} op that "
                "fluidscope does not implement") from None
        near = difflib.get_close_matches(type, _OPS, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise SchemaError(f"unknown op type '{type}'{hint}") from None


def has(type) -> bool:
    return type in _OPS


def all_ops() -> dict:
    """All registered ops, by type (a copy)."""
    return dict(_OPS)


def forward_ops() -> dict:
    """Registered ops that are not gradient ops."""
    return {k: v for k, v in _OPS.items() if v.grad_of is None}


def run_infer_shape(opdef: OpDef, inputs: dict, attrs: dict) -> dict:
    """Run ``opdef.infer_shape`` on input metas; returns slot -> [VarMeta]."""
    ctx = InferContext(opdef.type, inputs, attrs)
    if opdef.infer_shape is not None:
        opdef.infer_shape(ctx)
    return ctx.outputs


__all__ = [
    "Slot", "Attr", "AttrType", "REQUIRED", "VarMeta", "InferContext", "OpView", "GradOp",
    "GradSpec", "OpDef", "LodArgs", "register", "get", "has", "all_ops", "forward_ops",
    "coerce_attr", "attr_to_proto", "attr_from_proto", "run_infer_shape", "same_as",
    "one_of", "at_least", "in_range", "COMMON_ATTRS", "COMMON_ATTR_NAMES",
    "OUTPUTS_WANTED", "wanted",
]
