"""Cases for the sequence ops (kernels/sequence.py, kernels/sequence_conv.py).

References loop over sequences in plain numpy; the LoDs include an empty sequence and
one of length one. Values were cross-checked against Paddle 3.3.1 (sequence_pool,
sequence_softmax, sequence_expand; sequence_conv with an identity Filter for the
context projection, 248 configurations of contextStart/contextLength/padding).
"""
import numpy as np
import pytest

from fluidscope.engine import registry
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase

rng = np.random.default_rng(21)
LOD = [[0, 3, 3, 4, 7]]  # lengths 3, 0, 1, 3
X = rng.standard_normal((7, 2))
X3 = rng.standard_normal((7, 2, 2))
SCORES = rng.standard_normal((7, 1))


def _val(t):
    return np.asarray(getattr(t, "value", t))


def _seqs(t):
    offsets = t.lod()[-1]
    return [_val(t)[a:b] for a, b in zip(offsets, offsets[1:])]


# ------------------------------------------------------------- sequence_pool
def _pool_ref(i, a):
    kind, pad = a.get("pooltype", "AVERAGE"), a.get("pad_value", 0.0)
    rows, index = [], []
    start = 0
    for s in _seqs(i["X"]):
        if not len(s):
            rows.append(np.full(s.shape[1:], pad))
            index.append(np.full(s.shape[1:], -1))
        else:
            rows.append({"AVERAGE": s.mean(0), "SUM": s.sum(0),
                         "SQRT": s.sum(0) / np.sqrt(len(s)), "MAX": s.max(0),
                         "LAST": s[-1], "FIRST": s[0]}[kind])
            index.append(start + s.argmax(0))
        start += len(s)
    out = {"Out": np.stack(rows)}
    if kind == "MAX":
        out["MaxIndex"] = np.stack(index).astype(np.int32)
    return out


def _kernel_call(op, lods, *inputs, **attrs):
    """Call ``op``'s kernel directly with the given LoDs (LoDs a feed would refuse)."""
    opdef = registry.get(op)
    lod = registry.LodArgs(op, tuple(s.name for s in opdef.inputs), tuple(lods),
                           len(opdef.outputs))
    return opdef.kernel_for("cpu")(np, opdef.parse_attrs(attrs), lod, *inputs)


def _check_pool_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="sequence_pool: input X has no LoD"):
        run_op("sequence_pool", {"X": X}, a)
    with pytest.raises(FluidscopeError, match=r"X has 7 rows but its LoD \[0, 2, 5\] covers 5"):
        _kernel_call("sequence_pool", [[[0, 2, 5]]], X, pooltype="SUM")


def _check_pool_two_levels(outs, i, a):
    out = run_op("sequence_pool", i, a, return_lod=True)["Out"]
    assert out.lod() == [[0, 2, 4]]  # the last level is pooled away


POOL_2LEVEL = LoDTensor(X, [[0, 2, 4], [0, 3, 3, 4, 7]])
CASES = [
    OpCase("sequence_pool", {"X": LoDTensor(X, LOD)}, _pool_ref,
           attrs={"pooltype": kind, "pad_value": 0.5}, name=kind.lower(),
           check=_check_pool_errors if kind == "SUM" else None)
    for kind in ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST")
] + [
    OpCase("sequence_pool", {"X": LoDTensor(X3, LOD)}, _pool_ref, attrs={"pooltype": "MAX"},
           name="max_3d"),
    OpCase("sequence_pool", {"X": POOL_2LEVEL}, _pool_ref, attrs={"pooltype": "SQRT"},
           check=_check_pool_two_levels, name="two_level_lod"),
]


# ---------------------------------------------------------- sequence_softmax
def _softmax_ref(i, a):
    parts = [np.exp(s - s.max()) / np.exp(s - s.max()).sum() for s in _seqs(i["X"]) if len(s)]
    return np.concatenate(parts).reshape(_val(i["X"]).shape)


