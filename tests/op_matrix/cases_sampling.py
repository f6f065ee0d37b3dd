"""Cases for kernels/sampling.py: ``affine_grid``, ``grid_sampler``, ``unpool`` and
``unpool3d``, against per-point numpy loops.

Ported from Paddle's test/legacy_test: test_affine_grid_op.py (TestAffineGridOp and
Case1..4: output_shape attribute or OutputShape tensor, align_corners on/off, and the
5-D classes), test_grid_sampler_op.py (TestGridSamplerOp, Case1, Case1_, Case2, Case3,
Case4 and the 3-D Case6, Case6_, Case7, Case8, Case9: every mode x padding_mode x
align_corners they test; grids made as theirs, an affine grid of random Theta in [0, 1);
volumes shrunk), test_unpool_op.py (TestUnpoolOp and its output_size variant) and
test_unpool3d_op.py (TestUnpool3DOp): indices of a max pool's window maxima.

Compared with PaddlePaddle 3.3.1 (static graph, CPU, float64): affine_grid (2-D/3-D, both
align_corners, OutputShape tensor) Output and Theta@GRAD to 5e-16; grid_sampler (2-D and
3-D, bilinear/nearest x zeros/border/reflection x align_corners, grids reaching outside
[-1, 1]) Output, X@GRAD and Grid@GRAD to 4e-15; unpool/unpool3d Out and X@GRAD exactly.
nearest rounds halves to even as Paddle (std::nearbyint; checked at exact .5 and 1.5).
Differences: Paddle's unpool with an out-of-range index fails as ours does; with an empty
output_size (its [0, 0] default) Paddle returns an empty Out and ignores X, ours refuses it;
Paddle's affine_grid gives NaN along a size-1 output axis with align_corners (its linspace
divides by 0), ours -1 (any value there samples the one pixel).

Programs built with Paddle's Python APIs in legacy static mode (F.affine_grid (2-D/3-D),
F.max_unpool2d/3d after max_pool*_with_index, and grid_sampler appended directly
(F.grid_sample cannot build a legacy static program in 3.3.1)), with their backward,
replayed op by op in float32 (forward and _grad ops as Paddle wrote them): every output
matched to 3e-7 relative.
"""
import itertools

import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(145)

NOT_PORTED = {
    "LargeInputCase / Case5 / LargeInput3DCase / Case10 (test_grid_sampler_op.py)":
        "GPU-only places (forward of 128x128 inputs); their attributes are ported on small inputs",
    "TestAffineGridOp with use_cudnn / TestGridSamplerOp use_cudnn": "cuDNN is a runtime hint",
    "TestAffineGridAPI / TestGridSampleAPI / test_affine_grid_function.py / "
    "test_grid_sample_function.py": "Python API wrappers of the same ops",
    "TestUnpoolOpException / TestUnpool*API / test_unpool_indices": "Python API argument checks",
    "float16 / bfloat16 classes": "float16/bfloat16 dtypes",
}


# ------------------------------------------------------------------ affine_grid
def affine_grid_ref(theta, shape, align_corners=True):
    spatial = shape[2:]
    lines = []
    for size in spatial:
        line = np.linspace(-1, 1, size)
        lines.append(line if align_corners else line * (size - 1) / size)
    nd = len(spatial)
    out = np.zeros((theta.shape[0], *spatial, nd))
    for pos in itertools.product(*[range(s) for s in spatial]):
        base = [lines[i][pos[i]] for i in reversed(range(nd))] + [1.0]  # x, y[, z], 1
        for n in range(theta.shape[0]):
            out[(n, *pos)] = theta[n] @ np.array(base)
    return out


def _ag(i, a):
    shape = list(i["OutputShape"]) if "OutputShape" in i else a["output_shape"]
    return {"Output": affine_grid_ref(i["Theta"], shape, a.get("align_corners", True))}


# ------------------------------------------------------------------ grid_sampler
def _reflect(v, low, high):
    """Reflect v into [low, high] by mirroring at both ends (a loop, not the kernel's formula)."""
    if high == low:
        return low
    while v < low or v > high:
        v = 2 * low - v if v < low else 2 * high - v
    return v


