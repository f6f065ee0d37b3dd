"""mixed_layer (designer/layers/mixed.py): every projection and operator against numpy,
the sum + bias + activation lowering, op_namescope, design errors, training gradients
against central differences, and use inside a recurrent group."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.designer import DesignError
from op_matrix.cases_conv import conv_reference

rng = np.random.default_rng(31)
UNIFORM = fd.ParamAttr(initializer=fd.Uniform(-1.0, 1.0, seed=7))


@pytest.fixture
def progs():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        yield main, startup


def _run(main, startup, feed, fetch, return_numpy=True):
    scope = fd.Scope()
    exe = fd.Executor()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope, return_numpy=return_numpy), scope


def _p(scope, name):
    return np.array(scope.find_var(name).get_tensor())


def _layer_ops(program, scope_name):
    return [op for op in program.global_block().ops
            if op.attr("op_namescope").rstrip("/").split("/")[-1] == scope_name]


# ------------------------------------------------------------ each input
def test_each_projection_and_operator_matches_numpy(progs):
    main, startup = progs
    x = fd.data("x", [None, 6], "float64")
    ids = fd.data("ids", [None, 1], "int64")
    a, b = fd.data("a", [None, 4], "float64"), fd.data("b", [None, 4], "float64")
    layers = {
        "full": fd.mixed_layer(4, fd.full_matrix_projection(x)),
        "trans": fd.mixed_layer(4, fd.trans_full_matrix_projection(x)),
        "table": fd.mixed_layer(4, fd.table_projection(ids, vocab_size=5)),
        "slice": fd.mixed_layer(4, fd.identity_projection(x, offset=1)),
        "identity": fd.mixed_layer(0, fd.identity_projection(x)),
        "dot_mul": fd.mixed_layer(0, fd.dot_mul_projection(x, param_attr=UNIFORM)),
        "scaling": fd.mixed_layer(0, fd.scaling_projection(x, param_attr=UNIFORM)),
        "operator": fd.mixed_layer(0, fd.dot_mul_operator(a, b, scale=0.5)),
    }
    feed = {"x": rng.standard_normal((3, 6)), "ids": np.array([[1], [4], [1]], np.int64),
            "a": rng.standard_normal((3, 4)), "b": rng.standard_normal((3, 4))}
    outs, scope = _run(main, startup, feed, list(layers.values()))
    got = dict(zip(layers, outs))
    xv, w = feed["x"], lambda i: _p(scope, f"mixed_{i}.w_0")
    np.testing.assert_allclose(got["full"], xv @ w(0))
    assert w(1).shape == (4, 6)  # trans_full_matrix stores W as [size, width]
    np.testing.assert_allclose(got["trans"], xv @ w(1).T)
    np.testing.assert_allclose(got["table"], w(2)[[1, 4, 1]])
    np.testing.assert_allclose(got["slice"], xv[:, 1:5])
    np.testing.assert_allclose(got["identity"], xv)
    assert w(5).shape == (6,) and w(6).shape == (1,)
    np.testing.assert_allclose(got["dot_mul"], xv * w(5))
    np.testing.assert_allclose(got["scaling"], xv * w(6)[0])
    np.testing.assert_allclose(got["operator"], 0.5 * feed["a"] * feed["b"])
    # the ops each input lowers to
    types = {k: [op.type for op in _layer_ops(main, f"mixed_{i}")] for i, k in enumerate(layers)}
    assert types == {"full": ["mul"], "trans": ["matmul_v2"],
                     "table": ["lookup_table_v2", "reshape2"], "slice": ["slice"],
                     "identity": ["assign"], "dot_mul": ["elementwise_mul"],
                     "scaling": ["elementwise_mul"], "operator": ["elementwise_mul", "scale"]}


def test_sum_bias_activation_namescope_and_parameter_names(progs):
    main, startup = progs
    x = fd.data("x", [None, 6], "float64")
    ids = fd.data("ids", [None], "int64")
    a = fd.data("a", [None, 4], "float64")
    with fd.name_scope("encoder"):
        with fd.mixed_layer(size=4, act="tanh", bias_attr=UNIFORM) as m:
            m += fd.full_matrix_projection(x)
            m += fd.table_projection(ids, vocab_size=3)   # the line op_callstack names
            m += fd.dot_mul_operator(a, a)
    feed = {"x": rng.standard_normal((2, 6)), "ids": np.array([2, 0], np.int64),
            "a": rng.standard_normal((2, 4))}
    (out,), scope = _run(main, startup, feed, [m.output])
    expected = np.tanh(feed["x"] @ _p(scope, "mixed_0.w_0") + _p(scope, "mixed_0.w_1")[[2, 0]]
                       + feed["a"] ** 2 + _p(scope, "mixed_0.b_0"))
    np.testing.assert_allclose(out, expected)
    ops = main.global_block().ops
    assert [op.type for op in ops] == ["mul", "lookup_table_v2", "elementwise_mul", "sum",
                                      "elementwise_add", "tanh"]
    assert {op.attr("op_namescope") for op in ops} == {"/encoder/mixed_0/"}
    assert ops[1].attr("op_callstack")[0].startswith(f"{__file__}:")
    assert [p.name for p in main.all_parameters()] == ["mixed_0.w_0", "mixed_0.w_1", "mixed_0.b_0"]
    assert main.global_block().var("mixed_0.w_1").shape == (3, 4)


def test_layer_is_usable_as_its_output_variable(progs):
    main, startup = progs
    x = fd.data("x", [None, 3], "float64")
    with fd.mixed_layer(size=5) as m:
        m += fd.full_matrix_projection(x)
    assert m.name == m.output.name and m.shape == (-1, 5) and m.dtype == "float64"
    assert m == m.output and "mixed_0" in repr(m)
    y = fd.fc(m, 2)
    z = m * 2.0
    (yv, zv, mv), _ = _run(main, startup, {"x": np.ones((2, 3))}, [y, z, m.output])
    assert yv.shape == (2, 2)
    np.testing.assert_allclose(zv, 2 * mv)


# ----------------------------------------------------------------- errors
def test_size_mismatch_names_the_projection(progs):
    x = fd.data("x", [None, 6])
    ids = fd.data("ids", [None, 1], "int64")
    with pytest.raises(DesignError) as info:
        with fd.mixed_layer(size=200) as m:
            m += fd.full_matrix_projection(x)
            m += fd.table_projection(ids, size=64, vocab_size=10)
    assert str(info.value) == ("mixed_layer 'mixed_0': table_projection #2 (input ids) gives "
                               "size 64, the layer's size is 200")
    with pytest.raises(DesignError, match=r"'mixed_1': dot_mul_projection #1 \(input x\) gives "
                                          r"size 6, the layer's size is 4$"):
        with fd.mixed_layer(size=4) as m:
            m += fd.dot_mul_projection(x)
    with pytest.raises(DesignError, match=r"full_matrix_projection #2 \(input x\) gives size 3, "
                                          r"the layer's size is 6 \(from identity_projection #1"):
        with fd.mixed_layer() as m:
            m += fd.identity_projection(x)
            m += fd.full_matrix_projection(x, size=3)
    with pytest.raises(DesignError, match="same width"):
        fd.dot_mul_operator(x, fd.data("y", [None, 5]))
    with pytest.raises(DesignError, match=r"columns \[4, 8\) are not inside width 6"):
        with fd.mixed_layer(size=4) as m:
            m += fd.identity_projection(x, offset=4)


def test_misuse_is_a_clear_error(progs):
    x = fd.data("x", [None, 6])
    layer = fd.mixed_layer(size=6)
    with pytest.raises(DesignError, match="has no output until its with block ends"):
        layer.output
    with pytest.raises(DesignError, match="not entered yet"):
        layer += fd.identity_projection(x)
    with layer as m:
        with pytest.raises(DesignError, match="takes a projection or operator"):
            m += x
        m += fd.identity_projection(x)
    with pytest.raises(DesignError, match="add projections inside its with block .it is closed"):
        m += fd.identity_projection(x)
    with pytest.raises(DesignError, match="already entered"):
        m.__enter__()
    with pytest.raises(DesignError, match="'mixed_1' has no projection or operator"):
        with fd.mixed_layer(size=3) as empty:
            assert empty.items == []
    with pytest.raises(DesignError, match="no size given and no input fixes one"):
        with fd.mixed_layer() as m:
            m += fd.full_matrix_projection(x)
    with pytest.raises(DesignError, match="activation 'tanhh' is not an op"):
        fd.mixed_layer(3, act="tanhh")
    with pytest.raises(DesignError, match="give vocab_size"):
        fd.mixed_layer(3, fd.table_projection(fd.data("ids", [None, 1], "int64")))


# ----------------------------------------------------------- conv_operator
def test_conv_operator_shared_and_per_row_filters(progs):
    main, startup = progs
    img = fd.data("img", [2, 32], "float64")         # 2 channels of 4 x 4
    shared = fd.data("shared", [1, 3 * 2 * 3 * 3], "float64")
    per_row = fd.data("per_row", [2, 3 * 2 * 2 * 3], "float64")
    one = fd.mixed_layer(3 * 4 * 4, fd.conv_operator(img, shared, 3, 3, num_channels=2, padding=1))
    two = fd.mixed_layer(0, fd.conv_operator(img, per_row, filter_size=3, num_filters=3,
                                             num_channels=2, stride=2, filter_size_y=2,
                                             stride_y=1, padding=1, padding_y=0))
    feed = {k: rng.standard_normal(v.shape) for k, v in
            {"img": img, "shared": shared, "per_row": per_row}.items()}
    (o1, o2), _ = _run(main, startup, feed, [one, two])
    images = feed["img"].reshape(2, 2, 4, 4)
    ref1 = conv_reference(images, feed["shared"].reshape(3, 2, 3, 3), paddings=(1, 1))
    np.testing.assert_allclose(o1, ref1.reshape(2, -1))
    ref2 = [conv_reference(images[i:i + 1], feed["per_row"][i].reshape(3, 2, 2, 3),
                           strides=(1, 2), paddings=(0, 1)) for i in range(2)]
    np.testing.assert_allclose(o2, np.concatenate(ref2).reshape(2, -1))
    assert two.shape == (2, 3 * 3 * 2)
    conv = [op for op in main.global_block().ops if op.type == "conv2d"]
    assert [op.attr("groups") for op in conv] == [1, 2]
    with pytest.raises(DesignError, match="needs img's batch fixed at build time"):
        fd.conv_operator(fd.data("im", [None, 32]), fd.data("f", [None, 18]), 3, 1,
                         num_channels=2)


# -------------------------------------------------------- context_projection
def _context_reference(x, offsets, length, start, padding=None):
    up = max(0, -start)
    out = np.zeros((x.shape[0], length * x.shape[1]))
    for s, e in zip(offsets[:-1], offsets[1:]):
        for t in range(s, e):
            for j in range(length):
                p = t - s + start + j
                if 0 <= p < e - s:
                    row = x[s + p]
                elif padding is None:
                    continue
                else:
                    row = padding[up + p] if p < 0 else padding[up + p - (e - s)]
                out[t, j * x.shape[1]:(j + 1) * x.shape[1]] = row
    return out


def test_context_projection_zero_and_trainable_padding(progs):
    main, startup = progs
    x = fd.data("x", [None, 3], "float64", lod_level=1)
    zero = fd.mixed_layer(9, fd.context_projection(x, context_len=3))
    learned = fd.mixed_layer(0, fd.context_projection(x, 4, context_start=-2,
                                                      padding_attr=UNIFORM))
    assert main.global_block().var("mixed_1.w_0").shape == (3, 3)  # up 2 + down 1 rows
    value = rng.standard_normal((5, 3))
    (o1, o2), scope = _run(main, startup, {"x": fd.LoDTensor(value, [[0, 2, 5]])},
                           [zero, learned], return_numpy=False)
    assert o1.lod() == [[0, 2, 5]]
    np.testing.assert_allclose(np.array(o1), _context_reference(value, [0, 2, 5], 3, -1))
    np.testing.assert_allclose(np.array(o2), _context_reference(
        value, [0, 2, 5], 4, -2, _p(scope, "mixed_1.w_0")))


# ---------------------------------------------------- training gradients
def _check_training_gradients(main, startup, feed, loss):
    """Every trainable parameter's gradient against central differences (float64)."""
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    names = [p.name for p in main.all_parameters() if p.trainable]
    check_program_grad(main.desc, loss.name, feed, names, scope, rtol=1e-5)
    return names


