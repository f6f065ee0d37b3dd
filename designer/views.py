"""Variable, Parameter and Operator: views of one VarDesc / OpDesc of a Block.

They hold only (block, name) or (block, desc) and read everything else from the
protobuf, so they are never stale and never a second copy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from fluidscope.engine.ir import descs, registry
from fluidscope.engine.ir.dtypes import dtype_name
from fluidscope.engine.errors import SchemaError

if TYPE_CHECKING:  # the annotation only: framework imports this module
    from .framework import Block


# ----------------------------------------------------------------- Variable
class Variable:
    """A view of one VarDesc of a block, by name."""

    def __init__(self, block: "Block", name: str):
        self.block, self.name = block, name

    @property
    def desc(self):
        return self.block._var_desc(self.name)

    @property
    def type(self):
        return self.desc.type.type

    @property
    def shape(self):
        t = self.desc.type
        return tuple(t.dense_tensor.tensor.dims) if t.HasField("dense_tensor") else ()

    @property
    def dtype(self):
        """The element type as a name, e.g. 'float32'."""
        t = self.desc.type
        return dtype_name(t.dense_tensor.tensor.data_type) if t.HasField("dense_tensor") else None

    @property
    def lod_level(self):
        t = self.desc.type
        return t.dense_tensor.legacy_lod_level if t.HasField("dense_tensor") else 0

    def _flag(name):  # noqa: N805  (property factory used in the class body)
        def get(self):
            return getattr(self.desc, name)

        def set_(self, value):
            setattr(self.desc, name, bool(value))
            self.block.program.bump_revision()
        return property(get, set_)

    persistable = _flag("persistable")
    stop_gradient = _flag("stop_gradient")
    is_parameter = _flag("is_parameter")
    del _flag

    @property
    def is_data(self):
        return self.desc.need_check_feed

    def __repr__(self):
        shape = [d for d in self.shape]
        kind = "Parameter" if self.is_parameter else "Variable"
        return f"{kind}({self.name!r}, shape={shape}, dtype={self.dtype}, lod_level={self.lod_level})"

    def __eq__(self, other):
        return isinstance(other, Variable) and other.block is self.block and other.name == self.name

    def __hash__(self):
        return hash((id(self.block), self.name))

    # Arithmetic builds ops in the variable's program, as Paddle's static mode does.
    def _binary(self, other, op, reverse=False):
        from .layers import math_ops  # layers depend on framework, not the reverse
        return math_ops.binary(self, other, op, reverse)

    def __add__(self, other):
        return self._binary(other, "elementwise_add")

    def __radd__(self, other):
        return self._binary(other, "elementwise_add", True)

    def __sub__(self, other):
        return self._binary(other, "elementwise_sub")

    def __rsub__(self, other):
        return self._binary(other, "elementwise_sub", True)

    def __mul__(self, other):
        return self._binary(other, "elementwise_mul")

    def __rmul__(self, other):
        return self._binary(other, "elementwise_mul", True)

    def __truediv__(self, other):
        return self._binary(other, "elementwise_div")

    def __rtruediv__(self, other):
        return self._binary(other, "elementwise_div", True)

    def __neg__(self):
        from .layers import math_ops
        return math_ops.scale(self, scale=-1.0)


class Parameter(Variable):
    """A trainable, persistable variable of the global block."""

    @property
    def trainable(self):
        return not self.desc.stop_gradient

    @trainable.setter
    def trainable(self, value):
        self.stop_gradient = not value


# ----------------------------------------------------------------- Operator
class Operator:
    """A view of one OpDesc (by position in its block)."""

    def __init__(self, block: "Block", desc):
        self.block, self.desc = block, desc

    @property
    def type(self):
        return self.desc.type

    @property
    def idx(self):
        return next(i for i, op in enumerate(self.block.desc.ops) if op is self.desc or op == self.desc)

    def input(self, slot):
        return next((list(v.arguments) for v in self.desc.inputs if v.parameter == slot), [])

    def output(self, slot):
        return next((list(v.arguments) for v in self.desc.outputs if v.parameter == slot), [])

    @property
    def input_names(self):
        return [v.parameter for v in self.desc.inputs]

    @property
    def output_names(self):
        return [v.parameter for v in self.desc.outputs]

    @property
    def input_arg_names(self):
        return [n for v in self.desc.inputs for n in v.arguments]

    @property
    def output_arg_names(self):
        return [n for v in self.desc.outputs for n in v.arguments]

    def attr(self, name):
        for a in self.desc.attrs:
            if a.name == name:
                return registry.attr_from_proto(a)
        spec = registry.get(self.type).attr_spec(name)
        if spec is None:
            raise SchemaError(f"op {self.type} has no attribute '{name}'")
        return spec.default

    def has_attr(self, name):
        return any(a.name == name for a in self.desc.attrs)

    def all_attrs(self):
        return {a.name: registry.attr_from_proto(a) for a in self.desc.attrs}

    def _set_attr(self, name, value):
        opdef = registry.get(self.type)
        value = opdef.parse_attrs({name: value})[name]  # unknown names raise here
        spec = opdef.attr_spec(name)
        descs.set_attr(self.desc, name, spec.type, value)
        self.block.program.bump_revision()

    def __repr__(self):
        ins = ", ".join(f"{v.parameter}={list(v.arguments)}" for v in self.desc.inputs)
        outs = ", ".join(f"{v.parameter}={list(v.arguments)}" for v in self.desc.outputs)
        return f"{{{outs}}} = {self.type}({ins})"
