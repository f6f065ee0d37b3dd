"""The layer catalog: one ``LayerSpec`` per public layer function, declared at the function.

    @layer_spec("nn", inputs={"input": "tensor+"}, types={"size": "int"})
    def fc(input, size, num_flatten_dims=1, act=None, ...): ...

The decorator reads everything it can from the signature (attribute names, defaults,
types of non-None defaults), so the spec cannot drift from the function: what it
declares is only what a signature cannot say (which parameters are inputs and of what
kind, the type of a None default, the choices of an attribute). ``catalog()`` walks
the layers' ``__all__``; a public layer without a spec is a test failure.

The decorator also wraps the function so that a call made from user code is recorded
on the program (``recording.py``): that record is how a program built in Python comes
back as a design.

Slot kinds: ``tensor`` (one Variable), ``tensor+`` (one or a list), ``list`` (a list),
``sequence`` (a Variable with LoD), ``ids`` (int64 ids), ``ids_sequence``; a trailing
``?`` marks an optional slot. Composite slots: ``rows`` (a mixed layer's projections),
``group`` (a recurrent group's in-links and static inputs), ``op_inputs`` (an op node's
inputs, by the op's own slot names).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

from fluidscope.engine import DesignError, registry

from . import recording

SLOT_KINDS = ("tensor", "tensor+", "list", "sequence", "ids", "ids_sequence", "rows", "group",
              "op_inputs")
ATTR_TYPES = ("int", "float", "bool", "str", "ints", "floats", "int_or_ints", "padding", "dtype",
              "act", "param_attr", "shape", "number", "var_desc", "op_outputs", "op_attrs")
DTYPES = ("float32", "float64", "int32", "int64", "uint8", "bool")
# What a parameter attribute may be in a design: None/True (default), False (none), a name.
_PARAM_ATTR_DOC = "None/True: created with defaults, False: none, a str: a named (shared) parameter"


@dataclasses.dataclass(frozen=True)
class SlotSpec:
    """An input slot: the layer function's parameter ``name``; ``kind`` (SLOT_KINDS)."""
    name: str
    kind: str
    optional: bool = False

    @property
    def many(self):
        """Takes a list of inputs (``tensor+``, ``list``)."""
        return self.kind in ("tensor+", "list")


@dataclasses.dataclass(frozen=True)
class AttrSpec:
    """An attribute: the parameter ``name``, its ``type`` (ATTR_TYPES), default
    (``REQUIRED`` when the function has none), allowed ``choices`` (empty: any)."""
    name: str
    type: str
    default: object
    choices: tuple = ()

    @property
    def required(self):
        return self.default is REQUIRED


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED = _Required()


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """What the palette shows and the design checks for one layer function."""
    name: str
    category: str
    doc: str
    inputs: tuple          # SlotSpec...
    attrs: tuple           # AttrSpec...
    outputs: tuple         # output names; one ending in '*' is a list of any length
    function: object = dataclasses.field(compare=False, repr=False)
    structural: tuple = ()  # parameters the design fills from its structure (step, link)

    def input(self, name):
        return next((s for s in self.inputs if s.name == name), None)

    def attr(self, name):
        return next((a for a in self.attrs if a.name == name), None)

    @property
    def input_names(self):
        return [s.name for s in self.inputs]

    @property
    def attr_names(self):
        return [a.name for a in self.attrs]


def activations():
    """The registry's activation ops that take X alone (no second tensor such as prelu's
    Alpha): the choices of every ``act`` attribute."""
    return tuple(t for t, d in registry.forward_ops().items() if d.category == "activation"
                 and [s.name for s in d.inputs if not s.dispensable] == ["X"])


def _type_of_default(name, default):
    if name in ("param_attr", "bias_attr", "padding_attr"):
        return "param_attr"
    if name == "act":
        return "act"
    if name == "dtype":
        return "dtype"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    if isinstance(default, (list, tuple)):
        return "floats" if any(isinstance(v, float) for v in default) else "ints"
    return None


def layer_spec(category, *, inputs, outputs=("out",), types=None, choices=None,
               structural=(), attrs=None, name=None):
    """Declare the spec of the layer function below (see the module docstring).

    inputs: parameter name -> slot kind; types: the type of attributes whose default
    is None or that have none; choices: attribute -> allowed values; structural:
    parameters the design fills itself (a recurrent step, a memory's link);
    attrs: ``{name: (type, default)}`` for a function taking ``**attrs``."""
    def declare(fn):
        spec = _make_spec(fn, name or fn.__name__, category, inputs, outputs, types or {},
                          choices or {}, tuple(structural), attrs or {})
        wrapped = recording.recorded(fn, spec)
        wrapped.__layer_spec__ = spec
        return wrapped
    return declare


