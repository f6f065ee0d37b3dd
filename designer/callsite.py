"""Find the user's own source line (the first frame outside fluidscope) for messages."""
import contextlib
import pathlib
import sys

_OURS = tuple(str(pathlib.Path(__file__).resolve().parent.parent / d) for d in ("designer", "engine", "widgets"))


_RECORDING = [True]


@contextlib.contextmanager
def no_source_lines():
    """Ops built inside record no source line (``op_callstack`` empty): a design build has
    no source of its own, and its generated script must build the same bytes."""
    saved, _RECORDING[0] = _RECORDING[0], False
    try:
        yield
    finally:
        _RECORDING[0] = saved


def user_frame() -> str:
    """'file:line' of the innermost caller that is not fluidscope code ('' if none)."""
    if not _RECORDING[0]:
        return ""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_OURS) and "contextlib" not in filename:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
