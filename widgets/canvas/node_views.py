"""Node views reused across publishes, keyed by everything a node's view is made from.

At 1,000 layers ``canvas_view`` drew every node afresh after each gesture: about half of
an edit's kernel time, though an edit changes one or two nodes' pictures (issue #16 item
4). ``NodeViewCache`` keeps, per node id, the view it drew last time with the key it was
drawn from: the node's own data (layer, attributes, inputs, rows, as ``repr``, which tells
``1`` from ``True`` and ``1.0``, where ``==`` does not), where it is drawn (parent zone,
zone size, collapsed), what the build says of it (error, waiting, the loss) and the
VarDesc bytes of its built outputs (dtype, lod level and shape, what its ports show).
Same key, same view: the cached view is copied (its position and its ports' connection
counts are set per view) and its signature reused while those counts are the same.

Not cached (drawn afresh each time, as before): a zone's node (its view depends on its
whole step), a step input (its output is another node's variable) and a node whose
outputs cannot be read (a failed step's rolled-back block). A cache keeps only the ids
the last view drew, so it does not grow with the history.
"""
from __future__ import annotations

from fluidscope.designer.design.document import STEP_INPUT

from .view_memo import ViewMemo


class NodeViewCache:
    """Node id -> (key, view, {connection counts: signature}, [box size]) of the last view
    drawn, and
    the finished views (position, counts and signature set) it was drawn as; ``memo``:
    the ``ViewMemo`` of the structure (view_memo.py)."""

    def __init__(self):
        self._entries, self._next = {}, {}
        self._drawn, self._next_drawn = {}, {}
        self.memo = ViewMemo()

    def lookup(self, node, build, where, loss, data=None):
        """(key, cached view or None, [box size or None] of its entry); key None: this
        node is not cached. The cached view is the cache's own: copy it (``copy_view``)
        before setting anything on it. ``data``: the node's texts from
        ``ViewMemo.scan``, when the caller has them. The box size is made from what the
        key holds (layer, rows, ports, zone size): the caller fills it once."""
        key = _key(node, build, where, loss, data)
        entry = self._entries.get(node.id) if key is not None else None
        if entry is not None and entry[0] == key:
            self._next[node.id] = entry
            return key, entry[1], entry[3]
        return key, None, None

    def store(self, node_id, key, view):
        """Keep ``view`` (before its position, counts and signature are set) for ``key``;
        returns the entry's [box size] (None: not kept, ``key`` is None)."""
        if key is None:
            return None
        entry = self._next[node_id] = (key, copy_view(view), {}, [None])
        return entry[3]

    def finished(self):
        """({node id: the finished view it was drawn as last time}, the same for this
        view, to fill): a node whose cached view ``lookup`` returned (same key), at the
        very same ``position`` object (view_memo.py keeps them while nothing moved) and
        with the same connection counts (the same edges drawn) is drawn as it was. Only
        nodes the cache holds (not folds, not zones) go in."""
        return self._drawn, self._next_drawn

    def signature(self, view, counts, compute):
        """``view``'s signature: reused when its node's view came from (or went into) this
        cache and its ports' connection counts are the ones signed before."""
        entry = self._next.get(view["id"])
        if entry is None or view.get("type") == "fold":
            return compute(view)
        sigs = entry[2]
        if counts not in sigs:
            sigs.clear()  # one count pattern per node is all a view needs
            sigs[counts] = compute(view)
        return sigs[counts]

    def finish(self):
        """Keep what this view drew; forget the rest."""
        self._entries, self._next = self._next, {}
        self._drawn, self._next_drawn = self._next_drawn, {}


def _key(node, build, where, loss, data=None):
    if node.body is not None or node.layer == STEP_INPUT:
        return None
    nid = node.id
    built = build.outputs.get(nid)
    try:  # a list, not a generator: this runs for every node of every view
        outputs = None if built is None else [v.desc.SerializeToString() for v in built]
    except Exception:  # noqa: BLE001 - a variable whose block is gone: draw it afresh
        return None
    if data is None:  # the texts ViewMemo.scan makes (repr tells 1 from 1.0 and True)
        data = (node.layer, repr(node.attrs), repr(node.inputs),
                None if node.rows is None else repr(node.rows))
    return (data, where, build.errors.get(nid), build.waiting.get(nid), loss == nid, outputs)


def copy_view(view):
    """A copy whose parts ``canvas_view`` sets per view (position, signature, the ports'
    and rows' connection counts) are its own; the rest is shared and never changed."""
    out = dict(view)
    out["inputs"] = [dict(p) for p in view["inputs"]]
    if view.get("rows") is not None:
        out["rows"] = [dict(r) for r in view["rows"]]
    return out
