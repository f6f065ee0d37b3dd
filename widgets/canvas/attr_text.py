"""Typed text -> an attribute value, by the attribute's declared type (the property panel).

The panel's tuple fields send what the user typed ("5", "3, 3", "[1, 2]", "SAME") and
Python reads it here, against the layer's spec, so the rules for ``filter_size``,
``stride``, ``padding`` and every list attribute live in one place and a bad text gets
an error naming the layer, the attribute, the text and what would be accepted.
Nothing is evaluated: the text is split into tokens and each token read as a number.
"""
from __future__ import annotations

import re

from fluidscope.designer.design.validate import spec_for
from fluidscope.engine import DesignError

# what each type reads, for the error message
_EXPECTED = {
    "int": "an int such as 3",
    "float": "a number such as 0.5", "number": "a number such as 0.5",
    "int_or_ints": "an int or ints separated by commas, such as '3' or '3, 5'",
    "padding": "an int, ints such as '1, 2' or '1, 1, 2, 2', or 'SAME' / 'VALID'",
    "ints": "ints separated by commas, such as '1, 2'",
    "floats": "numbers separated by commas, such as '0.5, 1'",
    "shape": "dims separated by commas, -1 or None for any, such as 'None, 3, 28, 28'",
}
TEXT_TYPES = tuple(_EXPECTED)
_NONE = ("none", "null", "?")
_GROUPED = re.compile(r"^[\[(](.*)[\])]$", re.S)


def _tokens(text):
    """'[3, 3]', '(3,3)', '3 3', '3x3' -> ['3', '3']; one level of brackets."""
    body = text.strip()
    match = _GROUPED.match(body)
    if match:
        body = match.group(1)
    return [t for t in re.split(r"[,\s]+|(?<=\d)[x×](?=\d)", body) if t]


def _int(token):
    if not re.fullmatch(r"[+-]?\d+", token):
        raise ValueError(token)
    return int(token)


def _number(token):
    value = float(token)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(token)
    return int(value) if re.fullmatch(r"[+-]?\d+", token) else value


def _padding(text):
    body = text.strip()
    if body.upper() in ("SAME", "VALID"):
        return body.upper()
    pairs = re.findall(r"[\[(]([^\[\]()]*)[\])]", body[1:-1]) if body.startswith(("[", "(")) else []
    if len(pairs) == 4:  # a pair per dim of the layout: [[0, 0], [0, 0], [1, 1], [1, 1]]
        return [[_int(t) for t in _tokens(p)] for p in pairs]
    return _one_or_many(_tokens(body), _int)


def _one_or_many(tokens, read):
    values = [read(t) for t in tokens]
    if not values:
        raise ValueError("empty")
    return values[0] if len(values) == 1 else values


_READERS = {
    "int": lambda text: _int(text.strip()),
    "float": lambda text: float(_number(text.strip())),
    "number": lambda text: _number(text.strip()),
    "int_or_ints": lambda text: _one_or_many(_tokens(text), _int),
    "padding": _padding,
    "ints": lambda text: [_int(t) for t in _tokens(text)],
    "floats": lambda text: [float(_number(t)) for t in _tokens(text)],
    "shape": lambda text: [None if t.lower() in _NONE else _int(t) for t in _tokens(text)],
}


def parse_attr_text(layer, name, text, where=None):
    """The value of attribute ``name`` of ``layer`` that ``text`` spells (None for an
    empty field, i.e. the default). DesignError naming ``where`` (the node), the
    attribute, the text and the accepted forms when it does not read."""
    where = where or layer
    _, specs = spec_for(layer)
    spec = specs.get(name)
    if spec is None:
        raise DesignError(f"{where} ({layer}) has no attribute '{name}'; it has "
                          f"{', '.join(sorted(specs)) or 'none'}")
    if not isinstance(text, str):
        raise DesignError(f"{where}: the text of '{name}' must be a string, got {text!r}")
    if text.strip().lower() in ("",) + _NONE[:2]:
        return None
    reader = _READERS.get(spec.type)
    if reader is None:
        raise DesignError(f"{where}: '{name}' is a {spec.type} attribute, which is not typed "
                          f"as text; set it with set_attr")
    try:
        return reader(text)
    except ValueError:
        raise DesignError(f"{where}: {name} {text.strip()!r} does not read as "
                          f"{_EXPECTED[spec.type]}") from None
