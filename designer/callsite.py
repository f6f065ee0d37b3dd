"""Find the user's own source line (the first frame outside fluidscope) for messages."""
import pathlib
import sys

_OURS = tuple(str(pathlib.Path(__file__).resolve().parent.parent / d) for d in ("designer", "engine", "widgets"))


def user_frame() -> str:
    """'file:line' of the innermost caller that is not fluidscope code ('' if none)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_OURS) and "contextlib" not in filename:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
