"""Where the verbs write: a target's folder must exist (the message says which), and
text and bytes go through the engine's atomic write (a failure leaves the old file)."""
from __future__ import annotations

import os

from fluidscope.engine import FluidscopeError
from fluidscope.engine.io.files import atomic_write


def check_target(path):
    """FluidscopeError unless ``path`` can be created: its folder exists, it is no folder."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FluidscopeError(f"cannot write {path}: the folder {folder} does not exist")
    if os.path.isdir(path):
        raise FluidscopeError(f"cannot write {path}: it is a folder")


def write_bytes(path, data: bytes):
    check_target(path)
    atomic_write(path, [data])


def write_text(path, text: str):
    write_bytes(path, text.encode("utf-8"))


__all__ = ["check_target", "write_bytes", "write_text"]
