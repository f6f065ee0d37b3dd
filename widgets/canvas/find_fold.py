"""Finding a node and folding runs of identical layers: the canvas's actions for designs
too big to read node by node (issue #19). ``find`` fills the ``found`` trait, which the
front end pans to and highlights; ``fold`` / ``unfold`` open and close the "fc x 120"
nodes of folds.py (a double-click on one unfolds it).
"""
from __future__ import annotations

from fluidscope.engine import DesignError

from ..base import action
from .folds import FOLD_MIN, run_of


class FindFoldActions:
    """Mixed into DesignCanvas; uses its ``_design``, ``_unfolded``, ``_pane``, ``pane``,
    ``view``, ``found`` and ``_publish``."""

    @action(node=str)
    def unfold(self, node):
        """Draw the run of identical layers folded as ``node`` (``fold:<first id>``, or
        any member's id) one node per layer again (a double-click on the fold)."""
        self._unfolded.add(self._run(node)[0])
        self._publish(rebuild=False)

    @action(node=str)
    def fold(self, node):
        """Fold the run of identical layers holding ``node`` into one "fc x 120" node."""
        self._unfolded.discard(self._run(node)[0])
        self._publish(rebuild=False)

    def _saved_unfolded(self):
        """The runs shown unfolded when the design was saved (``Document.view``)."""
        return set(self._design.document.view.get("unfolded", ()))

    def _store_unfolded(self):
        """Keep the unfolded runs in the design file, next to the zones' state."""
        known = self._design.document.ids()
        self._unfolded &= known
        if self._unfolded:
            self._design.document.view["unfolded"] = sorted(self._unfolded)
        else:
            self._design.document.view.pop("unfolded", None)

    def _run(self, node):
        run = run_of(self._design.document, node)
        if run is None:
            raise DesignError(f"fold: '{node}' is in no run of identical layers (a chain "
                              f"of at least {FOLD_MIN} layers with the same attributes)")
        return run

    @action(width=float, height=float)
    def set_pane(self, width, height):
        """The size (px) of the pane the canvas draws in, as the front end first sees it:
        the default layout wraps long designs to fit it (layout.py). A change under 15%
        keeps the layout (no jump for a scrollbar)."""
        if width < 100 or height < 100:
            raise DesignError(f"set_pane: a pane of {width} x {height} px is too small to lay "
                              f"out for")
        old = self.pane
        if all(abs(new - was) <= 0.15 * new for new, was in zip((width, height), old)):
            return
        self._pane = (round(width), round(height))
        self._publish(rebuild=False)

    @action(query=str, index=int)
    def find(self, query, index=0):
        """Nodes whose id or layer kind contains ``query`` (any case); the canvas pans
        to match ``index`` (wrapping around) and highlights every match. A match inside
        a folded run or a collapsed zone lights the node that draws it. Returns the ids."""
        words = query.strip().lower()
        matches = [n.id for n, _, _ in self._design.document.walk()
                   if words and (words in n.id.lower() or words in n.layer.lower())]
        drawn = list(dict.fromkeys(d for d in map(self._drawn_as, matches) if d))
        self.found = {"query": query, "ids": drawn, "matches": len(matches),
                      "focus": drawn[index % len(drawn)] if drawn else None,
                      "revision": self.found.get("revision", 0) + 1}
        return matches

    def _drawn_as(self, node_id):
        """The id of the node drawn for ``node_id`` in the view shown, or None."""
        drawn = {n["id"]: n for n in self.view.get("nodes", ())}
        doc = self._design.document
        while node_id is not None and node_id not in drawn:
            fold = next((k for k, n in drawn.items() if node_id in (n.get("members") or ())),
                        None)
            if fold is not None:
                return fold
            owner = doc.locate(node_id)
            node_id = owner[2].id if owner and owner[2] is not None else None
        return node_id

