"""The CNN / norm / padded-RNN layers against PaddlePaddle 3.3.1's own layers.

The same network is built twice: with ``paddle.static.nn`` / ``paddle.nn.functional`` /
``paddle.nn.LSTM`` in Paddle's virtual environment (a subprocess, as in
test_rnn_paddle.py; arrays go both ways as .npz, no pickle), and with our layers. We
compare what the layers write (op types and every attribute our registry declares,
parameter names and shapes) and what runs: Paddle's initial parameters are loaded
into our scope (the rnn weights by their WeightList position, since Paddle names them
``lstm_cell_<k>.*``), then outputs, input and parameter gradients and the updated
batch-norm running mean must agree to float64 rounding. Skipped without .venv-paddle.
"""
import json

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import registry

from paddle_oracle import needs_paddle, run_paddle

pytestmark = needs_paddle

PADDLE_SCRIPT = r'''
import json, sys
import numpy as np
import paddle
import paddle.nn.functional as F

paddle.enable_static()
paddle.set_default_dtype("float64")
data = dict(np.load(sys.argv[1]))
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [None, 3, 8, 8], "float64")
    seq = paddle.static.data("seq", [None, 5, 3], "float64")
    lens = paddle.static.data("lens", [None], "int64")
    x.stop_gradient = False
    seq.stop_gradient = False
    c1 = paddle.static.nn.conv2d(x, 4, 3, padding=1, act="relu")
    c2 = paddle.static.nn.conv2d(c1, 4, 3, groups=4, use_cudnn=False, padding="SAME")
    t = paddle.static.nn.conv2d_transpose(c2, 2, filter_size=3, stride=2, padding=[1, 0])
    bn = paddle.static.nn.batch_norm(t)
    ln = paddle.static.nn.layer_norm(bn, begin_norm_axis=1)
    p = F.max_pool2d(ln, 2, 2)
    a = F.adaptive_avg_pool2d(c1, 2)
    am = F.adaptive_max_pool2d(c1, [3, 2])
    f = paddle.flatten(p, 1)
    lstm = paddle.nn.LSTM(3, 4, num_layers=2, direction="bidirect")
    out, (h, c) = lstm(seq, sequence_length=lens)
    z, h2 = paddle.nn.GRU(8, 4)(out)
    outs = {"f": f, "a": a, "am": am, "bn": bn, "out": out, "h": h, "c": c, "z": z, "h2": h2}
    block = main.global_block()
    total = None
    for name, v in outs.items():
        m = block.create_var(name=name + "_mean", shape=[], dtype="float64")
        block.append_op(type="reduce_mean", inputs={"X": v}, outputs={"Out": m},
                        attrs={"reduce_all": True, "dim": [], "keep_dim": False})
        if total is None:
            total = m
        else:
            s = block.create_var(name=name + "_sum", shape=[], dtype="float64")
            block.append_op(type="elementwise_add", inputs={"X": total, "Y": m}, outputs={"Out": s})
            total = s
    paddle.static.append_backward(total)
ops = []
for op in block.ops:
    if op.type.endswith("_grad") or op.type in ("fill_constant", "shape", "slice", "reduce_mean",
                                                 "sum"):
        continue
    attrs = {k: op.attr(k) for k in op.attr_names if k not in (
        "op_callstack", "op_namescope", "op_role", "op_role_var", "op_device", "with_quant_attr")}
    plain = {k: v for k, v in attrs.items() if isinstance(v, (int, float, str, bool, list))}
    ops.append({"type": op.type, "attrs": plain,
                "inputs": {k: op.input(k) for k in op.input_names},
                "outputs": {k: op.output(k) for k in op.output_names}})
params = {p.name: list(p.shape) for p in main.all_parameters()}
exe = paddle.static.Executor(paddle.CPUPlace())
scope = paddle.static.global_scope()
exe.run(startup)
values = {n: np.array(scope.find_var(n).get_tensor()) for n in params}
names = list(outs) + ["x@GRAD", "seq@GRAD", "conv2d_0.w_0@GRAD", "batch_norm_0.w_1"]
got = exe.run(main, feed={"x": data["x"], "seq": data["seq"], "lens": data["lens"]},
              fetch_list=[outs[n] for n in outs] + names[len(outs):])
np.savez(sys.argv[2], **{"out:" + n: g for n, g in zip(names, got)},
         **{"param:" + n: v for n, v in values.items()})
with open(sys.argv[3], "w") as fh:
    json.dump({"ops": ops, "params": params}, fh)
'''
OUTPUTS = ("f", "a", "am", "bn", "out", "h", "c", "z", "h2")
# Ops Paddle adds that our layers write differently: its LSTM builds zero initial states
# from shape/slice/fill_constant (we use fill_constant_batch_size_like), and the loss.
PLUMBING = ("fill_constant", "fill_constant_batch_size_like", "shape", "slice", "reduce_mean",
            "sum")


