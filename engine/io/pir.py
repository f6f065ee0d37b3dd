"""Paddle 3's PIR programs (``model.json``): recognised, and refused with how to save instead.

With ``FLAGS_enable_pir_api`` on (Paddle 3's default), ``paddle.jit.save`` and
``paddle.static.save_inference_model`` write ``<prefix>.json`` (the PIR program: a JSON
object whose ``base_code`` is ``{"magic": "pir", "version": N, ...}``, and a ``program``)
plus ``<prefix>.pdiparams``, instead of the ``<prefix>.pdmodel`` ProgramDesc fluidscope
reads. This module spots such a file, given directly or lying where the ``.pdmodel`` was
expected, so the error says what to do rather than "cannot read".
"""
from __future__ import annotations

import json
import os
import re

from ..errors import LoadError

HOW_TO_SAVE = (
    "save the legacy ProgramDesc format instead: run Paddle with FLAGS_enable_pir_api=0 in "
    "the environment (`FLAGS_enable_pir_api=0 python export.py`; Paddle reads it on import, "
    "and paddle.framework.set_flags({'FLAGS_enable_pir_api': False}) after the import does "
    "not switch Paddle 3.3.1 back), or build and save inside "
    "`with paddle.pir_utils.OldIrGuard():`; paddle.static.save_inference_model then writes "
    "<prefix>.pdmodel")


_HEAD = re.compile(rb'^\s*\{\s*"base_code"\s*:\s*\{[^{}]*"magic"\s*:\s*"pir"')
_VERSION = re.compile(rb'"version"\s*:\s*(\d+)')


def pir_version(data):
    """The PIR format version of ``data`` (bytes, or its first KiB or more) if it is a PIR
    JSON program, else None. Paddle writes ``base_code`` first, so the head is enough;
    other JSON is parsed whole to look for it."""
    head = bytes(data[:1024])
    if _HEAD.match(head):
        found = _VERSION.search(head[:head.index(b"}") + 1])
        return int(found.group(1)) if found else "?"
    if not head.lstrip().startswith(b"{"):
        return None
    try:
        loaded = json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    base = loaded.get("base_code") if isinstance(loaded, dict) else None
    if isinstance(base, dict) and base.get("magic") == "pir" and "program" in loaded:
        return base.get("version", "?")
    return None


def pir_error(path, version):
    return LoadError(f"{os.fspath(path)}: this is a Paddle 3 PIR program (JSON, PIR version "
                     f"{version}), which fluidscope cannot read; {HOW_TO_SAVE}")


def pir_sibling(path):
    """The ``.json`` PIR program saved where the ProgramDesc ``path`` (``x.pdmodel``) is
    missing, or None."""
    path = os.fspath(path)
    stem, ext = os.path.splitext(path)
    candidate = stem + ".json"
    if ext == ".json" or os.path.exists(path) or not os.path.isfile(candidate):
        return None
    return candidate


def check_no_pir_instead(path):
    """Raise the guided LoadError when ``path`` is missing and a PIR ``.json`` program lies
    in its place (what Paddle 3 saves by default)."""
    sibling = pir_sibling(path)
    if sibling is None:
        return
    try:
        with open(sibling, "rb") as f:
            data = f.read(1024)
    except OSError:
        return
    version = pir_version(data)
    if version is not None:
        raise LoadError(f"{os.fspath(path)} does not exist, but {sibling} is a Paddle 3 PIR "
                        f"program (JSON, PIR version {version}), which fluidscope cannot read; "
                        f"{HOW_TO_SAVE}")


__all__ = ["HOW_TO_SAVE", "pir_version", "pir_error", "pir_sibling", "check_no_pir_instead"]