CASES += [
    OpCase("sequence_softmax", {"X": LoDTensor(SCORES, LOD)}, _softmax_ref, name="col"),
    OpCase("sequence_softmax", {"X": LoDTensor(SCORES[:, 0], LOD)}, _softmax_ref, name="flat"),
]


# ----------------------------------------------------------- sequence_reverse
def _reverse_ref(i, a):
    return {"Y": np.concatenate([s[::-1] for s in _seqs(i["X"])])}


def _check_reverse_lod(outs, i, a):
    assert run_op("sequence_reverse", i, a, return_lod=True)["Y"].lod() == LOD


CASES += [OpCase("sequence_reverse", {"X": LoDTensor(X, LOD)}, _reverse_ref,
                 check=_check_reverse_lod)]


# ------------------------------------------------------------ sequence_expand
XE = rng.standard_normal((4, 2))


def _expand_ref(i, a):
    y_lod = i["Y"].lod()
    ref = a.get("ref_level", -1)
    offsets = y_lod[ref]
    repeats = np.diff(offsets)
    pieces = _seqs(i["X"]) if isinstance(i["X"], LoDTensor) else list(_val(i["X"])[:, None])
    return np.concatenate([p for p, r in zip(pieces, repeats) for _ in range(r)])


def _expand_check(lod_expected):
    def check(outs, i, a):
        out = run_op("sequence_expand", i, a, return_lod=True)["Out"]
        assert out.lod() == lod_expected
    return check


def _check_expand_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="X has 2 sequences but level 0 of Y's LoD has 3"):
        run_op("sequence_expand", {"X": i["X"], "Y": LoDTensor(np.zeros((3, 1)), [[0, 1, 2, 3]])},
               {"ref_level": 0})
    with pytest.raises(FluidscopeError, match="ref_level=2 is not a level of Y's 2-level LoD"):
        run_op("sequence_expand", i, {"ref_level": 2})
    with pytest.raises(FluidscopeError, match="input Y has no LoD"):
        run_op("sequence_expand", {"X": i["X"], "Y": np.zeros((3, 1))}, a)


Y2 = LoDTensor(np.zeros((8, 1)), [[0, 2, 4], [0, 3, 6, 7, 8]])
CASES += [
    # Paddle's documented case 1: sequences [a b], [c d] each repeated twice
    OpCase("sequence_expand", {"X": LoDTensor(XE, [[0, 2, 4]]), "Y": Y2}, _expand_ref,
           attrs={"ref_level": 0}, check=_check_expand_errors, name="lod_x"),
    # case 2: rows repeated 2, 0, 3 times; Out has no LoD as in Paddle
    OpCase("sequence_expand", {"X": XE[:3], "Y": LoDTensor(np.zeros((5, 1)), [[0, 2, 2, 5]])},
           _expand_ref, check=_expand_check([]), name="rows"),
    # an empty X sequence and a zero repeat count
    OpCase("sequence_expand", {"X": LoDTensor(XE[:3], [[0, 1, 1, 3]]),
                               "Y": LoDTensor(np.zeros((4, 1)), [[0, 2, 4, 4]])},
           _expand_ref, check=_expand_check([[0, 1, 2, 2, 2]]), name="empty"),
]


# ------------------------------------------------------------ sequence_concat
CA = LoDTensor(rng.standard_normal((4, 2)), [[0, 1, 1, 4]])
CB = LoDTensor(rng.standard_normal((3, 2)), [[0, 2, 2, 3]])
CC = LoDTensor(rng.standard_normal((2, 2)), [[0, 0, 0, 2]])  # sequence 1 empty in all


def _concat_ref(i, a):
    per_input = [_seqs(t) for t in i["X"]]
    return np.concatenate([s for group in zip(*per_input) for s in group])


