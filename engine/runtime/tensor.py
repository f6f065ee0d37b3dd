"""LoDTensor: an array plus LoD (level-of-detail) offsets, Paddle style.

LoD is stored as offsets, e.g. ``[[0, 3, 7]]``: two sequences of rows [0, 3) and
[3, 7). ``recursive_sequence_lengths`` gives the same as lengths, ``[[3, 4]]``.
"""
import numpy as np

from ..errors import FluidscopeError
from .place import CPUPlace, to_host


def lengths_to_offsets(lengths):
    out = [0]
    for n in lengths:
        out.append(out[-1] + int(n))
    return out


def check_lod(lod, rows, name="tensor"):
    """Raise a clear error unless ``lod`` is valid offsets covering ``rows`` rows."""
    for level, offsets in enumerate(lod):
        if len(offsets) < 1 or offsets[0] != 0 or any(b < a for a, b in zip(offsets, offsets[1:])):
            raise FluidscopeError(
                f"{name}: LoD level {level} {list(offsets)} must start at 0 and never decrease"
                f"{lengths_hint(lod, rows)}")
        if level + 1 < len(lod) and offsets[-1] != len(lod[level + 1]) - 1:
            raise FluidscopeError(
                f"{name}: LoD level {level} ends at {offsets[-1]} but level {level + 1} "
                f"has {len(lod[level + 1]) - 1} sequences{lengths_hint(lod, rows)}")
    if lod and lod[-1][-1] != rows:
        raise FluidscopeError(
            f"{name}: LoD {[list(x) for x in lod]} covers {lod[-1][-1]} rows but the tensor "
            f"has {rows}{lengths_hint(lod, rows)}")


def lengths_hint(lod, rows):
    """For a LoD that is not valid offsets: when it reads as sequence lengths instead
    (each level sums to the count of the next level's sequences, the last to ``rows``),
    the sentence saying so, with the offsets meant and ``create_lod_tensor``; else ''."""
    counts = [len(level) for level in lod[1:]] + [rows]
    if not lod or any(sum(level) != count or min(level, default=0) < 0
                      for level, count in zip(lod, counts)):
        return ""
    offsets = [lengths_to_offsets(level) for level in lod]
    lengths = [list(level) for level in lod]
    return (f". {lengths} reads as sequence lengths (they add up to {rows} rows), but a LoD "
            f"holds offsets: here {offsets}; or give the lengths to "
            f"create_lod_tensor(array, {lengths}) (or set_recursive_sequence_lengths)")


class LoDTensor:
    """A dense tensor with optional LoD. ``numpy.array(t)`` reads it; ``t.set(a, place)``
    writes it. The array lives on ``place`` (numpy on CPU, cupy on GPU)."""
    __slots__ = ("value", "_lod", "place")

    def __init__(self, array=None, lod=None, place=None):
        self.value, self._lod, self.place = None, [], place or CPUPlace()
        if array is not None:
            self.set(array, self.place)
        if lod:
            self.set_lod(lod)

    @classmethod
    def wrap(cls, value, lod=None, place=None):
        """A LoDTensor over ``value`` itself (no copy): for views of runtime values."""
        t = cls(place=place)
        t.value, t._lod = value, [list(level) for level in (lod or [])]
        return t

    def set(self, array, place=None):
        """Write ``array`` (copied to ``place``'s memory) into this tensor."""
        self.place = place or self.place
        self.value = self.place.xp.asarray(array)

    def set_lod(self, lod):
        lod = [[int(v) for v in level] for level in lod]
        if self.value is not None:
            check_lod(lod, self.value.shape[0] if self.value.ndim else 1, "LoDTensor")
        self._lod = lod

    def lod(self):
        return [list(level) for level in self._lod]

    @property
    def lod_offsets(self):
        """The LoD as stored (offset lists, not copied): for the runtime, which never
        modifies a LoD in place."""
        return self._lod

    def assign(self, value, lod_offsets, place):
        """Hold ``value`` with ``lod_offsets`` on ``place`` as given (no copy, no check):
        the runtime writing back its results, the debugger restoring them."""
        self.value, self._lod, self.place = value, lod_offsets, place

    def set_recursive_sequence_lengths(self, lengths):
        self.set_lod([lengths_to_offsets(level) for level in lengths])

    def recursive_sequence_lengths(self):
        return [[b - a for a, b in zip(level, level[1:])] for level in self._lod]

    def has_valid_recursive_sequence_lengths(self):
        try:
            check_lod(self._lod, self.value.shape[0])
            return True
        except (FluidscopeError, AttributeError, IndexError):
            return False

    def shape(self):
        return list(self.value.shape) if self.value is not None else []

    @property
    def dtype(self):
        return None if self.value is None else np.dtype(self.value.dtype)

    def numpy(self):
        if self.value is None:
            raise FluidscopeError("this tensor holds no value yet")
        return to_host(self.value)

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out.astype(dtype) if dtype is not None else out

    def __repr__(self):
        if self.value is None:
            return "LoDTensor(<empty>)"
        return f"LoDTensor(shape={self.shape()}, dtype={self.dtype}, lod={self._lod}, place={self.place})"


def create_lod_tensor(data, recursive_seq_lens, place=None):
    """A LoDTensor from an array and sequence lengths (Paddle's helper of that name).

    ``data`` may also be a list of sequences of different lengths, as Paddle takes it:
    their items are concatenated and given a trailing axis of 1 (``[[1, 2, 3], [4, 5]]``
    -> an int64 [5, 1] column), and ``recursive_seq_lens`` must be their lengths."""
    if isinstance(data, LoDTensor):
        data = data.numpy()
    elif isinstance(data, list):
        lengths = [len(seq) for seq in data]
        if [lengths] != [list(level) for level in recursive_seq_lens]:
            raise FluidscopeError(
                f"create_lod_tensor: the list holds sequences of lengths {lengths} but "
                f"recursive_seq_lens is {recursive_seq_lens}; pass [{lengths}]")
        data = np.array([item for seq in data for item in seq])
        data = data.reshape(data.shape + (1,))
    t = LoDTensor(np.asarray(data), place=place)
    t.set_recursive_sequence_lengths(recursive_seq_lens)
    return t
