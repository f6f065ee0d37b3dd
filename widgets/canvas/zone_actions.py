"""The zone actions of ``DesignCanvas``: recurrent groups, their in-links, memories, out-links.

A zone is a recurrent_group drawn as a frame around its step. These methods wrap the
Design's group edits; a memory takes the width of the node it remembers (the two must
agree for the step to build), so linking never leaves a size to fix by hand.
"""
from __future__ import annotations

from fluidscope.designer.design.document import MEMORY, Ref

from ..base import action
from .starters import starting_attrs


class ZoneActions:
    """Mixed into DesignCanvas; uses its ``_design``, ``build``, ``_publish``."""

    # ----------------------------------------------------------- zones
    @action(ids=list)
    def group(self, ids):
        """Turn a selection into a recurrent_group (in-links and out-links inferred)."""
        group_id = self._design.group(ids)
        self._publish()
        self.select([group_id])
        return group_id

    @action(group=str, source=str, static=bool, source_index=int)
    def add_step_input(self, group, source, static=False, source_index=0):
        """An in-link of the zone (``static``: a StaticInput). Returns its id."""
        inner = self._design.add_step_input(group, (source, source_index), static=static)
        self._publish()
        return inner

    @action(group=str, size=(int, None), link=(str, None), boot=(str, None))
    def add_memory(self, group, size=None, link=None, boot=None):
        """A memory in the zone. ``size`` defaults to the width of what it remembers (or
        of its boot layer). Returns its id."""
        if size is None:
            size = self._width(link) or self._width(boot) or starting_attrs(MEMORY)["size"]
        with self._design.transaction():
            memory = self._design.add_memory(group, size, boot=boot)
            if link is not None:
                self._link(memory, link, 0)
        self._publish()
        return memory

    @action(memory=str, target=str)
    def link_memory(self, memory, target):
        """The inner node the memory remembers (the dashed edge through time)."""
        with self._design.transaction():
            self._link(memory, target, 0)
        self._publish()

    def _link(self, memory, target, index):
        """Link, and size the memory like what it remembers (they must agree)."""
        self._design.link_memory(memory, (target, index))
        width = self._width(target, index)
        if width and self._design.node(memory).attrs.get("size") != width:
            self._design.set(memory, size=width)

    @action(group=str, source=str, source_index=int)
    def add_output(self, group, source, source_index=0):
        """An out-link of the zone: the inner node ``source``, in every step."""
        outputs = list(self._group_node(group).body.outputs)
        self._design.set_outputs(group, outputs + [(source, source_index)])
        self._publish()

    def _width(self, node_id, index=0):
        """Last dimension of an output (a memory's size): from the last build, else the
        node's ``size`` attribute (a zone's step does not build before it has an
        out-link, so its nodes have no shapes yet), else None."""
        if node_id is None:
            return None
        shapes = (self.build.shapes.get(node_id) if self.build is not None else None) or ()
        shape = shapes[index] if index < len(shapes) else None
        if shape and shape[-1] and shape[-1] > 0:
            return int(shape[-1])
        size = self._locate(node_id)[0].attrs.get("size")
        return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 \
            else None

    def _out_link(self, zone, src):
        """The zone's output (zone id, k) carrying the inner ``src``, made if needed."""
        outputs = list(self._design.node(zone).body.outputs)
        ref = Ref(*src)
        if ref not in outputs:
            self._design.set_outputs(zone, outputs + [ref])
            outputs.append(ref)
        return (zone, outputs.index(ref))
