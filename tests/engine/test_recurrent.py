"""recurrent_group: outputs and every gradient equal an explicit per-sequence Python loop.

Each test builds a float64 group with the designer, runs forward and backward with the
executor, and compares with a numpy loop over each sequence separately (no batching, no
sorting): outputs to 1e-12, gradients to central differences of that loop (1e-8).
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import DesignError, ExecutionError
from fluidscope.engine.recurrent.step_scopes import StepScopes

D, H = 3, 4
rng = np.random.default_rng(7)


def _numeric_grad(f, arrays, name, delta=1e-6):
    base = arrays[name]
    g = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        for sign in (1, -1):
            probe = dict(arrays)
            probe[name] = base.copy()
            probe[name][idx] += sign * delta
            g[idx] += sign * f(probe)
        g[idx] /= 2 * delta
    return g


def _rnn_loop(a, lod, reverse=False, boot=None, static=None):
    """h_t = tanh(x_t W0 + h_{t-1} W1 [+ s W2] + b) per sequence, in LoD order."""
    out = np.zeros((lod[-1], H))
    for i, (s, e) in enumerate(zip(lod, lod[1:])):
        h = a["h0"][i] if boot else np.zeros(H)
        rows = range(e - 1, s - 1, -1) if reverse else range(s, e)
        for r in rows:
            pre = a["x"][r] @ a["w0"] + h @ a["w1"] + a["b"]
            if static:
                pre = pre + a["s"][i] @ a["w2"]
            h = np.tanh(pre)
            out[r] = h
    return out


def _build(reverse=False, boot=False, static=False):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, D], dtype="float64", lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, H], dtype="float64")
        inputs = [x]
        h0 = s = None
        if boot:
            h0 = fd.data("h0", [None, H], dtype="float64")
            h0.stop_gradient = False
        if static:
            s = fd.data("s", [None, 2], dtype="float64")
            s.stop_gradient = False
            inputs.append(fd.StaticInput(s))

        def step(x_t, *rest):
            h_pre = fd.memory("h", size=H, boot_layer=h0)
            ins = [x_t, h_pre] + list(rest)
            attrs = [fd.ParamAttr("w0"), fd.ParamAttr("w1")] + [fd.ParamAttr("w2")] * len(rest)
            return fd.fc(ins, size=H, act="tanh", name="h", param_attr=attrs,
                         bias_attr=fd.ParamAttr("b"))

        out = fd.recurrent_group(step, inputs, reverse=reverse)
        loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
        fd.append_backward(loss)
    return main, startup, out, loss


def _params(static):
    a = {"w0": rng.standard_normal((D, H)), "w1": rng.standard_normal((H, H)) * 0.5,
         "b": rng.standard_normal(H)}
    if static:
        a["w2"] = rng.standard_normal((2, H))
    return a


def _run(lod, reverse=False, boot=False, static=False):
    main, startup, out, loss = _build(reverse, boot, static)
    n, total = len(lod) - 1, lod[-1]
    a = _params(static)
    a.update(x=rng.standard_normal((total, D)), wt=rng.standard_normal((total, H)))
    if boot:
        a["h0"] = rng.standard_normal((n, H))
    if static:
        a["s"] = rng.standard_normal((n, 2))
    scope = fd.Scope()
    exe = fd.Executor()
    exe.run(startup, scope=scope)
    for p in ("w0", "w1", "b", "w2"):
        if p in a:
            scope.find_var(p).get_tensor().set(a[p])
    feed = {"x": fd.LoDTensor(a["x"], [lod]), "wt": a["wt"]}
    for k in ("h0", "s"):
        if k in a:
            feed[k] = a[k]
    wrt = [k for k in ("w0", "w1", "b", "w2", "x", "h0", "s") if k in a]
    fetched = exe.run(main, feed=feed, fetch_list=[out] + [k + "@GRAD" for k in wrt], scope=scope)

    def loss_of(arrays):
        return float(np.sum(_rnn_loop(arrays, lod, reverse, boot, static) * arrays["wt"]))

    np.testing.assert_allclose(fetched[0], _rnn_loop(a, lod, reverse, boot, static),
                               rtol=0, atol=1e-12)
    for name, got in zip(wrt, fetched[1:]):
        np.testing.assert_allclose(got, _numeric_grad(loss_of, a, name), rtol=1e-7, atol=1e-8,
                                   err_msg=f"gradient of {name}")
    return main, exe, scope, feed


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_simple_rnn_matches_per_sequence_loop(reverse):
    _run([0, 3, 4, 8], reverse=reverse)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_boot_layer_and_its_gradient(reverse):
    _run([0, 2, 7, 8], reverse=reverse, boot=True)


def test_static_input_is_read_whole_and_its_gradient_summed():
    _run([0, 4, 5, 7], boot=True, static=True)


def test_lengths_one_and_a_single_sequence():
    _run([0, 1, 2, 3])
    _run([0, 5], boot=True)


def test_an_empty_sequence_gets_no_rows_and_a_zero_boot_gradient():
    _run([0, 3, 3, 5], boot=True)


def test_step_scopes_hold_one_frame_per_time_step():
    main, exe, scope, feed = _run([0, 3, 4, 8], boot=True)
    scopes_name = next(op.output("step_scopes")[0] for op in main.global_block().ops
                       if op.type == "recurrent")
    frames, = exe.run(main, feed=feed, fetch_list=[scopes_name], scope=scope)
    assert isinstance(frames, StepScopes)
    assert len(frames) == 4 and [f.batch_size for f in frames.frames] == [3, 2, 2, 1]
    # sorted longest first, stable: sequence 2 (length 4), 0 (3), 1 (1)
    assert frames.sequences(0) == [2, 0, 1] and frames.sequences(3) == [2]
    x_t = frames.scope(1).find_var("x").get_tensor().numpy()
    np.testing.assert_array_equal(x_t, feed["x"].numpy()[[5, 1]])


def test_lod_mismatch_between_inputs_is_a_clear_error():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        a = fd.data("a", [None, 2], dtype="float64", lod_level=1)
        b = fd.data("b", [None, 2], dtype="float64", lod_level=1)
        out = fd.recurrent_group(lambda x, y: fd.elementwise_add(x, y), [a, b])
    exe = fd.Executor()
    x = np.ones((5, 2))
    with pytest.raises(ExecutionError, match=r"inputs 'a' \(LoD \[\[0, 2, 5\]\]\) and 'b' "
                                             r"\(LoD \[\[0, 3, 5\]\]\) must hold the same"):
        exe.run(main, feed={"a": fd.LoDTensor(x, [[0, 2, 5]]), "b": fd.LoDTensor(x, [[0, 3, 5]])},
                fetch_list=[out], scope=fd.Scope())
    with pytest.raises(ExecutionError, match="'a' has no LoD"):
        exe.run(main, feed={"a": x, "b": x}, fetch_list=[out], scope=fd.Scope())


def test_boot_with_wrong_row_count_is_a_clear_error():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        h0 = fd.data("h0", [None, 2], dtype="float64")

        def step(x_t):
            m = fd.memory("acc", size=2, boot_layer=h0)
            return fd.elementwise_add(x_t, m, name="acc")
        out = fd.recurrent_group(step, x)
    with pytest.raises(ExecutionError, match="boot 'h0' .* has 3 rows; it needs one per sequence"):
        fd.Executor().run(main, feed={"x": fd.LoDTensor(np.ones((5, 2)), [[0, 2, 5]]),
                                      "h0": np.ones((3, 2))}, fetch_list=[out], scope=fd.Scope())


def test_memory_links_by_layer_name_and_checks_sizes():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        with pytest.raises(DesignError, match="memory\\('nope'\\) links to no layer"):
            fd.recurrent_group(lambda x_t: (fd.memory("nope", size=2), fd.scale(x_t))[1], x)
        with pytest.raises(DesignError, match="memory\\('h'\\) has size 3 but layer 'h'"):
            fd.recurrent_group(lambda x_t: (fd.memory("h", size=3), fd.fc(x_t, 2, name="h"))[1], x)
        with pytest.raises(DesignError, match="no LoD"):
            fd.recurrent_group(lambda x_t: x_t, fd.data("flat", [None, 2], dtype="float64"))
    assert main.num_blocks == 1  # failed steps leave no block behind


def test_running_sum_memory_without_parameters():
    """acc_t = acc_{t-1} + x_t: the out-link is the prefix sum of each sequence."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)

        def step(x_t):
            return fd.elementwise_add(x_t, fd.memory("acc", size=2), name="acc")
        out = fd.recurrent_group(step, x)
    xs = rng.standard_normal((6, 2))
    got, = fd.Executor().run(main, feed={"x": fd.LoDTensor(xs, [[0, 2, 6]])}, fetch_list=[out],
                             scope=fd.Scope(), return_numpy=False)
    expected = np.concatenate([np.cumsum(xs[:2], 0), np.cumsum(xs[2:], 0)])
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    assert got.lod() == [[0, 2, 6]]


