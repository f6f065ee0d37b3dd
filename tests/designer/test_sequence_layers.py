"""Sequence layers (designer/layers/sequence.py) in programs: values and output LoD of
each layer, lod_level of the Variables they return, program gradients through every
sequence op against central differences, and the errors a user meets."""
import types

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.designer import DesignError
from fluidscope.engine.errors import ExecutionError
from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.kernels import seqplan as seqk
from fluidscope.engine.runtime.tensor import LoDTensor
from op_matrix.cases_sequence import _context_ref
from paddle_oracle import needs_paddle, run_paddle

LENS = [3, 1, 2]
OFFSETS = [0, 3, 4, 6]
rng = np.random.default_rng(3)
X = rng.standard_normal((6, 2)).astype("float32")


@pytest.fixture
def progs():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        yield main, startup


def _run(main, startup, feed, fetch, scope=None):
    scope = scope or fd.Scope()
    exe = fd.Executor()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope, return_numpy=False)


def _seqs(a, offsets=OFFSETS):
    return [a[s:e] for s, e in zip(offsets, offsets[1:])]


def test_pool_layers_give_one_row_per_sequence_and_drop_the_lod(progs):
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    outs = [fd.sequence_pool(x, kind) for kind in ("average", "SUM", "sqrt", "max")]
    outs += [fd.sequence_first_step(x), fd.sequence_last_step(x)]
    assert all(o.lod_level == 0 and list(o.shape) == [-1, 2] for o in outs)
    got = _run(*progs, {"x": fd.create_lod_tensor(X, [LENS])}, outs)
    parts = _seqs(X)
    expected = [[p.mean(0) for p in parts], [p.sum(0) for p in parts],
                [p.sum(0) / np.sqrt(len(p)) for p in parts], [p.max(0) for p in parts],
                [p[0] for p in parts], [p[-1] for p in parts]]
    for tensor, want in zip(got, expected):
        assert tensor.lod() == []
        np.testing.assert_allclose(np.array(tensor), np.stack(want), rtol=1e-6)


def test_pool_of_an_empty_sequence_is_pad_value(progs):
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    out = fd.sequence_pool(x, "max", pad_value=-9.0)
    got = _run(*progs, {"x": LoDTensor(X[:4], [[0, 3, 3, 4]])}, [out])[0]
    np.testing.assert_allclose(np.array(got), [X[:3].max(0), [-9, -9], X[3]])


def test_softmax_reverse_expand_concat_values_and_lod(progs):
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    score = fd.data("score", [None, 1], "float32", lod_level=1)
    y = fd.data("y", [None, 1], "float32", lod_level=2)
    rows = fd.data("rows", [None, 2], "float32")
    soft = fd.sequence_softmax(score)
    rev = fd.sequence_reverse(x)
    cat = fd.sequence_concat([x, rev])
    exp_seq = fd.sequence_expand(x, y, ref_level=0)
    exp_rows = fd.sequence_expand(rows, x)
    assert [v.lod_level for v in (soft, rev, cat, exp_seq, exp_rows)] == [1, 1, 1, 1, 0]
    s = rng.standard_normal((6, 1)).astype("float32")
    r = rng.standard_normal((3, 2)).astype("float32")
    y_val = LoDTensor(np.zeros((5, 1), "float32"), [[0, 1, 1, 3], [0, 2, 3, 5]])  # 1, 0, 2
    feed = {"x": LoDTensor(X, [OFFSETS]), "score": LoDTensor(s, [OFFSETS]), "y": y_val,
            "rows": r}
    got = _run(*progs, feed, [soft, rev, cat, exp_seq, exp_rows])
    np.testing.assert_allclose(
        np.array(got[0]), np.concatenate([np.exp(p) / np.exp(p).sum() for p in _seqs(s)]),
        rtol=1e-6)
    np.testing.assert_array_equal(np.array(got[1]), np.concatenate([p[::-1] for p in _seqs(X)]))
    np.testing.assert_array_equal(
        np.array(got[2]), np.concatenate([q for p in _seqs(X) for q in (p, p[::-1])]))
    parts = _seqs(X)
    np.testing.assert_array_equal(np.array(got[3]), np.concatenate([parts[0], parts[2], parts[2]]))
    np.testing.assert_array_equal(np.array(got[4]), r[[0, 0, 0, 1, 2, 2]])
    assert [t.lod() for t in got] == [[OFFSETS], [OFFSETS], [[0, 6, 8, 12]], [[0, 3, 5, 7]], []]


