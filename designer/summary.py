"""``fd.summary(program)``: a model's layers with output shapes, parameters and MACs.

What ``paddle.summary`` and Keras' ``model.summary()`` give, read from the program
itself (a designer Program or a bare ProgramDesc, a loaded Paddle model included): the
forward ops of block 0, grouped by the layer that made them (``op_namescope``; an op
made outside any layer is a row of its own), or one row per op with ``by="op"``.

Per row: the output shape (the layer's last output that an op outside the layer reads,
else its last op's first output), the parameters it reads first (a shared parameter is
counted once, at its first use: persistable inputs, trainable when declared a parameter
that takes gradients; in a program Paddle saved, which declares none, any that takes
gradients), their bytes, and the multiply-accumulate count of its ops (rules
in ``designer.macs``). Unknown dims (``-1``) count as ``batch_size`` in MACs and are
shown as ``-1``. Backward and optimizer ops are left out: they are not the model.
"""
from __future__ import annotations

from dataclasses import dataclass

from fluidscope.engine import registry
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir.dtypes import to_numpy_dtype
from fluidscope.engine.ir.lookup import visible_vars
from fluidscope.engine.ir.roles import FORWARD, phase_of

from .macs import SUB_BLOCK_ATTRS, counted, op_macs

_HOLDER_OPS = ("feed", "fetch")
_COLUMNS = ("Layer (type)", "Output shape", "Params", "Bytes", "MACs")


@dataclass(frozen=True)
class SummaryRow:
    """One layer (or op) of a summary. ``name``: the layer's namescope without slashes
    ("fc_0", "encoder/fc_0"), or for an op its index under its layer ("fc_0/#3", "#5");
    ``op_types``: its ops' types in order; ``op_indices``: their indices in block 0."""
    name: str
    op_types: tuple
    op_indices: tuple
    output_shape: tuple
    params: int
    trainable_params: int
    bytes: int
    macs: int

    @property
    def kind(self) -> str:
        """What the type column shows: "mul+elementwise_add+relu" for a layer's ops."""
        return "+".join(dict.fromkeys(self.op_types))


class ModelSummary:
    """The table ``summary`` returns: ``rows`` (SummaryRow, in program order), totals
    (``total_params``, ``trainable_params``, ``total_bytes``, ``total_macs``),
    ``batch_size``, ``by`` and ``uncounted`` (op types counted as 0 MACs by the default
    rule). ``str()`` prints it as paddle.summary does; ``to_dict()`` is plain JSON data."""

    def __init__(self, rows, batch_size, by, uncounted):
        self.rows, self.batch_size, self.by = list(rows), batch_size, by
        self.uncounted = tuple(sorted(uncounted))
        self.total_params = sum(r.params for r in self.rows)
        self.trainable_params = sum(r.trainable_params for r in self.rows)
        self.total_bytes = sum(r.bytes for r in self.rows)
        self.total_macs = sum(r.macs for r in self.rows)

    @property
    def columns(self) -> tuple:
        return _COLUMNS

    def table(self) -> list:
        """The cells of every row as strings, in ``columns`` order."""
        return [[f"{r.name} ({r.kind})", _shape_text(r.output_shape), f"{r.params:,}",
                 f"{r.bytes:,}", f"{r.macs:,}"] for r in self.rows]

    def totals(self) -> dict:
        """The figures printed under the table, label -> text."""
        return {"Total params": f"{self.total_params:,}",
                "Trainable params": f"{self.trainable_params:,}",
                "Non-trainable params": f"{self.total_params - self.trainable_params:,}",
                "Params size": f"{self.total_bytes:,} bytes{_binary_size(self.total_bytes)}",
                "Total MACs": f"{self.total_macs:,} (batch size {self.batch_size})"}

    def to_dict(self) -> dict:
        return {"columns": list(self.columns), "rows": self.table(), "totals": self.totals(),
                "by": self.by, "batch_size": self.batch_size, "uncounted": list(self.uncounted)}

    def __str__(self):
        cells = [list(self.columns)] + self.table()
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]

        def line(row):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip()

        rule = "-" * len(line(cells[0]))
        double = "=" * len(rule)
        body = [rule, line(cells[0]), double] + [line(r) for r in cells[1:]] + [double]
        body += [f"{k}: {v}" for k, v in self.totals().items()]
        if self.uncounted:
            body.append("0 MACs by rule (no multiply-accumulate): " + ", ".join(self.uncounted))
        return "\n".join(body + [rule])

    def _repr_pretty_(self, printer, cycle):
        """IPython shows the table itself, as paddle.summary prints it."""
        printer.text(str(self))

    def __repr__(self):
        return (f"ModelSummary({len(self.rows)} rows, {self.total_params:,} params, "
                f"{self.total_macs:,} MACs)")


def summary(program, batch_size=1, by="layer") -> ModelSummary:
    """The summary of ``program``'s model (a designer Program or a ProgramDesc).

    batch_size: what an unknown (-1) dim counts as in MACs. by: "layer" (one row per
    ``op_namescope``) or "op" (one row per forward op)."""
    if by not in ("layer", "op"):
        raise FluidscopeError(f"summary: by must be 'layer' or 'op', got {by!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise FluidscopeError(
            f"summary: batch_size must be a whole number >= 1, got {batch_size!r}")
    desc = getattr(program, "desc", program)
    if not hasattr(desc, "blocks"):
        raise FluidscopeError(f"summary: expected a Program or ProgramDesc, got "
                              f"{type(program).__name__}")
    reader = _ProgramReader(desc, batch_size)
    ops = [(i, op) for i, op in enumerate(desc.blocks[0].ops)
           if op.type not in _HOLDER_OPS and phase_of(op) == FORWARD]
    groups = {}
    for i, op in ops:
        scope = _namescope(op)
        key = ("op", i) if by == "op" or scope == "/" else ("layer", scope)
        groups.setdefault(key, []).append((i, op))
    read_by = {}  # var name -> indices of the forward ops that read it
    for i, op in ops:
        for name in _arguments(op.inputs):
            read_by.setdefault(name, []).append(i)
    seen_params, rows = set(), []
    for key, members in groups.items():
        rows.append(reader.row(key, members, read_by, seen_params))
    return ModelSummary(rows, batch_size, by, reader.uncounted)


