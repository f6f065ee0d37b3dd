"""widgets.tensor.summary: statistics, histogram, heatmap binning and per-sequence rows equal
numpy's, stay within their caps, and are JSON-safe apart from their byte buffers."""
import json

import numpy as np
import pytest

from fluidscope.widgets.tensor import summary as ts

rng = np.random.default_rng(3)


def without_bytes(value):
    """``value`` with every bytes field replaced by its length (what JSON would carry)."""
    if isinstance(value, dict):
        return {k: without_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_bytes(v) for v in value]
    if isinstance(value, bytes):
        return len(value)
    return value


def test_stats_equal_numpy_over_the_finite_values():
    a = rng.standard_normal((7, 5)).astype(np.float32)
    a[0, 1], a[3, 3], a[6, 0] = np.nan, np.inf, -np.inf
    finite = a[np.isfinite(a)].astype(np.float64)
    got = ts.stats(a)
    assert (got["size"], got["finite"], got["nan"], got["inf"]) == (35, 32, 1, 2)
    assert got["min"] == pytest.approx(finite.min()) and got["max"] == pytest.approx(finite.max())
    assert got["mean"] == pytest.approx(finite.mean(), rel=1e-12)
    assert got["std"] == pytest.approx(finite.std(), rel=1e-12)


def test_stats_of_integers_and_of_no_finite_value():
    got = ts.stats(np.array([[1, 2], [3, 10]], dtype=np.int64))
    assert got == {"size": 4, "finite": 4, "nan": 0, "inf": 0, "min": 1.0, "max": 10.0,
                   "mean": 4.0, "std": pytest.approx(np.std([1, 2, 3, 10]))}
    bad = ts.stats(np.array([np.nan, np.inf, np.nan]))
    assert (bad["nan"], bad["inf"], bad["finite"]) == (2, 1, 0)
    assert bad["min"] is bad["max"] is bad["mean"] is bad["std"] is None


def counts_of(hist):
    return np.frombuffer(hist["counts"], dtype=ts.HISTOGRAM_DTYPE)


def test_histogram_counts_the_finite_values_like_numpy():
    a = rng.standard_normal(1000)
    a[:10] = np.nan
    a[10:13] = np.inf
    hist = ts.histogram(a, bins=16)
    counts = counts_of(hist)
    assert isinstance(hist["counts"], bytes) and len(hist["counts"]) == 16 * 4
    assert counts.sum() == 987
    finite = a[np.isfinite(a)]
    expected, edges = np.histogram(finite, bins=16)
    np.testing.assert_array_equal(counts, expected)
    assert (hist["lo"], hist["hi"]) == (edges[0], edges[-1])


def test_histogram_of_float32_values_spanning_the_whole_range():
    # Exploding weights: max - min overflows float32 (the 04 notebook's NaN hunt).
    a = np.array([-3e38, -1e20, 0.0, 2e30, 3e38], np.float32)
    counts = counts_of(ts.histogram(a, bins=4))
    assert counts.tolist() == [1, 1, 2, 1]


def test_histogram_of_a_constant_and_of_nothing_finite():
    constant = ts.histogram(np.full(9, 2.5), bins=4)
    assert (constant["lo"], constant["hi"]) == (2.0, 3.0) and counts_of(constant).sum() == 9
    empty = ts.histogram(np.array([np.nan, np.nan]), bins=4)
    assert counts_of(empty).tolist() == [0, 0, 0, 0]


def test_downsample_is_the_block_mean_and_keeps_small_matrices():
    small = rng.standard_normal((5, 7))
    np.testing.assert_array_equal(ts.downsample(small, 8, 8), small)
    big = rng.standard_normal((10, 10))
    got = ts.downsample(big, 3, 4)
    assert got.shape == (3, 4)
    rows, cols = [0, 3, 6, 10], [0, 2, 5, 7, 10]  # linspace(0, n, k + 1), floored
    for i in range(3):
        for j in range(4):
            block = big[rows[i]:rows[i + 1], cols[j]:cols[j + 1]]
            assert got[i, j] == pytest.approx(block.mean(), rel=1e-12)


def test_downsample_marks_only_the_cell_holding_a_nan():
    m = np.ones((100, 100), dtype=np.float32)
    m[0, 0] = np.nan
    got = ts.downsample(m, 10, 10)
    assert np.isnan(got[0, 0]) and np.isfinite(got).sum() == 99


@pytest.mark.parametrize("shape, rows, cols, binned", [
    ((1000, 3000), 64, 64, True), ((20, 30), 20, 30, False), ((50,), 1, 50, False),
    ((4, 5, 6), 4, 30, False),
    # thin: the short side's unused cells go to the long side, up to 256
    ((200, 3), 200, 3, False), ((3, 96), 3, 96, False), ((64, 1), 64, 1, False),
    ((784,), 1, 256, True), ((1000, 10), 256, 10, True), ((100, 100), 64, 64, True)])
