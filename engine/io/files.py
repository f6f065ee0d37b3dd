"""Reading and writing files safely: atomic writes (temp file, fsync, rename), clear read errors.

A failed save leaves the previous file as it was; a read error names the file.
"""
from __future__ import annotations

import contextlib
import os
import tempfile

from ..errors import FluidscopeError, LoadError


def process_umask():
    """The process umask, read without changing it where Linux allows (thread-safe)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        # No /proc (not Linux): read the umask by setting and restoring it below.
        mask = None
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path, chunks):
    """Write the bytes-like ``chunks`` to ``path`` all or nothing."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):  # mkstemp makes 0600; give what open() would
                os.fchmod(f.fileno(), 0o666 & ~process_umask())
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        with contextlib.suppress(OSError):  # make the rename durable where the OS allows
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    except OSError as exc:
        raise FluidscopeError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise LoadError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc



__all__ = ["process_umask", "atomic_write", "read_file"]
