"""A gradient maker that takes the backward's context still gets it when a decorator made
with ``functools.wraps`` sits in front of it (a user's logging wrapper, mutmut's
trampoline): append_backward reads the maker's own arguments, not the wrapper's
``(*args, **kwargs)``."""
import dataclasses
import functools

import numpy as np

import fluidscope.designer as fd
from fluidscope.engine.ir import registry
from test_recurrent import D, H, _build


def _grads():
    main, startup, out, loss = _build(boot=True)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    lod = [0, 2, 5]
    feed = {"x": fd.LoDTensor(np.linspace(-1, 1, 5 * D).reshape(5, D), [lod]),
            "wt": np.linspace(0.5, -0.5, 5 * H).reshape(5, H),
            "h0": np.linspace(-0.3, 0.3, 2 * H).reshape(2, H)}
    for name in ("w0", "w1", "b"):  # the same parameters in both programs
        shape = np.array(scope.find_var(name).get_tensor()).shape
        scope.find_var(name).get_tensor().set(np.cos(np.arange(np.prod(shape))).reshape(shape))
    return exe.run(main, feed=feed, fetch_list=["w1@GRAD", "x@GRAD", "h0@GRAD"], scope=scope)


def test_a_wrapped_context_taking_maker_still_gets_its_context(monkeypatch):
    opdef = registry.get("recurrent")
    maker, calls = opdef.grad_maker, []

    @functools.wraps(maker)
    def logged(*args, **kwargs):
        calls.append(len(args))
        return maker(*args, **kwargs)

    plain = _grads()
    # the registry's entries are frozen: swap the entry for one with the wrapped maker
    monkeypatch.setitem(registry._OPS, "recurrent", dataclasses.replace(opdef, grad_maker=logged))
    wrapped = _grads()
    assert calls == [2]  # called once, with the op and the backward's context
    for a, b in zip(plain, wrapped):
        np.testing.assert_array_equal(a, b)