def test_training_a_recurrent_group_lowers_the_loss():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 2], dtype="float32", lod_level=1)
        y = fd.data("y", [None, 1], dtype="float32")

        def step(x_t):
            h = fd.fc([x_t, fd.memory("h", size=8)], size=8, act="tanh", name="h")
            return h
        h = fd.recurrent_group(step, x)
        pred = fd.fc(h, size=1)
        loss = fd.mean(fd.square_error_cost(pred, y))
        fd.optimizer.Adam(learning_rate=0.02).minimize(loss)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    xs = rng.standard_normal((20, 2)).astype("float32")
    lod = [[0, 5, 9, 16, 20]]
    ys = np.concatenate([np.cumsum(xs[a:b, :1], 0) for a, b in zip(lod[0], lod[0][1:])]) * 0.3
    losses = [exe.run(main, feed={"x": fd.LoDTensor(xs, lod), "y": ys}, fetch_list=[loss],
                      scope=scope)[0].item() for _ in range(150)]
    assert losses[-1] < 0.2 * losses[0]


def test_mixed_layer_inside_a_step_matches_the_loop():
    """h_t = tanh(x_t W0 + h_{t-1} W1 + b) written as a mixed_layer in the step."""
    lod = [0, 2, 5, 6]
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, D], dtype="float64", lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, H], dtype="float64")

        def step(x_t):
            h_pre = fd.memory("h", size=H)
            with fd.mixed_layer(size=H, act="tanh", bias_attr=fd.ParamAttr("b"), name="h") as m:
                m += fd.full_matrix_projection(x_t, param_attr=fd.ParamAttr("w0"))
                m += fd.full_matrix_projection(h_pre, param_attr=fd.ParamAttr("w1"))
            return m.output
        out = fd.recurrent_group(step, x)
        loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
        fd.append_backward(loss)
    assert {op.attr("op_namescope") for op in main.block(1).ops} == {"/h/"}
    a = _params(False)
    a.update(x=rng.standard_normal((lod[-1], D)), wt=rng.standard_normal((lod[-1], H)))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    for p in ("w0", "w1", "b"):
        scope.find_var(p).get_tensor().set(a[p])
    names = ["w0", "w1", "b", "x"]
    got = exe.run(main, feed={"x": fd.LoDTensor(a["x"], [lod]), "wt": a["wt"]},
                  fetch_list=[out] + [n + "@GRAD" for n in names], scope=scope)
    np.testing.assert_allclose(got[0], _rnn_loop(a, lod), atol=1e-12)

    def loss_of(arrays):
        return float(np.sum(_rnn_loop(arrays, lod) * arrays["wt"]))
    for name, g in zip(names, got[1:]):
        np.testing.assert_allclose(g, _numeric_grad(loss_of, a, name), rtol=1e-7, atol=1e-8,
                                   err_msg=name)


