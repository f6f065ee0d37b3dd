"""The record of layer calls a program keeps, so it can come back as a design.

Every layer function with a spec (``catalog.layer_spec``) is wrapped by ``recorded``:
a call made from user code (not from inside another layer) appends a ``LayerCall`` to
``program.layer_calls`` once it returns. The calls a recurrent group's step makes are
recorded into that group's ``body``. The record lives on the Python ``Program`` only;
it is never written into the ProgramDesc, so files and exports are unchanged.

Layers call layers (``lstmemory_group`` calls ``recurrent_group`` and ``matmul``): only
the outermost call is the user's, so only it is recorded.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect

from .callsite import reports_at_user_line


@dataclasses.dataclass
class LayerCall:
    """One layer call: the layer (spec name), the name its helper got, the arguments as
    bound to the function's parameters, what it returned, and for a recurrent group the
    calls of its step."""
    layer: str
    arguments: dict
    helper_name: str | None = None
    output: object = None
    body: list = dataclasses.field(default_factory=list)
    step_args: list = dataclasses.field(default_factory=list)  # a step's argument Variables


# Entries: ("frame", list of LayerCall) where calls are recorded, ("layer", LayerCall)
# while a layer runs (its own layer calls are not the user's).
_STACK: list = []


def _flat_arguments(signature, bound):
    """The call's arguments by name, a ``**attrs`` catch-all's entries as arguments of their
    own (softmax(x, axis=1) records ``axis``, as the layer's spec lists it)."""
    arguments = dict(bound.arguments)
    for name, param in signature.parameters.items():
        if param.kind is param.VAR_KEYWORD and name in arguments:
            arguments.update(arguments.pop(name))
    return arguments


def recorded(fn, spec):
    """``fn`` wrapped to record its user-level calls on the default main program."""
    signature = inspect.signature(fn)
    has_step = "step" in spec.structural
    bind = _fast_binder(signature)

    @reports_at_user_line
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _STACK and _STACK[-1][0] == "layer":
            return fn(*args, **kwargs)
        from .framework import default_main_program
        frame = _STACK[-1][1] if _STACK else default_main_program().layer_calls
        arguments = bind(args, kwargs) if bind is not None else None
        if arguments is not None:  # every parameter takes a keyword: called by keywords
            record = LayerCall(spec.name, arguments)
            call_kwargs = dict(arguments)
            if has_step and "step" in arguments:
                call_kwargs["step"] = _recording_step(arguments["step"], record)
            call_args = ()
        else:
            bound = signature.bind(*args, **kwargs)
            record = LayerCall(spec.name, _flat_arguments(signature, bound))
            if has_step and "step" in bound.arguments:
                bound.arguments["step"] = _recording_step(bound.arguments["step"], record)
            call_args, call_kwargs = bound.args, bound.kwargs
        _STACK.append(("layer", record))
        try:
            out = fn(*call_args, **call_kwargs)
        finally:
            _STACK.pop()
        record.output = out
        frame.append(record)
        return out

    return call


def _fast_binder(signature):
    """``bind(args, kwargs)`` -> what ``_flat_arguments(signature, signature.bind(...))``
    gives, for a signature of plain parameters (and a ``**`` catch-all); None where it
    is not such a signature. The binder returns None for a call it does not take (too
    many positionals, a name given twice or unknown, a required one missing): the
    caller then binds with ``inspect``, which raises its usual TypeError.

    Why: ``Signature.bind`` and ``BoundArguments.args/kwargs`` walk every parameter in
    Python, ~40 us a layer call, 1,000 of them in a cold build of a 1,000-layer design."""
    names, required, catch_all = [], set(), None
    for param in signature.parameters.values():
        if param.kind is param.POSITIONAL_OR_KEYWORD:
            names.append(param.name)
            if param.default is param.empty:
                required.add(param.name)
        elif param.kind is param.VAR_KEYWORD:
            catch_all = param.name
        else:
            return None
    known = frozenset(names)

    def bind(args, kwargs):
        if len(args) > len(names):
            return None
        given = dict(zip(names, args))
        extra = {}
        for key, value in kwargs.items():
            if key in given:
                return None
            if key in known:
                given[key] = value
            elif catch_all is not None:
                extra[key] = value
            else:
                return None
        if not required.issubset(given):
            return None
        arguments = {name: given[name] for name in names if name in given}
        arguments.update(extra)
        return arguments

    return bind


def _recording_step(step, record):
    """The step of a recorded recurrent group: its layer calls go to ``record.body``."""
    @functools.wraps(step)
    def recording_step(*args):
        record.step_args = list(args)
        _STACK.append(("frame", record.body))
        try:
            return step(*args)
        finally:
            _STACK.pop()
    return recording_step


def note_helper(name):
    """Called by LayerHelper: the first helper a recorded layer makes names the layer."""
    if _STACK and _STACK[-1][0] == "layer" and _STACK[-1][1].helper_name is None:
        _STACK[-1][1].helper_name = name


def note_minimize(optimizer, loss, call_arguments):
    """Called by ``Optimizer.minimize``: the loss and the optimizer (type, settings) of a
    user-level call, so the design gets its loss and optimizer back."""
    if not _STACK:
        program = loss.block.program
        program.layer_calls.append(LayerCall("minimize", {"optimizer": optimizer, "loss": loss,
                                                          **call_arguments}))
