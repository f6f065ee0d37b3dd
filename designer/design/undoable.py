"""The undo step every edit method is: snapshot, apply, restore on error.

Undo is by snapshot: an edit keeps the document as it was before it changes anything,
so undo restores the exact previous document whatever the edit did (a removal that cut
several edges, a grouping that moved nodes into a step); a refused edit raises and
leaves the document as it was.

The edit works on a copy: the document as it was becomes the snapshot, unchanged from
then on, and a fresh clone becomes the live document (``edit``), or a fork that shares
the snapshot's nodes and clones each node before it changes it (``edit_nodes``, copy on
write). So no edit ever changes a snapshot's objects in place, and snapshots can share
them: ``share_unchanged`` points
a new snapshot's unchanged nodes at the previous snapshot's objects (at 1,000 layers a
history of 200 full copies held ~400k objects, walked by every full garbage collection;
shared, it holds about one object per node plus the changed ones), and undo installs
a snapshot as it is, with no copy.
"""
from __future__ import annotations

import functools
from operator import is_

from fluidscope.engine import DesignError

from .document import Ref


def edit(method):
    """Run ``method`` as one undoable step; on any error restore the document."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        before = self._doc
        self._doc = before.clone()
        try:
            result = method(self, *args, **kwargs)
        except BaseException:
            self._doc = before
            raise
        if self._transaction_depth == 0 and self._doc != before:  # a no-op is no step
            self._push(before)
        return result
    return run


def edit_nodes(method):
    """``edit`` for a method that changes nodes only through ``self._own(node_id)`` (and
    the document's top-level fields): the live document becomes a fork of the snapshot
    (Document.fork: the same node objects), and ``_own`` clones a node (a group with its
    step) the first time the edit changes it. At 1,000 layers this spares an attribute
    edit the full clone (1.3-3 ms), a compare of every node with the snapshot and the
    sharing pass (~1.4 ms): the snapshot's unchanged nodes are the live ones already."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        before, base = self._doc, self._fork_base
        if self._undo and self._transaction_depth == 0:
            # shared before the fork, so the fork holds the history's objects: the next
            # snapshot (this live document) then shares by identity, with no compare
            share_unchanged(before, self._undo[-1])
        self._doc, self._fork_base = before.fork(), before
        try:
            result = method(self, *args, **kwargs)
        except BaseException:
            self._doc = before
            raise
        finally:
            self._fork_base = base
        if self._transaction_depth == 0 and self._doc != before:  # a no-op is no step
            self._push(before)
        return result
    return run


def share_unchanged(doc, older):
    """Point the top-level nodes (a group with its whole step) and layout places of
    snapshot ``doc`` that equal those of snapshot ``older`` (values of the same types
    too: 1, 1.0 and True are equal, a design keeps the one given) at ``older``'s
    objects. Neither is ever changed in place (see the module docstring), so sharing
    cannot leak an edit into the history."""
    old_nodes, nodes = older.graph.nodes, doc.graph.nodes
    shared = [(nid, old) for nid, node in nodes.items()
              if (old := old_nodes.get(nid)) is not None and old is not node
              and (_same_leaves(old, node) or old == node and _same_node_types(old, node))]
    for nid, old in shared:
        nodes[nid] = old
    old_layout, layout = older.layout, doc.layout
    places = [(nid, old) for nid, place in layout.items()
              if (old := old_layout.get(nid)) is not None and old is not place
              and old == place and same_types(old, place)]
    for nid, old in places:
        layout[nid] = old


def _same_leaves(a, b):
    """The quick yes: two plain nodes whose attributes and inputs hold the very same
    keys and values in the same order (a clone shares them), so equal with the same
    types. False means "compare them in full", not "different"."""
    if a.rows is not None or b.rows is not None or a.body is not None or b.body is not None \
            or a.id != b.id or a.layer != b.layer:
        return False
    aa, ba, ai, bi = a.attrs, b.attrs, a.inputs, b.inputs
    return len(aa) == len(ba) and len(ai) == len(bi) \
        and all(map(is_, aa, ba)) and all(map(is_, aa.values(), ba.values())) \
        and all(map(is_, ai, bi)) and all(map(is_, ai.values(), bi.values()))


def _same_node_types(a, b):
    """``same_types`` over two equal nodes' attributes, rows and step nodes."""
    if not same_types(a.attrs, b.attrs):
        return False
    if a.rows is not None and not all(same_types(r.attrs, q.attrs)
                                      for r, q in zip(a.rows, b.rows)):
        return False
    return a.body is None or all(_same_node_types(n, b.body.nodes[k])
                                 for k, n in a.body.nodes.items())


def same_types(a, b):
    """Whether ``a`` and ``b``, equal JSON-like values, have the same type at every
    leaf (equal dicts have the same keys, equal lists the same length)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        # most values are the very objects of the other copy: no call for those
        return all(v is w or same_types(v, w) for v, w in zip(a.values(), map(b.get, a)))
    if isinstance(a, list):
        return all(v is w or same_types(v, w) for v, w in zip(a, b))
    return True


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
