"""``collapse`` / ``expand`` / ``toggle_group`` of a GraphView: which layers are drawn as
boxes, as UI actions (the toolbar's "layers as boxes" toggle and double-clicks send them)
over the pure layer state of ``graph.layers``."""
from __future__ import annotations

from fluidscope.engine.errors import FluidscopeError

from ..base import action
from ..keys import NodeKey
from .layers import group_layer, known_layer, op_position


class FoldsLayers:
    """The layer half of a GraphView (its ``_desc``, ``_layers``, the ``collapse_all`` /
    ``collapsed`` / ``expanded`` traits and ``refresh``)."""

    @action(namescope=(str, None))
    def collapse(self, namescope=None):
        """Draw layer ``namescope`` (``"fc_0"``, ``"/encoder/fc_0/"``) as one box, its
        grad ops as a second one; None: every top-level layer ("layers as boxes").
        Raises FluidscopeError for a layer the program does not have."""
        scope = None if namescope is None else known_layer(self._desc, namescope,
                                                           "GraphView.collapse")
        self._set_layers(self._layers.collapse(scope))

    @action(namescope=(str, None))
    def expand(self, namescope=None):
        """Draw the ops of layer ``namescope`` one by one again (the layers around it
        open too; under "layers as boxes" the layers inside it stay boxes, to be
        opened in turn); None: no layer as a box at all."""
        scope = None if namescope is None else known_layer(self._desc, namescope,
                                                           "GraphView.expand")
        self._set_layers(self._layers.expand(scope))

    @action(key=str)
    def toggle_group(self, key):
        """What a double-click does. ``key`` a layer's box (``"group:0:/fc_0/"``, or its
        grad box ``"group:0:/fc_0/@GRAD"``; ``"group:0:fc_0"`` too): open the layer,
        or fold it when it is open. ``key`` an op (``"op:0:3"``): fold the innermost
        open layer around that op back into its box. Raises FluidscopeError for a key
        that names no layer, or an op that belongs to no layer of several ops."""
        where = "GraphView.toggle_group"
        node = NodeKey.find(key)
        if node is not None and node.kind == "group":
            self._set_layers(self._layers.toggle(group_layer(self._desc, node, where)))
            return
        if node is not None and node.kind == "op":
            block, idx = op_position(self._desc, node, where)
            scope = self._layers.layer_to_fold(self._desc.blocks[block], idx)
            if scope is None:
                op = self._desc.blocks[block].ops[idx]
                raise FluidscopeError(
                    f"{where}: op {idx} ({op.type}) of block {block} belongs "
                    "to no layer of several ops, so there is no box to fold it into")
            self._set_layers(self._layers.collapse(scope))
            return
        raise FluidscopeError(f"{where}: expected a layer's box such as 'group:0:/fc_0/' or "
                              f"an op such as 'op:0:3', got {key!r}")

    def _set_layers(self, layers):
        """Set the three layer traits and re-render once."""
        self._rendering = True
        try:
            with self.hold_sync():
                self.collapse_all = layers.collapse_all
                self.collapsed = list(layers.collapsed)
                self.expanded = list(layers.expanded)
                self.refresh()
        finally:
            self._rendering = False



__all__ = ["FoldsLayers"]
