"""The buffers batched parameter gradients keep (engine/recurrent/batched_grads.py): reused
only when the next run has the same rows and dtype, in the group's dtype, never written for
an operand another buffer already took in the frame (the LSTM's gate gradient is the
in-link's gradient and the bias's dOut at once), and an operand that one product's buffer
took is read from there by another product of the same in-link; a parameter that is not a
matrix is never batched. Gradients against central differences (float64) or a fresh
executor's."""
import numpy as np

import fluidscope.designer as fd
from fluidscope.designer.layer_helper import LayerHelper
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.engine.recurrent.batched_grads import Sink
from test_recurrent_batched_grads import _grad_control, _lstm_program

rng = np.random.default_rng(8)
LOD = [0, 3, 4, 8]


def test_a_run_with_other_rows_gets_new_buffers_and_the_right_gradients():
    exe, main, scope, feed, fetch = _lstm_program()
    exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    lod = [0, 2, 7]  # fewer rows than the first run's 11
    other = {"x": fd.LoDTensor(rng.standard_normal((7, 2)), [lod]),
             "wt": rng.standard_normal((7, 3))}
    got = exe.run(main, feed=other, fetch_list=fetch, scope=scope)
    control = _grad_control(exe, main)
    assert all(b.spare[0].shape[0] == 7 for b in control.batched.values())
    fresh = fd.Executor().run(main, feed=other, fetch_list=fetch, scope=scope)
    for name, a, b in zip(fetch, got, fresh):
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_buffers_and_gradients_are_in_the_groups_dtype():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float32", lod_level=1)
        out = fd.recurrent_group(lambda x_t: fd.fc([x_t, fd.memory("h", size=3)], size=3,
                                                   act="tanh", name="h"), x)
        fd.append_backward(fd.reduce_sum(out))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2)).astype(np.float32), [LOD])}
    params = [p.name for p in main.global_block().all_parameters()]
    grads = exe.run(main, feed=feed, fetch_list=[p + "@GRAD" for p in params], scope=scope)
    assert [g.dtype for g in grads] == [np.float32] * len(params)
    control = _grad_control(exe, main)
    assert control.batched and all(buf.dtype == np.float32 for b in control.batched.values()
                                   for buf in b.spare)


def test_an_operand_another_buffer_holds_is_never_copied_into_its_own():
    exe, main, scope, feed, fetch = _lstm_program()
    exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    control = _grad_control(exe, main)
    bias = next(b for b in control.batched.values() if b.kind == "bias")
    product = next(b for b in control.batched.values() if b.kind == "matmul")
    for b in (bias, product):
        for buf in b.spare:
            buf[...] = np.nan  # the next run reuses these buffers
    ref = fd.Executor().run(main, feed=feed, fetch_list=fetch, scope=scope)
    got = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    # the gate gradient is the in-link's gradient: bias and product read it from there
    assert np.isnan(bias.spare[0]).all() and np.isnan(product.spare[1]).all()
    assert not np.isnan(product.spare[0]).any()  # h_{t-1}: the product's own copy
    for name, a, b in zip(fetch, got, ref):
        np.testing.assert_array_equal(a, b, err_msg=name)


def _check(step, names, width=2, out=3):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], "float64", lod_level=1)
        wt = fd.data("wt", [None, out], "float64")
        loss = fd.reduce_sum(fd.elementwise_mul(fd.recurrent_group(step, x), wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, width)), [LOD]),
            "wt": rng.standard_normal((8, out))}
    check_program_grad(main.desc, loss.name, feed, names, scope, rtol=1e-6)
    with fd.program_guard(main, startup):
        fd.append_backward(loss)  # what the check built on a copy, to read its batching
    return main, exe


def test_two_products_of_one_in_link_share_its_rows_and_both_gradients_are_right():
    def step(x_t):
        wa = LayerHelper("wa").create_parameter(fd.ParamAttr(name="wa"), [2, 3], "float64")
        wb = LayerHelper("wb").create_parameter(fd.ParamAttr(name="wb"), [2, 3], "float64")
        h = fd.tanh(fd.elementwise_add(fd.matmul(x_t, wa), fd.memory("h", size=3)), name="h")
        return fd.elementwise_add(h, fd.tanh(fd.matmul(x_t, wb)))
    main, exe = _check(step, ["wa", "wb", "x"])
    assert sorted(b.step.type for b in _grad_control(exe, main).batched.values()) == [
        "matmul_v2_grad", "matmul_v2_grad"]


