"""recurrent_grad's outputs slot by slot (engine/recurrent/grad.py, common.py,
batched_grads.py): an in-link, boot layer or parameter that needs no gradient before one
that does leaves the later ones their gradients (central differences, float64); a float32
group's gradients stay float32 and the in-link's gradient carries its LoD; a product with a
transposed parameter is not batched as a plain one; a memory of unknown size without a boot
layer is an error naming the op and the memory."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.engine.errors import ExecutionError

LOD = [0, 3, 4, 8]
rng = np.random.default_rng(21)


def test_gradients_after_slots_that_need_none_are_still_written():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        a = fd.data("a", [None, 2], dtype="float64", lod_level=1)  # no gradient wanted
        b = fd.data("b", [None, 2], dtype="float64", lod_level=1)
        h1 = fd.data("h1", [None, 2], dtype="float64")  # no gradient wanted
        h2 = fd.data("h2", [None, 2], dtype="float64")
        wt = fd.data("wt", [None, 2], dtype="float64")

        def step(a_t, b_t):
            m1 = fd.memory("s1", size=2, boot_layer=h1)
            m2 = fd.memory("s2", size=2, boot_layer=h2)
            s1 = fd.fc([a_t, m1], size=2, act="tanh", name="s1", bias_attr=False,
                       param_attr=[fd.ParamAttr("p1", trainable=False)] * 2)
            s2 = fd.fc([b_t, m2, s1], size=2, act="tanh", name="s2", bias_attr=False,
                       param_attr=[fd.ParamAttr("p2"), fd.ParamAttr("p3"), fd.ParamAttr("p4")])
            return s2
        out = fd.recurrent_group(step, [a, b])
        loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"a": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD]),
            "b": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD]),
            "h1": rng.standard_normal((3, 2)), "h2": rng.standard_normal((3, 2)),
            "wt": rng.standard_normal((8, 2))}
    check_program_grad(main.desc, loss.name, feed, ["b", "h2", "p2", "p4"], scope, rtol=1e-6)


def test_a_float32_groups_gradients_stay_float32_and_the_in_links_keep_its_lod():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], dtype="float32", lod_level=1)
        x.stop_gradient = False
        h0 = fd.data("h0", [None, 2], dtype="float32")
        h0.stop_gradient = False
        out = fd.recurrent_group(lambda x_t: fd.elementwise_add(
            x_t, fd.memory("acc", size=2, boot_layer=h0), name="acc"), x)
        fd.append_backward(fd.reduce_sum(out))
    feed = {"x": fd.LoDTensor(np.ones((8, 2), np.float32), [LOD]),
            "h0": np.ones((3, 2), np.float32)}
    dx, dh0 = fd.Executor().run(main, feed=feed, fetch_list=["x@GRAD", "h0@GRAD"],
                                scope=fd.Scope(), return_numpy=False)
    assert dx.lod() == [LOD]
    assert dx.numpy().dtype == np.float32 and dh0.numpy().dtype == np.float32
    # every later acc sums x_r and h0: d loss/d x_r = rows from r to its sequence's end
    expected = np.concatenate([np.arange(b - a, 0, -1) for a, b in zip(LOD, LOD[1:])])
    np.testing.assert_array_equal(dx.numpy()[:, 0], expected)
    np.testing.assert_array_equal(dh0.numpy()[:, 0], [3, 1, 4])  # one per step of each


def test_a_product_with_a_transposed_parameter_keeps_its_gradient():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        w = LayerHelper("wt_").create_parameter(fd.ParamAttr(name="w"), [3, 2], "float64")
        wt = fd.data("wt", [None, 3], "float64")

        def step(x_t):
            h_pre = fd.memory("h", size=3)
            return fd.tanh(fd.elementwise_add(fd.matmul(x_t, w, transpose_y=True), h_pre),
                           name="h")
        loss = fd.reduce_sum(fd.elementwise_mul(fd.recurrent_group(step, x), wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD]),
            "wt": rng.standard_normal((8, 3))}
    check_program_grad(main.desc, loss.name, feed, ["w", "x"], scope, rtol=1e-6)


def test_a_memory_of_unknown_size_without_a_boot_layer_is_an_error_naming_it():
    main, out, ex_state = _running_sum_program()
    var = next(v for v in main.desc.blocks[1].vars if v.name == ex_state)
    var.type.dense_tensor.tensor.dims[:] = [-1, -1]
    with pytest.raises(ExecutionError, match=rf"op #\d+ recurrent: memory '{ex_state}' has unknown "
                                          r"size \[-1\]; give it a boot layer or a size"):
        fd.Executor().run(main.desc, feed={"x": fd.LoDTensor(np.ones((8, 2)), [LOD])},
                          fetch_list=[out.name], scope=fd.Scope())


def _running_sum_program():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        out = fd.recurrent_group(lambda x_t: fd.elementwise_add(
            x_t, fd.memory("acc", size=2), name="acc"), x)
    op = next(op for op in main.desc.blocks[0].ops if op.type == "recurrent")
    ex_state = next(a for a in op.attrs if a.name == "ex_states").strings[0]
    return main, out, ex_state


def test_a_memory_whose_variable_is_no_dense_tensor_is_an_error_naming_it():
    main, out, ex_state = _running_sum_program()
    var = next(v for v in main.desc.blocks[1].vars if v.name == ex_state)
    var.type.ClearField("dense_tensor")  # e.g. declared as a tensor array
    with pytest.raises(ExecutionError, match=rf"op #\d+ recurrent: memory '{ex_state}' is not "
                                             "declared in the step block"):
        fd.Executor().run(main.desc, feed={"x": fd.LoDTensor(np.ones((8, 2)), [LOD])},
                          fetch_list=[out.name], scope=fd.Scope())


def test_an_in_link_without_lod_says_to_feed_a_lodtensor():
    main, out, _ = _running_sum_program()
    with pytest.raises(ExecutionError, match=r"input 'x' has no LoD; a recurrent group runs "
                                             r"over sequences \(feed a LoDTensor\)"):
        fd.Executor().run(main, feed={"x": np.ones((8, 2))}, fetch_list=[out],
                          scope=fd.Scope())


def test_an_in_link_and_a_boot_layer_the_step_never_reads_get_zero_gradients():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        a = fd.data("a", [None, 2], "float64", lod_level=1)
        b = fd.data("b", [None, 2], "float64", lod_level=1)
        h0 = fd.data("h0", [None, 2], "float32")
        for v in (a, b, h0):
            v.stop_gradient = False

        def step(a_t, b_t):
            fd.memory("acc", size=2, boot_layer=h0)  # declared, never read
            return fd.scale(b_t, 2.0, name="acc")
        fd.append_backward(fd.reduce_sum(fd.recurrent_group(step, [a, b])))
    feed = {"a": fd.LoDTensor(np.ones((8, 2)), [LOD]), "b": fd.LoDTensor(np.ones((8, 2)), [LOD]),
            "h0": np.ones((3, 2), np.float32)}
    da, db, dh0 = fd.Executor().run(main, feed=feed, fetch_list=["a@GRAD", "b@GRAD", "h0@GRAD"],
                                    scope=fd.Scope(), return_numpy=False)
    np.testing.assert_array_equal(da.numpy(), np.zeros((8, 2)))
    assert da.lod() == [LOD] and da.numpy().dtype == np.float64
    np.testing.assert_array_equal(db.numpy(), np.full((8, 2), 2.0))
    np.testing.assert_array_equal(dh0.numpy(), np.zeros((3, 2), np.float32))
    assert dh0.numpy().dtype == np.float32


def test_asking_for_a_later_parameter_only_still_writes_its_gradient():
    def build(parameter_list):
        main, startup = fd.Program(), fd.Program()
        with fd.program_guard(main, startup), fd.unique_name.guard():
            a = fd.data("a", [None, 2], dtype="float64", lod_level=1)

            def step(a_t):
                s1 = fd.fc([a_t], size=2, act="tanh", bias_attr=False,
                           param_attr=[fd.ParamAttr("p1")])
                return fd.fc([s1, fd.memory("h", size=2)], size=2, act="tanh", name="h",
                             bias_attr=False, param_attr=[fd.ParamAttr("p2"), fd.ParamAttr("p3")])
            out = fd.recurrent_group(step, [a])
            fd.append_backward(fd.reduce_sum(out), parameter_list=parameter_list)
        return main, startup
    only, startup = build(["p2"])
    grad = next(o for o in only.global_block().ops if o.type == "recurrent_grad")
    assert grad.output("parameters@GRAD") == ["@EMPTY@", "p2@GRAD", "@EMPTY@"]
    every, _ = build(None)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"a": fd.LoDTensor(rng.standard_normal((8, 2)), [LOD])}
    got, = exe.run(only, feed=feed, fetch_list=["p2@GRAD"], scope=scope)
    ref, = exe.run(every, feed=feed, fetch_list=["p2@GRAD"], scope=scope)
    np.testing.assert_array_equal(got, ref)
