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


def notebook_01():
    """notebooks/01_quickstart.ipynb's linear regression."""
    x = fd.data(name="x", shape=[None, 1], dtype="float32")
    y = fd.data(name="y", shape=[None, 1], dtype="float32")
    y_predict = fd.fc(input=x, size=1, act=None)
    fd.optimizer.SGD(learning_rate=0.01).minimize(fd.mean(fd.square_error_cost(y_predict, y)))


def notebook_02():
    """notebooks/02_mlp_digits.ipynb's MLP (with its accuracy off the loss path)."""
    image = fd.data("image", [None, 64], "float32")
    label = fd.data("label", [None, 1], "int64")
    hidden = fd.fc(fd.fc(image, size=128, act="relu"), size=64, act="relu")
    logits = fd.fc(hidden, size=10)
    loss = fd.mean(fd.softmax_with_cross_entropy(logits, label))
    fd.accuracy(input=logits, label=label, k=1)
    fd.optimizer.Adam(learning_rate=0.005).minimize(loss)


def notebook_04():
    """notebooks/04_debugging.ipynb's small MLP."""
    x = fd.data("x", [None, 8], "float32")
    y = fd.data("y", [None, 1], "int64")
    probs = fd.fc(fd.fc(x, 32, act="relu"), 3, act="softmax")
    fd.optimizer.SGD(learning_rate=50.0).minimize(fd.mean(fd.cross_entropy(probs, y)))


def notebook_03():
    """notebooks/03_recurrent.ipynb's (and 04's) character LSTM."""
    ids = fd.data("ids", [None, 1], "int64", lod_level=1)
    label = fd.data("label", [None, 1], "int64", lod_level=1)
    gates = fd.fc(fd.embedding(ids, size=[45, 32]), 4 * 96, bias_attr=False)
    logits = fd.fc(fd.lstmemory_group(gates, 96, name="lstm"), 45)
    fd.optimizer.Adam(learning_rate=0.01).minimize(
        fd.mean(fd.softmax_with_cross_entropy(logits, label)))


NOTEBOOK_MODELS = [notebook_01, notebook_02, notebook_03, notebook_04]


def lenet(size=28, classes=10):
    """LeNet-5 as a design: two conv + max-pool stages, flatten, three fc, Adam."""
    d = fd.Design()
    image = d.add("data", name="image", shape=[None, 1, size, size])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    c1 = d.add("conv2d", inputs={"input": image}, num_filters=6, filter_size=5, padding=2,
               act="relu")
    p1 = d.add("pool2d", inputs={"input": c1}, pool_size=2, pool_type="max", pool_stride=2)
    c2 = d.add("conv2d", inputs={"input": p1}, num_filters=16, filter_size=[5, 5], act="relu")
    p2 = d.add("pool2d", inputs={"input": c2}, pool_size=2, pool_type="max", pool_stride=2)
    flat = d.add("flatten", inputs={"x": p2}, start_axis=1)
    h1 = d.add("fc", inputs={"input": flat}, size=120, act="relu")
    h2 = d.add("fc", inputs={"input": h1}, size=84, act="relu")
    logits = d.add("fc", inputs={"input": h2}, size=classes)
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("Adam", learning_rate=0.01)
    return d


def lenet_code(size=28, classes=10):
    """The same LeNet written with the Python API."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        image = fd.data("image", [None, 1, size, size])
        label = fd.data("label", [None, 1], "int64")
        c1 = fd.conv2d(image, num_filters=6, filter_size=5, padding=2, act="relu")
        p1 = fd.pool2d(c1, pool_size=2, pool_type="max", pool_stride=2)
        c2 = fd.conv2d(p1, num_filters=16, filter_size=[5, 5], act="relu")
        p2 = fd.pool2d(c2, pool_size=2, pool_type="max", pool_stride=2)
        flat = fd.flatten(p2, start_axis=1)
        hidden = fd.fc(fd.fc(flat, size=120, act="relu"), size=84, act="relu")
        logits = fd.fc(hidden, size=classes)
        loss = fd.mean(fd.softmax_with_cross_entropy(logits, label))
        fd.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return main, startup
