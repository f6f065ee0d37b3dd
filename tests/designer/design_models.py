"""Designs the design tests share: a classifier, and one that uses every composite."""
import fluidscope.designer as fd


def classifier():
    """The issue's example: data -> fc -> fc -> softmax_with_cross_entropy -> mean, Adam."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 784])
    y = d.add("data", name="label", shape=[None, 1], dtype="int64")
    h = d.add("fc", inputs={"input": x}, size=256, act="relu")
    o = d.add("fc", inputs={"input": h}, size=10)
    loss = d.add("softmax_with_cross_entropy", inputs={"logits": o, "label": y})
    m = d.add("mean", inputs={"x": loss})
    d.set_loss(m)
    d.set_optimizer("Adam", learning_rate=1e-3)
    return d


def composites():
    """A recurrent group (in-link, static input, booted memory), a mixed layer with two
    rows, lstmemory_group and dynamic_lstm (second output used), a loss and SGD."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    ctx = d.add("data", name="ctx", shape=[None, 16])
    emb = d.add("embedding", inputs={"input": ids}, size=[50, 8])
    g = d.add("recurrent_group")
    xi = d.add_step_input(g, emb)
    st = d.add_step_input(g, ctx, static=True)
    mem = d.add_memory(g, size=16, boot=ctx)
    h = d.add("fc", inputs={"input": [xi, mem, st]}, size=16, act="tanh", group=g)
    d.link_memory(mem, h)
    d.set_outputs(g, [h])
    m = d.add("mixed_layer", size=12, act="tanh", bias_attr=True)
    d.add_row(m, "full_matrix_projection", inputs={"input": g})
    d.add_row(m, "full_matrix_projection", inputs={"input": emb})
    gates = d.add("fc", inputs={"input": emb}, size=32, bias_attr=False)
    d.add("lstmemory_group", inputs={"input": gates}, size=8, name="lstm")
    dl = d.add("dynamic_lstm", inputs={"input": gates}, size=32)
    last = d.add("sequence_last_step", inputs={"input": (dl, 1)})
    pooled = d.add("sequence_pool", inputs={"input": m}, pool_type="max")
    both = d.add("concat", inputs={"input": [pooled, last]}, axis=1)
    score = d.add("fc", inputs={"input": both}, size=1)
    cost = d.add("square_error_cost", inputs={"input": score, "label": ctx})
    d.remove(cost)  # a removal in the history, and a loss of the right shape instead:
    total = d.add("reduce_mean", inputs={"input": score})
    d.set_loss(total)
    d.set_optimizer("SGD", learning_rate=0.1)
    return d


def char_lstm(vocab=20, embed=8, hidden=16):
    """Notebook 03's character LSTM as a design."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64", lod_level=1)
    emb = d.add("embedding", inputs={"input": ids}, size=[vocab, embed])
    gates = d.add("fc", inputs={"input": emb}, size=4 * hidden, bias_attr=False)
    h = d.add("lstmemory_group", inputs={"input": gates}, size=hidden, name="lstm")
    logits = d.add("fc", inputs={"input": h}, size=vocab)
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("Adam", learning_rate=0.01)
    return d


def char_lstm_code(vocab=20, embed=8, hidden=16):
    """The same network written with the Python API (notebook 03's cell)."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        ids = fd.data("ids", [None, 1], "int64", lod_level=1)
        label = fd.data("label", [None, 1], "int64", lod_level=1)
        embedded = fd.embedding(ids, size=[vocab, embed])
        gates = fd.fc(embedded, 4 * hidden, bias_attr=False)
        hidden_seq = fd.lstmemory_group(gates, hidden, name="lstm")
        logits = fd.fc(hidden_seq, vocab)
        loss = fd.mean(fd.softmax_with_cross_entropy(logits, label))
        fd.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return main, startup


def program_bytes(program):
    """The ProgramDesc's bytes without op_callstack (source lines differ between files)."""
    desc = type(program.desc)()
    desc.CopyFrom(program.desc)
    for block in desc.blocks:
        for op in block.ops:
            for attr in op.attrs:
                if attr.name == "op_callstack":
                    del attr.strings[:]
    return desc.SerializeToString()
