"""Cold builds keep their bytes: the programs a varied set of designs and Python-API
models build hash to the sha256 recorded in data/cold_build_golden.json.

Why a golden file and not "incremental equals cold": the speed work on the cold build
(engine/ir's attribute checks and desc construction, designer's names and op appends)
changes the one path both sides of such a comparison take; only bytes written down
before the change catch a drift there. The designs cover fc chains (the 1,000-layer
canvas benchmark design), a CNN (conv2d, depthwise conv, pool2d, batch_norm,
conv2d_transpose, dropout), recurrent groups (lstmemory_group, gru_group, a
recurrent_group with a booted memory, dynamic_lstm/gru), embedding with sequence ops
and mixed_layer projections, multi_head_attention, and each with its training build
(backward and optimizer). The Python-API models record the user's line in every op
(``op_callstack``): it is hashed as file basename + that line's text, so editing this
file elsewhere moves no hash.

Regenerate (only for an intended change of the bytes, with the reason in the commit):
    python tests/designer/test_cold_build_golden_bytes.py > tests/designer/data/cold_build_golden.json
"""
import hashlib
import json
import linecache
import os
import pathlib
import sys

import pytest

import fluidscope.designer as fd

GOLDEN = pathlib.Path(__file__).parent / "data" / "cold_build_golden.json"


# ------------------------------------------------------------------ designs
def varied_chain(layers=996, optimizer=None):
    """benchmarks/design_rebuild.varied_chain (the canvas benchmarks' 1,000 nodes)."""
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 32])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=(32, 33, 34)[k % 3], act="relu")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    if optimizer:
        d.set_optimizer(optimizer, learning_rate=0.1)
    return d


def cnn():
    d = fd.Design()
    img = d.add("data", name="img", shape=[None, 3, 16, 16])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    c = d.add("conv2d", inputs={"input": img}, num_filters=8, filter_size=3, padding=1, act="relu")
    c = d.add("batch_norm", inputs={"input": c}, act="relu")
    c = d.add("pool2d", inputs={"input": c}, pool_size=2, pool_stride=2, pool_type="max")
    c = d.add("conv2d", inputs={"input": c}, num_filters=8, filter_size=3, groups=8,
              use_cudnn=False)
    c = d.add("conv2d", inputs={"input": c}, num_filters=6, filter_size=3, stride=2,
              bias_attr=False)
    up = d.add("conv2d_transpose", inputs={"input": c}, num_filters=4, filter_size=3, stride=2)
    p = d.add("pool2d", inputs={"input": up}, pool_size=2, pool_type="avg", pool_stride=2)
    f = d.add("dropout", inputs={"x": p}, dropout_prob=0.25)
    h = d.add("fc", inputs={"input": f}, size=10)
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("Momentum", learning_rate=0.01, momentum=0.9)
    return d


def recurrent():
    """A recurrent group with a booted memory and a static input, lstmemory_group,
    gru_group, dynamic_lstm and dynamic_gru, Adam."""
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
    lstm_in = d.add("fc", inputs={"input": emb}, size=32, bias_attr=False)
    lstm = d.add("lstmemory_group", inputs={"input": lstm_in}, size=8, name="lstm")
    gru_in = d.add("fc", inputs={"input": emb}, size=24, bias_attr=False)
    gru = d.add("gru_group", inputs={"input": gru_in}, size=8, name="gru")
    dl = d.add("dynamic_lstm", inputs={"input": lstm_in}, size=32)
    dg = d.add("dynamic_gru", inputs={"input": gru_in}, size=8)
    pools = [d.add("sequence_last_step", inputs={"input": x}) for x in (g, lstm, gru, (dl, 0), dg)]
    both = d.add("concat", inputs={"input": pools}, axis=1)
    score = d.add("fc", inputs={"input": both}, size=1)
    d.set_loss(d.add("reduce_mean", inputs={"input": score}))
    d.set_optimizer("Adam", learning_rate=1e-3)
    return d


