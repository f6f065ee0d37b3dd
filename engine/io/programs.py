"""Program files: a ProgramDesc as binary (``.pdmodel``, ``.paddle``, ``__model__``: the names
Netron recognises; deterministic serialisation) or text (``.pbtxt``, ``.txt``: protobuf
text format; Paddle 2.x names ``lod_tensor``/``lod_level``/``LOD_TENSOR`` are accepted on
reading). Saving validates first; loading validates after parsing and raises
``LoadError`` naming the file and every problem. Paddle 3's PIR ``.json`` programs are
recognised and refused with how to save the legacy format (``pir``).
"""
from __future__ import annotations

import os
import re

from google.protobuf import text_format

from ..errors import FluidscopeError, LoadError
from ..ir.proto import framework_pb2 as pb
from ..ir.validate import find_problems, validate_program
from .files import atomic_write, read_file
from .pir import check_no_pir_instead, pir_error, pir_version
from .wire import WireError, check_wire


def program_format(path, error=FluidscopeError):
    name = os.path.basename(os.fspath(path))
    if name.endswith(("__model__", ".pdmodel", ".paddle")):
        return "binary"
    if name.endswith((".pbtxt", ".txt")):
        return "text"
    raise error(f"{os.fspath(path)}: unknown program file type; use .pdmodel (binary, what "
                f"Paddle and Netron read) or .pbtxt (text)")


def program_chunks(desc, fmt):
    if fmt == "binary":
        yield desc.SerializeToString(deterministic=True)
    else:
        yield text_format.MessageToString(desc).encode("utf-8")


def save_program(desc, path, validate=True):
    """Write ``desc`` (a ProgramDesc) to ``path``: binary for ``.pdmodel``, text for ``.pbtxt``.

    With ``validate`` the program is checked first (``ValidationError`` lists every
    problem); the file is replaced atomically."""
    fmt = program_format(path)
    if validate:
        validate_program(desc)
    elif not desc.IsInitialized():
        raise FluidscopeError(f"cannot save {os.fspath(path)}: missing required fields "
                              f"{desc.FindInitializationErrors()}")
    atomic_write(path, program_chunks(desc, fmt))


_OLD_NAMES = [  # Paddle 2.x text names -> 3.x names (the wire numbers are the same)
    (re.compile(r"^(\s*)lod_tensor(\s*\{)", re.M), r"\1dense_tensor\2"),
    (re.compile(r"^(\s*)lod_level(\s*:)", re.M), r"\1legacy_lod_level\2"),
    (re.compile(r"^(\s*(?:type|data_type)\s*:\s*)LOD_TENSOR_ARRAY\b", re.M),
     r"\1DENSE_TENSOR_ARRAY"),
    (re.compile(r"^(\s*(?:type|data_type)\s*:\s*)LOD_TENSOR\b", re.M), r"\1DENSE_TENSOR"),
]


def parse_program(path, data, fmt):
    if fmt == "binary":
        if data[:1] in (b"{", b"["):  # never a ProgramDesc's first byte (group tags)
            version = pir_version(data)
            if version is not None:
                raise pir_error(path, version)
            raise LoadError(f"{path}: this is text, not a binary ProgramDesc (a JSON file "
                            f"from Paddle 3's PIR? save with FLAGS_enable_pir_api=0)")
        try:
            check_wire(memoryview(data), 0, len(data), pb.ProgramDesc.DESCRIPTOR)
            return pb.ProgramDesc.FromString(data)
        except WireError as exc:
            raise LoadError(f"{path}: not a valid binary ProgramDesc: {exc}") from None
        except Exception as exc:  # the C parser's DecodeError and anything else it raises
            raise LoadError(f"{path}: not a valid binary ProgramDesc: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: not UTF-8 text (byte {exc.start}); a .pbtxt file is "
                        f"protobuf text format") from None
    for pattern, new in _OLD_NAMES:
        text = pattern.sub(new, text)
    try:
        return text_format.Parse(text, pb.ProgramDesc())
    except text_format.ParseError as exc:
        raise LoadError(f"{path}: not a ProgramDesc in text format: {exc}") from None
    except Exception as exc:
        raise LoadError(f"{path}: not a ProgramDesc in text format: {exc}") from None


def load_program(path):
    """Read a ProgramDesc from ``path`` (binary ``.pdmodel`` or text ``.pbtxt``).

    The program is validated; any problem raises ``LoadError`` naming the file. Ops that
    PaddlePaddle has and fluidscope does not implement are accepted (the program can be
    viewed and saved again; running it says which ops are missing). A Paddle 3 PIR
    program (``.json``, given or found where the ``.pdmodel`` was expected) raises a
    ``LoadError`` saying how to save the legacy format."""
    path = os.fspath(path)
    if path.endswith(".json"):  # Paddle 3 saves its PIR programs as <prefix>.json
        version = pir_version(read_file(path))
        if version is not None:
            raise pir_error(path, version)
    fmt = program_format(path, LoadError)
    check_no_pir_instead(path)
    data = read_file(path)
    if not data:
        raise LoadError(f"{path}: the file is empty; expected a ProgramDesc")
    desc = parse_program(path, data, fmt)
    problems = find_problems(desc)
    if problems:
        hint = ("; this does not look like a ProgramDesc (a Paddle .pdmodel starts with "
                "byte 0x0a)" if len(desc.blocks) == 0 else "")
        raise LoadError("\n  - ".join(
            [f"{path}: invalid program ({len(problems)} problem"
             f"{'s' if len(problems) > 1 else ''}){hint}:"] + problems))
    return desc


__all__ = ["program_format", "program_chunks", "save_program", "parse_program", "load_program"]
