"""runtime.plan._gatherer for an op that reads nothing (fill_constant of attributes alone,
every training step's loss gradient): the arguments the general gather gives (None for an
empty slot, a new empty list for an empty duplicable slot), without running it."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.runtime import plan as plan_module

VALS = [None, "a", "b", "c"]


def general(ins):
    return [[VALS[j] for j in i] if isinstance(i, tuple) else VALS[i] for i in ins]


@pytest.mark.parametrize("ins", [(0, 0, ()), (0, (), 0), ((),), ((), 0)])
def test_only_empty_slots_give_what_the_general_gather_gives(ins):
    gather = plan_module._gatherer(ins)
    first, second = gather(VALS), gather(VALS)
    assert list(first) == general(ins)
    lists = [a for a in first if a is not None]
    assert len(lists) == 1 and lists[0].__class__ is list
    # a new list each call: a kernel that appends to it changes no later call
    assert next(a for a in second if a is not None) is not lists[0]


@pytest.mark.parametrize("ins", [(0, (), ()), (1, 0, ()), (0, (2, 3), ()), (1, (2,))])
def test_anything_else_takes_the_general_gather(ins):
    assert list(plan_module._gatherer(ins)(VALS)) == general(ins)


def test_fill_constant_in_a_plain_training_step_fills_each_run():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], "float32")
        loss = fd.mean(fd.fc(x, 2))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    fills = [op for op in main.desc.blocks[0].ops if op.type == "fill_constant"]
    assert fills, "the loss gradient is a fill_constant"
    name = fills[0].outputs[0].arguments[0]
    feed = {"x": np.ones((4, 3), np.float32)}
    for _ in range(3):
        (seed,) = exe.run(main, feed=feed, fetch_list=[name], scope=scope)
        assert np.array_equal(seed, np.ones_like(seed))
        seed[...] = 7  # the fetched array is the caller's: the next run fills a new one
