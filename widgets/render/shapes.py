"""Shapes on the graph's edges: declared ones from VarDescs, live ones from a run.

An edge carries the shape of its variable, ``[?, 128]``, and ``lod 1`` when the
variable holds sequences (LoD level > 0). The debugger passes the shapes of the
values it holds, which replace the declared ones: ``shapes`` maps a variable (its name,
or its key ``var:<block>:<name>`` to tell apart variables of the same name in two
blocks) to one of

* ``(shape, lod)``: ``shape`` a sequence of ints, ``lod`` the LoD level (an int) or the
  LoD itself (a list of offset lists, e.g. ``[[0, 3, 7]]``);
* ``shape`` alone (a sequence of ints): no LoD;
* a LoDTensor (``shape()`` and ``lod()`` methods) or an array (a ``shape`` tuple).
"""
from __future__ import annotations

from dataclasses import dataclass

from fluidscope.engine.errors import FluidscopeError

from .text import dims_text, tensor_of

_LOD_SHOWN = 6  # offsets of a LoD level shown in a tooltip


@dataclass(frozen=True)
class Shape:
    dims: tuple
    lod_level: int
    lod: tuple | None = None  # the offsets, when a run told them
    runtime: bool = False

    def label(self) -> str:
        """``'[?, 128]'``, ``'[7, 128] lod 1'``."""
        return dims_text(self.dims) + (f" lod {self.lod_level}" if self.lod_level else "")

    def describe(self) -> str:
        """Tooltip text: ``'runtime [7, 128], LoD [[0, 3, 7]]'``."""
        out = ("runtime " if self.runtime else "") + dims_text(self.dims)
        if self.lod:
            levels = [list(level[:_LOD_SHOWN]) + (["..."] if len(level) > _LOD_SHOWN else [])
                      for level in self.lod]
            out += f", LoD {levels}".replace("'...'", "...")
        elif self.lod_level:
            out += f", lod level {self.lod_level}"
        return out


def declared_shape(var_desc):
    """The Shape a VarDesc declares; None for kinds without a tensor (step scopes)."""
    found = tensor_of(var_desc) if var_desc is not None else None
    if found is None:
        return None
    tensor, lod_level, _ = found
    return Shape(tuple(tensor.dims), lod_level)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _dims(name, dims):
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise FluidscopeError(f"program_to_dot: shapes[{name!r}]: the shape must be a sequence "
                              f"of ints, got {dims!r}")
    dims = tuple(dims)
    if not all(d is None or (_is_int(d) and d >= -1) for d in dims):
        raise FluidscopeError(f"program_to_dot: shapes[{name!r}]: the shape must hold ints "
                              f"(-1 or None for unknown), got {list(dims)}")
    return dims


def _lod(name, lod):
    """(level, offsets or None) from an int level or a list of offset lists."""
    if _is_int(lod) and lod >= 0:
        return lod, None
    try:
        levels = tuple(tuple(int(v) for v in level) for level in lod)
    except (TypeError, ValueError):
        raise FluidscopeError(
            f"program_to_dot: shapes[{name!r}]: the LoD must be a level (int >= 0) or a list "
            f"of offset lists such as [[0, 3, 7]], got {lod!r}") from None
    return len(levels), levels or None


def _shape_of(name, value) -> Shape:
    if callable(getattr(value, "lod", None)) and callable(getattr(value, "shape", None)):
        level, offsets = _lod(name, value.lod())  # a LoDTensor
        return Shape(_dims(name, value.shape()), level, offsets, True)
    if isinstance(getattr(value, "shape", None), tuple):  # numpy / cupy array
        return Shape(_dims(name, value.shape), 0, None, True)
    if isinstance(value, (tuple, list)) and len(value) == 2 and not _is_int(value[0]) \
            and value[0] is not None:
        level, offsets = _lod(name, value[1])
        return Shape(_dims(name, value[0]), level, offsets, True)
    return Shape(_dims(name, value), 0, None, True)


def normalize_shapes(shapes) -> dict:
    """``shapes`` (see the module docstring) -> key -> Shape; {} for None."""
    if shapes is None:
        return {}
    if not hasattr(shapes, "items"):
        raise FluidscopeError(
            f"program_to_dot: shapes must map variable names to (shape, lod), got "
            f"{type(shapes).__name__}")
    out = {}
    for name, value in shapes.items():
        if not isinstance(name, str):
            raise FluidscopeError(f"program_to_dot: shapes keys must be variable names or "
                                  f"'var:<block>:<name>' keys, got {name!r}")
        out[name] = _shape_of(name, value)
    return out
