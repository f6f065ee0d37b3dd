"""Segment plans (engine/kernels/seqplan.py) built directly, not through the cache the
sequence ops share (a plan made once per offsets tuple would hide a wrong one from every
later test): each index array against a loop over the sequences, empty and one-row
sequences included; segment sums and maxima (with the first row of each maximum, Paddle's
MaxIndex) against numpy loops, on the host and on a stand-in device module (cupy's padded
gather path); the per-sequence scales; and the error when a LoD does not cover the rows."""
import types

import numpy as np
import pytest

from fluidscope.engine.errors import ShapeError
from fluidscope.engine.kernels.seqplan import (SeqPlan, cached_plan, per_seq, plan_of,
                                               seg_max, seg_sum, seq_plan)
from test_seqbatch_mutants import OTHER_DEVICE, DeviceArray, OtherDeviceArray, _on_device

OFFSETS = [0, 2, 2, 5, 6]  # lengths 2, 0 (empty), 3, 1
DEVICE = types.SimpleNamespace(
    asarray=_on_device, inf=np.inf,
    full=lambda shape, value, dtype: _on_device(np.full(shape, value, dtype=dtype)),
    concatenate=lambda parts: _on_device(np.concatenate([np.asarray(p) for p in parts])))


def test_index_arrays_of_a_plan_with_empty_and_one_row_sequences():
    plan = SeqPlan(np.array(OFFSETS, dtype=np.int32))
    assert plan.offsets.dtype == np.int64 and plan.offsets.tolist() == OFFSETS
    assert (plan.n, plan.total) == (4, 6)
    assert plan.lengths.tolist() == [2, 0, 3, 1]
    assert plan.starts.tolist() == [0, 2, 2, 5] and plan.ends.tolist() == [2, 2, 5, 6]
    assert plan.ne_idx.tolist() == [0, 2, 3]
    assert plan.ne_starts.tolist() == [0, 2, 5] and plan.ne_last.tolist() == [1, 4, 5]
    assert plan.seg_id.tolist() == [0, 0, 2, 2, 2, 3]
    assert plan.row_ne.tolist() == [0, 0, 1, 1, 1, 2]
    np.testing.assert_allclose(plan.inv_len, [1 / 2, 1, 1 / 3, 1])
    np.testing.assert_allclose(plan.inv_sqrt, [1 / np.sqrt(2), 1, 1 / np.sqrt(3), 1])
    assert plan.reversed_rows.tolist() == [1, 0, 4, 3, 2, 5]  # each sequence mirrored
    # [non-empty sequences, longest]: rows, then `total` past each sequence's end
    assert plan.padded.tolist() == [[0, 1, 6], [2, 3, 4], [5, 6, 6]]


def test_a_plan_of_no_sequences_has_no_rows():
    plan = SeqPlan([0])
    assert (plan.n, plan.total) == (0, 0)
    assert plan.padded.shape == (0, 0)
    assert plan.seg_id.size == 0 and plan.reversed_rows.size == 0


def test_device_copies_are_made_once_per_device_and_array():
    plan = SeqPlan(OFFSETS)
    assert plan.dev(np, "ne_starts") is plan.ne_starts
    copy = plan.dev(DEVICE, "ne_starts")
    assert isinstance(copy, DeviceArray) and copy.tolist() == [0, 2, 5]
    assert plan.dev(DEVICE, "ne_starts") is copy
    other = plan.dev(OTHER_DEVICE, "ne_starts")  # a second device gets its own copy
    assert type(other) is OtherDeviceArray and other.tolist() == [0, 2, 5]
    assert plan.dev(DEVICE, "padded").tolist() == plan.padded.tolist()


def _reference(x, offsets):
    sums, maxima, rows = [], [], []
    for a, b in zip(offsets, offsets[1:]):
        if b > a:
            sums.append(x[a:b].sum(axis=0))
            maxima.append(x[a:b].max(axis=0))
            rows.append(a + x[a:b].argmax(axis=0))  # argmax: the first of equal values
    return np.array(sums), np.array(maxima), np.array(rows)


@pytest.mark.parametrize("xp", [np, DEVICE], ids=["host", "device"])
def test_segment_sums_and_maxima_with_their_first_rows(xp):
    plan = SeqPlan(OFFSETS)
    x = np.array([[1.0, 5.0], [3.0, 5.0], [2.0, -1.0], [7.0, 4.0], [7.0, 4.0], [0.5, -2.0]])
    sums, maxima, rows = _reference(x, OFFSETS)
    values, first = seg_max(xp, xp.asarray(x), plan, with_rows=True)
    np.testing.assert_array_equal(np.asarray(values), maxima)
    np.testing.assert_array_equal(np.asarray(first), rows)  # ties: rows 0 and 3
    values, none = seg_max(xp, xp.asarray(x), plan)
    np.testing.assert_array_equal(np.asarray(values), maxima)
    assert none is None
    low, _ = seg_max(xp, xp.asarray(x.astype(np.float32)), plan)
    assert low.dtype == np.float32  # the -inf filler past each end takes x's dtype
    np.testing.assert_array_equal(np.asarray(low), maxima.astype(np.float32))
    if xp is np:  # cupy has add.reduceat: the same call on the device
        np.testing.assert_array_equal(seg_sum(np, x, plan), sums)


def test_per_sequence_scales_are_columns_in_the_asked_dtype():
    plan = SeqPlan(OFFSETS)
    avg = per_seq(np, plan, "AVERAGE", np.float32)
    assert avg.shape == (4, 1) and avg.dtype == np.float32
    np.testing.assert_allclose(avg[:, 0], [1 / 2, 1, 1 / 3, 1], rtol=1e-6)
    sqrt = per_seq(np, plan, "SQRT", np.float64)
    np.testing.assert_allclose(sqrt[:, 0], [1 / np.sqrt(2), 1, 1 / np.sqrt(3), 1])


def test_a_lod_that_does_not_cover_the_rows_is_an_error_naming_op_and_input():
    with pytest.raises(ShapeError, match=r"op sequence_pool: input X has 5 rows but its LoD "
                                         r"\[0, 2, 2, 5, 6\] covers 6"):
        plan_of(OFFSETS, 5, "sequence_pool", "X")
    lod = types.SimpleNamespace(offsets=lambda slot: OFFSETS, op_type="sequence_conv",
                                slot_names={3: "X"})
    plan = seq_plan(lod, 3, 6)
    assert plan is cached_plan(tuple(OFFSETS)) and plan.total == 6
    with pytest.raises(ShapeError, match="op sequence_conv: input X has 7 rows"):
        seq_plan(lod, 3, 7)


def test_offsets_given_as_a_numpy_array_read_as_plain_numbers_in_the_error():
    with pytest.raises(ShapeError) as caught:
        plan_of(np.array(OFFSETS, dtype=np.int64), 5, "sequence_pool", "X")
    assert "LoD [0, 2, 2, 5, 6] covers 6" in str(caught.value)
    assert "np." not in str(caught.value) and "int64" not in str(caught.value)
    assert plan_of(np.array(OFFSETS), 6, "sequence_pool", "X") is cached_plan(tuple(OFFSETS))
