"""Paddle-named file functions over designer Programs (``paddle.static`` style).

    fd.io.save_inference_model("out/model", [x], [y], exe)      # model.pdmodel + .pdiparams
    program, feed_names, fetch_targets = fd.io.load_inference_model("out/model", exe)
    fd.io.save(program, "ckpt.pdiparams"); fd.io.load(program, "ckpt.pdiparams", exe)

Parameter values live in the global scope (``fd.global_scope()``, or the one a
``scope_guard`` sets), as in Paddle; each function also takes ``scope=`` (fluidscope's
addition) for values trained in a ``fd.Scope()`` of one's own. Files are what
PaddlePaddle 3.3.1 and Netron read; the work is done by ``fluidscope.engine.io``.
"""
from __future__ import annotations

from fluidscope.engine import io as _io
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.plan import program_desc_of
from fluidscope.engine.runtime.scope import global_scope

from .framework import Program, Variable, default_main_program


def _names(items, what):
    """Variables or names (one or a list) -> list of names."""
    if isinstance(items, (Variable, str)):
        items = [items]
    names = []
    for item in items or []:
        name = item.name if isinstance(item, Variable) else item
        if not isinstance(name, str):
            raise FluidscopeError(f"{what}: expected Variables or names, got "
                                  f"{type(item).__name__}")
        names.append(name)
    return names


def _place(executor):
    return getattr(executor, "place", None)


def _scope(scope):
    return global_scope() if scope is None else scope


def save_inference_model(path_prefix, feed_vars, fetch_vars, executor=None, program=None,
                         scope=None):
    """Write ``<path_prefix>.pdmodel`` and ``<path_prefix>.pdiparams``: ``program`` (the
    default main program) pruned to compute ``fetch_vars`` from ``feed_vars``, with its
    parameter values from ``scope`` (the global scope). Returns the pruned Program.

    ``executor`` is accepted for Paddle's signature; values are read from the scope."""
    program = default_main_program() if program is None else program
    desc, _ = program_desc_of(program)
    pruned = _io.save_inference_model_files(
        path_prefix, desc, _names(feed_vars, "feed_vars"), _names(fetch_vars, "fetch_vars"),
        _scope(scope))
    return Program.from_desc(pruned)


def load_inference_model(path_prefix, executor=None, scope=None):
    """Read ``<path_prefix>.pdmodel``/``.pdiparams``; the parameters go to ``scope`` (the
    global scope), on the executor's place. Returns ``(program, feed_target_names,
    fetch_targets)`` with ``fetch_targets`` Variables of the loaded program, in ``col``
    order."""
    desc, feeds, fetches = _io.load_inference_model_files(path_prefix, _scope(scope),
                                                          _place(executor))
    program = Program.from_desc(desc)
    block = program.global_block()
    return program, feeds, [block.var(name) for name in fetches]


def save(program, path, scope=None):
    """Write ``scope``'s (the global scope's) values of ``program``'s persistable vars
    (parameters and optimizer state) to ``path`` exactly, in the combined ``.pdiparams``
    format."""
    desc, _ = program_desc_of(program)
    _io.save_scope_params(path, desc, _scope(scope))


def load(program, path, executor=None, scope=None):
    """Read ``path`` (written by ``save`` for the same program) into ``scope`` (the global
    scope). Returns the names of the vars loaded."""
    desc, _ = program_desc_of(program)
    return _io.load_scope_params(path, desc, _scope(scope), _place(executor))


def save_program(program, path, validate=True):
    """Write a Program (or ProgramDesc) as ``.pdmodel`` (binary) or ``.pbtxt`` (text)."""
    desc, _ = program_desc_of(program)
    _io.save_program(desc, path, validate=validate)


def load_program(path):
    """Read a ``.pdmodel`` or ``.pbtxt`` file into a Program (validated on loading)."""
    return Program.from_desc(_io.load_program(path))


__all__ = ["save_inference_model", "load_inference_model", "save", "load", "save_program",
           "load_program"]
