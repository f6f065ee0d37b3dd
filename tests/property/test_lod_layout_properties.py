"""Property tests: LoD layouts (empty sequences, one-row sequences, several levels) through
sequence-to-batch and back, and through the sequence ops and fused RNNs that use it."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.kernels.seqbatch import SeqBatch, seq_batch
from fluidscope.engine.runtime.tensor import LoDTensor
from op_matrix.cases_rnn import gru_reference, lstm_reference

# lengths 0 and 1 come often: they are where layouts break
LENGTHS = st.lists(st.sampled_from([0, 0, 1, 1, 2, 3, 5]), min_size=1, max_size=7)


def _offsets(lengths):
    return [0] + np.cumsum(lengths).astype(int).tolist()


@st.composite
def nested_lod(draw, max_levels=3):
    """A LoD of 1-3 levels: each level's offsets index the next level's sequences, the
    last level's index rows; any sequence may be empty."""
    levels = [draw(LENGTHS)]
    for _ in range(draw(st.integers(0, max_levels - 1))):
        count = sum(levels[-1])
        levels.append(draw(st.lists(st.sampled_from([0, 1, 1, 2, 3]), min_size=count,
                                    max_size=count)))
    return [_offsets(lengths) for lengths in levels]


@given(LENGTHS, st.booleans())
def test_sequence_to_batch_and_back_is_the_identity(lengths, reverse):
    offsets = _offsets(lengths)
    total = offsets[-1]
    x = np.arange(total * 2, dtype=np.float64).reshape(total, 2)
    sb = SeqBatch(offsets, reverse) if reverse else SeqBatch(offsets)  # forward by default
    assert sb.reverse is reverse and sb.total == total and sb.num_seqs == len(lengths)
    batch = sb.to_batch(np, x)
    np.testing.assert_array_equal(sb.to_sequence(np, batch), x)
    assert sorted(sb.rows.tolist()) == list(range(total))  # a permutation of the rows
    sizes = sb.batch_sizes.tolist()
    assert sum(sizes) == total and sizes == sorted(sizes, reverse=True)
    assert sb.num_frames == max(lengths)
    # frame t holds step t of every sequence longer than t, longest first (stable)
    for t in range(sb.num_frames):
        start, stop = sb.frame(t)
        alive = [s for s in sb.order if lengths[s] > t]
        steps = [lengths[s] - 1 - t if reverse else t for s in alive]
        assert sb.rows[start:stop].tolist() == [offsets[s] + k for s, k in zip(alive, steps)]
    per_seq = np.arange(len(lengths) * 3.0).reshape(len(lengths), 3)
    np.testing.assert_array_equal(sb.unsorted_rows(np, sb.sorted_rows(np, per_seq)), per_seq)


def test_a_batch_of_no_sequences_has_no_frames():
    for offsets in ([0], []):  # [] too: a level with no offsets at all
        sb = SeqBatch(offsets)
        assert (sb.num_seqs, sb.num_frames, sb.total, sb.rows.size) == (0, 0, 0, 0)
        assert sb.to_batch(np, np.zeros((0, 2))).shape == (0, 2)


@given(LENGTHS, st.booleans())
def test_seq_batch_sorts_a_lod_once(lengths, reverse):
    """A training loop feeds the same LoD every step: the layout is computed once."""
    offsets = _offsets(lengths)
    first = seq_batch(offsets, reverse)
    assert seq_batch(np.array(offsets), reverse) is first
    assert seq_batch(offsets) is seq_batch(offsets, False)  # forward by default
    assert seq_batch(offsets, not reverse) is not first


def _segments(x, offsets):
    return [x[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


@given(nested_lod(), st.sampled_from(["SUM", "MAX", "LAST", "FIRST", "AVERAGE"]))
def test_sequence_pool_over_nested_lod(lod, pooltype):
    rows = lod[-1][-1]
    x = np.random.default_rng(len(lod) + rows).standard_normal((rows, 2))
    out = run_op("sequence_pool", {"X": LoDTensor(x, lod)},
                 {"pooltype": pooltype, "pad_value": -7.0}, return_lod=True)["Out"]
    pick = {"SUM": lambda s: s.sum(0), "MAX": lambda s: s.max(0), "LAST": lambda s: s[-1],
            "FIRST": lambda s: s[0], "AVERAGE": lambda s: s.mean(0)}[pooltype]
    want = [pick(s) if len(s) else np.full(2, -7.0) for s in _segments(x, lod[-1])]
    np.testing.assert_allclose(out.value, np.array(want).reshape(-1, 2), rtol=1e-12)
    assert out.lod() == lod[:-1]  # the pooled level goes, the outer levels stay


@given(nested_lod())
def test_sequence_reverse_twice_is_the_identity(lod):
    rows = lod[-1][-1]
    x = np.random.default_rng(rows).standard_normal((rows, 3))
    once = run_op("sequence_reverse", {"X": LoDTensor(x, lod)}, return_lod=True)["Y"]
    flipped = [s[::-1] for s in _segments(x, lod[-1])]
    np.testing.assert_array_equal(once.value, np.concatenate(flipped) if rows else x)
    assert once.lod() == lod
    twice = run_op("sequence_reverse", {"X": once}, return_lod=True)["Y"]
    np.testing.assert_array_equal(twice.value, x)
    assert twice.lod() == lod


@given(LENGTHS.filter(lambda lengths: sum(lengths) > 0), st.booleans(), st.booleans())
def test_fused_lstm_and_gru_match_the_step_loop(lengths, reverse, with_h0):
    """The batched kernels (sequence-to-batch, frames, back) against one sequence at a
    time, for any mix of empty, one-row and longer sequences."""
    offsets, d = _offsets(lengths), 2
    rng = np.random.default_rng(sum(lengths) * 7 + len(lengths))
    n, t = len(lengths), offsets[-1]
    lstm_in = {"Input": LoDTensor(rng.uniform(-1, 1, (t, 4 * d)), [offsets]),
               "Weight": rng.uniform(-0.8, 0.8, (d, 4 * d)),
               "Bias": rng.uniform(-0.5, 0.5, (1, 7 * d))}
    gru_in = {"Input": LoDTensor(rng.uniform(-1, 1, (t, 3 * d)), [offsets]),
              "Weight": rng.uniform(-0.8, 0.8, (d, 3 * d)),
              "Bias": rng.uniform(-0.5, 0.5, (1, 3 * d))}
    if with_h0:
        lstm_in["H0"] = rng.uniform(-1, 1, (n, d))
        lstm_in["C0"] = rng.uniform(-1, 1, (n, d))
        gru_in["H0"] = rng.uniform(-1, 1, (n, d))
    for op, inputs, reference in (("lstm", lstm_in, lstm_reference),
                                  ("gru", gru_in, gru_reference)):
        got = run_op(op, inputs, {"is_reverse": reverse})
        for slot, want in reference(inputs, {"is_reverse": reverse}).items():
            np.testing.assert_allclose(got[slot], want, rtol=1e-10, atol=1e-12,
                                       err_msg=f"{op} {slot} lengths {lengths}")
