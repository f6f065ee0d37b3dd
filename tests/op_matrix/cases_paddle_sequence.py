"""Paddle's OpTests of the sequence ops, ported (PaddlePaddle/Paddle test/sequence/
test_sequence_{pool,softmax,concat,reverse,expand,conv}.py).

Each Paddle class keeps its LoD (lengths as Paddle writes them), attributes and dtype;
feature sizes are reduced (23 -> 3, 80 -> 4, [3, 17] -> [2, 3], ...) so each float64
gradient check stays well under 0.5 s. The references are rewritten from Paddle's
descriptions: loops over sequences in plain numpy. Output LoDs Paddle's tests assert
are asserted too. context_projection is fluidscope's own op (Paddle has none): its
cases are in cases_sequence.py.

Compared with Paddle 3.3.1 itself (static program, CPU, the same inputs, LoDs and
attributes; /tmp scripts): sequence_pool, sequence_softmax and sequence_expand outputs
and output LoDs match to 3e-16 (float64) / 2.4e-7 (float32), their gradients
(paddle.static.gradients, same output weights) to 2.3e-14; sequence_conv matches in
float32 to 1 ulp, gradients of X, PaddingData and Filter to 2.2e-7 (Paddle 3.3.1 has no
float64 sequence_conv kernel; 108 more contextStart/contextLength/padding/LoD
combinations matched too). Paddle 3.3.1 no longer registers sequence_concat and
sequence_reverse, so those two follow Paddle's test references only.
"""
import numpy as np

from fluidscope.engine.autodiff.gradcheck import run_op

from .paddle_port import lod_tensor, offsets, port, seqs, val

rng = np.random.default_rng(1414)

NOT_PORTED = {
    "TestSequenceConcatOpError": "Python API type checks (paddle.static.nn.sequence_concat)",
    "TestSequenceReverseOpError": "Python API type checks (float16 refused by the layer)",
    "TestSeqConvApi": "Python layer API (paddle.static.nn.sequence_conv), not the op",
    "TestSequenceFirstStepOpError": "Python API type checks of sequence_first_step "
                                    "(sequence_pool FIRST: ported above)",
    "TestSequenceLastStepOpError": "Python API type checks of sequence_last_step",
}


def _lod_check(op, slot, expected_lengths):
    """Paddle's tests give the expected output LoD: assert it."""
    def check(outs, i, a):
        out = run_op(op, i, a, return_lod=True)[slot]
        assert out.lod() == [offsets(level) for level in expected_lengths], out.lod()
    return check


# ------------------------------------------------------------- sequence_pool
def _pool_ref(i, a):
    x, lengths = val(i["X"]), i["X"].lod()[-1]
    lengths = np.diff(lengths).tolist()
    kind, pad = a["pooltype"], a["pad_value"]
    rows = []
    for s in seqs(x, lengths):
        if len(s) == 0:
            rows.append(np.full(x.shape[1:], pad))
            continue
        rows.append({"AVERAGE": lambda: s.mean(0), "SUM": lambda: s.sum(0),
                     "SQRT": lambda: s.sum(0) / np.sqrt(len(s)), "MAX": lambda: s.max(0),
                     "LAST": lambda: s[-1], "FIRST": lambda: s[0]}[kind]())
    return {"Out": np.stack(rows).astype(x.dtype)}


def _pool_case(name, lod, kind, pad, feat, **attrs):
    x = rng.uniform(0.1, 1, (sum(lod[-1]),) + feat)
    if kind == "MAX":  # Paddle lifts one row of each sequence: a clear maximum
        for start, n in zip(offsets(lod[-1]), lod[-1]):
            if n:
                x[start + rng.integers(n)] += 2.0 if len(feat) == 1 else 1.0
    check = _lod_check("sequence_pool", "Out", lod[:1]) if len(lod) > 1 else None
    grad = () if attrs.get("is_test") else "auto"
    return port("sequence_pool", name, {"X": lod_tensor(x, lod)}, _pool_ref, dtype="float32",
                attrs=dict(pooltype=kind, pad_value=pad, **attrs), check=check, grad=grad,
                grad_outputs=("Out",))


