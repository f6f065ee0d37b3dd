"""How the process's C heap keeps the memory a run frees for the next step (glibc).

A run makes most of its arrays afresh, op by op (``recycle`` and the recurrent spares
reuse only some), and frees them when the step ends. glibc's malloc maps a block above
its *mmap threshold* straight from the system (128 KiB at start; it raises the threshold
to the size of each such block freed, up to 32 MiB), and gives the top of its heap back
to the system as soon as more than its *trim threshold* (twice the mmap threshold) lies
free there. A training step frees its temporaries together at its end, so the free top
passes that threshold and goes back; the next step's first large arrays then fault their
pages in again, one fault per 4 KiB, each paying the kernel's page clearing and memory
accounting. A 64 -> 128 recurrent group over 32 sequences (``benchmarks/
recurrent_groups.py``) took 344 page faults a step that way, and 3.8-4.0 ms a step
instead of 3.1-3.2 ms with the thresholds below (the hand-written numpy loop it is
measured against allocates once and takes none); the other benchmarks' programs took
0-1 fault a step only because of where their arrays happened to fall.

The policy (``set_heap_policy``):

* ``"keep"`` (the default): before the first run (``Executor.run``, ``train``, the
  debugger), on glibc, fluidscope sets the mmap threshold to 32 MiB (glibc's own ceiling
  for its adaptive threshold on 64-bit) and the trim threshold to 64 MiB. Up to 64 MiB of
  freed heap then stays with the process for the next step; a larger free top still goes
  back, and a block over 32 MiB is still mapped and unmapped on its own. What the process
  holds therefore stays near its peak of the last steps, plus at most 64 MiB.
* ``"system"``: malloc as glibc runs it. Chosen before the first run, fluidscope never
  touches malloc; chosen after, it sets glibc's starting values again (128 KiB, 128 KiB:
  once set, glibc no longer adapts its threshold).

Where the environment already sets ``MALLOC_MMAP_THRESHOLD_`` or
``MALLOC_TRIM_THRESHOLD_`` (glibc reads them at start), the person decided: fluidscope
leaves malloc alone unless ``set_heap_policy`` is called. Anywhere but glibc (macOS,
musl) the policy changes nothing and ``heap_policy()`` says so.
"""
from __future__ import annotations

import ctypes
import os

from ..errors import FluidscopeError

KEEP_MMAP_THRESHOLD = 32 << 20  # bytes
KEEP_TRIM_THRESHOLD = 64 << 20
GLIBC_START = 128 << 10  # glibc's DEFAULT_MMAP_THRESHOLD_MIN and DEFAULT_TRIM_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
POLICIES = ("keep", "system")


class _Heap:
    """Process-wide state: glibc's ``mallopt`` (found on first use) and the choice."""

    def __init__(self):
        self.mallopt = None      # glibc's mallopt; False: not glibc
        self.policy = "keep"
        self.chosen = False      # set_heap_policy was called
        self.settled = False     # the policy was applied (at the first run or when chosen)
        self.applied = None      # (mmap, trim) thresholds fluidscope last set, or None

    def find_mallopt(self):
        if self.mallopt is None:
            try:
                libc = ctypes.CDLL(None)
                libc.gnu_get_libc_version  # glibc's own: musl has a mallopt that does nothing
                mallopt = libc.mallopt
            except (OSError, AttributeError):
                mallopt = False
            else:
                mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
            self.mallopt = mallopt
        return self.mallopt

    def set_thresholds(self, mmap, trim):
        mallopt = self.find_mallopt()
        if not mallopt:
            return False
        if mallopt(_M_MMAP_THRESHOLD, mmap) != 1 or mallopt(_M_TRIM_THRESHOLD, trim) != 1:
            return False
        self.applied = (mmap, trim)
        return True


_HEAP = _Heap()


def settle():
    """Apply the policy once, before the process's first run (the runtime calls this;
    later calls cost one attribute test)."""
    if _HEAP.settled:
        return
    _HEAP.settled = True
    if _HEAP.policy == "keep" and not _HEAP.chosen and any(
            name in os.environ for name in _ENVIRONMENT):
        return  # the environment's choice
    if _HEAP.policy == "keep":
        _HEAP.set_thresholds(KEEP_MMAP_THRESHOLD, KEEP_TRIM_THRESHOLD)


def set_heap_policy(policy):
    """``"keep"``: freed memory up to 64 MiB stays in the heap for the next step (the
    default); ``"system"``: malloc as glibc runs it. Applies at once; returns the policy
    before the call."""
    if policy not in POLICIES:
        raise FluidscopeError(
            f"set_heap_policy: policy must be one of {list(POLICIES)}, got {policy!r}")
    before = _HEAP.policy
    _HEAP.policy, _HEAP.chosen, _HEAP.settled = policy, True, True
    if policy == "keep":
        _HEAP.set_thresholds(KEEP_MMAP_THRESHOLD, KEEP_TRIM_THRESHOLD)
    elif _HEAP.applied is not None:
        _HEAP.set_thresholds(GLIBC_START, GLIBC_START)
        _HEAP.applied = None
    return before


def heap_policy():
    """What the heap does now: {"policy", "thresholds": (mmap, trim) bytes fluidscope set,
    or None where it set none, "glibc": whether the process's malloc is glibc's}."""
    return {"policy": _HEAP.policy, "thresholds": _HEAP.applied,
            "glibc": bool(_HEAP.find_mallopt())}


__all__ = ["set_heap_policy", "heap_policy", "settle", "POLICIES"]
