"""fluidscope.engine: the runtime — IR, op registry, kernels, executor, debugger, files.

Depends on nothing else in fluidscope. Sub-packages, lowest first:

* ``ir``: the ProgramDesc protobuf, the op registry, op roles, variable naming and
  lookup, the desc builders, dtypes and structural validation;
* ``kernels``: one module per op family, written once against ``xp``;
* ``runtime``: places, tensors, scopes, the prepared ``BlockPlan``, a ``Run`` of it and
  the frame-driven op interface;
* ``recurrent``: the ``recurrent`` op and its gradient (frame unrolling);
* ``autodiff``: generated backward and the gradient checker;
* ``debug``: the step-through debugger ``Session``;
* ``io``: program and parameter files;
* ``executor``: ``Executor``, the entry point over ``runtime`` and ``debug``.
"""
from . import kernels  # noqa: F401  registers every op with a kernel
from . import recurrent  # noqa: F401  registers recurrent, recurrent_grad
from . import io
from .autodiff.backward import append_backward_desc
from .debug.session import Session
from .errors import (DesignError, ExecutionError, FluidscopeError, LoadError, SchemaError,
                     ShapeError, ValidationError)
from .executor import Executor
from .runtime.nan_guard import NonFiniteError
from .ir import registry
from .ir.proto import framework_pb2
from .ir.roles import OpRole
from .ir.validate import validate_program
from .runtime.place import CPUPlace, CUDAPlace, cuda_available
from .runtime.run import Run
from .runtime.scope import Scope, global_scope, scope_guard
from .runtime.tensor import LoDTensor, create_lod_tensor
from .runtime.heap import heap_policy, set_heap_policy
from .runtime.threads import get_num_threads, set_num_threads

__all__ = [
    "io", "registry", "validate_program", "append_backward_desc", "Executor", "Run", "Session",
    "OpRole", "CPUPlace", "CUDAPlace", "cuda_available", "Scope", "global_scope", "scope_guard",
    "LoDTensor", "create_lod_tensor", "framework_pb2", "set_num_threads", "get_num_threads",
    "set_heap_policy", "heap_policy",
    "FluidscopeError", "SchemaError", "ShapeError", "DesignError", "ExecutionError",
    "LoadError", "ValidationError", "NonFiniteError",
]
