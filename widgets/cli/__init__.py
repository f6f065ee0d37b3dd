"""The ``fluidscope`` command line: ``info``, ``render``, ``convert``, ``run`` and ``lab``.

A thin layer over the Python API, so it sits at the top of the dependency chain (it
uses engine, designer and widgets.render): ``models`` opens what a path names (a
program file, a path prefix, a design), ``outputs`` writes files atomically, one module
per verb declares its arguments and does its work, ``main`` parses and turns errors
into exit codes (0 done, 1 user error in one line, 2 usage). The console script
``fluidscope`` (pyproject.toml) and ``python -m fluidscope.widgets.cli`` call ``main``.
"""
from .app import build_parser, main

__all__ = ["main", "build_parser"]