def _make_spec(fn, layer, category, inputs, outputs, types, choices, structural, extra):
    where = f"layer_spec of {layer}"
    params = inspect.signature(fn).parameters
    slots = []
    for slot, kind in inputs.items():
        optional = kind.endswith("?")
        kind = kind.rstrip("?")
        if slot not in params:
            raise DesignError(f"{where}: input '{slot}' is not a parameter of the function")
        if kind not in SLOT_KINDS:
            raise DesignError(f"{where}: input '{slot}' has unknown kind {kind!r}")
        slots.append(SlotSpec(slot, kind, optional or params[slot].default is None))
    specs = []
    for pname, param in params.items():
        if pname in inputs or pname in structural or pname == "name" and "name" not in types:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            for key, (kind, default) in extra.items():
                specs.append(AttrSpec(key, kind, default, tuple(choices.get(key, ()))))
            continue
        default = REQUIRED if param.default is inspect.Parameter.empty else param.default
        kind = types.get(pname) or _type_of_default(pname, default)
        if kind is None or kind not in ATTR_TYPES:
            raise DesignError(f"{where}: attribute '{pname}' needs a type (default {default!r})")
        allowed = choices.get(pname, ())
        if kind == "act" and not allowed:
            allowed = (None,) + activations()
        if kind == "dtype" and not allowed:
            allowed = ((None,) if default is None else ()) + DTYPES
        specs.append(AttrSpec(pname, kind, default, tuple(allowed)))
    doc = (inspect.getdoc(fn) or layer).strip().splitlines()[0]
    return LayerSpec(layer, category, doc, tuple(slots), tuple(specs), tuple(outputs), fn,
                     tuple(structural))


_OP_ATTR_TYPES = {  # registry AttrType name -> the catalog's attribute type
    "INT": "int", "LONG": "int", "FLOAT": "float", "FLOAT64": "float", "STRING": "str",
    "BOOLEAN": "bool", "INTS": "ints", "LONGS": "ints", "FLOATS": "floats",
    "FLOAT64S": "floats"}


def op_specs():
    """One spec per forward op of the registry, for the palette's op section: what an
    ``op`` node of that type takes (its slots and attributes, from the registry record).
    Add one with ``d.add("op", type=..., inputs={slot: [...]}, outputs=..., attrs=...)``."""
    specs = []
    for op_type, opdef in sorted(registry.forward_ops().items()):
        slots = tuple(SlotSpec(s.name, "list" if s.duplicable else "tensor", s.dispensable)
                      for s in opdef.inputs)
        attrs = tuple(
            AttrSpec(a.name, _OP_ATTR_TYPES[registry.AttrType.Name(a.type)],
                     REQUIRED if a.default is registry.REQUIRED else a.default)
            for a in opdef.attrs if a.name not in registry.COMMON_ATTR_NAMES
            and registry.AttrType.Name(a.type) in _OP_ATTR_TYPES)
        specs.append(LayerSpec(f"op:{op_type}", f"op/{opdef.category}",
                               opdef.doc or op_type, slots, attrs,
                               tuple(s.name for s in opdef.outputs), None))
    return specs


def spec_of(function):
    """The LayerSpec declared at ``function`` (None when it has none)."""
    return getattr(function, "__layer_spec__", None)


def catalog(ops=False):
    """The palette: one LayerSpec per public layer, in the layers' ``__all__`` order;
    ``ops``: then one per registry op (``op_specs``), what an op node of each type takes."""
    from . import layers
    specs = []
    for public in layers.__all__:
        spec = spec_of(getattr(layers, public))
        if spec is not None:
            specs.append(spec)
    return specs + (op_specs() if ops else [])


def get(layer):
    """The LayerSpec called ``layer``; an unknown name is a DesignError with the palette."""
    spec = _by_name().get(layer)
    if spec is None:
        import difflib
        near = difflib.get_close_matches(layer, _by_name(), n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise DesignError(f"unknown layer {layer!r}{hint}")
    return spec


@functools.lru_cache(maxsize=1)
def _by_name():
    return {spec.name: spec for spec in catalog()}


def check_value(attr: AttrSpec, value):
    """None when ``value`` fits ``attr`` (type and choices), else what is wrong."""
    if value is None and (attr.default is None or attr.type in ("act", "param_attr")):
        return None
    if attr.choices:
        folded = value.lower() if isinstance(value, str) and attr.type == "str" else value
        if folded not in attr.choices and value not in attr.choices:
            return f"must be one of {list(attr.choices)}, got {value!r}"
        return None
    ok = _TYPE_CHECKS[attr.type](value)
    return None if ok else f"must be {attr.type}, got {value!r}"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_list_of(check):
    return lambda v: isinstance(v, (list, tuple)) and all(check(x) for x in v)


_TYPE_CHECKS = {
    "int": _is_int,
    "float": _is_number,
    "number": _is_number,
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "ints": _is_list_of(_is_int),
    "floats": _is_list_of(_is_number),
    "int_or_ints": lambda v: _is_int(v) or _is_list_of(_is_int)(v),
    # a conv/pool padding: one int, [h, w], [top, bottom, left, right], a pair per dim of
    # the layout ([[0, 0], [0, 0], [1, 1], [1, 1]]), or the algorithm 'SAME' / 'VALID'
    "padding": lambda v: _is_int(v) or _is_list_of(_is_int)(v)
    or _is_list_of(_is_list_of(_is_int))(v)
    or isinstance(v, str) and v.upper() in ("SAME", "VALID"),
    "shape": _is_list_of(lambda d: d is None or _is_int(d)),
    "dtype": lambda v: v in DTYPES,
    "act": lambda v: v in activations(),
    "param_attr": lambda v: v is None or isinstance(v, (bool, str)),
    "var_desc": lambda v: _is_var_desc(v),
    "op_outputs": lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(d, list) and all(_is_var_desc(x) for x in d)
        for k, d in v.items()),
    "op_attrs": lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and _is_plain(x) for k, x in v.items()),
}


def _is_var_desc(value):
    return isinstance(value, dict) and isinstance(value.get("name"), str) and _is_plain(value)


def _is_plain(value):
    """JSON data: what a design file can hold."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))