def _coord(g, size, align, padding):
    v = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    if padding == "border":
        v = min(max(v, 0), size - 1)
    elif padding == "reflection":
        v = _reflect(v, 0, size - 1) if align else _reflect(v, -0.5, size - 0.5)
        v = min(max(v, 0), size - 1)
    return v


def grid_sampler_ref(x, grid, align_corners=True, mode="bilinear", padding_mode="zeros"):
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    nd = len(spatial)
    out = np.zeros((n, c, *grid.shape[1:-1]))
    for b in range(n):
        for pos in itertools.product(*[range(s) for s in grid.shape[1:-1]]):
            g = grid[(b, *pos)]
            coords = [_coord(g[nd - 1 - i], spatial[i], align_corners, padding_mode)
                      for i in range(nd)]
            if mode == "nearest":
                idx = [int(np.rint(v)) for v in coords]
                if all(0 <= k < s for k, s in zip(idx, spatial)):
                    out[(b, slice(None), *pos)] = x[(b, slice(None), *idx)]
                continue
            for bits in itertools.product((0, 1), repeat=nd):
                idx = [int(np.floor(v)) + bit for v, bit in zip(coords, bits)]
                w = np.prod([1 - abs(v - k) for v, k in zip(coords, idx)])
                if all(0 <= k < s for k, s in zip(idx, spatial)):
                    out[(b, slice(None), *pos)] += w * x[(b, slice(None), *idx)]
    return out


def _gs(i, a):
    return {"Output": grid_sampler_ref(i["X"], i["Grid"], **a)}


def _paddle_grid(n, out_spatial):
    """Paddle's tests sample at an affine grid of a random Theta in [0, 1)."""
    nd = len(out_spatial)
    theta = rng.random((n, nd, nd + 1))
    return affine_grid_ref(theta, [n, 1, *out_spatial], True)


