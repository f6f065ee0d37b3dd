"""Executor.prepare finds the plan of the designer Program it prepared last without building
its cache key (engine/executor.py): the same plan the key finds, and never a stale one
after an edit (a new revision), a replaced desc, another program in between, or another
block."""
import numpy as np

import fluidscope.designer as fd
from fluidscope.engine.ir.proto import framework_pb2 as pb


def _program(width=3):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], "float32")
        out = fd.fc(x, width)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return main, scope, exe, out


def test_the_same_unchanged_program_gets_the_same_plan():
    main, _, exe, _ = _program()
    plan = exe.prepare(main)
    assert exe.prepare(main) is plan
    assert exe.prepare(main) is exe.prepare(main, 0)


def test_an_edit_gets_a_new_plan_that_runs_the_edited_program():
    main, scope, exe, out = _program()
    feed = {"x": np.ones((2, 4), np.float32)}
    (before,) = exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    old = exe.prepare(main)
    with fd.program_guard(main):
        doubled = fd.scale(out, 2.0)  # an edit: the revision moves
    new = exe.prepare(main)
    assert new is not old and len(new.steps) == len(old.steps) + 1
    (got,) = exe.run(main, feed=feed, fetch_list=[doubled], scope=scope)
    np.testing.assert_allclose(got, 2 * before)


def test_a_revision_bump_alone_prepares_again():
    main, _, exe, _ = _program()
    old = exe.prepare(main)
    main.bump_revision()
    assert exe.prepare(main) is not old


def test_a_replaced_desc_prepares_again():
    main, _, exe, _ = _program()
    old = exe.prepare(main)
    other, _, _, _ = _program(width=5)
    main.desc = other.desc  # same revision number, another desc
    new = exe.prepare(main)
    assert new is not old and new.program_desc is other.desc


def test_programs_taking_turns_each_find_their_own_plan():
    a, _, exe, _ = _program()
    b, _, _, _ = _program(width=5)
    plan_a, plan_b = exe.prepare(a), exe.prepare(b)
    assert plan_a is not plan_b
    for _ in range(3):
        assert exe.prepare(a) is plan_a and exe.prepare(b) is plan_b


def test_another_block_and_a_bare_desc_take_the_keyed_path():
    main, _, exe, _ = _program()
    plan = exe.prepare(main)
    desc = pb.ProgramDesc()
    desc.CopyFrom(main.desc)
    bare = exe.prepare(desc)  # no revision: keyed by its bytes
    assert bare is not plan and bare.program_desc is desc
    assert exe.prepare(main) is plan
