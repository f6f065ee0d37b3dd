"""Unique names the way Paddle makes them: ``fc_0``, ``fc_0.w_0``, ``fc_0.tmp_1``."""
import contextlib
from collections import defaultdict

_counters = defaultdict(int)


def generate(key: str) -> str:
    """``key_<n>`` with n counting per key from 0."""
    n = _counters[key]
    _counters[key] += 1
    return f"{key}_{n}"


def reserve(name: str):
    """Count ``key`` past ``n`` for an explicit name ``key_n``, so ``generate(key)`` never
    returns a name a user (or a design's node id) already took."""
    key, _, number = name.rpartition("_")
    if key and number.isdigit():
        _counters[key] = max(_counters[key], int(number) + 1)


def counts() -> dict:
    """A copy of every key's next number (a design build saves it to roll back)."""
    return dict(_counters)


def count(key: str) -> int:
    """The number ``generate(key)`` gives next."""
    return _counters.get(key, 0)


def set_count(key: str, n: int):
    """Make ``generate(key)`` give ``n`` next (a replayed layer took the names before)."""
    _counters[key] = n


@contextlib.contextmanager
def guard():
    """Names inside start again from 0 (saved counters are restored after)."""
    global _counters
    saved, _counters = _counters, defaultdict(int)
    try:
        yield
    finally:
        _counters = saved


def reset():
    _counters.clear()
