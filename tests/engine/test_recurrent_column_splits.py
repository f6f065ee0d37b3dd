"""A recurrent step's gate split binds its column views itself (engine/recurrent/
column_splits.py): the same views the split kernel returns (memory, shape, strides), by
``num`` and by ``sections``; an X that is not the declared matrix runs the op itself, so
its error is the kernel's."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.recurrent.column_splits import column_split

LOD = [0, 5, 6, 14]
WIDTH, HIDDEN = 8, 6


def _build(cut):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, WIDTH], "float64", lod_level=1)

        def step(x_t):
            h_pre = fd.memory("h", size=HIDDEN)
            z = fd.fc([x_t, h_pre], 3 * HIDDEN, name="z")
            a, b, c = fd.split(z, cut, dim=1)
            return fd.tanh(fd.elementwise_add(fd.elementwise_mul(a, b), c), name="h")
        h = fd.recurrent_group(step, x)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    scopes = next(op.output("step_scopes")[0] for op in main.global_block().ops
                  if op.type == "recurrent")
    control = next(s.control for s in exe.prepare(main).steps if s.type == "recurrent")
    return main, scope, exe, h, scopes, control


def _split_step(control):
    return next(s for s in control.fwd.steps if s.type == "split")


@pytest.mark.parametrize("cut", [3, [HIDDEN, HIDDEN, HIDDEN], [HIDDEN, -1, HIDDEN]])
def test_the_split_binds_the_kernel_s_own_views(cut):
    main, scope, exe, h, scopes, control = _build(cut)
    step = _split_step(control)
    assert getattr(step.run, "column_split", False)
    x_slot, pieces, spans = column_split(control.fwd, step)
    assert spans == [(0, HIDDEN), (HIDDEN, 2 * HIDDEN), (2 * HIDDEN, 3 * HIDDEN)]
    x = np.arange(5 * 3 * HIDDEN, dtype=np.float64).reshape(5, 3 * HIDDEN)
    vals = [None] * len(control.fwd.names)
    vals[x_slot] = x
    step.run(vals)
    views = step.kernel(np, step.attrs, x, None, [])
    for slot, view in zip(pieces, views):
        got = vals[slot]
        assert got.base is view.base and np.shares_memory(got, x)
        assert (got.__array_interface__["data"], got.shape, got.strides) == \
            (view.__array_interface__["data"], view.shape, view.strides)
    feed = {"x": fd.LoDTensor(np.linspace(-1, 1, LOD[-1] * WIDTH).reshape(LOD[-1], WIDTH), [LOD])}
    out, frames = exe.run(main, feed=feed, fetch_list=[h, scopes], scope=scope)
    name = control.fwd.names[pieces[1]]
    z = control.fwd.names[x_slot]
    for t in range(len(frames)):
        assert frames.tensor(t, name).base is not None
        np.testing.assert_array_equal(frames.tensor(t, name),
                                      frames.tensor(t, z)[:, HIDDEN:2 * HIDDEN])


def test_an_x_that_is_not_the_declared_matrix_runs_the_op_itself():
    main, scope, exe, h, scopes, control = _build(3)
    step = _split_step(control)
    x_slot, pieces, _ = column_split(control.fwd, step)
    vals = [None] * len(control.fwd.names)
    vals[x_slot] = np.arange(12.0).reshape(2, 6)  # 6 columns, not the declared 18: 3 of 2
    step.run(vals)
    assert [vals[p].shape for p in pieces] == [(2, 2)] * 3
    vals[x_slot] = np.arange(14.0).reshape(2, 7)  # the kernel names what does not fit
    with pytest.raises(FluidscopeError, match="num=3 does not divide"):
        step.run(vals)