def test_training_gradients_of_every_input_match_central_differences(progs):
    main, startup = progs
    x = fd.data("x", [5, 4], "float64", lod_level=1)
    ids = fd.data("ids", [5, 1], "int64")
    h8, h8b = fd.fc(x, 8, act="tanh"), fd.fc(x, 8)
    with fd.mixed_layer(size=8, act="tanh", bias_attr=UNIFORM) as m:
        m += fd.full_matrix_projection(x)
        m += fd.trans_full_matrix_projection(x)
        m += fd.table_projection(ids, vocab_size=3)
        m += fd.identity_projection(fd.fc(x, 12), offset=2)
        m += fd.dot_mul_projection(h8, param_attr=UNIFORM)
        m += fd.scaling_projection(h8b, param_attr=UNIFORM)
        m += fd.context_projection(fd.fc(x, 4), context_len=2, context_start=-1,
                                   padding_attr=UNIFORM)
        m += fd.dot_mul_operator(h8, h8b, scale=0.7)
        # per-row filters from one layer convolve 1-channel 3x3 images from another
        m += fd.conv_operator(fd.fc(x, 9), fd.fc(x, 8), filter_size=2, num_filters=2,
                              num_channels=1)
    loss = fd.mean(fd.square(m))
    feed = {"x": fd.LoDTensor(rng.standard_normal((5, 4)), [[0, 2, 5]]),
            "ids": np.array([[0], [2], [1], [2], [0]], np.int64)}
    names = _check_training_gradients(main, startup, feed, loss)
    assert {f"mixed_0.w_{k}" for k in range(6)} | {"mixed_0.b_0"} <= set(names)
    assert {"fc_3.w_0", "fc_4.w_0", "fc_5.w_0"} <= set(names)  # through context and conv


