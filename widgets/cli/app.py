"""The ``fluidscope`` command: one verb per module, one error rule for all.

Exit codes: 0 done; 1 a user error (a missing or malformed file, a PIR program, ops
fluidscope does not implement, a wrong feed...), told in one line on stderr with no
traceback; 2 a usage error, as argparse reports it. An error that is none of
fluidscope's (a bug) keeps its traceback.
"""
from __future__ import annotations

import argparse
import sys
from importlib import metadata

from fluidscope.engine import FluidscopeError

from . import convert, info, lab, render, run

VERBS = (info, render, convert, run, lab)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fluidscope",
        description="Look at, draw, convert and run PaddlePaddle Fluid programs and "
                    "fluidscope designs; open the notebooks in JupyterLab.",
        epilog="`fluidscope VERB --help` tells more about each verb.")
    parser.add_argument("--version", action="version", version=f"fluidscope {version()}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for module in VERBS:
        module.add_parser(verbs)
    return parser


def version() -> str:
    try:
        return metadata.version("fluidscope")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "(not installed)"


def one_line(message) -> str:
    """A multi-line message (a validation report: a head line, then ``- problem`` lines)
    as one line: the head, then the problems separated by ``;``."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    rest = [line[2:] if line.startswith("- ") else line for line in lines[1:]]
    return " ".join([lines[0], "; ".join(rest)]) if rest else lines[0]


def main(argv=None) -> int:
    """Run ``fluidscope`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.command(args)
    except FluidscopeError as exc:
        error = one_line(exc)
    except OSError as exc:  # a file the verb writes or reads outside the engine's checks
        where = f"{exc.filename}: " if exc.filename else ""
        error = f"{where}{exc.strerror or exc}"
    except KeyboardInterrupt:
        return 130
    print(f"fluidscope {args.verb}: error: {error}", file=sys.stderr)
    return 1


__all__ = ["VERBS", "build_parser", "main", "one_line"]
