"""Sequence-to-batch layouts (engine/kernels/seqbatch.py) where the property tests do not
look: many sequences of equal length keep their LoD order (a stable sort: numpy's default
sort is not stable beyond 16 elements), offsets of any integer-valued dtype give the same
int64 layout, and the device path indexes with device copies of the index arrays (cupy
refuses host index arrays; a stand-in device module here does too)."""
import types

import numpy as np
import pytest

from fluidscope.engine.kernels.seqbatch import SeqBatch


class DeviceArray(np.ndarray):
    """An array of the stand-in device: indexing it with a host array fails, as in cupy."""

    def __getitem__(self, key):
        _refuse_host(key)
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        _refuse_host(key)
        super().__setitem__(key, value)


def _refuse_host(key):
    if isinstance(key, np.ndarray) and not isinstance(key, DeviceArray):
        raise TypeError("a device array cannot be indexed with a host array")


def _on_device(a):
    return np.asarray(a).view(DeviceArray)


DEVICE = types.SimpleNamespace(
    asarray=_on_device, empty_like=lambda a: np.empty_like(a).view(DeviceArray))


class OtherDeviceArray(DeviceArray):
    """An array of a second device (a second cupy device): its own index copies."""


OTHER_DEVICE = types.SimpleNamespace(
    asarray=lambda a: np.asarray(a).view(OtherDeviceArray),
    empty_like=lambda a: np.empty_like(a).view(OtherDeviceArray))


def _offsets(lengths):
    return [0] + np.cumsum(lengths).tolist()


def test_many_sequences_of_equal_length_keep_their_lod_order_in_every_frame():
    lengths = [1, 2, 3, 2, 1, 3] * 10  # 60 sequences: numpy's default sort reorders ties
    sb = SeqBatch(_offsets(lengths))
    expected = sorted(range(60), key=lambda i: -lengths[i])  # Python's sort is stable
    assert sb.order.tolist() == expected
    for t in range(3):
        start, stop = sb.frame(t)
        alive = [i for i in expected if lengths[i] > t]
        assert sb.rows[start:stop].tolist() == [_offsets(lengths)[i] + t for i in alive]


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint64])
def test_offsets_of_any_integer_valued_dtype_give_the_int64_layout(dtype):
    offsets = [0, 2, 2, 5, 6]
    plain = SeqBatch(offsets, reverse=True)
    other = SeqBatch(np.array(offsets, dtype=dtype), reverse=True)
    assert other.offsets.dtype == np.int64 and other.rows.dtype == np.int64
    np.testing.assert_array_equal(other.rows, plain.rows)
    x = np.arange(12.0).reshape(6, 2)
    np.testing.assert_array_equal(other.to_batch(np, x), plain.to_batch(np, x))


def test_the_device_path_indexes_with_device_copies_of_its_index_arrays():
    sb = SeqBatch([0, 3, 4, 8], reverse=True)
    x = _on_device(np.arange(16.0).reshape(8, 2))
    batch = sb.to_batch(DEVICE, x)
    np.testing.assert_array_equal(np.asarray(batch), np.arange(16.0).reshape(8, 2)[sb.rows])
    assert sb.index(DEVICE) is sb.index(DEVICE)  # copied to the device once
    assert type(sb.index(DEVICE)) is DeviceArray
    assert type(sb.index(OTHER_DEVICE)) is OtherDeviceArray  # and once to each device
    np.testing.assert_array_equal(np.asarray(sb.index(OTHER_DEVICE)), sb.rows)
    np.testing.assert_array_equal(np.asarray(sb.to_sequence(DEVICE, batch)), np.asarray(x))
    per_seq = _on_device(np.array([[10.0], [11.0], [12.0]]))
    ordered = sb.sorted_rows(DEVICE, per_seq)
    np.testing.assert_array_equal(np.asarray(ordered), [[12.0], [10.0], [11.0]])  # by length
    np.testing.assert_array_equal(np.asarray(sb.unsorted_rows(DEVICE, ordered)),
                                  np.asarray(per_seq))