_POOL_1D = [  # class, LoD, pooltype, pad_value (X [rows, 23] in Paddle, [rows, 3] here)
    ("TestSeqAvgPool", [[11]], "AVERAGE", 0.0),
    ("TestSeqAvgPoolBatch1", [[11]], "AVERAGE", 0.0),
    ("TestSeqAvgPoolInstance0", [[0, 0, 4, 0, 3, 0, 0, 5, 0, 0]], "AVERAGE", 0.0),
    ("TestSeqAvgPoolLen0", [[0, 4, 0, 7, 0]], "AVERAGE", 0.0),
    ("TestSeqAvgPoolLen0LoDLevel2", [[2, 0, 1, 2], [0, 4, 0, 7, 0]], "AVERAGE", 0.0),
    ("TestSeqSumPool", [[11]], "SUM", 0.1),
    ("TestSeqSumPoolLen0", [[0, 4, 0, 7, 0]], "SUM", 0.1),
    ("TestSeqSumPoolLen0LoDLevel2", [[2, 0, 1, 2], [0, 4, 0, 7, 0]], "SUM", 0.1),
    ("TestSeqMaxPool", [[13]], "MAX", 0.5),
    ("TestSeqMaxPoolLen0", [[0, 1, 1, 5, 6, 0]], "MAX", 0.5),
    ("TestSeqMaxPoolLen0LoDLevel2", [[2, 0, 3, 1], [0, 1, 1, 5, 6, 0]], "MAX", 0.5),
    ("TestSeqSqrtPool", [[11]], "SQRT", 0.0),
    ("TestSeqSqrtPoolLen0", [[0, 7, 0, 2, 2, 0]], "SQRT", 0.0),
    ("TestSeqSqrtPoolLen0LoDLevel2", [[1, 2, 0, 3], [0, 7, 0, 2, 2, 0]], "SQRT", 0.0),
    ("TestSeqLastPool", [[11]], "LAST", 0.0),
    ("TestSeqLastPoolLen0", [[0, 3, 4, 0, 4, 0]], "LAST", 0.0),
    ("TestSeqLastPoolLen0LoDLevel2", [[1, 0, 2, 3], [0, 3, 4, 0, 4, 0]], "LAST", 0.0),
    ("TestSeqFirstPool", [[11]], "FIRST", 0.3),
    ("TestSeqFirstPoolLen0", [[0, 2, 0, 3, 6, 0]], "FIRST", 0.3),
    ("TestSeqFirstPoolLen0LoDLevel2", [[1, 0, 2, 3], [0, 2, 0, 3, 6, 0]], "FIRST", 0.3),
]
_POOL_2D = [  # X [rows, 3, 17] (MAX: [rows, 3, 11]) in Paddle, [rows, 2, 3] here
    ("TestSeqAvgPool2D", [[4, 1, 3, 5]], "AVERAGE", 0.0),
    ("TestSeqAvgPool2DLen0", [[0, 5, 0, 8, 0]], "AVERAGE", 0.0),
    ("TestSeqAvgPool2DLen0LoDLevel2", [[1, 0, 4], [0, 5, 0, 8, 0]], "AVERAGE", 0.0),
    ("TestSeqSumPool2D", [[4, 1, 3, 5]], "SUM", 0.2),
    ("TestSeqSumPool2DLen0", [[0, 8, 0, 5, 0]], "SUM", 0.2),
    ("TestSeqSumPool2DLen0LoDLevel2", [[1, 0, 4], [0, 8, 0, 5, 0]], "SUM", 0.2),
    ("TestSeqSqrtPool2D", [[4, 1, 3, 5]], "SQRT", 0.0),
    ("TestSeqSqrtPool2DLen0", [[0, 8, 0, 5, 0]], "SQRT", 0.0),
    ("TestSeqSqrtPool2DLen0LoDLevel2", [[1, 0, 2, 2], [0, 8, 0, 5, 0]], "SQRT", 0.0),
    ("TestSeqMaxPool2D", [[4, 1, 3, 5]], "MAX", 0.0),
    ("TestSeqMaxPool2DLen0", [[0, 3, 0, 10, 0]], "MAX", 0.0),
    ("TestSeqMaxPool2DLen0LoDLevel2", [[1, 0, 2, 2], [0, 3, 0, 10, 0]], "MAX", 0.0),
    ("TestSeqLastPool2D", [[4, 1, 3, 5]], "LAST", 0.0),
    ("TestSeqLastPool2DLen0", [[0, 3, 0, 1, 9, 0]], "LAST", 0.0),
    ("TestSeqLastPool2DLen0LoDLevel2", [[1, 0, 2, 3], [0, 3, 0, 1, 9, 0]], "LAST", 0.0),
    ("TestSeqFirstPool2D", [[4, 1, 3, 5]], "FIRST", 0.0),
    ("TestSeqFirstPool2DLen0", [[0, 3, 0, 3, 7, 0]], "FIRST", 0.0),
    ("TestSeqFirstPool2DLen0LoDLevel2", [[1, 0, 2, 3], [0, 3, 0, 3, 7, 0]], "FIRST", 0.0),
]
CASES = [c for args in _POOL_1D for c in _pool_case(*args, feat=(3,))]
CASES += [c for args in _POOL_2D for c in _pool_case(*args, feat=(2, 3))]
# inference mode (is_test, a Paddle extra attribute): forward only, as in Paddle
CASES += [c for name, lod in (
    ("TestSeqMaxPool2DInference", [[4, 1, 3, 5]]),
    ("TestSeqMaxPool2DInferenceLen0", [[0, 3, 0, 10, 0]]),
    ("TestSeqMaxPool2DInferenceLen0LoDLevel2", [[1, 0, 2, 2], [0, 3, 0, 10, 0]]),
) for c in _pool_case(name, lod, "MAX", 1.0, feat=(2, 3), is_test=True)]


