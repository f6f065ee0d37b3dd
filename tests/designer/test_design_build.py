"""Design.build: every catalog layer equals the code API; per-node errors; stable names."""
import pytest

import fluidscope.designer as fd

from design_models import classifier, composites

DATA = {  # name: (shape, dtype, lod_level)
    "x": ([None, 8], "float32", 0), "x2": ([None, 8], "float32", 0),
    "w": ([8, 3], "float32", 0), "ids": ([None, 1], "int64", 0),
    "seq": ([None, 8], "float32", 1), "seq2": ([None, 8], "float32", 1),
    "seq1": ([None, 1], "float32", 1), "g4": ([None, 32], "float32", 1),
    "g3": ([None, 24], "float32", 1), "img": ([None, 16], "float32", 0),
    "filt": ([1, 18], "float32", 0), "image": ([None, 3, 8, 8], "float32", 0),
    "steps": ([None, 5, 3], "float32", 0), "lens": ([None], "int64", 0),
    "tokens": ([None, 5, 8], "float32", 0), "causal": ([5, 5], "float32", 0),
}
# layer -> (inputs, attrs). Projections and operators are built as a mixed_layer's row.
RECIPES = {
    "data": ({}, {"shape": [None, 3]}),
    "fc": ({"input": "x"}, {"size": 4, "act": "relu"}),
    "embedding": ({"input": "ids"}, {"size": [10, 4]}),
    "dropout": ({"x": "x"}, {"dropout_prob": 0.5}),
    "relu": ({"x": "x"}, {}), "tanh": ({"x": "x"}, {}), "sigmoid": ({"x": "x"}, {}),
    "softmax": ({"x": "x"}, {"axis": -1}), "exp": ({"x": "x"}, {}), "log": ({"x": "x"}, {}),
    "square": ({"x": "x"}, {}), "gelu": ({"x": "x"}, {"approximate": True}),
    "relu6": ({"x": "x"}, {}), "leaky_relu": ({"x": "x"}, {"alpha": 0.1}),
    "hard_swish": ({"x": "x"}, {"offset": 2.0}), "scale": ({"x": "x"}, {"scale": 2.0, "bias": 1.0}),
    "mean": ({"x": "x"}, {}), "reduce_mean": ({"input": "x"}, {"dim": 1}),
    "reduce_sum": ({"input": "x"}, {"dim": [0, 1], "keep_dim": True}),
    "matmul": ({"x": "x", "y": "w"}, {}),
    "linear": ({"x": "x"}, {"size": 4}),
    "elementwise_add": ({"x": "x", "y": "x2"}, {"act": "tanh"}),
    "elementwise_sub": ({"x": "x", "y": "x2"}, {}), "elementwise_mul": ({"x": "x", "y": "x2"}, {}),
    "elementwise_div": ({"x": "x", "y": "x2"}, {}),
    "square_error_cost": ({"input": "x", "label": "x2"}, {}),
    "cross_entropy": ({"input": "x", "label": "ids"}, {}),
    "softmax_with_cross_entropy": ({"logits": "x", "label": "ids"}, {"return_softmax": True}),
    "accuracy": ({"input": "x", "label": "ids"}, {"k": 2}),
    "concat": ({"input": ["x", "x2"]}, {"axis": 1}),
    "split": ({"input": "x"}, {"num_or_sections": [3, 5], "dim": 1}),
    "reshape": ({"x": "x"}, {"shape": [-1, 4, 2]}),
    "transpose": ({"x": "x"}, {"perm": [1, 0]}),
    "fill_constant": ({}, {"shape": [2, 3], "dtype": "float32", "value": 1.5}),
    "assign": ({"x": "x"}, {}),
    "mixed_layer": ({}, {"size": 4, "act": "tanh", "bias_attr": True}),
    "full_matrix_projection": ({"input": "x"}, {"size": 4}),
    "trans_full_matrix_projection": ({"input": "x"}, {"size": 4}),
    "table_projection": ({"input": "ids"}, {"size": 4, "vocab_size": 10}),
    "identity_projection": ({"input": "x"}, {"offset": 2, "size": 4}),
    "dot_mul_projection": ({"input": "x"}, {}), "scaling_projection": ({"input": "x"}, {}),
    "context_projection": ({"input": "seq"}, {"context_len": 3, "padding_attr": True}),
    "dot_mul_operator": ({"a": "x", "b": "x2"}, {"scale": 0.5}),
    "conv_operator": ({"img": "img", "filter": "filt"},
                      {"filter_size": 3, "num_filters": 2, "num_channels": 1}),
    "recurrent_group": ({}, {"reverse": True}), "memory": ({}, {"size": 8}),
    "dynamic_lstm": ({"input": "g4"}, {"size": 32, "use_peepholes": False}),
    "dynamic_gru": ({"input": "g3"}, {"size": 8}),
    "lstmemory_group": ({"input": "g4"}, {"size": 8}),
    "gru_group": ({"input": "g3"}, {"size": 8, "origin_mode": True}),
    "conv2d": ({"input": "image"}, {"num_filters": 4, "filter_size": [3, 3], "padding": "SAME",
                                    "act": "relu"}),
    "conv2d_transpose": ({"input": "image"}, {"num_filters": 2, "output_size": 16, "stride": 2,
                                              "padding": 1}),
    "pool2d": ({"input": "image"}, {"pool_size": 2, "pool_type": "avg", "pool_stride": 2}),
    "adaptive_pool2d": ({"input": "image"}, {"pool_size": [2, 3]}),
    "flatten": ({"x": "image"}, {"start_axis": 1}),
    "batch_norm": ({"input": "image"}, {"act": "relu", "momentum": 0.5}),
    "layer_norm": ({"input": "image"}, {"begin_norm_axis": 2, "shift": False}),
    "multi_head_attention": ({"query": "tokens", "attn_mask": "causal"},
                             {"num_heads": 2, "need_weights": True, "dropout": 0.1}),
    "lstm": ({"input": "steps", "sequence_length": "lens"},
             {"hidden_size": 4, "num_layers": 2, "direction": "bidirect"}),
    "gru": ({"input": "steps"}, {"hidden_size": 4, "dropout": 0.2}),
    "sequence_pool": ({"input": "seq"}, {"pool_type": "sqrt"}),
    "sequence_first_step": ({"input": "seq"}, {}), "sequence_last_step": ({"input": "seq"}, {}),
    "sequence_softmax": ({"input": "seq1"}, {}),
    "sequence_expand": ({"x": "x", "y": "seq"}, {}),
    "sequence_conv": ({"input": "seq"}, {"num_filters": 4, "filter_size": 3}),
    "sequence_reverse": ({"x": "seq"}, {}),
    "sequence_concat": ({"input": ["seq", "seq2"]}, {}),
}
ROW = ("projection", "operator")
X_DESC = {"name": "x", "type": {"type": "DENSE_TENSOR", "denseTensor": {"tensor": {
    "dataType": "FP32", "dims": ["-1", "8"]}}}, "stopGradient": True}
