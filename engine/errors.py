"""One exception family for everything fluidscope raises on purpose.

Messages are written for the person at the notebook: they name the layer, the op,
the slot and the shapes involved, and say what to change.
"""


class FluidscopeError(Exception):
    """Base of every error fluidscope raises deliberately."""


class SchemaError(FluidscopeError):
    """An op description breaks its registry record (unknown slot, bad attribute)."""


class ShapeError(FluidscopeError):
    """Shape inference found inputs that cannot go together."""


class DesignError(FluidscopeError):
    """A mistake while building a program in the designer (layer-level message)."""


class ExecutionError(FluidscopeError):
    """An op failed while the executor ran it (names block, op index, op and slots)."""


class LoadError(FluidscopeError):
    """A program or parameter file could not be read (says which file and where)."""


class ValidationError(FluidscopeError):
    """A ProgramDesc breaks a structural rule (undeclared var, bad block parent...)."""