def sequences():
    """embedding, sequence ops and a mixed_layer with several projections, SGD."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    emb = d.add("embedding", inputs={"input": ids}, size=[40, 8])
    m = d.add("mixed_layer", size=24, act="tanh", bias_attr=True)
    d.add_row(m, "full_matrix_projection", inputs={"input": emb})
    d.add_row(m, "context_projection", inputs={"input": emb}, context_len=3)
    d.add_row(m, "dot_mul_projection", inputs={"input": d.add("fc", inputs={"input": emb},
                                                              size=24)})
    conv = d.add("sequence_conv", inputs={"input": m}, num_filters=6, filter_size=3)
    soft = d.add("sequence_softmax", inputs={"input": d.add("fc", inputs={"input": conv},
                                                              size=1)})
    rev = d.add("sequence_reverse", inputs={"x": conv})
    cat = d.add("sequence_concat", inputs={"input": [conv, rev]})
    pooled = d.add("sequence_pool", inputs={"input": cat}, pool_type="sum")
    first = d.add("sequence_first_step", inputs={"input": soft})
    both = d.add("concat", inputs={"input": [pooled, first]}, axis=1)
    logits = d.add("fc", inputs={"input": both}, size=5)
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("SGD", learning_rate=0.1)
    return d


def attention():
    d = fd.Design()
    q = d.add("data", name="q", shape=[None, 5, 8])
    k = d.add("data", name="k", shape=[None, 4, 6])
    a = d.add("multi_head_attention", inputs={"query": q}, num_heads=2)
    x = d.add("multi_head_attention", inputs={"query": a, "key": k, "value": k},
              num_heads=4, dropout=0.1)
    n = d.add("layer_norm", inputs={"input": x}, begin_norm_axis=2)
    d.set_loss(d.add("reduce_mean", inputs={"input": n}))
    d.set_optimizer("Adam", learning_rate=1e-3)
    return d


DESIGNS = {"varied_chain_996": lambda: varied_chain(), "chain_60_sgd": lambda: varied_chain(60, "SGD"),
           "cnn": cnn, "recurrent": recurrent, "sequences": sequences, "attention": attention}


# ----------------------------------------------------- Python-API models
def api_mlp():
    x = fd.data("x", [None, 13])
    y = fd.data("y", [None, 1])
    h = fd.fc(x, 16, act="relu", param_attr=fd.ParamAttr(name="w0", learning_rate=0.5))
    h = fd.fc(h, 16, act="tanh", bias_attr=False)
    out = fd.fc(h, 1)
    loss = fd.mean(fd.square_error_cost(out, y))
    fd.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)


def api_char_lstm():
    ids = fd.data("ids", [None, 1], "int64", lod_level=1)
    label = fd.data("label", [None, 1], "int64", lod_level=1)
    gates = fd.fc(fd.embedding(ids, size=[20, 8]), 64, bias_attr=False)
    hidden = fd.lstmemory_group(gates, 16, name="lstm")
    gru = fd.gru_group(fd.fc(hidden, 24, bias_attr=False), 8)
    loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(gru, 20), label))
    fd.optimizer.Adam(learning_rate=0.01).minimize(loss)


def api_cnn():
    img = fd.data("img", [None, 1, 12, 12])
    label = fd.data("label", [None, 1], "int64")
    c = fd.conv2d(img, 4, 3, padding=1, act="relu")
    c = fd.batch_norm(c)
    c = fd.pool2d(c, pool_size=2, pool_stride=2)
    loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(c, 10), label))
    fd.optimizer.SGD(learning_rate=0.1).minimize(loss)


API_MODELS = {"api_mlp": api_mlp, "api_char_lstm": api_char_lstm, "api_cnn": api_cnn}


# ----------------------------------------------------------------- hashing
def _normalised_callstacks(desc):
    """A copy of ``desc`` whose op_callstack entries read 'basename: source text'."""
    desc = type(desc).FromString(desc.SerializeToString())
    for block in desc.blocks:
        for op in block.ops:
            for attr in op.attrs:
                if attr.name == "op_callstack":
                    sites = [s.rpartition(":") for s in attr.strings]
                    del attr.strings[:]
                    attr.strings.extend(
                        f"{os.path.basename(f)}: {linecache.getline(f, int(n)).strip()}"
                        for f, _, n in sites)
    return desc


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _program_hashes(main, startup, normalise=False):
    fix = _normalised_callstacks if normalise else (lambda d: d)
    return {"main": _sha(fix(main.desc).SerializeToString(deterministic=True)),
            "startup": _sha(fix(startup.desc).SerializeToString(deterministic=True))}


def design_hashes(make):
    out = {}
    for optimize in (False, True):
        b = make().build(scope=fd.Scope(), optimize=optimize)
        tag = "train" if optimize else "forward"
        out.update({f"{tag}_{k}": v for k, v in _program_hashes(b.main, b.startup).items()})
        out[f"{tag}_nodes"] = _sha(repr((b.shapes, b.errors, b.waiting, b.optimizer_error,
                                         sorted(b.reinitialised),
                                         sorted(b.main.param_learning_rates.items()))).encode())
        out[f"{tag}_calls"] = _sha(repr([(c.layer, c.helper_name, sorted(c.arguments), len(c.body))
                                         for c in b.main.layer_calls]).encode())
    return out


def api_hashes(model):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        model()
    out = _program_hashes(main, startup, normalise=True)
    out["calls"] = _sha(repr([(c.layer, c.helper_name, sorted(c.arguments), len(c.body))
                              for c in main.layer_calls]).encode())
    return out


def all_hashes():
    result = {name: design_hashes(make) for name, make in DESIGNS.items()}
    result.update({name: api_hashes(model) for name, model in API_MODELS.items()})
    return result


# ------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", list(DESIGNS))
def test_design_cold_build_bytes_match_the_golden_hashes(name):
    want = json.loads(GOLDEN.read_text())[name]
    got = design_hashes(DESIGNS[name])
    assert got == want, {k for k in want if got.get(k) != want[k]}


@pytest.mark.parametrize("name", list(API_MODELS))
def test_python_api_program_bytes_match_the_golden_hashes(name):
    want = json.loads(GOLDEN.read_text())[name]
    got = api_hashes(API_MODELS[name])
    assert got == want, {k for k in want if got.get(k) != want[k]}


def test_the_golden_file_covers_every_model():
    assert set(json.loads(GOLDEN.read_text())) == set(DESIGNS) | set(API_MODELS)


if __name__ == "__main__":
    json.dump(all_hashes(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
