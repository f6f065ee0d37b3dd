"""The undo step every edit method is: snapshot, apply, restore on error.

Undo is by snapshot: an edit saves a copy of the document before it changes anything,
so undo restores the exact previous document whatever the edit did (a removal that cut
several edges, a grouping that moved nodes into a step); a refused edit raises and
leaves the document as it was.
"""
from __future__ import annotations

import functools

from fluidscope.engine import DesignError

from .document import Ref


def edit(method):
    """Run ``method`` as one undoable step; on any error restore the document."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        before = self._doc.clone()
        try:
            result = method(self, *args, **kwargs)
        except BaseException:
            self._doc = before
            raise
        if self._transaction_depth == 0:
            self._push(before)
        return result
    return run


def as_ref(value, where="input"):
    """A Ref from a node id, (id, index), [id, index] or a Ref."""
    if isinstance(value, Ref):
        return value
    if isinstance(value, str):
        return Ref(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str) \
            and isinstance(value[1], int):
        return Ref(value[0], value[1])
    raise DesignError(f"{where}: expected a node id or (node id, output index), got {value!r}")


def plain(value):
    """Attribute values as JSON holds them (tuples become lists), so a saved and loaded
    design equals the one saved."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
