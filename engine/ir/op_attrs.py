"""An op's checked attributes and their wire bytes, made once per distinct set.

A cold build of a 1,000-layer design appends ~5,000 ops whose attributes repeat: every
``mul`` of an fc has ``x_num_col_dims=1, y_num_col_dims=1, op_role=0``, every bias
``fill_constant`` the same value, shape and dtype. ``parse_attrs`` (a check and a
coercion per attribute, then ~10 defaults copied) and the attributes' encoding are
done once per such set here; only the two attributes that name the op's place
(``op_namescope``, the layer, and ``op_callstack``, the user's line) are checked and
encoded per op. The result is what ``parse_attrs`` and ``descs.attr_entries`` give,
value for value and byte for byte: a fresh dict with fresh lists every call.
"""
from __future__ import annotations

from . import descs
from .registry import AttrType

_PLACE = ("op_namescope", "op_callstack")
_TEMPLATES: dict = {}
_TEMPLATES_MAX = 4096  # sets that never repeat (a per-layer initializer range) are dropped
_PLACE_BYTES: dict = {}  # (namescope, *callstack) -> their OpDesc.attrs entries


def checked_and_encoded(opdef, given: dict):
    """(``opdef.parse_attrs(given)``, the OpDesc.attrs bytes of ``given``'s attributes in
    its order, checked). Raises what ``parse_attrs`` raises."""
    names = tuple(given)
    if names[-2:] != _PLACE:  # the usual order (designer/framework.py): else no template
        return _uncached(opdef, given)
    key = [opdef.type]
    for name in names[:-2]:
        value = descs.value_key(given[name])
        if value is None:
            return _uncached(opdef, given)
        key += (name, value)
    key = tuple(key)
    template = _TEMPLATES.get(key)
    if template is None or template[0] is not opdef:  # a test may register a type again
        checked, encoded = _uncached(opdef, given)
        # copies: ``checked`` and its lists are the caller's
        stable = {name: _fresh(checked[name]) for name in names[:-2]}
        defaults = [(name, _fresh(value)) for name, value in checked.items() if name not in given]
        lists = tuple(name for name, value in checked.items() if isinstance(value, list)
                      and name not in _PLACE)
        if len(_TEMPLATES) >= _TEMPLATES_MAX:
            _TEMPLATES.clear()
        _TEMPLATES[key] = (opdef, stable, defaults, lists, descs.attr_entries(opdef, stable),
                           _plain_place(opdef))
        return checked, encoded
    _, stable, defaults, lists, prefix, plain = template
    scope, stack = given["op_namescope"], given["op_callstack"]
    if plain and scope.__class__ is str and stack.__class__ is list and all(
            s.__class__ is str for s in stack):  # what checking them would give
        place = {"op_namescope": scope, "op_callstack": list(stack)}
        # the same bytes for every op with plain place specs: kept by value
        place_key = (scope, *stack)
        place_bytes = _PLACE_BYTES.get(place_key)
        if place_bytes is None:
            if len(_PLACE_BYTES) >= _TEMPLATES_MAX:
                _PLACE_BYTES.clear()
            place_bytes = _PLACE_BYTES[place_key] = descs.attr_entries(opdef, place)
    else:
        place = {name: opdef.check_attr(name, given[name]) for name in _PLACE}
        place_bytes = descs.attr_entries(opdef, place)
    checked = {**stable, **place}
    checked.update(defaults)
    for name in lists:  # the caller's to change: never the template's own lists
        checked[name] = list(checked[name])
    return checked, prefix + place_bytes


def _plain_place(opdef):
    """Whether this op's place attributes are the common STRING and STRINGS ones without
    a checker: a str and a list of str then pass their check unchanged."""
    scope, stack = opdef.attr_spec("op_namescope"), opdef.attr_spec("op_callstack")
    return (scope is not None and stack is not None and scope.checker is None
            and stack.checker is None and scope.type == AttrType.STRING
            and stack.type == AttrType.STRINGS)


def _fresh(value):
    return list(value) if isinstance(value, list) else value


def _uncached(opdef, given):
    checked = opdef.parse_attrs(given)
    return checked, descs.attr_entries(opdef, {name: checked[name] for name in given})