OUT_DESC = {"name": "scaled", "type": {"type": "DENSE_TENSOR", "denseTensor": {"tensor": {
    "dataType": "FP32", "dims": ["-1", "8"]}}}}
RECIPES["variable"] = ({}, {"desc": X_DESC})
RECIPES["op"] = ({"X": ["x"]}, {"type": "scale", "outputs": {"Out": [OUT_DESC]},
                                "attrs": {"scale": 3.0, "bias": 1.0}})


def _data_names(inputs):
    names = []
    for v in inputs.values():
        names += v if isinstance(v, list) else [v]
    return list(dict.fromkeys(names))


def _design_for(spec):
    """A design with the data the recipe needs and one node of ``spec``'s layer."""
    inputs, attrs = RECIPES[spec.name]
    d = fd.Design()
    names = [] if spec.name in ("op", "variable") else _data_names(inputs) or (
        ["seq"] if spec.name in ("recurrent_group", "memory") else [])
    for name in names:
        shape, dtype, lod = DATA[name]
        d.add("data", name=name, shape=shape, dtype=dtype, lod_level=lod)
    if spec.category in ROW:
        m = d.add("mixed_layer")
        d.add_row(m, spec.name, inputs=inputs, **attrs)
    elif spec.name == "mixed_layer":
        d.add("data", name="x", shape=[None, 8])
        m = d.add("mixed_layer", **attrs)
        d.add_row(m, "full_matrix_projection", inputs={"input": "x"})
    elif spec.name in ("recurrent_group", "memory"):
        g = d.add("recurrent_group", **RECIPES["recurrent_group"][1])
        xi = d.add_step_input(g, "seq")
        mem = d.add_memory(g, **RECIPES["memory"][1])
        h = d.add("fc", inputs={"input": [xi, mem]}, size=8, act="tanh", group=g)
        d.link_memory(mem, h)
        d.set_outputs(g, [h])
    elif spec.name == "data":
        d.add("data", name="d", **attrs)
    elif spec.name in ("op", "variable"):
        d.add("variable", name="x", desc=X_DESC)
        if spec.name == "op":
            d.add("op", inputs={"X": ["x"]}, **attrs)
    else:
        d.add(spec.name, inputs=inputs, **attrs)
    return d


