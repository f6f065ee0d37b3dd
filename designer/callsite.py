"""The user's own source line (the first frame outside fluidscope): recorded in ops,
named in messages, and put first in a DesignError (``reports_at_user_line``)."""
import contextlib
import functools
import linecache
import pathlib
import sys
import types

from fluidscope.engine.errors import DesignError

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


def site_label(site: str) -> str:
    """'file:line' -> how a person finds that line: ``Cell In[3], line 6`` for a notebook
    cell or IPython input (as IPython's own tracebacks name it), else ``file:line``."""
    filename, _, line = site.rpartition(":")
    shell = _ipython()
    if shell is not None and filename:
        try:
            named = shell.compile.format_code_name(filename)
        except Exception:  # an IPython without the method: the plain name still serves
            named = None
        if named is not None:
            return f"{named[0]} {named[1]}, line {line}"
    return site


def site_text(site: str) -> str:
    """The source text of 'file:line' ('' when it cannot be read): IPython keeps cells in
    ``linecache``, so a notebook's lines are found too."""
    filename, _, line = site.rpartition(":")
    return linecache.getline(filename, int(line)).strip() if line.isdigit() else ""


def _ipython():
    """The running IPython shell, or None; never imports IPython itself."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    return get() if get is not None else None


def _is_ours(frame) -> bool:
    filename = frame.f_code.co_filename
    return filename.startswith(_OURS) or "contextlib" in filename


def reports_at_user_line(fn):
    """``fn`` (a designer entry point: a layer, ``append_op``, ``minimize``...) made to
    raise its DesignError as the user's error when user code called it: the message
    leads with the user's line and its text, and the traceback keeps the user's frames
    only (fluidscope's are in ``error.internal_traceback``).

    Why trim rather than only reword: the frames between the user's line and the raise
    are ours (the recording wrapper, the layer, the helper, ``append_op``) and say
    nothing the message does not; a person reads the last frame shown and the message,
    and both are now theirs. This frame stays (Python adds the frame that raises), marked
    ``__tracebackhide__`` for IPython and pytest. Entry points called by fluidscope pass
    the error on untouched; one called from user code inside another (a layer in a
    recurrent group's step) leads the message with its line, and the outer one only
    trims the frames between."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (read by IPython and pytest)
        try:
            return fn(*args, **kwargs)
        except DesignError as error:
            caller = sys._getframe(1)
            if _is_ours(caller):
                raise
            # trimmed to the user's frames: see error.internal_traceback for ours
            raise at_user_line(error, f"{caller.f_code.co_filename}:{caller.f_lineno}")

    return call


def at_user_line(error, site):
    """``error`` with its message led by ``site`` (its label and source text) unless
    an inner entry point led it already, and its traceback cut to the frames of user
    code below this one (a recurrent group's step function, say); the original
    traceback is kept as ``error.internal_traceback``."""
    if getattr(error, "user_line", None) is None:  # an inner entry point led it already
        label = site_label(site)
        text = site_text(site)
        message = str(error).replace(f" (at {label})", "").replace(f" (at {site})", "")
        error.args = (f"{label}: {text}\n{message}" if text else f"{label}: {message}",)
        error.user_line = site
        error.internal_traceback = error.__traceback__
    kept = []
    tb = error.__traceback__.tb_next if error.__traceback__ is not None else None
    while tb is not None:  # skip the entry point's own frame, then keep the user's
        if not _is_ours(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for tb in reversed(kept):
        trimmed = types.TracebackType(trimmed, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return error.with_traceback(trimmed)
