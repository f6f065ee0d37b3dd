"""recording's fast binder gives what inspect's bind + _flat_arguments give (names, values
and their order), and steps aside (None) for every call inspect would refuse or that
its plain-parameter rule does not cover."""
import inspect

import pytest

import fluidscope.designer as fd
from fluidscope.designer import recording


# Each returns what it received, so a test can check that the bound arguments, passed
# back as keywords (what ``recorded`` does), reach the function as the original call did.
def plain(input, size, act=None, name=None):
    return {"input": input, "size": size, "act": act, "name": name}


def catch_all(x, axis=-1, name=None, **attrs):
    return {"x": x, "axis": axis, "name": name, "attrs": attrs}


def keyword_only(x, *, scale=1.0):
    return {"x": x, "scale": scale}


def star_args(*xs, name=None):
    return {"xs": xs, "name": name}


CALLS = [
    (plain, (1, 2), {}), (plain, (1,), {"size": 2, "name": "n"}), (plain, (), {"name": "n", "size": 2, "input": 1}),
    (plain, (1, 2, "relu", "n"), {}), (catch_all, (1,), {"beta": 2, "axis": 0, "alpha": 1}),
    (catch_all, (), {"x": 1, "attrs": {"a": 1}}), (catch_all, (1, 2, "n"), {}),
]


@pytest.mark.parametrize("fn,args,kwargs", CALLS)
def test_fast_bind_equals_inspects_bind_in_order(fn, args, kwargs):
    signature = inspect.signature(fn)
    want = recording._flat_arguments(signature, signature.bind(*args, **kwargs))
    got = recording._fast_binder(signature)(args, kwargs)
    assert got == want and list(got) == list(want)
    assert fn(**got) == fn(*args, **kwargs)


@pytest.mark.parametrize("fn,args,kwargs", [
    (plain, (1, 2, 3, 4, 5), {}), (plain, (1,), {"input": 1, "size": 2}), (plain, (1,), {}),
    (plain, (1, 2), {"nope": 3}), (catch_all, (), {"axis": 1}),
])
def test_fast_bind_steps_aside_where_inspect_raises(fn, args, kwargs):
    signature = inspect.signature(fn)
    with pytest.raises(TypeError):
        signature.bind(*args, **kwargs)
    assert recording._fast_binder(signature)(args, kwargs) is None


def test_signatures_beyond_plain_parameters_have_no_fast_binder():
    assert recording._fast_binder(inspect.signature(keyword_only)) is None
    assert recording._fast_binder(inspect.signature(star_args)) is None


def test_recorded_layer_calls_keep_their_arguments_and_a_wrong_call_still_raises():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 4])
        y = fd.fc(x, 3, act="relu")
        fd.softmax(y, axis=1)
        with pytest.raises(TypeError, match="size"):
            fd.fc(x)
    calls = [(c.layer, c.arguments) for c in main.layer_calls]
    assert calls[1] == ("fc", {"input": x, "size": 3, "act": "relu"})
    assert calls[2] == ("softmax", {"x": y, "axis": 1})  # a ** catch-all entry, flattened
    assert list(calls[1][1]) == ["input", "size", "act"]
