"""The canvas actions behind the node context menu, the tuple fields and the key help.

A right-click on a node offers rename, duplicate, delete, collapse (a zone) and, while
a debugger session is linked, run to here (``debug_link.py``); each entry sends one of
these actions or an existing one (``duplicate``, ``remove``, ``toggle_zone``). The
property panel's tuple fields send what the user typed (``set_attr_text``: "3, 3" ->
[3, 3]), read in Python against the layer's spec (``attr_text.py``). ``?`` shows the
canvas's keys (``show_help``), listed here once: the help overlay draws this list.
"""
from __future__ import annotations

import traitlets

from fluidscope.designer.design.document import LINK_SLOT, MEMORY, STEP_INPUT
from fluidscope.engine import DesignError

from ..base import action
from .attr_text import parse_attr_text

# (keys, what they do): the canvas's keys (js/src/canvas/keys.js) and gestures
KEYBOARD_HELP = (
    ("?", "show or hide this help"),
    ("Ctrl+Z / Ctrl+Shift+Z, Ctrl+Y", "undo / redo"),
    ("Ctrl+C / Ctrl+V", "copy the selection / paste it at the pointer"),
    ("Ctrl+D", "duplicate the selection"),
    ("Ctrl+G", "group the selection into a recurrent zone"),
    ("Ctrl+A", "select every node"),
    ("Ctrl+F", "find a layer by name or kind"),
    ("Delete, Backspace", "delete the selection (nodes and wires)"),
    ("Escape", "clear the selection, close a menu"),
    ("Shift+drag", "box select"),
    ("Ctrl+click", "add a node to the selection"),
    ("right-click a node, Shift+F10", "rename, duplicate, delete, collapse, run to here "
                                      "(Up/Down, Enter in the menu)"),
    ("double-click a zone's head", "collapse or expand the zone"),
    ("double-click a folded run", "unfold it (\"fc × 120\" back to its layers)"),
    ("double-click a palette entry", "add that layer in the middle of the view"),
    ("drop a wire on empty canvas", "pick a layer that takes it"),
    ("Enter / Escape in a field", "set the value / take back what was typed"),
)


class MenuActions(traitlets.HasTraits):
    """Mixed into DesignCanvas; uses its ``_design``, ``_publish``, ``set_attr``."""

    help = traitlets.List().tag(sync=True)  # [[keys, what], ...] while the help is shown

    @action(node=str, name=str, text=str)
    def set_attr_text(self, node, name, text):
        """Set attribute ``name`` of ``node`` from typed text, read by the attribute's
        type: ``filter_size`` "5" -> 5, "3, 3" -> [3, 3]; ``padding`` "SAME"; a shape
        "None, 1, 28, 28". An empty field puts the default back."""
        found = self._design.document.locate(node)
        if found is None:
            raise DesignError(f"set_attr_text: no node '{node}'")
        value = parse_attr_text(found[0].layer, name, text, where=f"node '{node}'")
        self._design.set(node, **{name: value})
        self._publish()
        return value

    @action(node=str, name=str)
    def rename(self, node, name):
        """Give ``node`` a new id (its layer name); every wire follows."""
        self.set_attr(node, "id", name)

    @action(memory=str)
    def clear_memory_link(self, memory):
        """Forget which node ``memory`` remembers (the node shows what it now needs)."""
        self._expect(memory, MEMORY, "clear_memory_link")
        if LINK_SLOT in self._design.node(memory).inputs:
            self._design.disconnect(memory, LINK_SLOT)
        self._publish()

    @action(step_input=str)
    def clear_step_source(self, step_input):
        """Leave the in-link ``step_input`` without an outer source (to wire another)."""
        self._expect(step_input, STEP_INPUT, "clear_step_source")
        if "outer" in self._design.node(step_input).inputs:
            self._design.disconnect(step_input, "outer")
        self._publish()

    @action(visible=bool)
    def show_help(self, visible=True):
        """Show the canvas's keys over it (``?``), or hide them."""
        self.help = [list(item) for item in KEYBOARD_HELP] if visible else []

    def _expect(self, node_id, layer, what):
        found = self._design.document.locate(node_id)
        if found is None:
            raise DesignError(f"{what}: no node '{node_id}'")
        if found[0].layer != layer:
            raise DesignError(f"{what}: node '{node_id}' is a {found[0].layer}, not a {layer}")