def _check_concat(outs, i, a):
    out = run_op("sequence_concat", i, a, return_lod=True)["Out"]
    assert out.lod() == [[0, 3, 3, 9]]
    with pytest.raises(FluidscopeError,
                       match=r"different numbers of sequences \(X\[0\] 3, X\[1\] 1\)"):
        run_op("sequence_concat", {"X": [CA, LoDTensor(np.zeros((2, 2)), [[0, 2]])]}, a)
    with pytest.raises(FluidscopeError, match=r"input X\[1\] has a 0-level LoD"):
        run_op("sequence_concat", {"X": [CA, np.zeros((2, 2))]}, a)


CASES += [OpCase("sequence_concat", {"X": [CA, CB, CC]}, _concat_ref, check=_check_concat)]


# ------------------------------------------------ context_projection / conv
def _context_ref(x, lod, length, start, padding):
    """Row by row, position by position: the semantics Paddle's sequence_conv has."""
    up = max(0, -start)
    out = np.zeros((x.shape[0], length * x.shape[1]))
    offsets = lod[-1]
    for a, b in zip(offsets, offsets[1:]):
        n = b - a
        for t in range(n):
            for j in range(length):
                p = t + start + j
                if 0 <= p < n:
                    row = x[a + p]
                elif padding is None:
                    continue
                else:
                    row = padding[up + p] if p < 0 else padding[up + p - n]
                out[a + t, j * x.shape[1]:(j + 1) * x.shape[1]] = row
    return out


def _projection_ref(i, a):
    pad = i.get("PaddingData") if a.get("paddingTrainable") else None
    return _context_ref(_val(i["X"]), i["X"].lod(), a["contextLength"], a["contextStart"], pad)


def _conv_ref(i, a):
    return _projection_ref(i, dict(a, contextStart=a.get("contextStart", 0))) @ i["Filter"]


def _check_conv_errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="contextStride.*only contextStride=1"):
        run_op("sequence_conv", i, dict(a, contextStride=2))
    with pytest.raises(FluidscopeError, match=r"PaddingData \[3, 2\] must be \[2, 2\]"):
        run_op("sequence_conv", dict(i, PaddingData=np.zeros((3, 2))), a)


XC = LoDTensor(rng.standard_normal((6, 2)), [[0, 3, 3, 4, 6]])
PAD_11 = rng.standard_normal((2, 2))   # contextStart -1, contextLength 3: 1 up, 1 down
PAD_30 = rng.standard_normal((3, 2))   # contextStart -3, contextLength 2: 3 up, 0 down
PAD_03 = rng.standard_normal((3, 2))   # contextStart 1, contextLength 3: 0 up, 3 down
FILT = rng.standard_normal((6, 3))
CASES += [
    OpCase("context_projection", {"X": XC, "PaddingData": PAD_11}, _projection_ref,
           attrs={"contextLength": 3, "contextStart": -1, "paddingTrainable": True},
           name="trainable"),
    OpCase("context_projection", {"X": XC, "PaddingData": PAD_30}, _projection_ref,
           attrs={"contextLength": 2, "contextStart": -3, "paddingTrainable": True},
           name="all_before"),
    OpCase("context_projection", {"X": XC, "PaddingData": PAD_03}, _projection_ref,
           attrs={"contextLength": 3, "contextStart": 1, "paddingTrainable": True},
           name="all_after"),
    OpCase("context_projection", {"X": XC}, _projection_ref,
           attrs={"contextLength": 2, "contextStart": 0}, name="zero_padding"),
    OpCase("sequence_conv", {"X": XC, "PaddingData": PAD_11, "Filter": FILT}, _conv_ref,
           attrs={"contextLength": 3, "contextStart": -1, "paddingTrainable": True},
           check=_check_conv_errors, name="trainable"),
    OpCase("sequence_conv", {"X": XC, "Filter": FILT}, _conv_ref,
           attrs={"contextLength": 3, "contextStart": -1}, name="zero_padding"),
]
