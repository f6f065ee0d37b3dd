"""fd.summary: layers with output shapes, parameter counts, bytes and MACs, by exact count."""
import pathlib

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer.summary import ModelSummary
from fluidscope.engine.errors import FluidscopeError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def mlp(batch_norm=False):
    """x[?, 4] -> fc 8 relu ("hidden") -> fc 3 softmax ("out") -> loss, with SGD."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float32")
        y = fd.data("y", [None, 1], dtype="int64")
        h = fd.fc(x, 8, act="relu", name="hidden")
        p = fd.fc(h, 3, act="softmax", name="out")
        loss = fd.mean(fd.cross_entropy(p, y))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main, startup


def test_mlp_layers_shapes_params_bytes_and_macs_are_exact():
    main, _ = mlp()
    s = fd.summary(main)
    assert isinstance(s, ModelSummary) and s.batch_size == 1 and s.by == "layer"
    hidden, out = s.rows[0], s.rows[1]
    assert (hidden.name, hidden.op_types) == ("hidden", ("mul", "elementwise_add", "relu"))
    assert hidden.output_shape == (-1, 8) and out.output_shape == (-1, 3)
    assert (hidden.params, hidden.bytes, hidden.macs) == (4 * 8 + 8, 40 * 4, 4 * 8 + 8)
    assert (out.params, out.bytes, out.macs) == (8 * 3 + 3, 27 * 4, 8 * 3 + 3)
    # the loss layers: no parameters, no MACs; backward and SGD ops are not rows
    assert [r.op_types for r in s.rows[2:]] == [("cross_entropy2",), ("mean",)]
    assert all(r.params == 0 and r.macs == 0 for r in s.rows[2:])
    assert (s.total_params, s.trainable_params, s.total_bytes, s.total_macs) == (67, 67, 268, 67)
    assert "relu" in s.uncounted and "mul" not in s.uncounted
    # the batch multiplies every MAC (each -1 dim counts as batch_size)
    assert fd.summary(main, batch_size=5).total_macs == 5 * 67


def test_str_prints_a_table_with_totals_at_the_bottom():
    main, _ = mlp()
    text = str(fd.summary(main))
    lines = text.splitlines()
    assert lines[1].split() == ["Layer", "(type)", "Output", "shape", "Params", "Bytes", "MACs"]
    row = next(line for line in lines if line.startswith("hidden"))
    assert row.split()[-3:] == ["40", "160", "40"]
    assert "(mul+elementwise_add+relu)" in row and "[-1, 8]" in row
    totals = lines[lines.index(next(x for x in lines if x.startswith("Total params"))):]
    assert totals[0] == "Total params: 67" and "Trainable params: 67" in totals
    assert "Total MACs: 67 (batch size 1)" in totals and "Params size: 268 bytes" in totals
    assert "(5.62 KiB)" in str(fd.summary(cnn()))

    class Printer:  # IPython's pretty printer, as a notebook cell's result calls it
        def text(self, value):
            self.value = value

    printer = Printer()
    fd.summary(main)._repr_pretty_(printer, False)
    assert printer.value == text


def test_one_row_per_op_names_the_op_under_its_layer():
    main, _ = mlp()
    s = fd.summary(main, by="op")
    assert [r.name for r in s.rows[:3]] == ["hidden/#0", "hidden/#1", "hidden/#2"]
    assert [r.macs for r in s.rows[:6]] == [32, 8, 0, 24, 3, 0]
    assert [r.params for r in s.rows[:6]] == [32, 8, 0, 24, 3, 0]
    assert s.total_macs == fd.summary(main).total_macs


def test_an_embedding_has_parameters_and_no_macs_and_a_shared_parameter_counts_once():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        ids = fd.data("ids", [None, 1], dtype="int64")
        a = fd.embedding(ids, size=[10, 5], param_attr=fd.ParamAttr("table"))
        b = fd.embedding(ids, size=[10, 5], param_attr=fd.ParamAttr("table"))
        fd.elementwise_add(a, b)
    s = fd.summary(main)
    assert [r.params for r in s.rows] == [50, 0, 0]
    assert [r.macs for r in s.rows[:2]] == [0, 0]
    assert s.rows[2].macs == np.prod([1 if d < 0 else d for d in s.rows[2].output_shape]) == 5


def cnn():
    """conv 3->4 (3x3, pad 1) + bias, relu / max pool 2x2 / batch_norm / transposed conv
    4->2 (2x2, stride 2) / flatten / mul to 10, built op by op on an 8x8 RGB input."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        block = main.global_block()
        x = fd.data("img", [None, 3, 8, 8], dtype="float32")

        def var(name):
            return block.create_var(name=name, shape=None, dtype="float32")

        with fd.name_scope("conv1"):
            w = block.create_parameter("conv1.w", [4, 3, 3, 3])
            b = block.create_parameter("conv1.b", [4])
            block.append_op("conv2d", {"Input": x, "Filter": w}, {"Output": var("c1")},
                            {"strides": [1, 1], "paddings": [1, 1]})
            block.append_op("elementwise_add", {"X": "c1", "Y": b}, {"Out": var("c1b")},
                            {"axis": 1})
            block.append_op("relu", {"X": "c1b"}, {"Out": var("r1")})
        with fd.name_scope("pool1"):
            block.append_op("pool2d", {"X": "r1"}, {"Out": var("p1")},
                            {"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2]})
        with fd.name_scope("bn1"):
            scale = block.create_parameter("bn1.scale", [4])
            shift = block.create_parameter("bn1.shift", [4])
            mean = block.create_parameter("bn1.mean", [4], trainable=False)
            variance = block.create_parameter("bn1.var", [4], trainable=False)
            block.append_op("batch_norm",
                            {"X": "p1", "Scale": scale, "Bias": shift, "Mean": mean,
                             "Variance": variance},
                            {"Y": var("n1"), "MeanOut": mean, "VarianceOut": variance,
                             "SavedMean": var("sm"), "SavedVariance": var("sv")})
        with fd.name_scope("up1"):
            wt = block.create_parameter("up1.w", [4, 2, 2, 2])
            block.append_op("conv2d_transpose", {"Input": "n1", "Filter": wt},
                            {"Output": var("u1")}, {"strides": [2, 2]})
        with fd.name_scope("head"):
            block.append_op("reshape2", {"X": "u1"}, {"Out": var("flat"), "XShape": var("xs")},
                            {"shape": [-1, 128]})
            wh = block.create_parameter("head.w", [128, 10])
            block.append_op("mul", {"X": "flat", "Y": wh}, {"Out": var("logits")})
    return main


def test_cnn_counts_are_exact():
    s = fd.summary(cnn())
    rows = {r.name: r for r in s.rows}
    assert list(rows) == ["conv1", "pool1", "bn1", "up1", "head"]
    conv, pool, bn, up, head = (rows[n] for n in rows)
    assert conv.output_shape == (-1, 4, 8, 8)
    assert (conv.params, conv.macs) == (4 * 3 * 9 + 4, 4 * 8 * 8 * (3 * 9) + 4 * 8 * 8)
    assert (pool.output_shape, pool.params, pool.macs) == ((-1, 4, 4, 4), 0, 4 * 4 * 4 * 4)
    assert bn.output_shape == (-1, 4, 4, 4)  # Y, not the running mean it writes back
    assert (bn.params, bn.trainable_params, bn.macs) == (16, 8, 2 * 4 * 4 * 4)
    assert up.output_shape == (-1, 2, 8, 8)
    assert (up.params, up.macs) == (4 * 2 * 2 * 2, (4 * 4 * 4) * (2 * 2 * 2))
    assert (head.output_shape, head.params, head.macs) == ((-1, 10), 1280, 128 * 10)
    assert s.total_params == 112 + 16 + 32 + 1280
    assert s.trainable_params == s.total_params - 8
    assert s.total_bytes == 4 * s.total_params
    assert s.total_macs == (6912 + 256) + 256 + 128 + 512 + 1280 == 9344
    assert fd.summary(cnn(), batch_size=2).total_macs == 2 * s.total_macs


def test_lstm_and_gru_count_the_recurrent_product_per_row():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        block = main.global_block()
        seq = fd.data("seq", [None, 12], dtype="float32", lod_level=1)

        def var(name):
            return block.create_var(name=name, shape=None, dtype="float32")

        with fd.name_scope("lstm"):
            w = block.create_parameter("lstm.w", [3, 12])
            bias = block.create_parameter("lstm.b", [1, 12])
            block.append_op("lstm", {"Input": seq, "Weight": w, "Bias": bias},
                            {"Hidden": var("h"), "Cell": var("c"), "BatchGate": var("g"),
                             "BatchCellPreAct": var("pre")}, {"use_peepholes": False})
        with fd.name_scope("gru"):
            w = block.create_parameter("gru.w", [4, 12])
            bias = block.create_parameter("gru.b", [1, 12])
            block.append_op("gru", {"Input": seq, "Weight": w, "Bias": bias},
                            {"Hidden": var("gh"), "BatchGate": var("gg"),
                             "BatchResetHiddenPrev": var("gr"), "BatchHidden": var("gb")})
    s = fd.summary(main, batch_size=7)  # 7 rows (time steps of every sequence)
    assert [r.macs for r in s.rows] == [7 * 3 * 12, 7 * 4 * 12]
    assert [r.params for r in s.rows] == [48, 60]


def test_a_recurrent_group_counts_one_step_of_its_block():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float32", lod_level=1)

        def step(x_t):
            h_pre = fd.memory("h", size=4)
            return fd.fc([x_t, h_pre], size=4, act="tanh", name="h")

        fd.recurrent_group(step, [x])
    row = fd.summary(main).rows[0]
    assert row.op_types == ("recurrent",)
    assert row.params == 3 * 4 + 4 * 4 + 4
    assert row.macs == 3 * 4 + 4 * 4 + 4  # two products and the bias add of one step


def test_bad_arguments_are_named():
    main, _ = mlp()
    with pytest.raises(FluidscopeError, match="by must be"):
        fd.summary(main, by="layers")
    with pytest.raises(FluidscopeError, match="batch_size"):
        fd.summary(main, batch_size=0)
    with pytest.raises(FluidscopeError, match="expected a Program"):
        fd.summary("main")


def test_a_program_paddle_saved_counts_its_parameters_as_trainable():
    # Paddle 3.3.1's static fc (x[?, 4] -> 3, relu, scale): its VarDescs mark no parameter
    program = fd.io.load_program(str(DATA / "io" / "paddle_fc.pdmodel"))
    s = fd.summary(program)
    assert [r.op_types for r in s.rows] == [("mul",), ("elementwise_add",), ("relu",), ("scale",)]
    assert (s.total_params, s.trainable_params, s.total_bytes) == (15, 15, 60)
    assert [r.macs for r in s.rows] == [12, 3, 0, 0]


def test_a_bare_program_desc_gives_the_same_summary():
    main, _ = mlp()
    assert fd.summary(main.desc).to_dict() == fd.summary(main).to_dict()


def test_designer_layers_lstm_gru_over_the_fused_rnn_op_and_conv_pool_norm():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):  # names from _0
        seq = fd.data("seq", [None, 5, 6], dtype="float32")  # batch, 5 steps, 6 features
        fd.lstm(seq, 8)
        fd.gru(seq, 8, direction="bidirect")
        img = fd.data("img", [None, 3, 8, 8], dtype="float32")
        fd.batch_norm(fd.pool2d(fd.conv2d(img, 4, 3, padding=1, act="relu"), 2, "max", 2))
    rows = {r.name: r for r in fd.summary(main, batch_size=2).rows}
    lstm, gru = rows["lstm_0"], rows["gru_0"]
    assert lstm.output_shape == (-1, 5, 8) and "rnn" in lstm.op_types
    # rnn: time x batch rows, each through every 2-D weight once (biases are additions)
    assert (lstm.params, lstm.macs) == (32 * 6 + 32 * 8 + 32 + 32, 5 * 2 * (32 * 6 + 32 * 8))
    assert gru.output_shape == (-1, 5, 16)
    assert gru.macs == 5 * 2 * 2 * (24 * 6 + 24 * 8)  # two directions
    assert (rows["conv2d_0"].params, rows["conv2d_0"].macs) == (112, 2 * 7168)
    assert (rows["pool2d_0"].output_shape, rows["pool2d_0"].macs) == ((-1, 4, 4, 4), 2 * 256)
    assert (rows["batch_norm_0"].params, rows["batch_norm_0"].trainable_params) == (16, 8)
    assert rows["batch_norm_0"].macs == 2 * 128
