"""Saving what the TrainingMonitor shows: the numbers as CSV, the picture as PNG.

The PNG is rendered where the plot is drawn, in the browser: Python asks (a request id
and a path in a synced trait), the front end paints its panels onto one canvas and sends
the PNG back as base64, and Python writes it after checking it is a PNG. Python has no
plotting library to draw it again, and a second renderer would drift from what the user
sees. Without a page showing the monitor nothing answers: ``export_csv`` always works.
"""
from __future__ import annotations

import base64
import binascii
import pathlib

from fluidscope.engine.errors import FluidscopeError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATA_URL_PREFIX = "data:image/png;base64,"


def decode_png(data: str) -> bytes:
    """The bytes of a base64 PNG (a ``data:image/png;base64,`` URL or bare base64);
    FluidscopeError when it is not base64 or not a PNG."""
    if data.startswith(DATA_URL_PREFIX):
        data = data[len(DATA_URL_PREFIX):]
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise FluidscopeError(f"save_png: the page sent no base64 data ({exc})") from exc
    if not raw.startswith(PNG_SIGNATURE):
        raise FluidscopeError(f"save_png: the page sent {len(raw)} bytes that are not a PNG")
    return raw


def write_bytes(path, raw: bytes) -> str:
    target = pathlib.Path(path)
    target.write_bytes(raw)
    return str(target)


__all__ = ["decode_png", "write_bytes", "PNG_SIGNATURE"]
