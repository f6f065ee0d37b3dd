"""``fluidscope lab [--dir DIR] [-- JUPYTER_ARGS...]``: JupyterLab on the notebooks.

What ``make lab`` starts once set-up is done: ``jupyter lab <notebooks>
--ServerApp.allow_root=True``, plus ``--no-browser`` on Linux without a display, and
any arguments after ``--`` (``fluidscope lab -- --ip=0.0.0.0 --port=8888``). The
notebooks are the checkout's ``notebooks/`` when fluidscope runs from one, else the
current folder. JupyterLab runs in this Python; this process becomes it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import shlex
import sys

from fluidscope.engine import FluidscopeError

from .verbs import add_verb

# The checkout this fluidscope is installed from (an editable install maps the package
# onto widgets/ of the checkout); None for an installed copy.
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]


def default_folder() -> pathlib.Path:
    notebooks = CHECKOUT / "notebooks"
    if (CHECKOUT / "pyproject.toml").is_file() and notebooks.is_dir():
        return notebooks
    return pathlib.Path.cwd()


def add_parser(verbs):
    p = add_verb(verbs, "lab", "open JupyterLab on the notebooks (what `make lab` starts)",
                 __doc__)
    p.add_argument("--dir", type=pathlib.Path, default=None, metavar="DIR",
                   help="the folder JupyterLab opens (default: the checkout's notebooks/, "
                        "else the current folder)")
    p.add_argument("--print-command", action="store_true",
                   help="print the command instead of running it")
    p.add_argument("jupyter_args", nargs=argparse.REMAINDER, metavar="-- JUPYTER_ARGS",
                   help="passed on to `jupyter lab` (after --)")
    p.set_defaults(command=command)
    return p


def lab_argv(folder, extra, environ=None, platform=None) -> list:
    """The argv that starts JupyterLab on ``folder`` as ``make lab`` does."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    argv = [sys.executable, "-m", "jupyterlab", os.fspath(folder), "--ServerApp.allow_root=True"]
    # Make's rule: no display (a server, a container) -> print the URL, open no browser.
    if platform.startswith("linux") and not (environ.get("DISPLAY") or
                                              environ.get("WAYLAND_DISPLAY")):
        argv.append("--no-browser")
    return argv + list(extra)


def command(args):
    extra = args.jupyter_args[1:] if args.jupyter_args[:1] == ["--"] else args.jupyter_args
    folder = args.dir if args.dir is not None else default_folder()
    if not folder.is_dir():
        raise FluidscopeError(f"--dir {folder}: no such folder")
    argv = lab_argv(folder, extra)
    if args.print_command:
        print(shlex.join(argv))
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        raise FluidscopeError(f"JupyterLab is not installed in {sys.executable}; install "
                              f"fluidscope with its dependencies (make lab does)")
    sys.stdout.flush()
    sys.stderr.flush()
    # Become JupyterLab (as make's recipe line does): Ctrl-C and the exit code are its own.
    os.execv(argv[0], argv)
    return 0  # not reached


__all__ = ["default_folder", "lab_argv", "add_parser", "command"]