# ------------------------------------------------------------------ unpool
def _max_pool_indices(x, ksize, strides):
    """(pooled values, flat plane indices) of a non-overlapping max pool, as Paddle's tests."""
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    out_spatial = [(s - k) // st + 1 for s, k, st in zip(spatial, ksize, strides)]
    vals = np.zeros((n, c, *out_spatial))
    idx = np.zeros((n, c, *out_spatial), dtype=np.int32)
    for b, ch in itertools.product(range(n), range(c)):
        for pos in itertools.product(*[range(o) for o in out_spatial]):
            window = tuple(slice(p * st, p * st + k) for p, st, k in zip(pos, strides, ksize))
            patch = x[(b, ch) + window]
            local = np.unravel_index(np.argmax(patch), patch.shape)
            full = [p * st + l for p, st, l in zip(pos, strides, local)]
            vals[(b, ch, *pos)] = patch[local]
            idx[(b, ch, *pos)] = np.ravel_multi_index(full, spatial)
    return vals, idx


def unpool_ref(x, indices, output_size):
    n, c = x.shape[:2]
    out = np.zeros((n, c, int(np.prod(output_size))))
    for b, ch in itertools.product(range(n), range(c)):
        for k, v in zip(indices[b, ch].ravel(), x[b, ch].ravel()):
            out[b, ch, k] = v
    return out.reshape(n, c, *output_size)


def _up(i, a):
    return {"Out": unpool_ref(i["X"], i["Indices"], a["output_size"])}


def _errors(outs, i, a):
    with pytest.raises(FluidscopeError, match="outside the output plane"):
        run_op("unpool", {"X": i["X"], "Indices": i["Indices"] + 100}, a)
    with pytest.raises(FluidscopeError, match="Theta"):
        run_op("affine_grid", {"Theta": rng.random((2, 2, 3))}, {"output_shape": [2, 1, 2, 3, 4]})
    with pytest.raises(FluidscopeError, match="Grid"):
        run_op("grid_sampler", {"X": rng.random((1, 1, 3, 3)),
                                "Grid": rng.random((1, 2, 2, 3))}, {})


def _unpool_case(op, name, pre_shape, ksize, strides, check=None, extra=None):
    vals, idx = _max_pool_indices(rng.random(pre_shape), ksize, strides)
    attrs = dict(extra or {}, ksize=ksize, strides=strides, paddings=[0] * len(ksize),
                 output_size=list(pre_shape[2:]))
    return port(op, name, {"X": vals, "Indices": idx}, _up, attrs=attrs, check=check)


def _gs_case(name, x_shape, grid_spatial, align, padding, mode):
    return port("grid_sampler", name,
                {"X": rng.integers(0, 255, x_shape) / 255.0,  # Paddle's pixels, scaled to [0, 1)
                 "Grid": _paddle_grid(x_shape[0], grid_spatial)},
                _gs, attrs={"align_corners": align, "padding_mode": padding, "mode": mode})


CASES = [
    *port("affine_grid", "TestAffineGridOp", {"Theta": rng.random((2, 2, 3))}, _ag,
          attrs={"output_shape": [2, 2, 3, 4], "align_corners": True}),
    *port("affine_grid", "TestAffineGridOpCase1",
          {"Theta": rng.random((2, 2, 3)), "OutputShape": np.array([2, 2, 3, 4], np.int32)},
          _ag, attrs={"align_corners": True}, check_shapes=False),
    *port("affine_grid", "TestAffineGridOpCase2", {"Theta": rng.random((2, 2, 3))}, _ag,
          attrs={"output_shape": [2, 2, 3, 4], "align_corners": False}),
    *port("affine_grid", "TestAffineGridOpCase3",
          {"Theta": rng.random((2, 2, 3)), "OutputShape": np.array([2, 2, 4, 3], np.int32)},
          _ag, attrs={"align_corners": False}, check_shapes=False),
    *port("affine_grid", "TestAffineGridOp5D", {"Theta": rng.random((2, 3, 4))}, _ag,
          attrs={"output_shape": [2, 2, 2, 3, 4], "align_corners": True}),
    *port("affine_grid", "TestAffineGridOp5DCase2", {"Theta": rng.random((2, 3, 4))}, _ag,
          attrs={"output_shape": [2, 2, 3, 2, 3], "align_corners": False}),
    *_gs_case("TestGridSamplerOp", (1, 2, 4, 4), (3, 4), True, "zeros", "bilinear"),
    *_gs_case("Case1", (1, 2, 3, 4), (3, 4), False, "zeros", "bilinear"),
    *_gs_case("Case1_", (1, 2, 3, 4), (3, 4), False, "border", "bilinear"),
    *_gs_case("Case2", (1, 2, 3, 4), (3, 4), False, "reflection", "bilinear"),
    *_gs_case("Case3", (1, 2, 3, 4), (3, 4), True, "reflection", "bilinear"),
    *_gs_case("Case4", (1, 2, 3, 4), (3, 4), False, "reflection", "nearest"),
    *_gs_case("Case6", (1, 2, 2, 3, 3), (2, 2, 3), False, "zeros", "bilinear"),
    *_gs_case("Case6_", (1, 2, 2, 3, 3), (2, 2, 3), False, "border", "bilinear"),
    *_gs_case("Case7", (1, 2, 2, 3, 3), (2, 2, 3), False, "reflection", "bilinear"),
    *_gs_case("Case8", (1, 2, 2, 3, 3), (2, 2, 3), True, "reflection", "bilinear"),
    *_gs_case("Case9", (1, 2, 2, 3, 3), (2, 2, 3), False, "reflection", "nearest"),
    OpCase("grid_sampler", {"X": rng.standard_normal((2, 2, 3, 4)),
                            "Grid": rng.uniform(-1.7, 1.7, (2, 3, 2, 2))}, _gs,
           attrs={"align_corners": True, "padding_mode": "border", "mode": "bilinear"},
           name="outside_border"),
    OpCase("grid_sampler", {"X": rng.standard_normal((1, 1, 1, 4)),
                            "Grid": np.array([[[[0.0, 0.0], [-2 / 3, 0.0], [1 / 3, 0.5]]]])},
           _gs, attrs={"mode": "nearest", "padding_mode": "border"}, grad=(),
           name="nearest_halves_to_even"),
    *_unpool_case("unpool", "TestUnpoolOp", (2, 2, 4, 6), [2, 2], [2, 2], check=_errors,
                  extra={"unpooling_type": "max"}),
    *_unpool_case("unpool", "TestUnpoolOpOutputsize", (1, 2, 5, 7), [2, 3], [2, 3],
                  extra={"unpooling_type": "max"}),
    *_unpool_case("unpool3d", "TestUnpool3DOp", (1, 2, 4, 4, 6), [2, 2, 2], [2, 2, 2]),
]