def test_a_product_with_a_parameter_of_three_dims_runs_whole_and_is_right():
    def step(x_t):
        w = LayerHelper("w3d").create_parameter(fd.ParamAttr(name="w3d"), [2, 2, 3], "float64")
        y = fd.reduce_sum(fd.matmul(x_t, w), dim=0)  # [2, n, 3] -> [n, 3]
        return fd.tanh(fd.elementwise_add(y, fd.memory("h", size=3)), name="h")
    _check(step, ["w3d", "x"])


def test_an_fc_of_a_three_dim_in_link_flattens_it_and_runs_its_product_whole():
    # mul flattens x_t [n, 2, 2] to [n, 4]: dOut is 2-D while x_t is not, no plain GEMM
    def step(x_t):
        return fd.fc([x_t, fd.memory("h", size=3)], size=3, act="tanh", name="h",
                     param_attr=[fd.ParamAttr("wx"), fd.ParamAttr("wh")])
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2, 2], "float64", lod_level=1)
        wt = fd.data("wt", [None, 3], "float64")
        loss = fd.reduce_sum(fd.elementwise_mul(fd.recurrent_group(step, x), wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 2, 2)), [LOD]),
            "wt": rng.standard_normal((8, 3))}
    check_program_grad(main.desc, loss.name, feed, ["wx", "wh", "x"], scope, rtol=1e-6)


def test_only_plain_products_and_row_biases_of_parameters_used_once_are_batched():
    # in the grad block the ops run in reverse: each refused step below comes before the
    # one plain product (x2 @ wa), which must still be found
    def step(x_t):  # x_t [n, 1, 3]
        p = {n: LayerHelper(n).create_parameter(fd.ParamAttr(name=n), s, "float64")
             for n, s in (("wa", [3, 3]), ("wtr", [3, 3]), ("bz", [3]), ("wc", [3, 3]))}
        x2 = fd.reduce_sum(x_t, dim=1)
        h = fd.tanh(fd.elementwise_add(fd.matmul(x2, p["wa"]), fd.memory("h", size=3)),
                    name="h")
        t = fd.matmul(h, p["wtr"], transpose_y=True)  # a transposed parameter
        z = fd.reduce_sum(fd.elementwise_add(x_t, p["bz"], axis=2), dim=1)  # not a row bias
        z = fd.elementwise_add(z, t)
        return fd.elementwise_add(fd.matmul(z, p["wc"]), fd.matmul(h, p["wc"]))  # wc twice
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 1, 3], "float64", lod_level=1)
        wt = fd.data("wt", [None, 3], "float64")
        loss = fd.reduce_sum(fd.elementwise_mul(fd.recurrent_group(step, x), wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((8, 1, 3)), [LOD]),
            "wt": rng.standard_normal((8, 3))}
    check_program_grad(main.desc, loss.name, feed, ["wa", "wtr", "bz", "wc", "x"], scope,
                       rtol=1e-6)
    with fd.program_guard(main, startup):
        fd.append_backward(loss)
    control = _grad_control(exe, main)
    assert [(b.step.type, control.param_names[b.param]) for b in control.batched.values()] == [
        ("matmul_v2_grad", "wa")]


def test_frames_read_from_two_lenders_each_give_their_own_rows():
    exe, main, _, _, _ = _lstm_program()
    bias = next(b for b in _grad_control(exe, main).batched.values() if b.kind == "bias")
    g0, g1 = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    first, second = np.full((5, 4), np.nan), np.full((5, 4), np.nan)
    first[0:3], second[3:5] = g0, g1
    sink = Sink(bias, np, 5)
    sink.put(0, 3, (g0,), {id(g0): (g0, first)})
    sink.put(3, 5, (g1,), {id(g1): (g1, second)})
    np.testing.assert_array_equal(sink.operands()[0], np.concatenate([g0, g1]))


def test_a_product_with_a_transposed_in_link_is_not_batched_and_is_right():
    # two sequences, each 2 long: x_t^T [2, 2] @ W [2, 3] fits every frame
    lod = [0, 2, 4]

    def step(x_t):
        w = LayerHelper("wx").create_parameter(fd.ParamAttr(name="wx"), [2, 3], "float64")
        y = fd.matmul(x_t, w, transpose_x=True)  # [2, 3]
        return fd.tanh(fd.elementwise_add(fd.matmul(x_t, y), fd.memory("h", size=3)), name="h")
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        wt = fd.data("wt", [None, 3], "float64")
        loss = fd.reduce_sum(fd.elementwise_mul(fd.recurrent_group(step, x), wt))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": fd.LoDTensor(rng.standard_normal((4, 2)), [lod]),
            "wt": rng.standard_normal((4, 3))}
    check_program_grad(main.desc, loss.name, feed, ["wx", "x"], scope, rtol=1e-6)
