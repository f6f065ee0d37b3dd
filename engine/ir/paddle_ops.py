"""What PaddlePaddle 3.3.1 itself registers: every op type, its slots, attributes and
runtime-only "extra" attributes, read from ``paddle_ops.json`` (written from Paddle by
``scripts/gen_paddle_op_data.py``).

fluidscope's own op records live in ``registry``; this is Paddle's list, used where a
file written by Paddle meets ops or attributes fluidscope does not model:

* extra attributes (``use_cudnn``, ``use_mkldnn``, ``is_test`` on conv2d...): Paddle
  writes them into every file, kernels never read them; the registry accepts them
  (``OpDef.attr_spec``) and the file keeps them, so a re-saved program is what Paddle wrote;
* op types fluidscope does not implement: a program holding them loads, renders and
  becomes a design, and running it fails once, before any op runs, naming them all
  (``unimplemented_error``);
* a real Paddle op name is not a typo: ``registry.get('yolo_box')`` says fluidscope does
  not implement it instead of suggesting a look-alike.

Nothing here imports the registry (the registry imports this).
"""
from __future__ import annotations

import collections
import functools
import json
import os

from ..errors import SchemaError
from .proto import framework_pb2 as pb

DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_ops.json")
FORMAT = "fluidscope-paddle-ops/1"
GRAD_SUFFIX = "_grad"


class UnimplementedOpError(SchemaError):
    """A program holds op types fluidscope has no kernel for. ``counts``: type -> number
    of ops, most frequent first."""

    def __init__(self, message, counts):
        super().__init__(message)
        self.counts = counts


@functools.lru_cache(maxsize=None)
def data() -> dict:
    """The parsed data file (checked for its format once)."""
    with open(DATA_FILE, encoding="utf-8") as f:
        loaded = json.load(f)
    if loaded.get("format") != FORMAT or not isinstance(loaded.get("ops"), dict):
        raise SchemaError(f"{DATA_FILE}: not a {FORMAT} file; regenerate it with "
                          "scripts/gen_paddle_op_data.py")
    return loaded


def paddle_version() -> str:
    return data()["paddle_version"]


def is_paddle_op(op_type) -> bool:
    """True when PaddlePaddle 3.3.1 registers ``op_type`` (forward or gradient op)."""
    return op_type in data()["ops"]


def op_types() -> list:
    """Every op type Paddle registers, sorted."""
    return sorted(data()["ops"])


def op_info(op_type) -> dict | None:
    """Paddle's record of ``op_type``: ``inputs``/``outputs`` (slot names with suffixes
    ``[]`` duplicable, ``?`` dispensable, ``!`` intermediate; forward ops only),
    ``attrs`` (name -> AttrType name) and ``extra`` (name -> [AttrType name, default]);
    None for a type Paddle does not have."""
    return data()["ops"].get(op_type)


@functools.lru_cache(maxsize=None)
def extra_attrs(op_type) -> dict:
    """name -> (AttrType, Paddle's default) of the runtime-only attributes a file
    written by Paddle may carry on an ``op_type`` op. A ``T_grad`` op also takes T's
    (a gradient op is made with its forward op's attributes)."""
    names = [op_type]
    base = op_type
    while base.endswith(GRAD_SUFFIX):
        base = base[: -len(GRAD_SUFFIX)]
        names.append(base)
    out = {}
    for name in reversed(names):
        for attr, (type_name, default) in (op_info(name) or {}).get("extra", {}).items():
            out[attr] = (pb.AttrType.Value(type_name), default)
    return out


def attr_type(op_type, name) -> int | None:
    """The AttrType Paddle gives attribute ``name`` of ``op_type`` (declared, extra or
    common to every op); None when Paddle has no such attribute."""
    info = op_info(op_type) or {}
    if name in info.get("attrs", {}):
        return pb.AttrType.Value(info["attrs"][name])
    if name in extra_attrs(op_type):
        return extra_attrs(op_type)[name][0]
    common = data()["common_attrs"].get(name)
    return pb.AttrType.Value(common[0]) if common else None


def declares(op_type, name) -> bool:
    """True when Paddle declares attribute ``name`` (not an extra one) for ``op_type``:
    e.g. whether inference pruning sets ``is_test`` on an op fluidscope does not implement."""
    return name in (op_info(op_type) or {}).get("attrs", {})


def slot_names(op_type, kind) -> list | None:
    """Paddle's ``kind`` ("inputs"/"outputs") slot names of ``op_type`` without the flag
    suffixes; None when Paddle's record has none (gradient ops)."""
    slots = (op_info(op_type) or {}).get(kind)
    return None if slots is None else [s.rstrip("[]?!") for s in slots]


def unimplemented_message(counts) -> str:
    """The one line naming every op type fluidscope cannot run, with counts, most
    frequent first (``counts``: type -> number of ops)."""
    order = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{t} ({n}x{'' if is_paddle_op(t) else ', not a Paddle op either'})"
             for t, n in order]
    return "fluidscope does not implement: " + ", ".join(parts)


def unimplemented_error(op_types_seen) -> UnimplementedOpError | None:
    """An ``UnimplementedOpError`` naming ``op_types_seen`` (the type of each op that
    fluidscope cannot run, one entry per op); None when there are none."""
    counts = collections.Counter(op_types_seen)
    if not counts:
        return None
    order = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return UnimplementedOpError(unimplemented_message(order), order)


__all__ = ["DATA_FILE", "UnimplementedOpError", "data", "paddle_version", "is_paddle_op",
           "op_types", "op_info", "extra_attrs", "attr_type", "declares", "slot_names",
           "unimplemented_message", "unimplemented_error"]
