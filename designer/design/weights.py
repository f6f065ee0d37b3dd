"""Keeping trained values across edits.

Parameter names come from node ids (``fc_2.w_0``), so after an edit the rebuilt
program names the same parameters the same way; values already in the user's scope
simply stay. What a rebuild must (re)initialise is what the scope lacks or holds with
another shape: a new layer's parameters, a reshaped layer's, their optimizer moments.
``initialise`` runs only those startup ops, so a user can train, change one layer and
keep training.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine import Executor, LoDTensor, global_scope


def changed(result, scope=None):
    """Persistable names of ``result.startup`` that ``scope`` lacks or holds with a
    different shape (all of them for a fresh scope)."""
    scope = scope if scope is not None else global_scope()
    names = []
    for var in result.startup.global_block().desc.vars:
        if not var.persistable:
            continue
        found = scope.find_var(var.name)
        if found is None or not found.is_initialized():
            names.append(var.name)
            continue
        value = found.get_value()
        held = value.shape() if isinstance(value, LoDTensor) else list(np.shape(value))
        declared = list(var.type.dense_tensor.tensor.dims)
        if held != declared:
            names.append(var.name)
    return names


def startup_for(result, names):
    """A copy of the startup program with only the ops that write ``names``."""
    wanted = set(names)
    program = result.startup.clone()
    block = program.global_block().desc
    kept = [op for op in block.ops
            if any(a in wanted for v in op.outputs for a in v.arguments)]
    del block.ops[:]
    block.ops.extend(kept)
    program.sync_blocks()
    return program


def initialise(result, executor=None, scope=None):
    """Run the startup ops of ``result.reinitialised`` in ``scope``; returns the names."""
    names = list(result.reinitialised)
    if names:
        executor = executor or Executor()
        executor.run(startup_for(result, names), scope=scope if scope is not None else
                     global_scope())
    return names
