"""``fetch_list`` given as another iterable than a list (a tuple, a generator, a dict's
keys) fetches every item, in the general path, in the prepared path of a training loop's
later runs and in the debugger; a lone name or Variable is refused with a message that
shows the list to write, not read as its characters."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError


def _program():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3], "float32")
        h = fd.fc(x, 2, act="tanh")
        loss = fd.mean(h)
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, scope, exe, h, loss


FEED = {"x": np.arange(12, dtype=np.float32).reshape(4, 3) / 10}


@pytest.mark.parametrize("kind", ["tuple", "generator", "dict_keys"])
def test_every_item_of_an_iterable_fetch_list_is_fetched_run_after_run(kind):
    main, scope, exe, h, loss = _program()
    names = [h.name, loss.name]

    def fetch_list():
        return {"tuple": lambda: tuple(names), "generator": lambda: (n for n in names),
                "dict_keys": lambda: dict.fromkeys(names).keys()}[kind]()
    for _ in range(3):  # the first run, then the prepared path
        want = exe.run(main, feed=FEED, fetch_list=list(names), scope=scope)
        twin = fd.Scope()  # the parameters and the learning rate as they are now
        for v in main.list_vars():
            if v.persistable:
                twin.var(v.name).get_tensor().set(np.array(scope.find_var(v.name).get_tensor()))
        got = exe.run(main, feed=FEED, fetch_list=fetch_list(), scope=scope)
        assert len(got) == 2 and got[0].shape == (4, 2) and got[1].shape == ()
        # the run before updated the parameters: the same step again from its copy agrees
        again = exe.run(main, feed=FEED, fetch_list=fetch_list(), scope=twin)
        for a, b in zip(got, again):
            np.testing.assert_array_equal(a, b)
        assert not np.array_equal(want[1], got[1])  # a training step ran in between


def test_the_debugger_fetches_every_item_of_a_generator():
    main, scope, exe, h, loss = _program()
    sess = exe.debug(main, feed=FEED, fetch_list=(n for n in [h.name, loss.name]), scope=scope)
    while not sess.finished:
        sess.step()
    got = sess.fetch()
    assert [a.shape for a in got] == [(4, 2), ()]


@pytest.mark.parametrize("lone", ["name", "variable"])
def test_a_lone_name_or_variable_is_refused_with_the_list_to_write(lone):
    main, scope, exe, h, loss = _program()
    item = loss.name if lone == "name" else loss
    with pytest.raises(FluidscopeError, match=rf"fetch_list must be a list of Variables or "
                                              rf"names.*write \['{loss.name}'\]"):
        exe.run(main, feed=FEED, fetch_list=item, scope=scope)
    with pytest.raises(FluidscopeError, match="Executor.debug: fetch_list must be a list"):
        exe.debug(main, feed=FEED, fetch_list=item, scope=scope)


def test_a_fetch_list_that_is_not_iterable_is_refused():
    main, scope, exe, h, loss = _program()
    with pytest.raises(FluidscopeError, match="fetch_list must be a list of Variables or "
                                              "names, got int"):
        exe.run(main, feed=FEED, fetch_list=3, scope=scope)
