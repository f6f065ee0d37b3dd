"""``op`` and ``variable``: one registry op, or one declared variable, as a layer.

A program with no record of layer calls (one loaded from a ``.pdmodel``, one built op
by op) comes back as a design of these: one ``variable`` node per variable that no op
writes (feeds, parameters) and one ``op`` node per op, so any file can be opened and
edited. Both keep the descs exactly (variable descs in protobuf's JSON form, attributes
by name with the registry's types), so such a design rebuilds the same bytes.
"""
import contextlib

from google.protobuf import json_format

from fluidscope.engine import DesignError, FluidscopeError, registry
from fluidscope.engine import framework_pb2 as pb
from fluidscope.engine.ir import paddle_ops
from fluidscope.engine.ir.names import EMPTY_VAR

from .. import framework
from ..layer_specs import layer_spec

__all__ = ["op", "variable"]


def _var_desc(data, who):
    desc = pb.VarDesc()
    try:
        json_format.ParseDict(data, desc)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise DesignError(f"{who}: not a variable description: {exc}") from None
    return desc


def _declare(block, data, who):
    """Declare the variable ``data`` describes (a VarDesc as protobuf JSON) unless the
    block has it; returns its name."""
    desc = _var_desc(data, who)
    if not block.has_var(desc.name):
        block.desc.vars.add().CopyFrom(desc)
        block.program.bump_revision()
    return desc.name


@layer_spec("op", inputs={}, types={"desc": "var_desc"})
def variable(desc, name=None):
    """A variable no op writes (a feed, a parameter, a step's in-link), declared in the
    current block from its VarDesc given as protobuf JSON (``{"name": ..., "type": {...},
    "persistable": ...}``)."""
    block = framework.default_main_program().current_block()
    return block.var(_declare(block, desc, f"variable '{name or desc.get('name')}'"))


@contextlib.contextmanager
def op_block():
    """Build the sub-block of the next ``op`` inside: ``with op_block() as block: ...``
    then ``op(..., block=block)``."""
    program = framework.default_main_program()
    block = program._create_block()
    try:
        yield block
    finally:
        program._rollback()


@layer_spec("op", inputs={"inputs": "op_inputs"}, outputs=("outs*",), structural=("block",),
            types={"type": "str", "outputs": "op_outputs", "attrs": "op_attrs",
                   "forward_block": "int"},
            choices={"type": tuple(sorted(registry.all_ops()))})
def op(type, inputs=None, outputs=None, attrs=None, block=None, forward_block=None, name=None):
    """One op of the registry, appended as given: ``inputs`` slot -> [Variable or
    ``"@EMPTY@"``], ``outputs`` slot -> [VarDesc as protobuf JSON] (declared unless they
    exist), ``attrs`` name -> value. ``block``: for an op with a sub-block (``recurrent``),
    the block ``op_block()`` built; it becomes the op's ``sub_block`` (``forward_block``:
    the index that block records as its forward block, for a gradient block).
    The inputs' shapes are checked by the op's shape inference against the declared
    outputs. Returns the output Variables in slot order."""
    who = f"op node '{name}' ({type})"
    try:
        opdef = registry.get(type)
    except FluidscopeError as exc:
        if not paddle_ops.is_paddle_op(type):
            raise DesignError(f"{who}: {exc}") from None
        opdef = None  # a Paddle op fluidscope does not implement: kept as given
    sub, block = block, framework.default_main_program().current_block()
    attrs = dict(attrs or {})
    if sub is not None:
        attrs["sub_block"] = sub.idx
        if forward_block is not None:
            sub.desc.forward_block_idx = forward_block
    desc = pb.OpDesc(type=type)
    for slot, values in (inputs or {}).items():
        _check_slot(who, type, opdef, "input", slot)
        desc.inputs.add(parameter=slot, arguments=[getattr(v, "name", v) for v in values])
    names = []
    for slot, datas in (outputs or {}).items():
        _check_slot(who, type, opdef, "output", slot)
        declared = [_declare(block, d, who) for d in datas]
        desc.outputs.add(parameter=slot, arguments=declared)
        names += declared
    for key, value in attrs.items():
        spec = opdef.attr_spec(key) if opdef is not None else _paddle_attr(type, key)
        if spec is None:
            raise DesignError(f"{who}: op {type} has no attribute '{key}'")
        try:
            value = registry.coerce_attr(spec.type, value)
        except (TypeError, ValueError) as exc:
            raise DesignError(f"{who}: attribute '{key}': {exc}") from None
        problem = spec.checker(value) if spec.checker else None
        if problem:
            raise DesignError(f"{who}: attribute '{key}'={value!r} {problem}")
        registry.attr_to_proto(key, spec.type, value, desc.attrs.add())
    # An unimplemented op has no shape inference: its outputs keep the file's shapes.
    if sub is None and opdef is not None and opdef.prepare is None:
        _check_shapes(block, opdef, desc, who)
    block.desc.ops.append(desc)
    block.program.bump_revision()
    return [block.var(n) for n in names]


def _check_slot(who, type, opdef, kind, slot):
    """``slot`` is a ``kind`` slot of the op: the registry's, or Paddle's for a Paddle op
    fluidscope does not implement (any slot of a Paddle _grad op, whose slots Paddle's
    data does not list)."""
    if opdef is not None:
        names = [s.name for s in (opdef.inputs if kind == "input" else opdef.outputs)]
    else:
        names = paddle_ops.slot_names(type, kind + "s")
        if names is None:
            return
    if slot not in names:
        raise DesignError(f"{who}: no {kind} slot '{slot}'; it has {names}")


def _paddle_attr(type, name):
    """An Attr for attribute ``name`` of a Paddle op fluidscope does not implement,
    typed as Paddle types it (None when Paddle has no such attribute)."""
    attr_type = paddle_ops.attr_type(type, name)
    return None if attr_type is None else registry.Attr(name, attr_type)


def _check_shapes(block, opdef, desc, who):
    """The op's shape inference must accept the inputs (the outputs keep their declared
    descs, so a loaded file's bytes survive)."""
    metas = {}
    for slot in desc.inputs:
        if any(n != EMPTY_VAR and block._find_var_recursive(n) is None
               for n in slot.arguments):
            return  # a gradient block reads its forward block's variables at run time
        metas[slot.parameter] = [block._meta(n) for n in slot.arguments]
    attrs = {a.name: registry.attr_from_proto(a) for a in desc.attrs}
    try:
        registry.run_infer_shape(opdef, metas, opdef.parse_attrs(attrs, check=False))
    except Exception as exc:  # noqa: BLE001  any inference failure is this node's error
        raise DesignError(f"{who}: {exc}") from None
