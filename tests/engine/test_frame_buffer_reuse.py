"""The big arrays a recurrent group reorders each run are reused by the next plain run
(engine/recurrent/spares.py), under the ownership rule of runtime/recycle.py: a value the
user fetched and kept, or a frame of a step scope the user holds, is never written by a
later run; results match a fresh executor's bit for bit."""
import weakref

import numpy as np

import fluidscope.designer as fd

rng = np.random.default_rng(16)
LOD = [0, 3, 4, 9, 11]
HIDDEN = 3


def _program():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, HIDDEN], "float64")
        proj = fd.fc(x, 4 * HIDDEN, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
        h = fd.lstmemory_group(proj, HIDDEN, name="lstm", use_peepholes=False,
                               param_attr=fd.ParamAttr(name="w"),
                               bias_attr=fd.ParamAttr(name="b"))
        fd.append_backward(fd.reduce_sum(fd.elementwise_mul(h, wt)))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    scopes = next(op.output("step_scopes")[0] for op in main.global_block().ops
                  if op.type == "recurrent")
    return exe, main, scope, [h.name, proj.name + "@GRAD", "x@GRAD", "w@GRAD"], scopes


def _feed(lod=LOD):
    return {"x": fd.LoDTensor(rng.standard_normal((lod[-1], 2)), [lod]),
            "wt": rng.standard_normal((lod[-1], HIDDEN))}


def _controls(exe, main):
    plan = exe.prepare(main)
    return [next(s.control for s in plan.steps if s.type == t)
            for t in ("recurrent", "recurrent_grad")]


def _spares(exe, main):
    """Weak references to the arrays kept for the next run (a strong one would keep the
    next run from taking them)."""
    return {(kind, key): weakref.ref(box[0])
            for kind, op in zip(("fwd", "grad"), _controls(exe, main))
            for key, box in op.spares.held.items()}


def _assert_like_fresh(got, main, feed, scope, fetch):
    fresh = fd.Executor().run(main, feed=feed, fetch_list=fetch, scope=scope)
    for name, a, b in zip(fetch, got, fresh):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_a_second_run_writes_into_the_arrays_the_first_let_go():
    exe, main, scope, fetch, _ = _program()
    exe.run(main, feed=_feed(), fetch_list=["w@GRAD"], scope=scope)
    first = _spares(exe, main)
    assert {k for _, k in first} >= {("inputs", 0), ("batch", 0), ("outputs", 0),
                                    ("out_grads", 0), ("in_rows", 0), ("in_grads", 0)}
    feed = _feed()
    exe.run(main, feed=feed, fetch_list=["w@GRAD"], scope=scope)
    second = _spares(exe, main)
    assert all(second[k]() is first[k]() for k in first), \
        [k for k in first if second[k]() is not first[k]()]
    _assert_like_fresh(exe.run(main, feed=feed, fetch_list=fetch, scope=scope),
                       main, feed, scope, fetch)


def test_values_the_user_kept_are_never_written_by_the_next_run():
    exe, main, scope, fetch, _ = _program()
    kept = exe.run(main, feed=_feed(), fetch_list=fetch, scope=scope)
    copies = [a.copy() for a in kept]
    feed = _feed()
    got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    for name, a, b, new in zip(fetch, kept, copies, got):
        np.testing.assert_array_equal(a, b, err_msg=name)
        assert a is not new and not np.array_equal(a, new), name
    _assert_like_fresh(got, main, feed, scope, fetch)


def test_a_step_scope_the_user_holds_keeps_its_frames():
    exe, main, scope, fetch, scopes_name = _program()
    (scopes,) = exe.run(main, feed=_feed(), fetch_list=[scopes_name], scope=scope)
    before = [{n: v.copy() for n, v in scopes.frame_values(t).items()}
              for t in scopes.frames_run()]
    exe.run(main, feed=_feed(), fetch_list=fetch, scope=scope)
    for t, values in zip(scopes.frames_run(), before):
        now = scopes.frame_values(t)
        for name, value in values.items():
            np.testing.assert_array_equal(now[name], value, err_msg=f"frame {t}: {name}")


def test_a_run_with_other_rows_gets_fresh_arrays_and_the_right_values():
    exe, main, scope, fetch, _ = _program()
    exe.run(main, feed=_feed(), fetch_list=["w@GRAD"], scope=scope)
    first = _spares(exe, main)
    lod = [0, 2, 7]
    feed = _feed(lod)
    got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    now = _spares(exe, main)
    assert all(now[k]() is not first[k]() and len(now[k]()) == lod[-1] for k in first)
    _assert_like_fresh(got, main, feed, scope, fetch)