def test_sequence_conv_layer_matches_numpy_and_keeps_the_lod(progs):
    main, startup = progs
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    out = fd.sequence_conv(x, num_filters=4, filter_size=3, act="tanh")
    assert out.lod_level == 1 and list(out.shape) == [-1, 4]
    filt, bias = main.all_parameters()
    assert list(filt.shape) == [6, 4] and list(bias.shape) == [4]
    conv = [op for op in main.global_block().ops if op.type == "sequence_conv"][0]
    assert conv.attr("contextStart") == -1
    assert conv.attr("op_namescope").startswith("/sequence_conv")
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    b = rng.standard_normal(4).astype("float32")
    scope.var(bias.name).get_tensor().set(b)
    got = _run(main, fd.Program(), {"x": fd.create_lod_tensor(X, [LENS])}, [out], scope)[0]
    w = np.array(scope.find_var(filt.name).get_tensor())
    want = np.tanh(_context_ref(X, [OFFSETS], 3, -1, None) @ w + b)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)
    assert got.lod() == [OFFSETS]


def _check_program_gradients(main, startup, loss, feed, delta=1e-6):
    """The generated backward's parameter gradients against central differences (float64)."""
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    for p in main.all_parameters():  # non-zero biases: no accidental ties in max pooling
        scope.var(p.name).get_tensor().set(rng.uniform(-0.8, 0.8, p.shape))
    check_program_grad(main.desc, loss.name, feed, [p.name for p in main.all_parameters()],
                       scope, delta=delta, rtol=1e-5)


def test_training_gradients_through_sequence_conv_and_pools(progs):
    main, startup = progs
    x = fd.data("x", [None, 2], "float64", lod_level=1)
    h = fd.fc(x, size=3, act="tanh")
    conv = fd.sequence_conv(h, num_filters=2, filter_size=3, padding_start=-2)
    pooled = fd.concat([fd.sequence_pool(conv, "sqrt"), fd.sequence_pool(conv, "max"),
                        fd.sequence_last_step(h)], axis=1)
    loss = fd.mean(fd.fc(pooled, size=1))
    _check_program_gradients(main, startup, loss,
                             {"x": LoDTensor(X.astype("float64"), [[0, 3, 4, 4, 6]])})


def test_training_gradients_through_softmax_reverse_concat_expand(progs):
    main, startup = progs
    x = fd.data("x", [None, 2], "float64", lod_level=1)
    h = fd.fc(x, size=3)
    both = fd.sequence_concat([h, fd.sequence_reverse(h)])
    weights = fd.sequence_softmax(fd.fc(both, size=1))
    summary = fd.sequence_pool(fd.elementwise_mul(both, weights), "sum")  # [sequences, 3]
    spread = fd.elementwise_add(h, fd.sequence_expand(summary, x))  # back to every row
    loss = fd.mean(fd.sequence_pool(spread, "average"))
    _check_program_gradients(main, startup, loss, {"x": LoDTensor(X.astype("float64"), [OFFSETS])})


def test_feeding_a_tensor_without_lod_to_sequence_pool_is_a_clear_error(progs):
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    out = fd.sequence_pool(x, "sum")
    with pytest.raises(ExecutionError, match="sequence_pool: input X has no LoD; it needs "
                                             "sequences: feed a LoDTensor"):
        _run(*progs, {"x": X}, [out])


def test_concat_of_different_sequence_counts_names_the_inputs(progs):
    a = fd.data("a", [None, 2], "float32", lod_level=1)
    b = fd.data("b", [None, 2], "float32", lod_level=1)
    out = fd.sequence_concat([a, b])
    feed = {"a": LoDTensor(X, [OFFSETS]), "b": LoDTensor(X[:2], [[0, 1, 2]])}
    with pytest.raises(ExecutionError, match=r"numbers of sequences \(X\[0\] 3, X\[1\] 2\)"):
        _run(*progs, feed, [out])


def test_layer_mistakes_are_design_errors(progs):
    x = fd.data("x", [None, 2], "float32", lod_level=1)
    flat = fd.data("flat", [None, 2], "float32")
    cases = [
        (lambda: fd.sequence_pool(flat, "sum"), "input 'flat' must be a sequence"),
        (lambda: fd.sequence_pool(x, "median"), "pool_type='median' must be one of"),
        (lambda: fd.sequence_conv(x, 3, filter_stride=2), "filter_stride=2; only 1"),
        (lambda: fd.sequence_conv(x, 0), "num_filters must be a positive int"),
        (lambda: fd.sequence_expand(x, x, ref_level=1), "ref_level=1 is not -1 or a level"),
        (lambda: fd.sequence_concat([x, flat]), r"input\[1\] 'flat' must be a sequence"),
        (lambda: fd.sequence_softmax(x), r"X \[-1, 2\] must be \[T, 1\] or \[T\]"),
    ]
    for build, pattern in cases:
        with pytest.raises(DesignError, match=pattern):
            build()