def test_heatmap_size_is_bounded(shape, rows, cols, binned):
    a = rng.standard_normal(shape).astype(np.float32)
    hm = ts.heatmap(a)
    assert (hm["rows"], hm["cols"], hm["binned"]) == (rows, cols, binned)
    assert isinstance(hm["data"], bytes) and len(hm["data"]) == rows * cols * 4
    cells = np.frombuffer(hm["data"], dtype=ts.HEATMAP_DTYPE).reshape(rows, cols)
    assert hm["lo"] == pytest.approx(cells.min()) and hm["hi"] == pytest.approx(cells.max())
    if not binned:
        np.testing.assert_array_equal(cells, ts.as_matrix(a))


def test_heatmap_of_a_scalar_or_empty_array_is_none():
    assert ts.heatmap(np.float32(3)) is None and ts.heatmap(np.zeros((0, 4))) is None


def test_preview_is_the_first_values():
    a = np.arange(100, dtype=np.int64).reshape(10, 10)
    p = ts.preview(a, count=12)
    assert (p["count"], p["total"]) == (12, 100) and len(p["data"]) == 12 * 8
    assert np.frombuffer(p["data"], dtype=ts.PREVIEW_DTYPE).tolist() == list(range(12))


def test_sequence_rows_from_lod_offsets():
    a = rng.standard_normal((9, 2))
    a[4, 1] = np.nan
    seqs = ts.sequence_rows(a, [[0, 3, 4, 9]])
    assert seqs["total"] == 3
    assert [(r["start"], r["end"], r["length"]) for r in seqs["rows"]] == [(0, 3, 3), (3, 4, 1),
                                                                          (4, 9, 5)]
    for r in seqs["rows"]:
        part = a[r["start"]:r["end"]]
        finite = part[np.isfinite(part)]
        assert r["mean"] == pytest.approx(finite.mean()) and r["max"] == pytest.approx(finite.max())
        assert r["nan"] == int(np.isnan(part).sum())
    assert seqs["rows"][2]["nan"] == 1 and seqs["rows"][0]["nan"] == 0


def test_sequence_rows_nested_levels_limit_and_bad_lod():
    a = np.arange(6.0)
    nested = ts.sequence_rows(a, [[0, 2, 4], [0, 1, 4, 5, 6]])  # 2 sequences of 2 subs each
    assert [(r["start"], r["end"]) for r in nested["rows"]] == [(0, 4), (4, 6)]
    many = ts.sequence_rows(np.arange(100.0), [list(range(101))], limit=10)
    assert many["total"] == 100 and len(many["rows"]) == 10
    assert ts.sequence_rows(a, [[0, 2, 4]]) is None  # covers 4 of 6 rows
    assert ts.sequence_rows(a, []) is None


def test_summarize_is_json_safe_and_bounded_for_a_large_tensor():
    a = rng.standard_normal((2000, 1500)).astype(np.float32)
    a[5, 5] = np.nan
    a[6, 6] = -np.inf
    s = ts.summarize(a)
    assert s["shape"] == [2000, 1500] and s["dtype"] == "float32" and s["size"] == 3_000_000
    assert (s["stats"]["nan"], s["stats"]["inf"]) == (1, 1)
    text = json.dumps(without_bytes(s), allow_nan=False)  # no NaN/Infinity literals
    shipped = len(text) + len(s["histogram"]["counts"]) + len(s["heatmap"]["data"]) \
        + len(s["preview"]["data"])
    assert shipped < 64_000  # the tensor is 12 MB
    assert counts_of(s["histogram"]).sum() == s["stats"]["finite"] == 3_000_000 - 2


def test_summarize_all_nan_has_json_null_figures():
    s = ts.summarize(np.full((3, 3), np.nan))
    json.dumps(without_bytes(s), allow_nan=False)
    assert s["stats"]["mean"] is None and s["heatmap"]["lo"] is None


def test_summarize_other_dtypes():
    flags = ts.summarize(np.array([True, False, True]))
    assert flags["stats"]["mean"] == pytest.approx(2 / 3) and "bool" in flags["note"]
    waves = ts.summarize(np.array([3 + 4j, 0j]))
    assert waves["stats"]["max"] == 5.0 and "complex" in waves["note"]
    words = ts.summarize(np.array(["a", "b"]))
    assert words["stats"] is None and words["histogram"] is None and "no numeric" in words["note"]
    with_lod = ts.summarize(np.ones((3, 1)), [[0, 1, 3]])
    assert with_lod["lod"] == [[0, 1, 3]] and with_lod["sequences"]["total"] == 2
