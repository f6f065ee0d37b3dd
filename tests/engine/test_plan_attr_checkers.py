"""Preparing a program runs the attribute checkers: a desc edited by hand after it was
built or loaded (append_op, load and save check them) with a value its op refuses is
refused when an Executor prepares it, naming the block, the op and the value, and
nothing runs; the same program with the value put back runs."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError


def _dropout_program():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4], "float32")
        out = fd.dropout(fd.fc(x, 3), 0.25, dropout_implementation="upscale_in_train")
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, scope, exe, out


def test_a_value_the_checker_refuses_is_refused_at_prepare_naming_block_op_and_value():
    main, scope, exe, out = _dropout_program()
    ops = main.desc.blocks[0].ops
    at = next(i for i, o in enumerate(ops) if o.type == "dropout")
    prob = next(a for a in ops[at].attrs if a.name == "dropout_prob")
    feed = {"x": np.ones((2, 4), np.float32)}
    exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    prob.f = 1.5
    main.bump_revision()
    with pytest.raises(FluidscopeError, match=rf"block 0, op #{at} \(dropout\): attribute "
                                              r"'dropout_prob'=1.5 must be in \[0.0, 1.0\]"):
        exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    with pytest.raises(FluidscopeError, match="'dropout_prob'=1.5"):
        exe.debug(main, feed=feed, fetch_list=[out], scope=scope)
    prob.f = 0.25
    main.bump_revision()
    (got,) = exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    assert got.shape == (2, 3)
