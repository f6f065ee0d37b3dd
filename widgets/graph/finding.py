"""``find`` of a GraphView: a search for nodes by op type, variable or layer name, as
one UI action (the search box sends it) over the pure ``search`` module."""
from __future__ import annotations

from fluidscope.engine.errors import FluidscopeError

from ..base import action
from .search import drawn_key, find_nodes


class FindsNodes:
    """The search half of a GraphView (its ``_desc``, ``_rendered``, ``mode``,
    ``query``, ``found``, ``selected`` and ``set_options``)."""

    _found_at = 0  # which of ``found`` the last find selected

    @action(query=str)
    def find(self, query):
        """Find nodes by op type, variable name or layer name (case-insensitive, exact
        matches first): selects the first match drawn, which the front end pans to and
        outlines, and lists every drawn match in ``found``. The same query again selects
        the next match. A match this mode does not draw switches to the mode that
        draws everything. Returns the selected key; FluidscopeError when nothing
        matches."""
        matches = find_nodes(self._desc, query)
        if not matches:
            raise FluidscopeError(f"find: no op type, variable or layer matches {query!r}")
        drawn = self._drawn(matches)
        if not drawn and self.mode != "all":
            self.mode = "all"  # re-renders
            drawn = self._drawn(matches)
        if not drawn and not self._options.get("show_internal"):
            self.set_options(show_internal=True)
            drawn = self._drawn(matches)
        if not drawn:
            raise FluidscopeError(f"find: {query!r} matches {len(matches)} node(s), none of "
                                  "them drawn from this block")
        again = query == self.query and self.found == drawn
        self._found_at = (self._found_at + 1) % len(drawn) if again else 0
        with self.hold_sync():
            self.query, self.found = query, drawn
            self.selected = drawn[self._found_at]
        return self.selected

    def _drawn(self, matches):
        """The drawn nodes showing ``matches``, each once, in their order."""
        keys = (drawn_key(self._rendered, key, self._desc) for key in matches)
        return list(dict.fromkeys(k for k in keys if k is not None))


__all__ = ["FindsNodes"]