def test_padded_segment_max_agrees_with_reduceat():
    """The device branch of seg_max (a padded gather, used where ``maximum.reduceat`` is
    missing, as on cupy) gives numpy's values and first-maximum rows."""
    shim = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("_")})
    plan = seqk.cached_plan((0, 3, 3, 4, 8))
    x = rng.standard_normal((8, 3))
    x[5, 1] = x[7, 1] = 9.0  # a tie: the first row wins in both
    want = seqk.seg_max(np, x, plan, with_rows=True)
    got = seqk.seg_max(shim, x, plan, with_rows=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert want[1][2, 1] == 5


# ------------------------------------------------------ parity with Paddle 3.3.1
PADDLE_SCRIPT = '''
import sys
import numpy as np
import paddle
from paddle.base import core
paddle.enable_static()
data = np.load(sys.argv[1])
x, pad = data["x"], data["pad"]
results = {}


def run(op, inputs, attrs, lods, extra_outputs=()):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        block = main.current_block()
        ins = {slot: [paddle.static.data(name, list(v.shape), "float32",
                                         lod_level=len(lods.get(name, [])))]
               for slot, (name, v) in inputs.items()}
        o = block.create_var(name="o", dtype="float32")
        outs = {"Out": [o]}
        outs.update({slot: [block.create_var(name=slot, dtype="float32")]
                     for slot in extra_outputs})
        block.append_op(type=op, inputs=ins, outputs=outs, attrs=attrs)
    feed = {}
    for name, v in inputs.values():
        t = core.DenseTensor()
        t.set(v, paddle.CPUPlace())
        if name in lods:
            t.set_lod(lods[name])
        feed[name] = t
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[o],
                                                        return_numpy=False)[0]
    return np.array(got)


lod = {"x": [[0, 3, 3, 4, 7]]}
for kind in ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST"):
    results["pool_" + kind] = run("sequence_pool", {"X": ("x", x)},
                                  {"pooltype": kind, "pad_value": 0.5}, lod, ["MaxIndex"])
results["softmax"] = run("sequence_softmax", {"X": ("x", x[:, :1].copy())}, {}, lod)
results["conv"] = run("sequence_conv", {"X": ("x", x), "Filter": ("f", np.eye(8, dtype="float32")),
                                        "PaddingData": ("pad", pad)},
                      {"contextLength": 4, "contextStart": -2, "contextStride": 1,
                       "paddingTrainable": True}, lod)
results["expand"] = run("sequence_expand", {"X": ("x", x[:4].copy()), "Y": ("y", x)},
                        {"ref_level": 0},
                        {"x": [[0, 2, 3, 4]], "y": [[0, 2, 3, 5], [0, 2, 3, 3, 4, 7]]})
np.savez(sys.argv[2], **results)
'''


@needs_paddle
def test_kernels_match_paddle(tmp_path):
    x = rng.standard_normal((7, 2)).astype("float32")
    pad = rng.standard_normal((3, 2)).astype("float32")  # contextStart -2, length 4: 2 up, 1 down
    np.savez(tmp_path / "in.npz", x=x, pad=pad)
    run_paddle(PADDLE_SCRIPT, tmp_path, tmp_path / "in.npz", tmp_path / "out.npz",
               name="paddle_sequence.py")
    paddle = np.load(tmp_path / "out.npz")
    lod = [[0, 3, 3, 4, 7]]
    for kind in ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST"):
        ours = run_op("sequence_pool", {"X": LoDTensor(x, lod)},
                      {"pooltype": kind, "pad_value": 0.5})
        np.testing.assert_allclose(ours["Out"], paddle["pool_" + kind], rtol=1e-6, err_msg=kind)
    ours = run_op("sequence_softmax", {"X": LoDTensor(x[:, :1].copy(), lod)})["Out"]
    np.testing.assert_allclose(ours, paddle["softmax"], rtol=1e-5)
    ours = run_op("context_projection", {"X": LoDTensor(x, lod), "PaddingData": pad},
                  {"contextLength": 4, "contextStart": -2, "paddingTrainable": True})["Out"]
    np.testing.assert_allclose(ours, paddle["conv"], rtol=1e-6)
    ours = run_op("sequence_expand", {"X": LoDTensor(x[:4], [[0, 2, 3, 4]]),
                                      "Y": LoDTensor(x, [[0, 2, 3, 5], [0, 2, 3, 3, 4, 7]])},
                  {"ref_level": 0})["Out"]
    np.testing.assert_allclose(ours, paddle["expand"], rtol=1e-6)