def ours():
    """The network of PADDLE_SCRIPT with our layers (float64, names counted from 0)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3, 8, 8], "float64")
        seq = fd.data("seq", [None, 5, 3], "float64")
        lens = fd.data("lens", [None], "int64")
        x.stop_gradient = seq.stop_gradient = False
        c1 = fd.conv2d(x, 4, 3, padding=1, act="relu")
        c2 = fd.conv2d(c1, 4, 3, groups=4, use_cudnn=False, padding="SAME")
        t = fd.conv2d_transpose(c2, 2, filter_size=3, stride=2, padding=[1, 0])
        bn = fd.batch_norm(t)
        ln = fd.layer_norm(bn, begin_norm_axis=1)
        p = fd.pool2d(ln, 2, "max", 2)
        a = fd.adaptive_pool2d(c1, 2, "avg")
        am = fd.adaptive_pool2d(c1, [3, 2], "max")
        f = fd.flatten(p, 1)
        out, h, c = fd.lstm(seq, 4, num_layers=2, direction="bidirect", sequence_length=lens)
        z, h2 = fd.gru(out, 4)
        outs = dict(zip(OUTPUTS, (f, a, am, bn, out, h, c, z, h2)))
        total = None
        for v in outs.values():
            m = fd.reduce_mean(v)
            total = m if total is None else fd.elementwise_add(total, m)
        fd.append_backward(total)
    return main, startup, outs


@pytest.fixture(scope="module")
def paddle_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cnn_paddle")
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((2, 3, 8, 8)), "seq": rng.standard_normal((2, 5, 3)),
            "lens": np.array([5, 3], dtype=np.int64)}
    np.savez(tmp / "in.npz", **feed)
    run_paddle(PADDLE_SCRIPT, tmp, tmp / "in.npz", tmp / "out.npz", tmp / "spec.json",
               name="net.py")
    spec = json.loads((tmp / "spec.json").read_text())
    return feed, dict(np.load(tmp / "out.npz")), spec


def _rnn_weight_pairs(main, spec):
    """(our name, Paddle's name) of each rnn op's WeightList, position by position."""
    ours_lists = [op.desc for op in main.global_block().ops if op.desc.type == "rnn"]
    theirs = [o for o in spec["ops"] if o["type"] == "rnn"]
    pairs = []
    for desc, other in zip(ours_lists, theirs):
        mine = next(s.arguments for s in desc.inputs if s.parameter == "WeightList")
        pairs += list(zip(mine, other["inputs"]["WeightList"]))
    return pairs


def test_layers_write_paddles_ops_attributes_and_parameters(paddle_run):
    _, _, spec = paddle_run
    main, _, _ = ours()
    theirs = [o for o in spec["ops"] if o["type"] not in PLUMBING
              and not (o["type"] == "elementwise_add" and o["attrs"].get("axis") == -1)]
    mine = [op for op in main.global_block().ops if not op.desc.type.endswith("_grad")
            and op.desc.type not in PLUMBING + ("scale", "fill_any_like")
            and not (op.desc.type == "elementwise_add" and op.attr("axis") == -1)]
    assert [op.desc.type for op in mine] == [o["type"] for o in theirs]
    for op, other in zip(mine, theirs):
        for attr in registry.get(op.desc.type).attrs:
            if attr.name in registry.COMMON_ATTR_NAMES or attr.name not in other["attrs"]:
                continue
            value, expected = op.attr(attr.name), other["attrs"][attr.name]
            if isinstance(expected, float):
                assert value == pytest.approx(expected, rel=1e-6), (op.desc.type, attr.name)
            else:
                assert value == expected, (op.desc.type, attr.name, value, expected)
    params = {p.name: list(p.shape) for p in main.all_parameters()}
    renamed = dict(_rnn_weight_pairs(main, spec))
    expected = {n: s for n, s in spec["params"].items() if n not in ("lstm_0.w_0", "gru_0.w_0")}
    assert {renamed.get(n, n): s for n, s in params.items()} == expected


def test_outputs_gradients_and_running_stats_equal_paddles(paddle_run):
    feed, got, spec = paddle_run
    main, startup, outs = ours()
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    with fd.scope_guard(scope):
        exe.run(startup)
        renamed = dict(_rnn_weight_pairs(main, spec))
        for p in main.all_parameters():
            value = got["param:" + renamed.get(p.name, p.name)]
            scope.find_var(p.name).get_tensor().set(value)
        names = ["x@GRAD", "seq@GRAD", "conv2d_0.w_0@GRAD", "batch_norm_0.w_1"]
        results = exe.run(main, feed=feed, fetch_list=list(outs.values()) + names)
    for name, value in zip(list(outs) + names, results):
        expected = got["out:" + name]
        assert value.shape == expected.shape, name
        np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-11, err_msg=name)


# paddle.nn.MultiHeadAttention cannot build a legacy static program in 3.3.1 (its matmul
# takes only PIR values), so it runs in dygraph with our weights; the numbers must agree.
ATTENTION_SCRIPT = r'''
import sys
import numpy as np
import paddle

paddle.set_default_dtype("float64")
d = dict(np.load(sys.argv[1]))
mha = paddle.nn.MultiHeadAttention(8, 2, kdim=6, vdim=4, need_weights=True)
for k, proj in enumerate((mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj)):
    proj.weight.set_value(d[f"w_{k}"])
    proj.bias.set_value(d[f"b_{k}"])
query = paddle.to_tensor(d["query"], stop_gradient=False)
out, weights = mha(query, paddle.to_tensor(d["key"]), paddle.to_tensor(d["value"]),
                   attn_mask=paddle.to_tensor(d["mask"]))
(out * paddle.to_tensor(d["seed"])).sum().backward()
np.savez(sys.argv[2], out=out.numpy(), weights=weights.numpy(), dquery=query.grad.numpy())
'''


def test_multi_head_attention_equals_paddles_layer(tmp_path):
    rng = np.random.default_rng(5)
    arrays = {"query": rng.standard_normal((2, 3, 8)), "key": rng.standard_normal((2, 4, 6)),
              "value": rng.standard_normal((2, 4, 4)), "seed": rng.standard_normal((2, 3, 8)),
              "mask": rng.random((2, 1, 3, 4)) < 0.7}
    arrays["mask"][:, :, :, 0] = True  # every query sees at least one key
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        data = {n: fd.data(n, [None] + list(a.shape[1:]), str(a.dtype)) for n, a in arrays.items()}
        data["query"].stop_gradient = False
        out, weights = fd.multi_head_attention(data["query"], 2, data["key"], data["value"],
                                               data["mask"], need_weights=True)
        loss = fd.reduce_sum(fd.elementwise_mul(out, data["seed"]))
        fd.append_backward(loss)
    params = {p.name: p for p in main.all_parameters()}
    assert {n: list(p.shape) for n, p in params.items()} == {
        "multi_head_attention_0.w_0": [8, 8], "multi_head_attention_0.b_0": [8],
        "multi_head_attention_0.w_1": [6, 8], "multi_head_attention_0.b_1": [8],
        "multi_head_attention_0.w_2": [4, 8], "multi_head_attention_0.b_2": [8],
        "multi_head_attention_0.w_3": [8, 8], "multi_head_attention_0.b_3": [8]}
    for name, p in params.items():
        arrays[name.split(".")[1]] = rng.standard_normal(p.shape) * 0.5
    np.savez(tmp_path / "in.npz", **arrays)
    run_paddle(ATTENTION_SCRIPT, tmp_path, tmp_path / "in.npz", tmp_path / "out.npz",
               name="mha.py")
    expected = dict(np.load(tmp_path / "out.npz"))
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    with fd.scope_guard(scope):
        exe.run(startup)
        for name in params:
            scope.find_var(name).get_tensor().set(arrays[name.split(".")[1]])
        feed = {n: arrays[n] for n in data}
        got = exe.run(main, feed=feed, fetch_list=[out, weights, "query@GRAD"])
    for value, name in zip(got, ("out", "weights", "dquery")):
        np.testing.assert_allclose(value, expected[name], rtol=1e-9, atol=1e-12, err_msg=name)
