"""How a prepared run (runtime.replay) recognises the runs it was prepared for: the fetch
list compared name by name (names or Variables, in a list or a tuple), the feed a
dict of the same names in the same order with arrays of an equal dtype (not only the
same dtype object). Whatever it accepts must give the general path's bytes."""
from collections import OrderedDict

import numpy as np

import fluidscope.designer as fd
import fluidscope.engine.random as fluid_random
from prepared_run_spy import replays  # noqa: F401  (the fixture)

ROWS = 40


def _mlp():
    fluid_random.seed(3)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 6], "float32")
        label = fd.data("label", [None, 1], "int64")
        loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(fd.fc(x, 8, act="relu"), 3), label))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, exe, scope, loss


def _feed(seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((ROWS, 6)).astype(dtype),
            "label": rng.integers(0, 3, (ROWS, 1))}


def _run_all(calls, general=False):
    """Bytes fetched by ``calls`` (each (main, loss) -> (feed, fetch_list)) run in turn on
    one executor, and the parameters after; ``general``: no prepared run is kept."""
    main, exe, scope, loss = _mlp()
    out = []
    for call in calls:
        if general:
            exe.prepare(main).prepared_run = None
        feed, fetch = call(main, loss)
        out.append([np.asarray(v).tobytes() for v in exe.run(main, feed=feed, fetch_list=fetch,
                                                             scope=scope)])
    params = [np.asarray(scope.find_var(p.name).get_tensor().value).tobytes()
              for p in main.all_parameters()]
    return out, params


def _check(calls, replays, expect):
    got = _run_all(calls)
    assert replays == expect
    assert got == _run_all(calls, general=True)


def test_a_fetch_list_naming_the_same_values_any_way_is_recognised(replays):
    calls = [lambda m, loss: (_feed(0), [loss]),
             lambda m, loss: (_feed(1), [loss.name]),
             lambda m, loss: (_feed(2), (loss,)),
             lambda m, loss: (_feed(3), [loss])]
    _check(calls, replays, [True, True, True])


def test_a_fetch_iterable_that_is_no_list_is_matched_by_the_names_it_yields(replays):
    # Executor.run reads it into a list once (executor.fetch_list_of): the same names
    calls = [lambda m, loss: (_feed(0), [loss]),
             lambda m, loss: (_feed(1), (n for n in [loss.name])),
             lambda m, loss: (_feed(2), [loss])]
    _check(calls, replays, [True, True])


def test_another_fetch_list_is_not(replays):
    calls = [lambda m, loss: (_feed(0), [loss]),
             lambda m, loss: (_feed(1), [loss, "fc_0.w_0"]),
             lambda m, loss: (_feed(2), ["fc_0.w_0"]),
             lambda m, loss: (_feed(3), None),
             lambda m, loss: (_feed(4), [loss]),
             lambda m, loss: (_feed(5), [loss])]
    # each changed list prepares anew: the run after an unchanged one is recognised
    _check(calls, replays, [False, False, False, False, True])


def test_an_equal_dtype_that_is_another_object_is_recognised(replays):
    tagged = np.dtype(np.float32, metadata={"source": "camera"})
    assert tagged == np.float32 and tagged is not np.dtype(np.float32)
    calls = [lambda m, loss: (_feed(0), [loss]),
             lambda m, loss: (_feed(1, tagged), [loss]),
             lambda m, loss: (_feed(2, ">f4"), [loss])]  # big-endian: converted, not equal
    _check(calls, replays, [True, False])


def test_a_feed_that_is_not_a_dict_or_has_other_names_is_not(replays):
    calls = [lambda m, loss: (_feed(0), [loss]),
             lambda m, loss: (OrderedDict(_feed(1)), [loss]),
             lambda m, loss: (_feed(2), [loss]),
             lambda m, loss: ({"x": _feed(3)["x"]}, [loss]),
             lambda m, loss: (_feed(4), [loss]),
             lambda m, loss: ({"label": _feed(5)["label"], "y": _feed(5)["x"]}, [loss])]
    main, exe, scope, loss = _mlp()
    # a feed without the label fails (the loss needs it), and so does one naming "y":
    # only the ones that run are compared
    _check(calls[:3], replays, [False, True])
    replays.clear()
    ran = []
    for call in calls[3:]:
        feed, fetch = call(main, loss)
        try:
            exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
            ran.append(True)
        except Exception:  # noqa: BLE001 (what the general path says is not this test's)
            ran.append(False)
    assert ran == [False, True, False]
    assert replays[-1] is False and replays[0] is False


def test_two_feeds_of_one_shape_given_in_the_other_order_are_bound_by_name(replays):
    def build():
        fluid_random.seed(4)
        main, startup = fd.Program(), fd.Program()
        with fd.unique_name.guard(), fd.program_guard(main, startup):
            x = fd.data("x", [None, 6], "float32")
            y = fd.data("y", [None, 6], "float32")
            loss = fd.mean(fd.elementwise_sub(fd.fc(x, 3), fd.fc(y, 3)))
            fd.optimizer.SGD(0.1).minimize(loss)
        scope, exe = fd.Scope(), fd.Executor()
        exe.run(startup, scope=scope)
        return main, exe, scope, loss

    rng = np.random.default_rng(8)
    a, b, c, d = (rng.standard_normal((ROWS, 6)).astype(np.float32) for _ in range(4))
    feeds = [{"x": a, "y": b}, {"y": d, "x": c}, {"y": d, "x": c}]
    results = []
    for general in (False, True):
        main, exe, scope, loss = build()
        got = []
        for feed in feeds:
            if general:
                exe.prepare(main).prepared_run = None
            got.append(np.asarray(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]))
        results.append([v.tobytes() for v in got])
    assert replays[:2] == [False, True]  # the swapped order is new; then it is prepared
    assert results[0] == results[1]