def _code_for(spec):
    """The same layer written with the Python API, in design_guard (names from 0)."""
    inputs, attrs = RECIPES[spec.name]
    main, startup = fd.Program(), fd.Program()
    with fd.design_guard(main, startup):
        names = [] if spec.name in ("op", "variable") else _data_names(inputs) or (
            ["seq"] if spec.name in ("recurrent_group", "memory") else [])
        v = {n: fd.data(n, DATA[n][0], DATA[n][1], lod_level=DATA[n][2]) for n in names}
        args = {} if spec.name == "op" else {
            s: [v[n] for n in x] if isinstance(x, list) else v[x] for s, x in inputs.items()}
        if spec.category in ROW:
            fd.mixed_layer(input=[getattr(fd, spec.name)(**args, **attrs)], name="mixed_layer_0")
        elif spec.name == "mixed_layer":
            x = fd.data("x", [None, 8])
            fd.mixed_layer(input=[fd.full_matrix_projection(x)], name="mixed_layer_0", **attrs)
        elif spec.name in ("recurrent_group", "memory"):
            def step(x_t):
                mem = fd.memory("fc_0", **RECIPES["memory"][1])
                return fd.fc([x_t, mem], 8, act="tanh", name="fc_0")
            fd.recurrent_group(step, [v["seq"]], name="recurrent_group_0",
                               **RECIPES["recurrent_group"][1])
        elif spec.name == "data":
            fd.data("d", **attrs)
        elif spec.name in ("op", "variable"):
            x = fd.variable(X_DESC, name="x")
            if spec.name == "op":
                fd.op(inputs={"X": [x]}, name="op_0", **attrs)
        else:
            getattr(fd, spec.name)(**args, **attrs, name=f"{spec.name}_0")
    return main, startup


def test_every_catalog_layer_has_a_recipe():
    assert {s.name for s in fd.catalog()} - set(RECIPES) == set()


@pytest.mark.parametrize("spec", fd.catalog(), ids=lambda s: s.name)
def test_every_catalog_layer_builds_the_program_the_code_api_builds(spec):
    built = _design_for(spec).build(scope=fd.Scope())
    assert built.errors == {} and built.waiting == {}
    main, startup = _code_for(spec)
    assert built.main.desc.SerializeToString() == main.desc.SerializeToString()
    assert built.startup.desc.SerializeToString() == startup.desc.SerializeToString()


