"""fluidscope.designer: build programs in Python with Paddle's static-graph names.

    import fluidscope.designer as fd
    x = fd.data("x", [None, 1])
    y = fd.fc(x, size=1)
"""
from fluidscope.engine import (CPUPlace, CUDAPlace, DesignError, Executor, FluidscopeError,
                               LoadError, LoDTensor, Scope, create_lod_tensor, get_num_threads,
                               global_scope, heap_policy, scope_guard, set_heap_policy,
                               set_num_threads)

from . import initializer, io, optimizer, unique_name
from .backward import append_backward, gradients
from .layer_specs import AttrSpec, LayerSpec, SlotSpec, catalog
from .codegen import program_to_python
from .design import Build, Design, design_guard
from .layers.op_node import op_block
from .framework import (Operator, Parameter, Program, Variable, default_main_program,
                        default_startup_program, program_guard)
from .name_scopes import name_scope
from .initializer import Constant, Normal, Uniform, Xavier
from .layers import *  # noqa: F401,F403  (the layer functions)
from .layers import __all__ as _layer_names
from .param_attr import ParamAttr
from .summary import summary

__all__ = [
    "Program", "Variable", "Parameter", "Operator", "program_guard", "default_main_program",
    "default_startup_program", "name_scope", "append_backward", "gradients", "optimizer", "io",
    "initializer", "unique_name", "ParamAttr", "Constant", "Normal", "Uniform", "Xavier",
    "Executor", "CPUPlace", "CUDAPlace", "LoDTensor", "create_lod_tensor", "global_scope",
    "scope_guard", "Scope", "FluidscopeError", "DesignError", "LoadError", "catalog", "LayerSpec", "SlotSpec", "AttrSpec",
    "Design", "Build", "design_guard", "program_to_python", "op_block",
    "summary", "set_num_threads", "get_num_threads", "set_heap_policy", "heap_policy",
] + list(_layer_names)