def test_a_recurrent_program_validates_round_trips_through_files_and_prunes(tmp_path):
    from fluidscope.engine import io as eio
    from fluidscope.engine.ir.validate import find_problems

    main, startup, out, loss = _build(boot=True)
    assert find_problems(main.desc) == []
    path = tmp_path / "rnn.pdmodel"
    eio.save_program(main.desc, str(path))
    loaded = eio.load_program(str(path))
    assert loaded.SerializeToString() == main.desc.SerializeToString()
    scope = fd.Scope()
    exe = fd.Executor()
    exe.run(startup, scope=scope)
    lod = [0, 2, 5]
    feed = {"x": fd.LoDTensor(rng.standard_normal((5, D)), [lod]),
            "wt": rng.standard_normal((5, H)), "h0": rng.standard_normal((2, H))}
    a = exe.run(main, feed=feed, fetch_list=[out.name, "w1@GRAD"], scope=scope)
    b = exe.run(loaded, feed=feed, fetch_list=[out.name, "w1@GRAD"], scope=scope)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    # An inference clone keeps the step block and drops the backward.
    test_prog = main.clone(for_test=True)
    assert find_problems(test_prog.desc) == []
    assert not any(op.type == "recurrent_grad" for op in test_prog.global_block().ops)
    c, = exe.run(test_prog, feed=feed, fetch_list=[out.name], scope=scope)
    np.testing.assert_array_equal(c, a[0])


def test_a_sequence_op_inside_a_step_is_a_clear_error():
    with fd.program_guard(fd.Program(), fd.Program()):
        x = fd.data("x", [None, 2], dtype="float64", lod_level=1)
        with pytest.raises(DesignError, match="input 'x' must be a sequence"):
            fd.recurrent_group(lambda x_t: fd.sequence_softmax(x_t), x)
