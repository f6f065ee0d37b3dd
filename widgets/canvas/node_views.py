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


class NodeViewCache:
    """Node id -> (key, view, {connection counts: signature}) of the last view drawn."""

    def __init__(self):
        self._entries, self._next = {}, {}

    def lookup(self, node, build, where, loss):
        """(key, cached view or None); key None: this node is not cached."""
        key = _key(node, build, where, loss)
        entry = self._entries.get(node.id) if key is not None else None
        if entry is not None and entry[0] == key:
            self._next[node.id] = entry
            return key, _copy(entry[1])
        return key, None

    def store(self, node_id, key, view):
        """Keep ``view`` (before its position, counts and signature are set) for ``key``."""
        if key is not None:
            self._next[node_id] = (key, _copy(view), {})

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


def _key(node, build, where, loss):
    if node.body is not None or node.layer == STEP_INPUT:
        return None
    nid = node.id
    built = build.outputs.get(nid)
    try:  # a list, not a generator: this runs for every node of every view
        outputs = None if built is None else [v.desc.SerializeToString() for v in built]
    except Exception:  # noqa: BLE001 - a variable whose block is gone: draw it afresh
        return None
    # one repr of the three containers: the same text, one call instead of three
    return (node.layer, repr((node.attrs, node.inputs, node.rows)), where,
            build.errors.get(nid), build.waiting.get(nid), loss == nid, outputs)


def _copy(view):
    """A copy whose parts ``canvas_view`` sets per view (position, signature, the ports'
    and rows' connection counts) are its own; the rest is shared and never changed."""
    out = dict(view)
    out["inputs"] = [dict(p) for p in view["inputs"]]
    if view.get("rows") is not None:
        out["rows"] = [dict(r) for r in view["rows"]]
    return out
