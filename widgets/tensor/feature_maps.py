"""NCHW feature maps as an image grid: one sample of a 4-D tensor, its channels as tiles.

A conv activation [N, C, H, W] read as a (N, C*H*W) heatmap is a smear; what a user
looks for is each channel's H x W image. ``feature_grid`` picks sample ``n`` and sends
the first ``max_tiles`` channels, each binned to at most ``tile_cells`` square (block
means, as ``summary.downsample``), on one shared colour scale so that channels compare.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine.errors import FluidscopeError

from .summary import HEATMAP_DTYPE, downsample

MAX_TILES = 64
TILE_CELLS = 32


def feature_grid(array, sample=0, *, max_tiles=MAX_TILES, tile_cells=TILE_CELLS) -> dict | None:
    """The tiles of sample ``sample`` of a 4-D ``array`` (None for any other rank).

    Returns ``{"sample", "samples", "channels", "shown", "height", "width", "tile_rows",
    "tile_cols", "binned", "lo", "hi", "data"}``: ``data`` is ``shown * tile_rows *
    tile_cols`` float32 values (channel-major, row-major within a tile) as bytes; lo / hi
    the range of the finite values shown (None when none is). FluidscopeError when
    ``sample`` is not in [0, N).
    """
    array = np.asarray(array)
    if array.ndim != 4 or array.size == 0 or array.dtype.kind not in "fiub":
        return None
    samples, channels, height, width = (int(d) for d in array.shape)
    if not 0 <= sample < samples:
        raise FluidscopeError(f"feature maps: sample {sample} is out of range; the tensor of "
                              f"shape {list(array.shape)} has samples 0..{samples - 1}")
    shown = min(channels, max_tiles)
    tiles = [downsample(array[sample, c], tile_cells, tile_cells) for c in range(shown)]
    stack = np.stack(tiles) if tiles else np.zeros((0, 0, 0))
    finite = stack[np.isfinite(stack)]
    return {"sample": int(sample), "samples": samples, "channels": channels, "shown": shown,
            "height": height, "width": width,
            "tile_rows": int(stack.shape[1]), "tile_cols": int(stack.shape[2]),
            "binned": bool(stack.shape[1:] != (height, width)),
            "lo": float(finite.min()) if finite.size else None,
            "hi": float(finite.max()) if finite.size else None,
            "data": stack.astype(HEATMAP_DTYPE).tobytes()}


__all__ = ["feature_grid", "MAX_TILES", "TILE_CELLS"]
