"""The edit actions of ``DesignCanvas``: one method per gesture (PROTOCOL.md's table).

Each method edits ``self.design`` through its public edit methods (several edits of
one gesture inside one ``transaction()``, so a gesture is one undo step), then
publishes. A refused edit raises DesignError before anything changed; through
``receive`` it becomes the ``message`` line. Connections are checked against the
port rule of ``ports.py`` first, the same rule the front end applies while dragging.
"""
from __future__ import annotations

from fluidscope.designer import layer_specs
from fluidscope.designer.design import clipboard
from fluidscope.designer.design.document import GROUP, MEMORY, MIXED, STEP_INPUT
from fluidscope.engine import DesignError

from ..base import action
from . import ports
from .edges import design_edges
from .folds import first_of
from .pins import pin_drawn
from .starters import starting_attrs

_JSON = (str, int, float, bool, list, dict, None)
_PASTE_OFFSET = 40.0


class EditActions:
    """Mixed into DesignCanvas; uses its ``_design``, ``build``, ``_publish``."""

    # ---------------------------------------------------------------- nodes
    @action(layer=str, x=float, y=float, group=(str, None), source=(str, None),
            source_index=int, attrs=(dict, None))
    def add_node(self, layer, x, y, group=None, source=None, source_index=0, attrs=None):
        """Add ``layer`` at (x, y) (inside ``group``'s step), its required attributes
        filled with starting values (``attrs`` overrides), and feed ``source`` into its
        first input that accepts it. Selects it; returns its id."""
        design = self._design
        with design.transaction():
            node_id = design.add(layer, group=group, **starting_attrs(layer, attrs))
            design.move(node_id, x, y)
            if source is not None:
                self._feed_first_slot(node_id, source, source_index)
        self._publish()
        self.select([node_id])
        return node_id

    def _feed_first_slot(self, node_id, source, index):
        node = self._design.node(node_id)
        if node.layer == MIXED:
            self._design.add_row(node_id, "full_matrix_projection",
                                 inputs={"input": (source, index)})
            return
        if node.layer == GROUP:
            self._design.add_step_input(node_id, (source, index))
            return
        kind = ports.output_kind(self._variable(source, index))
        for spec in ports.input_slots(node):
            if kind is None or kind in ports.accepts(spec.kind):
                return self._connect(source, index, node_id, f"in:{spec.name}")
        raise DesignError(f"add_node: no input of '{node_id}' ({node.layer}) takes '{source}'"
                          f" ({kind})")

    @action(ids=list)
    def remove(self, ids):
        """Delete nodes (a zone with its step) and every edge to them; the other layers of
        their graphs stay where they are drawn (``pins.py``)."""
        with self._design.transaction():
            pin_drawn(self, ids)
            for node_id in ids:
                if self._design.document.locate(node_id) is not None:
                    self._design.remove(node_id)
        self._collapsed &= self._design.document.ids()
        self._publish()

    @action(positions=dict, layout=bool)
    def move(self, positions, layout=False):
        """Positions {id: [x, y]} at the end of a drag (or of an automatic layout, with
        ``layout``). Not an undo step; saved a little later."""
        for node_id, xy in positions.items():
            if not (isinstance(xy, (list, tuple)) and len(xy) == 2
                    and all(isinstance(v, (int, float)) for v in xy)):
                raise DesignError(f"move: position of '{node_id}' must be [x, y], got {xy!r}")
        for node_id, (x, y) in positions.items():
            self._design.move(first_of(node_id) or node_id, x, y)  # a fold: its first layer
        self._publish(rebuild=False)

    # ------------------------------------------------------------- edges
    @action(source=str, source_index=int, target=str, handle=str)
    def connect(self, source, source_index, target, handle):
        """Feed output ``source_index`` of ``source`` into the target handle ``handle``
        (``in:<slot>``, ``row:<k>:<slot>``; a zone's ``in:<step input or memory>`` and
        ``out:<k>``). From outside a zone into a node of its step, an in-link is made."""
        with self._design.transaction():
            self._connect(source, source_index, target, handle)
        self._publish()

    def _connect(self, source, index, target, handle):
        design, src = self._design, (source, index)
        node, _, owner = self._locate(target)
        self._locate(source)
        if node.layer == GROUP and handle.startswith("out:"):
            outputs, slot = list(node.body.outputs), handle[4:]
            if slot.isdigit() and int(slot) < len(outputs):
                outputs[int(slot)] = src          # onto an out-link: it outputs this now
            else:
                outputs.append(src)               # onto "out:new": one more out-link
            return design.set_outputs(target, outputs)
        if node.layer == GROUP and handle.startswith("in:"):
            inner = self._locate(handle[3:])[0]
            node, handle = inner, "in:outer" if inner.layer == STEP_INPUT else "in:boot_layer"
            target = inner.id
        spec, row = ports.slot_spec(node, handle)
        if node.layer == STEP_INPUT:
            return design.set_step_input(target, src=src)
        if node.layer == MEMORY:
            if spec.name == "boot_layer":
                return design.boot_memory(target, src)
            return self._link(target, source, index)
        target_zone, source_zone = (owner.id if owner else None), self._owner_id(source)
        if source_zone == target_zone:
            ports.check_connection(node, handle, source, self._variable(source, index))
        elif target_zone is not None and source_zone == self._owner_id(target_zone):
            src = (design.add_step_input(target_zone, src), 0)  # in: one step of it
        elif source_zone is not None and target_zone == self._owner_id(source_zone):
            src = self._out_link(source_zone, src)              # out: every step of it
        else:
            raise DesignError(f"connect: '{source}' and '{target}' are not in one zone nor "
                              "on the two sides of one zone's edge")
        if row is not None:
            return design.set_row(target, row, inputs={spec.name: src})
        held = node.inputs.get(spec.name)
        if spec.many and held is not None and not isinstance(held, list):
            return design.connect([held, src], target, spec.name)  # a second wire adds
        return design.connect(src, target, spec.name)

    @action(edge=str)
    def disconnect(self, edge):
        """Remove one edge, by its id in ``view["edges"]``; the layers of its graph stay
        where they are drawn (``pins.py``)."""
        found = next((e for e in design_edges(self._design.document) if e.id == edge), None)
        if found is None:
            raise DesignError(f"disconnect: no edge {edge!r}")
        design = self._design
        with design.transaction():
            pin_drawn(self, [found.target])
            if found.kind in ("inlink", "static"):
                design.remove(found.target)  # the in-link is its step input node
            elif found.kind == "boot":
                design.boot_memory(found.target, None)
            elif found.kind == "memory":
                raise DesignError(f"disconnect: memory '{found.target}' must remember a node; "
                                  "link it to another one or remove the memory")
            elif found.kind == "outlink":
                outputs = design.node(found.target).body.outputs
                j = int(found.target_handle.split(":")[1])
                design.set_outputs(found.target, [r for k, r in enumerate(outputs) if k != j])
            elif found.row is not None:
                self._drop_row_input(found.target, found.row, found.slot)
            else:
                design.disconnect(found.target, found.slot, found.position)
        self._publish()

    def _drop_row_input(self, mixed, index, slot):
        row = self._design.node(mixed).rows[index]
        inputs = {s: r for s, r in row.inputs.items() if s != slot}
        self._design.remove_row(mixed, index)
        self._design.add_row(mixed, row.kind, inputs=inputs, index=index, **row.attrs)

    # -------------------------------------------------------- attributes
    @action(node=str, name=str, value=_JSON)
    def set_attr(self, node, name, value):
        """Set one attribute (JSON value; None: back to the default). ``id`` renames the
        node; a step input's ``static`` makes it a StaticInput."""
        found = self._locate(node)[0]
        if name == "id":
            self._design.rename(node, value)
            self.selected = [value if s == node else s for s in self.selected]
        elif found.layer == STEP_INPUT and name == "static":
            self._design.set_step_input(node, static=bool(value))
        else:
            self._design.set(node, **{name: value})
        self._publish()

    @action(node=(str, None))
    def set_loss(self, node=None):
        """Mark the scalar the optimizer minimises (None: no loss)."""
        self._design.set_loss(node)
        self._publish()

    @action(kind=(str, None), settings=dict)
    def set_optimizer(self, kind, settings=None):
        """The optimizer (SGD, Momentum, Adam) and its settings ({"learning_rate": ...});
        None removes it."""
        self._design.set_optimizer(kind, **(settings or {}))
        self._publish()

    @action(node=str, kind=str)
    def add_row(self, node, kind):
        """Add a projection/operator row (empty inputs) to a mixed_layer; ``kind`` may
        leave out ``_projection`` ("full_matrix")."""
        kind = _row_kind(kind)
        self._design.add_row(node, kind, **starting_attrs(kind))
        self._publish()

    @action(node=str, index=int, name=str, value=_JSON)
    def set_row(self, node, index, name, value):
        """Set a row's attribute; ``kind`` changes the row's kind (inputs kept where the
        new kind has the slot)."""
        design = self._design
        if name != "kind":
            design.set_row(node, index, **{name: value})
        else:
            row = self._locate(node)[0].rows[index]
            value = _row_kind(value)
            spec = layer_specs.get(value)
            inputs = {s: r for s, r in row.inputs.items() if spec.input(s)}
            attrs = {k: v for k, v in row.attrs.items() if spec.attr(k)}
            with design.transaction():
                design.remove_row(node, index)
                design.add_row(node, value, inputs=inputs, index=index,
                               **starting_attrs(value, attrs))
        self._publish()

    @action(node=str, index=int)
    def remove_row(self, node, index):
        self._design.remove_row(node, index)
        self._publish()

    @action(node=str, index=int, to=int)
    def move_row(self, node, index, to):
        self._design.move_row(node, index, to)
        self._publish()

    # ----------------------------------------------------------- clipboard
    @action(ids=list)
    def copy(self, ids):
        """Copy nodes to the canvas's clipboard (a snapshot). A zone's step inputs and
        memories in a box selection are left out (they belong to their zone)."""
        self.clipboard = clipboard.copy(self._design, self._copyable(ids))
        self.status = f"copied {len(self.clipboard.nodes)} node(s)"

    @action(x=(float, None), y=(float, None))
    def paste(self, x=None, y=None):
        """Paste the clipboard at (x, y), into the zone being shown. Returns
        {copied id: new id}."""
        if self.clipboard is None:
            raise DesignError("paste: nothing copied")
        group = self._path[-1] if self._path else None
        renamed = clipboard.paste(self._design, self.clipboard, x, y, group=group)
        return self._after_paste(renamed)

    @action(ids=list)
    def duplicate(self, ids):
        """Copy and paste at once, next to the originals, in their graph."""
        clip = clipboard.copy(self._design, self._copyable(ids))
        owner = self._owner_id(clip.ids[0])
        renamed = clipboard.paste(self._design, clip, group=owner)
        return self._after_paste(renamed)

    def _after_paste(self, renamed):
        self._publish()
        tops = [new for old, new in renamed.items() if self._owner_id(new) ==
                self._owner_id(next(iter(renamed.values())))]
        self.select(tops)
        self.status = f"pasted {len(tops)} node(s)"
        return renamed

    def _copyable(self, ids):
        doc = self._design.document
        kept = [i for i in ids if (found := doc.locate(i)) is None
                or found[0].layer not in (STEP_INPUT, MEMORY)]
        return kept or ids  # nothing else selected: copy() says why it cannot

    # ----------------------------------------------------------- helpers
    def _locate(self, node_id):
        found = self._design.document.locate(node_id)
        if found is None:
            raise DesignError(f"no node '{node_id}' in the design")
        return found

    def _owner_id(self, node_id):
        owner = self._locate(node_id)[2]
        return owner.id if owner is not None else None

    def _group_node(self, group):
        node = self._locate(group)[0]
        if node.layer != GROUP:
            raise DesignError(f"node '{group}' is a {node.layer}, not a recurrent_group")
        return node

    def _variable(self, node_id, index=0):
        """The Variable the last build made for an output (None if not built)."""
        outputs = self.build.outputs.get(node_id) if self.build is not None else None
        return outputs[index] if outputs and index < len(outputs) else None


def _row_kind(kind):
    """A row kind as the catalog names it ("full_matrix" -> "full_matrix_projection");
    DesignError for a value that is no name (``set_row``'s value is any JSON)."""
    if not isinstance(kind, str):
        raise DesignError(f"a row kind is a layer name such as 'full_matrix_projection', "
                          f"got {kind!r}")
    if not _is_layer(kind) and _is_layer(kind + "_projection"):
        return kind + "_projection"
    return kind


def _is_layer(name):
    try:
        layer_specs.get(name)
    except DesignError:
        return False
    return True
