"""Summaries of tensors small enough to send to a browser: pure numpy, no widget code.

A debugger may stop on a tensor of millions of values; the inspector must show it at
once without shipping it. ``summarize`` reads the whole array in Python (statistics,
NaN and Inf counts, histogram) and keeps only fixed-size pieces for the front end: the
histogram counts, a heatmap binned down to at most ``HEATMAP_CELLS`` rows and columns,
the first ``PREVIEW_VALUES`` values and one row per sequence (up to
``SEQUENCE_ROWS``). Arrays travel as little-endian ``bytes`` (ipywidgets sends ``bytes``
as binary buffers, never as JSON lists); every other field is JSON-safe: a NaN or an
infinity never appears as a number (JSON has none), non-finite figures are None.

Statistics (min / max / mean / std) are over the *finite* values, so one Inf does not
hide the spread of the rest; ``nan`` and ``inf`` say how many values were left out.
"""
from __future__ import annotations

import math

import numpy as np

HISTOGRAM_BINS = 32
HEATMAP_CELLS = (64, 64)   # (rows, columns) at most; larger tensors are binned
HEATMAP_SIDE = 256         # a thin tensor may use the cells of its short side on its long one
PREVIEW_VALUES = 32
SEQUENCE_ROWS = 64

HISTOGRAM_DTYPE = "<u4"    # counts
HEATMAP_DTYPE = "<f4"      # cell means (NaN / Inf kept: they mark bad regions)
PREVIEW_DTYPE = "<f8"      # first values, exact for float32 and small integers


def _number(value):
    """A JSON-safe float: None for NaN and infinities."""
    value = float(value)
    return value if math.isfinite(value) else None


def _numeric(array):
    """(real float array to measure, note) for any numeric array; None if not numeric."""
    kind = array.dtype.kind
    if kind in "fiu":
        return array, ""
    if kind == "b":
        return array.astype(np.uint8), "bool: figures are of 0/1"
    if kind == "c":
        return np.abs(array), "complex: figures are of |x|"
    return None, f"dtype {array.dtype} has no numeric summary"


def stats(array) -> dict:
    """Counts and min / max / mean / std of the finite values of ``array``.

    Returns ``{"size", "finite", "nan", "inf", "min", "max", "mean", "std"}``; the four
    figures are None when no value is finite. Means and deviations accumulate in float64.
    """
    values = np.asarray(array)
    size = int(values.size)
    if values.dtype.kind == "f":
        nan = int(np.count_nonzero(np.isnan(values)))
        inf = int(np.count_nonzero(np.isinf(values)))
        finite = values[np.isfinite(values)] if nan or inf else values.reshape(-1)
    else:
        nan = inf = 0
        finite = values.reshape(-1)
    out = {"size": size, "finite": int(finite.size), "nan": nan, "inf": inf,
           "min": None, "max": None, "mean": None, "std": None}
    if finite.size:
        out.update(min=_number(finite.min()), max=_number(finite.max()),
                   mean=_number(finite.mean(dtype=np.float64)),
                   std=_number(finite.std(dtype=np.float64)))
    return out


def histogram(array, bins=HISTOGRAM_BINS) -> dict:
    """Counts of the finite values of ``array`` in ``bins`` equal bins over [min, max].

    Returns ``{"bins", "lo", "hi", "counts"}``: ``counts`` is ``bins`` uint32 values as
    bytes; they sum to the number of finite values. A constant array gets the range
    [v - 0.5, v + 0.5]; an array without finite values gets zero counts over [0, 1].
    """
    values = np.asarray(array).reshape(-1)
    if values.dtype.kind == "f":
        # float64: the bin arithmetic of float32 values near +-3e38 (exploding weights)
        # overflows to Inf (hi - lo) and numpy then indexes out of bounds.
        values = values[np.isfinite(values)].astype(np.float64)
    if values.size:
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, _ = np.histogram(values, bins=bins, range=(lo, hi))
    return {"bins": int(bins), "lo": lo, "hi": hi,
            "counts": counts.astype(HISTOGRAM_DTYPE).tobytes()}


def _edges(n, cells):
    """Bin starts splitting ``n`` items into ``min(n, cells)`` nearly equal bins."""
    count = min(n, cells)
    return np.linspace(0, n, count + 1).astype(np.int64)


def downsample(matrix, max_rows=HEATMAP_CELLS[0], max_cols=HEATMAP_CELLS[1]):
    """Block means of a 2-D array, at most ``max_rows`` x ``max_cols`` (float64).

    Each cell is the mean of the rectangle of source values it covers; a NaN or an Inf
    in a rectangle makes its cell non-finite, so bad regions stay visible.
    """
    matrix = np.asarray(matrix)
    rows, cols = matrix.shape
    if rows == 0 or cols == 0:
        return np.zeros((0, 0))
    row_edges, col_edges = _edges(rows, max_rows), _edges(cols, max_cols)
    if len(row_edges) - 1 == rows and len(col_edges) - 1 == cols:
        return matrix.astype(np.float64)
    # sums in float64 without a float64 copy of the whole tensor; inf - inf inside a
    # block is meant to give NaN
    with np.errstate(invalid="ignore", over="ignore"):
        sums = np.add.reduceat(np.add.reduceat(matrix, row_edges[:-1], axis=0, dtype=np.float64),
                               col_edges[:-1], axis=1)
    sizes = np.outer(np.diff(row_edges), np.diff(col_edges))
    return sums / sizes


