"""Variable naming of the IR: gradients, fan-in renames, placeholders (Paddle's conventions).

Every module that makes or reads these names imports them from here, so the spelling
(``x@GRAD``, ``x@GRAD@RENAME@block0@1``, ``@EMPTY@``) lives in one place.
"""
from __future__ import annotations

GRAD_SUFFIX = "@GRAD"
RENAME = "@RENAME@"  # a fan-in write of a gradient: ``x@GRAD@RENAME@block<b>@<k>``
SEED_SUFFIX = "@SEED"  # a sub-block's seeded gradient that its grad ops also write
EMPTY_VAR = "@EMPTY@"  # Paddle's placeholder argument: this position is not computed
GRAD_OP_SUFFIX = "_grad"


def grad_name(name: str) -> str:
    """Name of the gradient variable of ``name`` (Paddle: ``x@GRAD``)."""
    return name + GRAD_SUFFIX


def is_grad_name(name: str) -> bool:
    """True for ``x@GRAD`` and its renames/seeds (``x@GRAD@RENAME@block0@1``)."""
    return GRAD_SUFFIX in name


def forward_name(name: str):
    """``'x@GRAD@RENAME@block0@1'`` -> ``'x'``; None for a name that is no gradient."""
    return name.split(GRAD_SUFFIX)[0] if GRAD_SUFFIX in name else None


def rename_of(name: str, block_idx: int, k: int) -> str:
    """The ``k``-th fan-in write of gradient ``name`` in block ``block_idx``."""
    return f"{name}{RENAME}block{block_idx}@{k}"


def seed_of(name: str) -> str:
    """Where a sub-block's seeded gradient ``name`` is read from when its ops also write it."""
    return name + SEED_SUFFIX


def unseeded(name: str) -> str:
    """``'x@GRAD@SEED'`` -> ``'x@GRAD'``; other names unchanged."""
    return name[:-len(SEED_SUFFIX)] if name.endswith(SEED_SUFFIX) else name


def grad_op_type(op_type: str) -> str:
    """``'mul'`` -> ``'mul_grad'``."""
    return op_type + GRAD_OP_SUFFIX


__all__ = ["GRAD_SUFFIX", "RENAME", "SEED_SUFFIX", "EMPTY_VAR", "GRAD_OP_SUFFIX", "grad_name",
           "is_grad_name", "forward_name", "rename_of", "seed_of", "unseeded", "grad_op_type"]