class _ProgramReader:
    """Shapes, parameters and MACs read from the VarDescs of a ProgramDesc."""

    def __init__(self, desc, batch_size):
        self.desc, self.batch_size = desc, batch_size
        self.uncounted = set()
        self._vars = {}
        # Programs Paddle saved do not mark parameters (is_parameter is never set there):
        # then every persistable input that takes gradients counts as trainable.
        self.marks_parameters = any(v.is_parameter for b in desc.blocks for v in b.vars)

    def var(self, block_idx, name):
        table = self._vars.get(block_idx)
        if table is None:
            table = self._vars[block_idx] = visible_vars(self.desc, block_idx)
        return table.get(name)

    def shape(self, block_idx, name, known=False):
        """Declared dims of ``name`` (None: not a dense tensor); -1 -> batch_size when
        ``known``."""
        v = self.var(block_idx, name)
        if v is None or not v.type.HasField("dense_tensor"):
            return None
        dims = tuple(v.type.dense_tensor.tensor.dims)
        return tuple(self.batch_size if d < 0 else d for d in dims) if known else dims

    def macs(self, block_idx, op) -> int:
        if not registry.has(op.type):
            self.uncounted.add(op.type)
            return 0
        attrs = registry.get(op.type).parse_attrs(
            {a.name: registry.attr_from_proto(a) for a in op.attrs}, check=False)
        slots = {v.parameter: list(v.arguments) for v in list(op.inputs) + list(op.outputs)}

        def shape_of(slot, i=0):
            names = slots.get(slot) or []
            return self.shape(block_idx, names[i], known=True) if i < len(names) else None

        inner = None
        for name in SUB_BLOCK_ATTRS:
            if name in attrs:
                sub = attrs[name]
                sub = sub if isinstance(sub, int) else getattr(sub, "idx", sub)
                inner = sum(self.macs(sub, o) for o in self.desc.blocks[sub].ops
                            if o.type not in _HOLDER_OPS)
        if inner is None and not counted(op.type):
            self.uncounted.add(op.type)
        try:
            return op_macs(op.type, shape_of, attrs, inner)
        except (TypeError, IndexError) as exc:  # an undeclared shape on a counted slot
            raise FluidscopeError(f"summary: op {op.type} has a slot without a declared "
                                  f"shape, so its MACs cannot be counted ({exc})") from exc

    def params_of(self, members, seen):
        """(count, trainable count, bytes) of the persistable inputs ``members`` read
        first (adding them to ``seen``)."""
        count = trainable = nbytes = 0
        for _, op in members:
            for name in _arguments(op.inputs):
                v = self.var(0, name)
                if name in seen or v is None or not v.persistable \
                        or not v.type.HasField("dense_tensor"):
                    continue
                seen.add(name)
                n = self.shape(0, name, known=True)
                values = 1
                for d in n:
                    values *= d
                count += values
                takes_gradients = not v.stop_gradient and (v.is_parameter
                                                            or not self.marks_parameters)
                trainable += values if takes_gradients else 0
                nbytes += values * to_numpy_dtype(v.type.dense_tensor.tensor.data_type).itemsize
        return count, trainable, nbytes

    def row(self, key, members, read_by, seen) -> SummaryRow:
        indices = {i for i, _ in members}
        output = None
        for i, op in members:  # the last output read outside the layer
            for name in _arguments(op.outputs):
                if any(j not in indices for j in read_by.get(name, ())):
                    output = name
        if output is None:
            last = members[-1][1]
            opdef = registry.get(last.type) if registry.has(last.type) else None
            first = opdef.outputs[0].name if opdef and opdef.outputs else None
            named = [list(v.arguments) for v in last.outputs if v.parameter == first]
            names = (named[0] if named else []) or _arguments(last.outputs)
            output = names[0] if names else None
        count, trainable, nbytes = self.params_of(members, seen)
        if key[0] == "layer":
            name = key[1].strip("/")
        else:  # one op: its index, under the layer it belongs to
            layer = _namescope(members[0][1]).strip("/")
            name = f"{layer}/#{members[0][0]}" if layer else f"#{members[0][0]}"
        shape = self.shape(0, output) if output else None
        return SummaryRow(name, tuple(op.type for _, op in members), tuple(sorted(indices)),
                          shape if shape is not None else (), count, trainable, nbytes,
                          sum(self.macs(0, op) for _, op in members))


def _namescope(op) -> str:
    return next((a.s for a in op.attrs if a.name == "op_namescope"), "") or "/"


def _arguments(slots) -> list:
    return [n for v in slots for n in v.arguments if n != "@EMPTY@"]


def _binary_size(nbytes) -> str:
    """" (5.62 KiB)" for 5,760 bytes; "" under 1 KiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f" ({nbytes / scale:.2f} {unit})"
    return ""


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


__all__ = ["summary", "ModelSummary", "SummaryRow"]
