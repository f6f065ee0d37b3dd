"""Name scopes: the ``op_namescope`` attribute every op records ("/outer/layer/").

``name_scope(prefix)`` nests what is built inside under ``prefix``; an op made by a layer
adds the layer's name. The graph view and the summary group ops by it, and Paddle's
tools read it the same way.
"""
from __future__ import annotations

import contextlib

_NAME_SCOPES: list = []


@contextlib.contextmanager
def name_scope(prefix):
    """Group the ops built inside under ``prefix`` (recorded in op_namescope)."""
    _NAME_SCOPES.append(prefix)
    try:
        yield
    finally:
        _NAME_SCOPES.pop()


def current_namescope():
    """The ``op_namescope`` an op appended now outside any layer gets."""
    return namescope_of(None)


def namescope_of(layer):
    """The ``op_namescope`` of an op ``layer`` (a layer, its name, or None) appends now."""
    name = getattr(layer, "name", layer)
    if not _NAME_SCOPES:  # the usual case, and once per op: no joins
        return f"/{name}/" if name else "/"
    scope = "/".join(_NAME_SCOPES)
    return "/" + "/".join(p for p in (scope, name) if p) + ("/" if scope or name else "")


__all__ = ["current_namescope", "name_scope", "namescope_of"]
