"""The layers of convolutional and modern networks (designer/layers/conv.py, norm.py,
rnn_layers.py): shapes, numbers against numpy references, training (gradients reach every
parameter; a LeNet learns), the inference switch, errors naming the layer and the user's
line, and the design round trip. Paddle's own layers are compared in test_cnn_paddle.py.
"""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import fluidscope.designer as fd
from fluidscope.engine import io as engine_io

from design_models import lenet, lenet_code, program_bytes

RNG = np.random.default_rng(7)


def run(build, feed, dtype="float32"):
    """Build ``build(**data vars)`` in a fresh program, run startup and main once; returns
    (fetched outputs, scope). ``feed``: name -> array (the data shape is its shape with a
    free batch dim)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        data = {n: fd.data(n, [None] + list(v.shape[1:]), str(v.dtype)) for n, v in feed.items()}
        outs = build(**data)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    with fd.scope_guard(scope):
        exe.run(startup)
        got = exe.run(main, feed=feed, fetch_list=outs)
    return got, scope, main


def param(scope, name):
    return np.array(scope.find_var(name).get_tensor())


# ------------------------------------------------------------------ numpy references
def conv_reference(x, w, stride, pads, dilation, groups):
    """Direct convolution, NCHW, pads [top, bottom, left, right]."""
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    kh, kw = w.shape[2:]
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    win = sliding_window_view(xp, span, axis=(2, 3))[:, :, ::stride[0], ::stride[1],
                                                     ::dilation[0], ::dilation[1]]
    cin, cout = x.shape[1] // groups, w.shape[0] // groups
    parts = [np.einsum("nchwij,mcij->nmhw", win[:, g * cin:(g + 1) * cin],
                       w[g * cout:(g + 1) * cout]) for g in range(groups)]
    return np.concatenate(parts, axis=1)


def pool_reference(x, k, s, reduce):
    win = sliding_window_view(x, k, axis=(2, 3))[:, :, ::s[0], ::s[1]]
    return reduce(win, axis=(-2, -1))


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def rnn_reference(mode, x, lengths, weights, hidden, dirs):
    """One layer of Paddle's fused rnn, batch-major x [N, T, I]; weights as WeightList
    [W_ih, W_hh per direction, then b_ih, b_hh per direction]. (out, [h], [c])."""
    n, steps, _ = x.shape
    outs, last_h, last_c = [], [], []
    for d in range(dirs):
        w_ih, w_hh = weights[2 * d], weights[2 * d + 1]
        b_ih, b_hh = weights[2 * dirs + 2 * d], weights[2 * dirs + 2 * d + 1]
        h, c = np.zeros((n, hidden)), np.zeros((n, hidden))
        out = np.zeros((n, steps, hidden))
        order = range(steps) if d == 0 else range(steps - 1, -1, -1)
        for t in order:
            valid = (t < lengths)[:, None]
            pre = x[:, t] @ w_ih.T + b_ih
            hh = h @ w_hh.T + b_hh
            if mode == "LSTM":
                i, f, g, o = np.split(pre + hh, 4, axis=1)
                c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
                h_new = sigmoid(o) * np.tanh(c_new)
                c = np.where(valid, c_new, c)
            else:
                xr, xz, xc = np.split(pre, 3, axis=1)
                hr, hz, hc = np.split(hh, 3, axis=1)
                r, z = sigmoid(xr + hr), sigmoid(xz + hz)
                h_new = z * h + (1 - z) * np.tanh(xc + r * hc)
            h = np.where(valid, h_new, h)
            out[:, t] = np.where(valid, h_new, 0.0)
        outs.append(out)
        last_h.append(h)
        last_c.append(c)
    return np.concatenate(outs, axis=2), np.stack(last_h), np.stack(last_c)


# ------------------------------------------------------------------ shapes
@pytest.mark.parametrize("kwargs, shape", [
    ({"num_filters": 4, "filter_size": 3}, [-1, 4, 6, 8]),
    ({"num_filters": 4, "filter_size": [3, 1], "padding": 1}, [-1, 4, 8, 12]),
    ({"num_filters": 2, "filter_size": 3, "stride": 2, "padding": "SAME"}, [-1, 2, 4, 5]),
    ({"num_filters": 2, "filter_size": 3, "padding": "valid", "dilation": 2}, [-1, 2, 4, 6]),
    ({"num_filters": 6, "filter_size": 3, "groups": 3, "padding": [0, 1, 2, 3]}, [-1, 6, 7, 13]),
])
def test_conv2d_output_shapes(kwargs, shape):
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 3, 8, 10])
        assert list(fd.conv2d(x, **kwargs).shape) == shape


def test_nhwc_and_image_layer_shapes():
    with fd.program_guard(fd.Program(), fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 8, 10, 3])
        y = fd.conv2d(x, 5, 3, padding=1, data_format="NHWC")
        assert list(y.shape) == [-1, 8, 10, 5]
        assert list(fd.pool2d(y, 2, pool_stride=2, data_format="NHWC").shape) == [-1, 4, 5, 5]
        img = fd.data("img", [None, 3, 7, 7])
        assert list(fd.pool2d(img, 2, pool_stride=2, ceil_mode=True).shape) == [-1, 3, 4, 4]
        assert list(fd.pool2d(img, global_pooling=True, pool_type="avg").shape) == [-1, 3, 1, 1]
        assert list(fd.adaptive_pool2d(img, [2, 3]).shape) == [-1, 3, 2, 3]
        assert list(fd.conv2d_transpose(img, 4, filter_size=3, stride=2).shape) == [-1, 4, 15, 15]
        up = fd.conv2d_transpose(img, 4, output_size=14, stride=2, padding=1)
        assert list(up.shape) == [-1, 4, 14, 14]
        assert list(fd.flatten(img, start_axis=1).shape) == [-1, 147]
        assert list(fd.flatten(img, 2, 3).shape) == [-1, 3, 49]


def test_parameters_shapes_names_and_initial_values():
    def build(x):
        y = fd.conv2d(x, 4, 3, groups=2)
        z = fd.batch_norm(y)
        fd.layer_norm(z, begin_norm_axis=2)
        return y

    _, scope, main = run(build, {"x": RNG.standard_normal((2, 6, 5, 5)).astype("float32")})
    block = main.global_block()
    shapes = {p.name: list(p.shape) for p in main.all_parameters()}
    assert shapes == {"conv2d_0.w_0": [4, 3, 3, 3], "conv2d_0.b_0": [4],
                      "batch_norm_0.w_0": [4], "batch_norm_0.b_0": [4],
                      "batch_norm_0.w_1": [4], "batch_norm_0.w_2": [4],
                      "layer_norm_0.w_0": [9], "layer_norm_0.b_0": [9]}
    for stat in ("batch_norm_0.w_1", "batch_norm_0.w_2"):  # running stats: saved, not trained
        assert block.var(stat).persistable and block.var(stat).stop_gradient
    assert not block.var("batch_norm_0.w_0").stop_gradient
    np.testing.assert_array_equal(param(scope, "batch_norm_0.w_0"), np.ones(4))
    np.testing.assert_array_equal(param(scope, "layer_norm_0.b_0"), np.zeros(9))


def test_conv_filters_start_he_normal_as_in_paddle():
    startup = fd.Program()
    with fd.program_guard(fd.Program(), startup), fd.unique_name.guard():
        fd.conv2d(fd.data("x", [None, 6, 5, 5]), 4, 3, groups=2)
    init = startup.global_block().ops[0]
    assert init.desc.type == "gaussian_random" and init.output("Out") == ["conv2d_0.w_0"]
    assert init.attr("std") == pytest.approx(np.sqrt(2 / (3 * 3 * 6)))  # all C, not C/groups


def test_depthwise_conv2d_is_paddles_choice():
    with fd.program_guard(fd.Program(), fd.Program()), fd.unique_name.guard():
        x = fd.data("x", [None, 4, 6, 6])
        fd.conv2d(x, 8, 3, groups=4, use_cudnn=False)
        fd.conv2d(x, 8, 3, groups=4)
        main = fd.default_main_program()
    convs = [op.desc.type for op in main.global_block().ops if "conv" in op.desc.type]
    assert convs == ["depthwise_conv2d", "conv2d"]
    assert main.global_block().var("depthwise_conv2d_0.w_0").shape == (8, 1, 3, 3)


# ------------------------------------------------------------------ numbers
@pytest.mark.parametrize("kwargs, pads", [
    ({"stride": 1, "padding": 1}, [1, 1, 1, 1]),
    ({"stride": 2, "padding": [1, 0, 2, 1], "dilation": [1, 2]}, [1, 0, 2, 1]),
    ({"stride": 1, "padding": 0, "groups": 2}, [0, 0, 0, 0]),
])
def test_conv2d_matches_direct_convolution(kwargs, pads):
    x = RNG.standard_normal((2, 4, 7, 9))
    bias = fd.ParamAttr(initializer=fd.Constant(-0.25))
    (y,), scope, _ = run(lambda x: fd.conv2d(x, 6, 3, act="relu", bias_attr=bias, **kwargs),
                         {"x": x})
    stride = [kwargs["stride"]] * 2
    dilation = kwargs.get("dilation", [1, 1])
    expected = conv_reference(x, param(scope, "conv2d_0.w_0"), stride, pads, dilation,
                              kwargs.get("groups", 1))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, np.maximum(expected - 0.25, 0.0), rtol=1e-10, atol=1e-10)


def test_pool_layers_match_numpy():
    x = RNG.standard_normal((2, 3, 6, 8)).astype("float32")
    (mx, av, gl, ad), _, _ = run(lambda x: [
        fd.pool2d(x, 2, "max", 2), fd.pool2d(x, [3, 2], "avg", [3, 2]),
        fd.pool2d(x, pool_type="avg", global_pooling=True), fd.adaptive_pool2d(x, [2, 4], "max")],
        {"x": x})
    np.testing.assert_allclose(mx, pool_reference(x, (2, 2), (2, 2), np.max), rtol=1e-6)
    np.testing.assert_allclose(av, pool_reference(x, (3, 2), (3, 2), np.mean), rtol=1e-6)
    np.testing.assert_allclose(gl, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ad, pool_reference(x, (3, 2), (3, 2), np.max), rtol=1e-6)


def test_batch_norm_trains_on_batch_stats_and_updates_running_ones():
    x = RNG.standard_normal((4, 3, 5, 5)) * 2.0 + 1.5
    (y,), scope, _ = run(lambda x: fd.batch_norm(x, momentum=0.8, epsilon=1e-3), {"x": x})
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    expected = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-3)
    np.testing.assert_allclose(y, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(param(scope, "batch_norm_0.w_1"), 0.2 * mean, rtol=1e-6)
    np.testing.assert_allclose(param(scope, "batch_norm_0.w_2"), 0.8 + 0.2 * var, rtol=1e-6)


def test_batch_norm_inference_switch_uses_running_stats():
    x = RNG.standard_normal((4, 3, 2, 2)) + 3.0
    (y,), scope, _ = run(lambda x: fd.batch_norm(x, is_test=True, act="relu"), {"x": x})
    np.testing.assert_allclose(y, np.maximum(x / np.sqrt(1 + 1e-5), 0), rtol=1e-6)
    np.testing.assert_array_equal(param(scope, "batch_norm_0.w_1"), np.zeros(3))
    # clone(for_test=True) flips a training program's batch norm to the running stats
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        fd.batch_norm(fd.data("x", [None, 3, 2, 2]))
    ops = main.clone(for_test=True).global_block().ops
    assert [op.attr("is_test") for op in ops if op.desc.type == "batch_norm"] == [True]


def test_layer_norm_matches_numpy():
    x = RNG.standard_normal((2, 3, 4))
    (y, unshifted), _, _ = run(lambda x: [fd.layer_norm(x, begin_norm_axis=2),
                                          fd.layer_norm(x, shift=False, scale=False, act="tanh")],
                               {"x": x})
    for out, axes, act in ((y, (2,), lambda v: v), (unshifted, (1, 2), np.tanh)):
        mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
        np.testing.assert_allclose(out, act((x - mean) / np.sqrt(var + 1e-5)), rtol=1e-9)


def test_flatten_and_activations_match_numpy():
    x = RNG.standard_normal((2, 3, 2, 2)) * 5
    (f, g, r6, lr, hs), _, _ = run(lambda x: [
        fd.flatten(x, 1), fd.gelu(x, approximate=True), fd.relu6(x), fd.leaky_relu(x, alpha=0.1),
        fd.hard_swish(x)], {"x": x})
    np.testing.assert_array_equal(f, x.reshape(2, 12))
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(g, tanh_gelu, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(r6, np.clip(x, 0, 6))
    np.testing.assert_allclose(lr, np.where(x > 0, x, 0.1 * x))
    np.testing.assert_allclose(hs, x * np.clip(x + 3, 0, 6) / 6, rtol=1e-12)


@pytest.mark.parametrize("mode, direction", [("LSTM", "forward"), ("LSTM", "bidirect"),
                                             ("GRU", "bidirect")])
def test_lstm_and_gru_match_a_numpy_recurrence_with_padding(mode, direction):
    x = RNG.standard_normal((3, 5, 2))
    lengths = np.array([5, 2, 4], dtype=np.int64)
    layer = fd.lstm if mode == "LSTM" else fd.gru
    got, scope, main = run(
        lambda x, lengths: layer(x, 3, direction=direction, sequence_length=lengths),
        {"x": x, "lengths": lengths})
    rnn = next(op for op in main.global_block().ops if op.desc.type == "rnn")
    weights = [param(scope, n) for n in rnn.input("WeightList")]
    dirs = 2 if direction == "bidirect" else 1
    out, h, c = rnn_reference(mode, x, lengths, weights, 3, dirs)
    np.testing.assert_allclose(got[0], out, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[1], h, rtol=1e-9, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(got[2], c, rtol=1e-9, atol=1e-12)
    assert rnn.input("WeightList")[:2] == ["lstm_0.w_0" if mode == "LSTM" else "gru_0.w_0",
                                           "lstm_0.w_1" if mode == "LSTM" else "gru_0.w_1"]


def test_two_layer_time_major_lstm_with_initial_states():
    x = RNG.standard_normal((4, 2, 3))  # [T, N, I]
    h0, c0 = RNG.standard_normal((2, 2, 5)), RNG.standard_normal((2, 2, 5))
    got, _, _ = run(lambda x, h0, c0: fd.lstm(x, 5, num_layers=2, time_major=True, h_0=h0,
                                              c_0=c0), {"x": x, "h0": h0, "c0": c0})
    assert [g.shape for g in got] == [(4, 2, 5), (2, 2, 5), (2, 2, 5)]
    np.testing.assert_allclose(got[0][-1], got[1][-1], rtol=1e-12)  # last layer's last step


def test_multi_head_self_attention_matches_numpy():
    x = np.random.default_rng(11).standard_normal((2, 4, 6))
    causal = np.triu(np.full((4, 4), -1e9), 1)  # a float mask: added to the scores
    (out, weights), scope, _ = run(
        lambda x, causal: fd.multi_head_attention(x, 3, attn_mask=causal, need_weights=True),
        {"x": x, "causal": causal[None]})
    p = {k: param(scope, f"multi_head_attention_0.{k}") for k in
         ("w_0", "b_0", "w_1", "b_1", "w_2", "b_2", "w_3", "b_3")}

    def heads(y):  # [N, L, 6] -> [N, 3, L, 2]
        return y.reshape(2, 4, 3, 2).transpose(0, 2, 1, 3)

    q, k, v = (heads(x @ p[f"w_{i}"] + p[f"b_{i}"]) for i in range(3))
    # the scale op's attribute is a float32 (as in Paddle): 2 ** -0.5 rounded so
    scores = (q * float(np.float32(2 ** -0.5))) @ k.transpose(0, 1, 3, 2) + causal
    expected_weights = np.exp(scores - scores.max(-1, keepdims=True))
    expected_weights /= expected_weights.sum(-1, keepdims=True)
    context = (expected_weights @ v).transpose(0, 2, 1, 3).reshape(2, 4, 6)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out, context @ p["w_3"] + p["b_3"], rtol=1e-9, atol=1e-12)
    assert np.all(weights[:, :, 0, 1:] < 1e-20)  # the first position sees only itself


# ------------------------------------------------------------------ training
def test_gradients_reach_every_parameter_and_match_central_differences():
    x = RNG.standard_normal((2, 2, 5, 5))
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        xv = fd.data("x", [None, 2, 5, 5], "float64")
        xv.stop_gradient = False
        y = fd.batch_norm(fd.conv2d(xv, 3, 3, padding=1), act="relu")
        y = fd.layer_norm(fd.pool2d(y, 2, "avg", 1), begin_norm_axis=1)
        seq = fd.reshape(fd.conv2d_transpose(y, 2, filter_size=2), [-1, 2, 25])
        out, _ = fd.gru(fd.transpose(seq, [0, 2, 1]), 3, direction="bidirect")
        loss = fd.reduce_mean(fd.square(out))
        pairs = fd.append_backward(loss)
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    names = [p.name for p, _ in pairs]
    assert {"conv2d_0.w_0", "batch_norm_0.w_0", "layer_norm_0.w_0", "conv2d_transpose_0.w_0",
            "gru_0.w_0", "gru_0.b_3"} <= set(names)
    assert "batch_norm_0.w_1" not in names  # running statistics get no gradient
    with fd.scope_guard(scope):
        exe.run(startup)
        grads = exe.run(main, feed={"x": x}, fetch_list=[g for _, g in pairs] + ["x@GRAD"])
        assert all(np.abs(g).max() > 0 and np.isfinite(g).all() for g in grads)

        def loss_at(name, index, delta):
            tensor = scope.find_var(name).get_tensor()
            value = np.array(tensor)
            value.flat[index] += delta
            tensor.set(value)
            (result,) = exe.run(main, feed={"x": x}, fetch_list=[loss])
            value.flat[index] -= delta
            tensor.set(value)
            return float(result)

        for (name, grad) in ((names[0], grads[0]), ("gru_0.w_1", grads[names.index("gru_0.w_1")])):
            for index in (0, grad.size // 2):
                numeric = (loss_at(name, index, 1e-6) - loss_at(name, index, -1e-6)) / 2e-6
                assert numeric == pytest.approx(grad.flat[index], rel=1e-4, abs=1e-8)


def test_lenet_trains_on_random_data():
    main, startup = lenet_code(size=12, classes=3)
    loss = main.global_block().var("mean_0.tmp_0")
    rng = np.random.default_rng(3)
    feed = {"image": rng.standard_normal((16, 1, 12, 12)).astype("float32"),
            "label": rng.integers(0, 3, (16, 1)).astype("int64")}
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    with fd.scope_guard(scope):
        exe.run(startup)
        losses = [float(exe.run(main, feed=feed, fetch_list=[loss])[0]) for _ in range(40)]
    assert losses[-1] < 0.3 * losses[0], losses


# ------------------------------------------------------------------ errors
def _error(build, *shapes):
    with fd.program_guard(fd.Program(), fd.Program()), fd.unique_name.guard():
        data = [fd.data(f"v{k}", s, "int64" if s == [None] else "float32")
                for k, s in enumerate(shapes)]
        with pytest.raises(fd.DesignError) as info:
            build(*data)
    message = str(info.value)
    assert f"{__file__}:" in message, message  # the user's line
    return message


def test_errors_name_the_layer_the_shapes_and_the_users_line():
    msg = _error(lambda x: fd.conv2d(x, 4, 3), [None, 8])
    assert "conv2d layer 'conv2d_0'" in msg and "[-1, 8]" in msg and "4-D [N, C, H, W]" in msg
    assert "channel dim must be known" in _error(lambda x: fd.conv2d(x, 4, 3), [None, -1, 5, 5])
    assert "groups=4 does not divide" in _error(lambda x: fd.conv2d(x, 4, 3, groups=4),
                                                [None, 6, 5, 5])
    msg = _error(lambda x: fd.conv2d(x, 4, 7), [None, 3, 5, 5])  # the op's inference
    assert "conv2d layer 'conv2d_0'" in msg and "Input [-1, 3, 5, 5]" in msg
    assert "'SAME' or 'VALID'" in _error(lambda x: fd.conv2d(x, 4, 3, padding="FULL"),
                                         [None, 3, 5, 5])
    assert "list of 2 ints" in _error(lambda x: fd.conv2d(x, 4, [3, 3, 3]), [None, 3, 5, 5])
    assert "output_size" in _error(lambda x: fd.conv2d_transpose(x, 4), [None, 3, 5, 5])
    assert "pool_size must be given" in _error(lambda x: fd.pool2d(x), [None, 3, 5, 5])
    assert "ceil_mode" in _error(lambda x: fd.pool2d(x, 2, pool_padding="VALID", ceil_mode=True),
                                 [None, 3, 5, 5])
    assert "pool_type must be 'max' or 'avg'" in _error(
        lambda x: fd.adaptive_pool2d(x, 2, "min"), [None, 3, 5, 5])
    assert "stop_axis=5" in _error(lambda x: fd.flatten(x, 1, 5), [None, 3, 5, 5])
    assert "comes after" in _error(lambda x: fd.flatten(x, 2, 1), [None, 3, 5, 5])
    msg = _error(lambda x: fd.batch_norm(x), [None])
    assert "batch_norm layer 'batch_norm_0'" in msg and "needs a channel dim" in msg
    assert "begin_norm_axis=3" in _error(lambda x: fd.layer_norm(x, begin_norm_axis=3),
                                         [None, 3, 5])
    msg = _error(lambda x: fd.lstm(x, 4), [None, 5])
    assert "lstm layer 'lstm_0'" in msg and "[N, T, input_size]" in msg
    msg = _error(lambda x, h: fd.gru(x, 4, num_layers=2, h_0=h), [None, 5, 3], [1, None, 4])
    assert "h_0" in msg and "[2, -1, 4]" in msg
    assert "int64 or int32 vector" in _error(
        lambda x, n: fd.lstm(x, 4, sequence_length=n), [None, 5, 3], [None, 1])
    assert "direction" in _error(lambda x: fd.gru(x, 4, direction="both"), [None, 5, 3])
    msg = _error(lambda q: fd.multi_head_attention(q, 3), [None, 5, 8])
    assert "multi_head_attention layer" in msg and "dividing the query's 8 features" in msg
    assert "same length" in _error(lambda q, k, v: fd.multi_head_attention(q, 2, k, v),
                                   [None, 5, 8], [None, 4, 8], [None, 3, 8])
    assert "names a parameter" in _error(lambda x: fd.lstm(x, 4, param_attr="w"), [None, 5, 3])


# ------------------------------------------------------------------ designs
def test_lenet_written_in_code_comes_back_as_layer_nodes_and_rebuilds_its_bytes():
    main, startup = lenet_code()
    d = fd.Design.from_program(main)
    assert d == lenet()
    assert [n.layer for n in d.nodes.values()][2:7] == ["conv2d", "pool2d", "conv2d", "pool2d",
                                                 "flatten"]
    built = d.build(scope=fd.Scope())
    assert built.errors == {}
    assert built.shapes["conv2d_0"] == [[-1, 6, 28, 28]]
    assert built.shapes["flatten_0"] == [[-1, 400]]
    assert program_bytes(built.main) == program_bytes(main)
    assert program_bytes(built.startup) == program_bytes(startup)
    script = fd.program_to_python(main)
    assert "fd.conv2d(input=image, num_filters=6, filter_size=5, padding=2" in script
    assert program_bytes(_run_script(script)[0]) == program_bytes(main)


def _run_script(source):
    # Executing our own generated script is the point (as in test_design_codegen.py);
    # nothing a user loads is ever executed by fluidscope.
    namespace = {}
    exec(compile(source, "generated_design.py", "exec"), namespace)  # noqa: S102
    return namespace["main_program"], namespace["startup_program"]


def every_new_layer():
    """A design using each new layer (and its second outputs), a loss and SGD."""
    d = fd.Design()
    img = d.add("data", name="img", shape=[None, 3, 8, 8])
    steps = d.add("data", name="steps", shape=[None, 4, 6])
    c = d.add("conv2d", inputs={"input": img}, num_filters=4, filter_size=[3, 3],
              padding=[[0, 0], [0, 0], [1, 1], [1, 1]], act="hard_swish")
    b = d.add("batch_norm", inputs={"input": c}, is_test=True)
    t = d.add("conv2d_transpose", inputs={"input": b}, num_filters=2, filter_size=2, stride=2)
    a = d.add("adaptive_pool2d", inputs={"input": t}, pool_size=[1, 2], pool_type="avg")
    f = d.add("flatten", inputs={"x": a}, start_axis=1)
    n = d.add("layer_norm", inputs={"input": f}, act="gelu")
    lstm = d.add("lstm", inputs={"input": steps}, hidden_size=4, direction="bidirect")
    last = d.add("flatten", inputs={"x": (lstm, 1)}, start_axis=0, stop_axis=1)
    mask = d.add("data", name="mask", shape=[None, 1, 4, 4], dtype="bool")
    attend = d.add("multi_head_attention", inputs={"query": lstm, "attn_mask": mask},
                   num_heads=2, need_weights=True)
    weights = d.add("flatten", inputs={"x": (attend, 1)}, start_axis=1)
    both = d.add("concat", inputs={"input": [n, last]}, axis=0)
    total = d.add("elementwise_add", inputs={"x": d.add("mean", inputs={"x": both}),
                                             "y": d.add("mean", inputs={"x": weights})})
    d.set_loss(total)
    d.set_optimizer("SGD", learning_rate=0.1)
    return d


def test_a_design_with_every_new_layer_round_trips_through_its_file(tmp_path):
    d = every_new_layer()
    c, lstm, attend = "conv2d_0", "lstm_0", "multi_head_attention_0"
    built = d.build(scope=fd.Scope())
    assert built.errors == {}
    assert built.shapes[lstm] == [[-1, 4, 8], [2, -1, 4], [2, -1, 4]]
    assert built.shapes[attend] == [[-1, 4, 8], [-1, 2, 4, 4]]
    path = tmp_path / "cnn.design.json"
    d.save(str(path))
    again = fd.Design.load(str(path))
    assert again == d
    assert again.build(scope=fd.Scope()).main.desc.SerializeToString() == \
        built.main.desc.SerializeToString()
    # and back from the program it builds, and through the Python it generates
    back = fd.Design.from_program(built.main)
    assert back.node(c).layer == "conv2d" and back.node(lstm).layer == "lstm"
    assert back == d.from_program(built.main)
    main, startup = _run_script(d.to_python())
    assert main.desc.SerializeToString() == built.main.desc.SerializeToString()
    assert startup.desc.SerializeToString() == built.startup.desc.SerializeToString()


@pytest.mark.parametrize("make", [lenet, every_new_layer])
def test_a_saved_cnn_training_program_loads_as_op_nodes_and_rebuilds_its_bytes(tmp_path, make):
    built = make().build(scope=fd.Scope())
    path = tmp_path / "model.pdmodel"
    engine_io.save_program(built.main.desc, str(path))
    loaded = fd.Program.from_desc(engine_io.load_program(str(path)))
    d = fd.Design.from_program(loaded)  # no layer record in a file: one node per op
    assert {n.layer for n in d.nodes.values()} == {"variable", "op"}
    assert {"conv2d", "pool2d", "conv2d_grad"} <= {n.attrs.get("type") for n in d.nodes.values()}
    again = d.build(scope=fd.Scope(), optimize=False)
    assert again.errors == {}
    assert again.main.desc.SerializeToString() == loaded.desc.SerializeToString()
