"""What ``Block.append_op`` checks before an op is written: the slot maps a caller gives
(slot -> Variable, name or list of them) against the op's registered slots, declared
shapes against inferred ones, and the message a failed check raises (layer, op, call
site)."""
from __future__ import annotations

from fluidscope.engine.errors import SchemaError

from .callsite import site_label


def shapes_compatible(a, b):
    """Same rank and equal dims where both are known (-1: unknown)."""
    return len(a) == len(b) and all(x == y or x < 0 or y < 0 for x, y in zip(a, b))


def names_by_slot(given, opdef, kind):
    """Normalise slot -> Variable/name/list into slot -> [names]; checks slot names."""
    slots, known, required = _slot_table(opdef, kind)
    out = {}
    for slot, value in (given or {}).items():
        spec = known.get(slot)
        if spec is None:
            raise SchemaError(f"op {opdef.type} has no {kind} slot '{slot}'; its {kind}s are "
                              f"{[s.name for s in slots]}")
        items = value if isinstance(value, (list, tuple)) else (value,)
        names = [getattr(v, "name", v) for v in items if v is not None]
        if len(names) > 1 and not spec.duplicable:
            raise SchemaError(f"op {opdef.type}: {kind} slot '{slot}' takes one variable, got {names}")
        out[slot] = names
    for name in required:
        if not out.get(name):
            raise SchemaError(f"op {opdef.type}: input slot '{name}' is required")
    return out


# (op type, "input"/"output") -> (the OpDef, its slots, name -> Slot, required input
# names): made once per op type, not on each of the ~10,000 slot maps of a large build.
_SLOT_TABLES: dict = {}


def _slot_table(opdef, kind):
    entry = _SLOT_TABLES.get((opdef.type, kind))
    if entry is None or entry[0] is not opdef:  # a test may register a type again
        slots = opdef.inputs if kind == "input" else opdef.outputs
        required = tuple(s.name for s in slots if not s.dispensable) if kind == "input" else ()
        entry = _SLOT_TABLES[(opdef.type, kind)] = (opdef, slots, {s.name: s for s in slots},
                                                    required)
    return entry[1:]


def design_message(layer, op_type, site, exc):
    """``exc``'s text as a design error: "<type> layer '<name>' (at file:line): op ...\""""
    layer_type = getattr(layer, "layer_type", None)
    layer_name = getattr(layer, "name", layer)
    where = f" (at {site_label(site)})" if site else ""
    text = str(exc)
    if not text.startswith(f"op {op_type}"):
        text = f"op {op_type}: {text}"
    if not layer_name:
        return f"{text}{where}"
    who = f"{layer_type} layer '{layer_name}'" if layer_type else f"layer '{layer_name}'"
    return f"{who}{where}: {text}"


__all__ = ["design_message", "names_by_slot", "shapes_compatible"]
