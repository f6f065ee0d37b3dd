"""Unique names the way Paddle makes them: ``fc_0``, ``fc_0.w_0``, ``fc_0.tmp_1``."""
import contextlib
from collections import defaultdict

_counters = defaultdict(int)
# Inside ``journal()``: (key, its number before) of every change, in order, so a design
# build learns what one layer advanced by reading the entries since a ``mark()`` instead
# of comparing copies of every counter (quadratic in the layers of a design).
_journal = None


def generate(key: str) -> str:
    """``key_<n>`` with n counting per key from 0."""
    n = _counters[key]
    if _journal is not None:
        _journal.append((key, n))
    _counters[key] = n + 1
    return f"{key}_{n}"


def reserve(name: str):
    """Count ``key`` past ``n`` for an explicit name ``key_n``, so ``generate(key)`` never
    returns a name a user (or a design's node id) already took."""
    key, _, number = name.rpartition("_")
    if key and number.isdigit():
        set_count(key, max(_counters.get(key, 0), int(number) + 1))


def counts() -> dict:
    """A copy of every key's next number (a design build saves it to roll back)."""
    return dict(_counters)


def count(key: str) -> int:
    """The number ``generate(key)`` gives next."""
    return _counters.get(key, 0)


def set_count(key: str, n: int):
    """Make ``generate(key)`` give ``n`` next (a replayed layer took the names before)."""
    before = _counters.get(key, 0)
    if before != n:
        if _journal is not None:
            _journal.append((key, before))
        _counters[key] = n


def all_at(numbers) -> bool:
    """Whether every key of ``numbers`` (key -> (n, anything)) is at its n now."""
    get = _counters.get
    return all(get(k, 0) == n for k, (n, _) in numbers.items())


def advance(numbers):
    """``set_count`` each key of ``numbers`` (key -> (anything, n)) to its n."""
    for key, (_, n) in numbers.items():
        set_count(key, n)


def mark() -> int:
    """Where the journal is now (inside ``journal()``), for ``changes_since``."""
    return len(_journal)


def changes_since(position: int) -> dict:
    """key -> (number at ``position``, number now) of each key changed since then."""
    changed = {}
    for key, before in _journal[position:]:
        changed.setdefault(key, before)
    return {k: (v, _counters.get(k, 0)) for k, v in changed.items() if _counters.get(k, 0) != v}


@contextlib.contextmanager
def journal():
    """Record every counter change made inside (see ``mark``)."""
    global _journal
    saved, _journal = _journal, []
    try:
        yield
    finally:
        _journal = saved


@contextlib.contextmanager
def guard():
    """Names inside start again from 0 (saved counters are restored after)."""
    global _counters, _journal
    saved, _counters = (_counters, _journal), defaultdict(int)
    _journal = None
    try:
        yield
    finally:
        _counters, _journal = saved


def reset():
    _counters.clear()
