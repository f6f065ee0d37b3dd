"""Typed ports of canvas nodes, and the one rule for which outputs a slot accepts.

An output's **kind** comes from the variable a build made for it: ``ids`` when its
dtype is an integer type, ``dense`` otherwise, and the ``_sequence`` / ``sequence``
variant when it carries LoD (``lod_level > 0``)::

    float32, lod 0 -> dense        float32, lod 1 -> sequence
    int64,   lod 0 -> ids          int64,   lod 1 -> ids_sequence

A slot's SlotSpec kind (layer_specs.SLOT_KINDS) says which output kinds it takes
(``ACCEPTS``). The same table gives the view's ``accepts`` lists (the front end refuses
a drag with them) and ``check_connection`` (Python refuses the same connection), so
the two sides cannot disagree. An output whose kind is unknown (its node was not built)
is accepted: the build then reports what is wrong on the node.
"""
from __future__ import annotations

from fluidscope.designer import layer_specs
from fluidscope.designer.design.document import GROUP, LINK_SLOT, MEMORY, MIXED, OP, STEP_INPUT
from fluidscope.engine import DesignError, FluidscopeError, registry

OUTPUT_KINDS = ("dense", "sequence", "ids", "ids_sequence")
ACCEPTS = {
    "tensor": OUTPUT_KINDS,
    "tensor+": OUTPUT_KINDS,
    "list": OUTPUT_KINDS,
    "sequence": ("sequence", "ids_sequence"),
    "ids": ("ids", "ids_sequence"),
    "ids_sequence": ("ids_sequence",),
}
_INTEGER_DTYPES = ("int64", "int32", "uint8", "int16", "int8")
_COMPOSITE_SLOTS = ("rows", "group", "op_inputs")


def variable_facts(variable):
    """(dtype name, lod_level, shape list) of a built Variable, or None for no variable.

    None too for a Variable whose block is gone: a recurrent step that failed is rolled
    back, sub-block included, while ``Build.outputs`` still holds what its inner nodes
    built before the failure."""
    if variable is None:
        return None
    try:
        return str(variable.dtype), int(variable.lod_level), list(variable.shape)
    except (IndexError, KeyError, FluidscopeError):
        return None


def kind_of(facts) -> str | None:
    """The kind of an output from its ``variable_facts`` (see the module docstring)."""
    if facts is None:
        return None
    dtype, lod_level, _ = facts
    integer = dtype in _INTEGER_DTYPES
    if lod_level:
        return "ids_sequence" if integer else "sequence"
    return "ids" if integer else "dense"


def output_kind(variable) -> str | None:
    """The kind of a built Variable; None for no variable (or one rolled back)."""
    return kind_of(variable_facts(variable))


def accepts(slot_kind: str) -> list:
    """The output kinds a slot of ``slot_kind`` takes."""
    return list(ACCEPTS.get(slot_kind, OUTPUT_KINDS))


def input_slots(node) -> list:
    """The SlotSpecs of a node's own input handles (``in:<slot>``), in order.

    A mixed_layer's rows and a group's in-links are not among them (rows have
    ``row:<k>:<slot>`` handles; in-links are step_input nodes); an op node's slots are
    its op's, each a list."""
    if node.layer == STEP_INPUT:
        return [layer_specs.SlotSpec("outer", "tensor")]
    if node.layer == MEMORY:
        return [layer_specs.SlotSpec("boot_layer", "tensor", True),
                layer_specs.SlotSpec(LINK_SLOT, "tensor")]
    if node.layer == OP:
        op_type = node.attrs.get("type")
        if not registry.has(str(op_type)):
            return []
        return [layer_specs.SlotSpec(s.name, "list", s.dispensable)
                for s in registry.get(op_type).inputs]
    spec = layer_specs.get(node.layer)
    return [s for s in spec.inputs if s.kind not in _COMPOSITE_SLOTS]


def slot_spec(node, handle):
    """(SlotSpec, row index or None) of a target handle ``in:<slot>`` / ``row:<k>:<slot>``;
    DesignError naming node and handle when it has none."""
    where = f"node '{node.id}' ({node.layer})"
    parts = handle.split(":")
    if parts[0] == "in" and len(parts) == 2:
        found = next((s for s in input_slots(node) if s.name == parts[1]), None)
        if found is not None:
            return found, None
    if parts[0] == "row" and len(parts) == 3 and node.layer == MIXED and parts[1].isdigit():
        index = int(parts[1])
        if index < len(node.rows):
            found = layer_specs.get(node.rows[index].kind).input(parts[2])
            if found is not None:
                return found, index
    handles = [f"in:{s.name}" for s in input_slots(node)]
    if node.layer == MIXED:
        handles += [f"row:{k}:{s.name}" for k, row in enumerate(node.rows)
                    for s in layer_specs.get(row.kind).inputs]
    raise DesignError(f"{where}: no input handle {handle!r}; it has {handles}")


def check_connection(node, handle, source_id, variable):
    """Refuse feeding ``variable`` (output of ``source_id``; None: unknown) into the
    target handle of ``node``: DesignError naming both nodes, the slot and the kinds."""
    spec, _ = slot_spec(node, handle)
    facts = variable_facts(variable)
    kind = kind_of(facts)
    allowed = accepts(spec.kind)
    if kind is not None and kind not in allowed:
        dtype, lod_level, shape = facts
        raise DesignError(
            f"node '{node.id}' ({node.layer}): slot '{spec.name}' takes {' or '.join(allowed)}"
            f" inputs; '{source_id}' gives {kind} (shape {shape}, {dtype}, "
            f"lod_level {lod_level})")
    return spec


def output_count(node, built_outputs) -> int:
    """How many output handles a node shows: what its build made, else what its spec
    declares (a group: one per out-link)."""
    if built_outputs is not None:
        return len(built_outputs)
    if node.layer == GROUP:
        return max(1, len(node.body.outputs))
    if node.layer in (STEP_INPUT, MEMORY):
        return 1
    if node.layer == OP:
        outputs = node.attrs.get("outputs") or {}
        return max(1, sum(len(v) for v in outputs.values()))
    names = layer_specs.get(node.layer).outputs
    return max(1, sum(1 for n in names if not n.endswith(("?", "*"))))