# ---------------------------------------------------------- sequence_softmax
def _seq_softmax_ref(i, a):
    x = val(i["X"])
    out = np.zeros_like(x)
    bounds = i["X"].lod()[-1]
    for s, e in zip(bounds, bounds[1:]):
        if e > s:
            z = np.exp(x[s:e] - x[s:e].max())
            out[s:e] = z / z.sum()
    return out


for name, lod, cudnn in (  # X [110, 1] float64 as in Paddle
        ("TestSequenceSoftmaxOp", [[40, 10, 30, 30]], False),
        ("TestSequenceSoftmaxCUDNNOp", [[40, 10, 30, 30]], True),  # a hint fluidscope ignores
        ("TestSequenceSoftmaxOpSeqLen0Case0", [[40, 0, 40, 30]], False),
        ("TestSequenceSoftmaxOpSeqLen0Case1", [[0, 40, 70, 0]], False),
        ("TestSequenceSoftmaxOpSeqLen0Case2", [[0, 0, 0, 110]], False)):
    CASES += port("sequence_softmax", name,
                  {"X": lod_tensor(rng.uniform(0.1, 1, (110, 1)), lod)}, _seq_softmax_ref,
                  attrs={"use_cudnn": cudnn})


# ----------------------------------------------------------- sequence_concat
def _seq_concat_ref(i, a):
    parts = [seqs(val(t), np.diff(t.lod()[0]).tolist()) for t in i["X"]]
    return np.concatenate([s for group in zip(*parts) for s in group])


for name, lod1, lod2, out_lod in (  # x1 [10, 80], x2 [20, 80] float64; 80 -> 4 here
        ("TestSequenceConcat", [7, 3], [12, 8], [19, 11]),
        ("TestSequenceConcatCase2", [10, 0], [12, 8], [22, 8]),
        ("TestSequenceConcatCase3", [10, 0], [20, 0], [30, 0]),
        ("TestSequenceConcatCase4", [0, 10], [0, 20], [0, 30]),
        ("TestSequenceConcatCase5", [0, 10], [20, 0], [20, 10])):
    CASES += port("sequence_concat", name,
                  {"X": [lod_tensor(rng.random((10, 4)), [lod1]),
                         lod_tensor(rng.random((20, 4)), [lod2])]},
                  _seq_concat_ref, check=_lod_check("sequence_concat", "Out", [out_lod]))


# ---------------------------------------------------------- sequence_reverse
def _seq_reverse_ref(i, a):
    x = val(i["X"])
    return {"Y": np.concatenate([s[::-1] for s in seqs(x, np.diff(i["X"].lod()[0]).tolist())])}


for name, size, lod in (  # float32 in Paddle
        ("TestSequenceReverseBase", (10, 3, 4), [2, 3, 5]),
        ("TestSequenceReserve1", (12, 10), [4, 5, 3]),
        ("TestSequenceReverse2", (12, 10), [12]),
        ("TestSequenceReverse3", (12, 10), [3, 0, 6, 3]),
        ("TestSequenceReverse4", (12, 10), [0, 2, 10, 0])):
    CASES += port("sequence_reverse", name, {"X": lod_tensor(rng.random(size), [lod])},
                  _seq_reverse_ref, dtype="float32",
                  check=_lod_check("sequence_reverse", "Y", [lod]))


# ----------------------------------------------------------- sequence_expand
def _seq_expand_ref(i, a):
    """Paddle's rule: X's i-th sequence (row, when X has no LoD) repeated as many times
    as the i-th length of Y's LoD level ref_level (-1: the last level)."""
    x = val(i["X"])
    y_lod = i["Y"].lod()
    repeats = np.diff(y_lod[a.get("ref_level", -1)]).tolist()
    x_lod = i["X"].lod() if hasattr(i["X"], "lod") else []
    lengths = np.diff(x_lod[0]).tolist() if x_lod else [1] * len(x)
    out = [s for s, r in zip(seqs(x, lengths), repeats) for _ in range(r)]
    return np.concatenate(out) if out else np.zeros((0,) + x.shape[1:])


