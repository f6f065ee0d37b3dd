"""lstmemory_group / gru_group (ordinary ops in a recurrent group) agree with the fused
dynamic_lstm / dynamic_gru, forward and every gradient, given the same weights (float64)."""
import numpy as np
import pytest

import fluidscope.designer as fd

D = 3
LOD = [0, 4, 5, 7, 10]
rng = np.random.default_rng(11)


def _run(build, params, x, boots, wrt):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        xv = fd.data("x", [None, x.shape[1]], dtype="float64", lod_level=1)
        xv.stop_gradient = False
        wt = fd.data("wt", [None, D], dtype="float64")
        boot_vars = {}
        for k in boots:
            boot_vars[k] = fd.data(k, [None, D], dtype="float64")
            boot_vars[k].stop_gradient = False
        h = build(xv, boot_vars)
        loss = fd.reduce_sum(fd.elementwise_mul(h, wt))
        fd.append_backward(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    names = sorted(p.name for p in main.all_parameters())
    for name, value in zip(names, params(names)):
        scope.find_var(name).get_tensor().set(value)
    wt_value = np.random.default_rng(3).standard_normal((LOD[-1], D))
    feed = {"x": fd.LoDTensor(x, [LOD]), "wt": wt_value, **boots}
    fetch = [h, "x@GRAD"] + [k + "@GRAD" for k in boots] + [n + "@GRAD" for n in names]
    return dict(zip(["h", "x"] + list(boots) + names, exe.run(main, feed=feed, fetch_list=fetch,
                                                              scope=scope)))


@pytest.mark.parametrize("peepholes", [True, False], ids=["peepholes", "plain"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_lstmemory_group_equals_dynamic_lstm(peepholes, reverse):
    weight = rng.standard_normal((D, 4 * D)) * 0.5
    bias = rng.standard_normal((1, (7 if peepholes else 4) * D)) * 0.5
    x = rng.standard_normal((LOD[-1], 4 * D))
    boots = {"h0": rng.standard_normal((4, D)), "c0": rng.standard_normal((4, D))}

    fused = _run(lambda xv, b: fd.dynamic_lstm(xv, 4 * D, h_0=b["h0"], c_0=b["c0"],
                                               use_peepholes=peepholes, is_reverse=reverse,
                                               name="fused")[0],
                 lambda names: [bias, weight], x, boots, None)

    def group_params(names):  # sorted: g.b_0 (bias), g.b_1..3 (peepholes), g.w_0
        values = {"g.b_0": bias[0, :4 * D], "g.w_0": weight}
        for k in range(3 if peepholes else 0):
            values[f"g.b_{k + 1}"] = bias[0, (4 + k) * D:(5 + k) * D]
        return [values[n] for n in names]

    group = _run(lambda xv, b: fd.lstmemory_group(xv, D, name="g", memory_boot=b["h0"],
                                                  state_boot=b["c0"], reverse=reverse,
                                                  use_peepholes=peepholes),
                 group_params, x, boots, None)
    for key in ("h", "x", "h0", "c0"):
        np.testing.assert_allclose(group[key], fused[key], atol=1e-10, err_msg=key)
    np.testing.assert_allclose(group["g.w_0"], fused["fused.w_0"], atol=1e-10)
    fused_bias_grad = fused["fused.b_0"][0]
    np.testing.assert_allclose(group["g.b_0"], fused_bias_grad[:4 * D], atol=1e-10)
    for k in range(3 if peepholes else 0):
        np.testing.assert_allclose(group[f"g.b_{k + 1}"],
                                   fused_bias_grad[(4 + k) * D:(5 + k) * D], atol=1e-10)


def _numpy_gru(x, h0, w_ur, w_c, origin_mode, reverse):
    """Paddle's GRU (gates u, r then candidate c) step by step over each sequence of LOD;
    a reversed sequence starts from its last row."""
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h = np.zeros((LOD[-1], D))
    for s, (start, end) in enumerate(zip(LOD[:-1], LOD[1:])):
        h_pre = h0[s]
        for t in (range(end - 1, start - 1, -1) if reverse else range(start, end)):
            u, r = np.split(sigmoid(x[t, :2 * D] + h_pre @ w_ur), 2)
            c = np.tanh(x[t, 2 * D:] + (r * h_pre) @ w_c)
            h[t] = u * h_pre + (1 - u) * c if origin_mode else (1 - u) * h_pre + u * c
            h_pre = h[t]
    return h


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("origin_mode", [False, True], ids=["paddle", "origin"])
def test_gru_group_equals_dynamic_gru(origin_mode, reverse):
    weight = rng.standard_normal((D, 3 * D)) * 0.5
    bias = rng.standard_normal((1, 3 * D)) * 0.5
    x = rng.standard_normal((LOD[-1], 3 * D))
    boots = {"h0": rng.standard_normal((4, D))}
    fused = _run(lambda xv, b: fd.dynamic_gru(xv, D, h_0=b["h0"], origin_mode=origin_mode,
                                              is_reverse=reverse),
                 lambda names: [bias, weight], x, boots, None)
    flat = weight.reshape(-1)
    w_ur, w_c = flat[:2 * D * D].reshape(D, 2 * D), flat[2 * D * D:].reshape(D, D)
    group = _run(lambda xv, b: fd.gru_group(xv, D, name="g", memory_boot=b["h0"],
                                            origin_mode=origin_mode, reverse=reverse),
                 lambda names: [bias[0], w_ur, w_c], x, boots, None)
    for key in ("h", "x", "h0"):
        np.testing.assert_allclose(group[key], fused[key], atol=1e-10, err_msg=key)
    # and against the GRU written out in numpy, so a shared mistake (direction, gate order)
    # of the fused op and the group cannot hide
    np.testing.assert_allclose(group["h"], _numpy_gru(x + bias, boots["h0"], w_ur, w_c,
                                                      origin_mode, reverse), atol=1e-12)
    np.testing.assert_allclose(group["g.b_0"], fused["gru_0.b_0"][0], atol=1e-10)
    fused_w = fused["gru_0.w_0"].reshape(-1)
    np.testing.assert_allclose(group["g.w_0"], fused_w[:2 * D * D].reshape(D, 2 * D), atol=1e-10)
    np.testing.assert_allclose(group["g.w_1"], fused_w[2 * D * D:].reshape(D, D), atol=1e-10)


def test_group_ops_are_named_after_the_layer():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()):
        x = fd.data("x", [None, 8], lod_level=1)
        fd.lstmemory_group(x, 2, name="enc")
    step_ops = main.block(1).ops
    assert step_ops and all(op.attr("op_namescope").startswith("/enc/") for op in step_ops)


def test_wrong_input_width_is_a_clear_error():
    with fd.program_guard(fd.Program(), fd.Program()):
        x = fd.data("x", [None, 10], lod_level=1)
        with pytest.raises(fd.DesignError, match=r"must be \[T, 4 \* size\]"):
            fd.lstmemory_group(x, 3)
