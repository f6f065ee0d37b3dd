"""Inference export: a program pruned to what computes the fetches from the feeds, with its
parameters, as ``<prefix>.pdmodel`` + ``<prefix>.pdiparams`` (what Paddle and Netron read).
"""
from __future__ import annotations

import os

from ..errors import FluidscopeError, LoadError
from ..prune import prune_for_inference
from .params import load_scope_params, param_specs, save_scope_params
from .programs import load_program, save_program


def save_inference_model_files(path_prefix, desc, feed_names, fetch_names, scope):
    """Prune ``desc`` for inference and write ``<prefix>.pdmodel`` and ``<prefix>.pdiparams``
    (parameter values from ``scope``). Returns the pruned ProgramDesc."""
    prefix = os.fspath(path_prefix)
    if not os.path.basename(prefix) or os.path.isdir(prefix):
        raise FluidscopeError(f"'{prefix}' is a folder; give a path prefix such as "
                              f"'{os.path.join(prefix, 'model')}'")
    pruned = prune_for_inference(desc, feed_names, fetch_names)
    folder = os.path.dirname(os.path.abspath(prefix))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise FluidscopeError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    # Parameters first: a scope without values fails before any file is replaced.
    save_scope_params(prefix + ".pdiparams", pruned, scope)
    save_program(pruned, prefix + ".pdmodel")
    return pruned


def holder_names(path, desc, type):
    """Names the ``feed`` (or ``fetch``) ops of block 0 hold, in col order; LoadError when
    the cols are repeated or leave gaps."""
    cols = {}
    for op in desc.blocks[0].ops:
        if op.type != type:
            continue
        col = next(a.i for a in op.attrs if a.name == "col")
        names = [n for v in (op.outputs if type == "feed" else op.inputs) for n in v.arguments]
        if col in cols or len(names) != 1:
            raise LoadError(f"{path}: {type} op with col {col} is repeated or malformed")
        cols[col] = names[0]
    if sorted(cols) != list(range(len(cols))):
        raise LoadError(f"{path}: {type} cols {sorted(cols)} are not 0..{len(cols) - 1}")
    return [cols[c] for c in range(len(cols))]


def load_inference_model_files(path_prefix, scope, place=None):
    """Read ``<prefix>.pdmodel`` and ``<prefix>.pdiparams``; put the parameters in
    ``scope`` (on ``place``). Returns (desc, feed names in col order, fetch names in col
    order)."""
    prefix = os.fspath(path_prefix)
    desc = load_program(prefix + ".pdmodel")
    feeds = holder_names(prefix + ".pdmodel", desc, "feed")
    fetches = holder_names(prefix + ".pdmodel", desc, "fetch")
    try:
        has_params = bool(param_specs(desc))
    except LoadError as exc:
        raise LoadError(f"{prefix}.pdmodel: {exc}") from None
    if has_params or os.path.exists(prefix + ".pdiparams"):
        load_scope_params(prefix + ".pdiparams", desc, scope, place)
    return desc, feeds, fetches


__all__ = ["save_inference_model_files", "holder_names", "load_inference_model_files"]