def as_matrix(array):
    """The 2-D view a heatmap draws: 1-D as one row, N-D as (dim 0, the rest); None for
    a scalar or an empty array."""
    array = np.asarray(array)
    if array.ndim == 0 or array.size == 0:
        return None
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(array.shape[0], -1)


def heatmap_shape(rows, cols, cells=HEATMAP_CELLS):
    """(rows, columns) caps for a rows x cols matrix: ``cells``, except that a side that
    fits gives its unused budget (``cells[0] * cells[1]`` in all) to the other side, up
    to ``HEATMAP_SIDE``: [3, 96] keeps its 96 columns, [1, 784] bins to 256, not 64."""
    budget = cells[0] * cells[1]
    max_rows, max_cols = cells
    if rows <= max_rows:
        max_cols = max(max_cols, min(HEATMAP_SIDE, budget // max(rows, 1)))
    elif cols <= max_cols:
        max_rows = max(max_rows, min(HEATMAP_SIDE, budget // max(cols, 1)))
    return max_rows, max_cols


def heatmap(array, cells=HEATMAP_CELLS) -> dict | None:
    """The heatmap of ``as_matrix(array)`` binned to at most ``heatmap_shape`` cells
    (``cells`` = (rows, columns), widened for thin matrices).

    Returns ``{"rows", "cols", "source_rows", "source_cols", "binned", "lo", "hi",
    "data"}``: ``data`` is ``rows * cols`` float32 values (row-major) as bytes; lo / hi
    is the range of its finite cells (None when none is finite). None for scalars.
    """
    matrix = as_matrix(array)
    if matrix is None:
        return None
    cells_values = downsample(matrix, *heatmap_shape(*matrix.shape, cells))
    finite = cells_values[np.isfinite(cells_values)]
    rows, cols = cells_values.shape
    return {"rows": int(rows), "cols": int(cols),
            "source_rows": int(matrix.shape[0]), "source_cols": int(matrix.shape[1]),
            "binned": bool(cells_values.shape != matrix.shape),
            "lo": _number(finite.min()) if finite.size else None,
            "hi": _number(finite.max()) if finite.size else None,
            "data": cells_values.astype(HEATMAP_DTYPE).tobytes()}


def preview(array, count=PREVIEW_VALUES) -> dict:
    """The first ``count`` values in row-major order: ``{"count", "total", "data"}``,
    ``data`` float64 bytes."""
    flat = np.asarray(array).reshape(-1)
    first = flat[:count].astype(np.float64)
    return {"count": int(first.size), "total": int(flat.size),
            "data": first.astype(PREVIEW_DTYPE).tobytes()}


def sequence_offsets(lod, rows):
    """Row offsets of the top-level sequences of ``lod`` (offsets, Paddle style),
    composed down through nested levels; None without a usable LoD."""
    if not lod:
        return None
    offsets = [int(v) for v in lod[0]]
    for level in lod[1:]:
        if offsets[-1] >= len(level):
            return None
        offsets = [int(level[o]) for o in offsets]
    if offsets[-1] != rows:
        return None
    return offsets


def sequence_rows(array, lod, limit=SEQUENCE_ROWS) -> dict | None:
    """One row per top-level sequence: where it starts and ends, its length and the
    ``stats`` of its values. Returns ``{"total", "rows"}`` (the first ``limit`` rows),
    or None without a LoD that covers ``array``'s rows."""
    array = np.asarray(array)
    offsets = sequence_offsets(lod, array.shape[0] if array.ndim else 1)
    if offsets is None:
        return None
    rows = []
    for index, (start, end) in enumerate(zip(offsets[:limit], offsets[1:limit + 1])):
        figures = stats(array[start:end])
        rows.append({"index": index, "start": start, "end": end, "length": end - start,
                     **{k: figures[k] for k in ("min", "max", "mean", "std", "nan", "inf")}})
    return {"total": len(offsets) - 1, "rows": rows}


def summarize(array, lod=None, *, bins=HISTOGRAM_BINS, cells=HEATMAP_CELLS,
              preview_values=PREVIEW_VALUES, sequence_limit=SEQUENCE_ROWS) -> dict:
    """Everything the inspector shows about one array (numpy; convert cupy first).

    Returns ``{"shape", "dtype", "size", "lod", "note", "stats", "histogram",
    "heatmap", "preview", "sequences"}``; the last five are None for a non-numeric
    array, ``heatmap`` for a scalar or empty one, ``sequences`` without a LoD. Its
    size does not grow with the array's beyond the caps given.
    """
    array = np.asarray(array)
    out = {"shape": [int(d) for d in array.shape], "dtype": str(array.dtype),
           "size": int(array.size), "lod": [[int(v) for v in level] for level in (lod or [])],
           "note": "", "stats": None, "histogram": None, "heatmap": None, "preview": None,
           "sequences": None}
    values, note = _numeric(array)
    out["note"] = note
    if values is None:
        return out
    out.update(stats=stats(values), histogram=histogram(values, bins),
               heatmap=heatmap(values, cells), preview=preview(values, preview_values),
               sequences=sequence_rows(values, out["lod"], sequence_limit))
    return out


__all__ = ["summarize", "stats", "histogram", "heatmap", "downsample", "as_matrix",
           "preview", "sequence_rows", "sequence_offsets", "HISTOGRAM_BINS",
           "HEATMAP_CELLS", "PREVIEW_VALUES", "SEQUENCE_ROWS"]