# ------------------------------------------------------ in a recurrent group
def test_mixed_layer_as_the_step_of_a_recurrent_group(progs):
    main, startup = progs
    x = fd.data("x", [None, 3], "float64", lod_level=1)

    def step(xt):
        prev = fd.memory(name="state", size=2)
        with fd.mixed_layer(size=2, act="tanh", bias_attr=UNIFORM, name="state") as s:
            s += fd.full_matrix_projection(xt)
            s += fd.full_matrix_projection(prev)
        return s

    out = fd.recurrent_group(step, x)
    assert [p.name for p in main.all_parameters()] == ["state.w_0", "state.w_1", "state.b_0"]
    assert all(v.name not in main.block(1).desc.vars for v in main.all_parameters())
    value = rng.standard_normal((5, 3))
    feed = {"x": fd.LoDTensor(value, [[0, 2, 5]])}
    (got,), scope = _run(main, startup, feed, [out])
    wx, wh, b = (_p(scope, n) for n in ("state.w_0", "state.w_1", "state.b_0"))
    expected = []
    for s, e in ((0, 2), (2, 5)):
        h = np.zeros(2)
        for t in range(s, e):
            h = np.tanh(value[t] @ wx + h @ wh + b)
            expected.append(h)
    np.testing.assert_allclose(got, np.array(expected))
    _check_training_gradients(main, startup, feed, fd.mean(fd.square(out)))