def test_shapes_and_stable_parameter_names():
    d = classifier()
    b = d.build()
    assert b.shapes["fc_0"] == [[-1, 256]] and b.shapes["mean_0"] == [[]]
    assert b.var("fc_1").shape == (-1, 10)
    d.set("fc_0", size=128)
    names = [p.name for p in d.build().main.all_parameters() if "moment" not in p.name]
    assert names[:4] == ["fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]


def test_a_failing_node_is_attributed_downstream_waits_and_the_rest_builds():
    d = classifier()
    z = d.add("data", name="z", shape=[None, 7])
    bad = d.add("elementwise_add", inputs={"x": z, "y": "fc_0"})
    after = d.add("relu", inputs={"x": bad})
    later = d.add("tanh", inputs={"x": after})
    fine = d.add("sigmoid", inputs={"x": "fc_1"})
    b = d.build()
    message = b.errors[bad]
    assert "elementwise_add layer 'elementwise_add_0'" in message and "slot Y" in message
    assert "[-1, 7]" in message and "[-1, 256]" in message
    assert b.waiting == {after: bad, later: bad}
    assert b.shapes[fine] == [[-1, 10]] and b.optimizer_error is None
    with pytest.raises(fd.DesignError, match="waits on 'elementwise_add_0'"):
        b.var(later)


def test_a_half_built_layer_leaves_nothing_behind():
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4])
    u = d.add("data", name="u", shape=[None, -1])
    bad = d.add("fc", inputs={"input": [x, u]}, size=3)  # first mul is built, then it fails
    b = d.build()
    assert "must be known" in b.errors[bad]
    assert [op.type for op in b.main.global_block().ops] == []
    assert sorted(b.main.global_block().vars) == ["u", "x"]
    assert len(b.startup.global_block().ops) == 0


def test_an_unconnected_required_input_is_an_error_on_the_node():
    d = fd.Design()
    f = d.add("fc", size=3)
    assert d.build().errors == {f: "fc layer 'fc_0': input 'input' is not connected"}


def test_an_error_inside_a_recurrent_step_names_the_inner_node_and_the_group():
    d = composites()
    d.set("fc_0", size=5)  # the memory holds 16 columns, its link now gives 5
    b = d.build()
    assert "memory('fc_0') has size 16" in b.errors["recurrent_group_0"]
    assert b.waiting["mixed_layer_0"] == "recurrent_group_0"
    assert b.shapes["lstm"] == [[-1, 8]]
    # the failed step's block was rolled back: none of its Variables is handed out
    inner = {n.id for n in d.node("recurrent_group_0").body.nodes.values()}
    assert not inner & set(b.outputs)
    for nid in inner - {"recurrent_group_0"}:
        with pytest.raises(fd.DesignError):
            b.var(nid)


def test_composites_build_with_their_shapes():
    b = composites().build()
    assert b.errors == {} and b.waiting == {} and b.optimizer_error is None
    assert b.shapes["recurrent_group_0"] == [[-1, 16]] and b.shapes["memory_0"] == [[-1, 16]]
    assert b.shapes["dynamic_lstm_0"] == [[-1, 8], [-1, 8]]
    ops = [op.type for op in b.main.global_block().ops]
    assert "recurrent" in ops and "sgd" in ops


def test_rebuilds_that_reuse_unchanged_nodes_give_the_same_bytes_shapes_and_errors():
    from fluidscope.designer.design.build import build
    d = composites()
    edits = [lambda: None, lambda: d.set("fc_2", size=3), lambda: d.set("fc_0", act="relu"),
             lambda: d.set("fc_0", size=5), lambda: d.undo(),
             lambda: d.add("relu", inputs={"x": "fc_2"}), lambda: d.set("embedding_0", size=[50, 6]),
             lambda: d.undo(), lambda: d.set_row("mixed_layer_0", 1, size=12),
             lambda: d.rename("lstm", "lstm2")]
    for edit in edits:
        edit()
        for optimize in (False, True):
            cached = d.build(scope=fd.Scope(), optimize=optimize)
            fresh = build(d.document, fd.Scope(), optimize)
            assert cached.main.desc.SerializeToString() == fresh.main.desc.SerializeToString()
            assert cached.startup.desc.SerializeToString() == fresh.startup.desc.SerializeToString()
            assert (cached.shapes, cached.errors, cached.waiting) == (
                fresh.shapes, fresh.errors, fresh.waiting)
            assert {k: [v.name for v in vs] for k, vs in cached.outputs.items()} == {
                k: [v.name for v in vs] for k, vs in fresh.outputs.items()}
