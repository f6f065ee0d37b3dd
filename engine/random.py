"""Random state of the random ops (``uniform_random``, ``gaussian_random``, ``dropout``).

One generator per array module (numpy on CPU, cupy on GPU), made lazily, serves every
op that asks for no seed of its own. ``seed(n)`` reseeds them all at once, so a whole
run (initialisers, dropout masks) repeats exactly::

    import fluidscope.engine.random as fr
    fr.seed(42)

An op whose ``seed`` attribute (or ``Seed`` input) is nonzero gets a fresh generator
seeded with it on every call instead: the same op then gives the same values on every
run, which is what Paddle promises for a fixed op seed and what gradient checks need.
"""
from __future__ import annotations

_global_seed: int | None = None
_generators: dict = {}


def seed(n: int | None) -> None:
    """Reseed the shared generators of every device with ``n`` (None: fresh entropy)."""
    global _global_seed
    _global_seed = None if n is None else int(n)
    _generators.clear()


def get_seed() -> int | None:
    """The seed last given to ``seed`` (None if never, or reseeded from entropy)."""
    return _global_seed


def generator(xp, op_seed: int = 0):
    """A ``Generator`` of ``xp`` (numpy or cupy) for one op call.

    ``op_seed`` nonzero: a new generator seeded with it (reproducible per op); zero:
    the shared generator of ``xp``, which advances from call to call.
    """
    if op_seed:
        return xp.random.default_rng(int(op_seed))
    key = xp.__name__
    gen = _generators.get(key)
    if gen is None:
        gen = _generators[key] = xp.random.default_rng(_global_seed)
    return gen


__all__ = ["seed", "get_seed", "generator"]