def _expand_case(name, x, x_lod, y_rows, y_lod, out_lod, **attrs):
    xin = lod_tensor(x, x_lod) if x_lod else x
    inputs = {"X": xin, "Y": lod_tensor(rng.uniform(0.1, 1, y_rows), y_lod)}
    check = _lod_check("sequence_expand", "Out", out_lod) if out_lod is not None else None
    return port("sequence_expand", name, inputs, _seq_expand_ref, attrs=attrs, check=check)


U = rng.uniform
CASES += _expand_case("TestSequenceExpand", U(0.1, 1, (3, 4)), None, (8, 1), [[1, 3, 4]], None)
CASES += _expand_case("TestSequenceExpandCase1", U(0.1, 1, (5, 3)), None, (13, 1),
                      [[2, 3], [2, 2, 3, 3, 3]], None, ref_level=1)
CASES += _expand_case("TestSequenceExpandCase2", U(0.1, 1, (1, 2, 5)), [[1]], (2, 2, 2),
                      [[2], [1, 1]], [[1, 1]], ref_level=0)
CASES += _expand_case("TestSequenceExpandCase3", U(0.1, 1, (4, 3)), [[1, 1, 1, 1]], (8, 1),
                      [[2, 2, 2, 2]], [[1] * 8])
CASES += _expand_case("TestSequenceExpandCase4", U(0.1, 1, (5, 3)), [[2, 3]], (5, 1),
                      [[2], [2, 3]], [[2, 2, 3, 3, 3]])
CASES += _expand_case("TestSequenceExpandCase5", U(0.1, 1, (6, 3)), None, (13, 1),
                      [[2, 4], [2, 2, 3, 0, 3, 3]], None, ref_level=1)
# Paddle's reference drops the LoD entries of sequences repeated 0 times
CASES += _expand_case("TestSequenceExpandCase6", U(0.1, 1, (4, 3)), [[1, 1, 0, 1, 1]], (8, 1),
                      [[0, 2, 4, 2, 0]], [[1, 1, 0, 0, 0, 0, 1, 1]])


# -------------------------------------------------------------- sequence_conv
def _seq_conv_ref(i, a):
    """Each row t of a sequence of length n: the concatenation over j < contextLength of
    row t + contextStart + j, or, outside the sequence, a PaddingData row (trainable
    padding: rows before the sequence first, then rows after) or zeros; times Filter."""
    x, length, start = val(i["X"]), a["contextLength"], a["contextStart"]
    pad, up = i.get("PaddingData"), max(0, -start)
    width = x.shape[1]
    col = np.zeros((len(x), length * width))
    bounds = i["X"].lod()[0]
    for s, e in zip(bounds, bounds[1:]):
        n = e - s
        for t in range(n):
            for j in range(length):
                p = t + start + j
                if 0 <= p < n:
                    col[s + t, j * width:(j + 1) * width] = x[s + p]
                elif a["paddingTrainable"]:
                    col[s + t, j * width:(j + 1) * width] = pad[up + p if p < 0 else up + p - n]
    return col @ i["Filter"]


def _conv_case(name, rows, width, lod, start, length, trainable):
    x = rng.uniform(0.1, 1, (rows, width))
    total_pad = max(0, -start) + max(0, start + length - 1)
    inputs = {"X": lod_tensor(x, [lod]), "Filter": rng.uniform(0.1, 1, (length * width, 3))}
    if total_pad:
        inputs["PaddingData"] = rng.uniform(0.1, 1, (total_pad, width))
    return port("sequence_conv", name, inputs, _seq_conv_ref, dtype="float32",
                attrs={"contextStart": start, "contextLength": length,
                       "paddingTrainable": trainable, "contextStride": 1})


# Paddle: width 23/50/50/25, 8 output features; 3 here. Case3's LoD is random in
# Paddle (9 sequences over 25 rows); a fixed draw here.
CASES += _conv_case("TestSeqProject", 11, 3, [4, 1, 3, 3], 0, 1, False)
CASES += _conv_case("TestSeqProjectCase1", 11, 4, [4, 1, 3, 3], -1, 3, True)
CASES += _conv_case("TestSeqProjectCase2Len0", 11, 4, [0, 4, 1, 0, 3, 3, 0], -1, 3, True)
CASES += _conv_case("TestSeqProjectCase3", 25, 3, [2, 5, 1, 3, 4, 1, 2, 5, 2], 2, 3, True)
