"""fluidscope.engine: the runtime — IR, op registry, kernels, executor, backward, files.

Depends on nothing else in fluidscope.
"""
from . import kernels  # noqa: F401  registers every op
from . import io, registry
from .backward import append_backward_desc
from .errors import (DesignError, ExecutionError, FluidscopeError, LoadError, SchemaError,
                     ShapeError, ValidationError)
from .executor import Executor
from .place import CPUPlace, CUDAPlace, cuda_available
from .proto import framework_pb2
from .scope import Scope, global_scope, scope_guard
from .tensor import LoDTensor, create_lod_tensor
from .validate import validate_program

__all__ = [
    "io", "registry", "validate_program", "append_backward_desc", "Executor", "CPUPlace", "CUDAPlace", "cuda_available",
    "Scope", "global_scope", "scope_guard", "LoDTensor", "create_lod_tensor", "framework_pb2",
    "FluidscopeError", "SchemaError", "ShapeError", "DesignError", "ExecutionError",
    "LoadError", "ValidationError",
]
