"""Which outputs keep their input's LoD, for the shape and index ops of kernels/shape.py,
dims.py, expand.py, gather.py, strided.py, reorder.py and cast.py.

Each case feeds a sequence batch (LoD [[0, 1, 4]] over 4 rows) and checks Out's LoD
against PaddlePaddle 3.3.1 (legacy static mode, same op and attributes): Paddle shares X's
LoD with Out for reshape2, flatten_contiguous_range, squeeze2/unsqueeze2 (while dim 0
stays), tile, expand_v2, cast, gather, gather_nd, index_select, strided_slice, where,
fill_any_like, argsort, roll, flip, one_hot_v2, stack and unbind, and drops it for
transpose2, arg_max, unstack and expand_as_v2. Where the rows change (reshape2 to other
rows, gather on axis 0) Paddle still hands X's LoD on, which then no longer fits the rows;
fluidscope drops it instead (the ``rows_changed`` cases).
"""
import numpy as np

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.runtime.tensor import LoDTensor

from . import OpCase

rng = np.random.default_rng(59)
LOD = [[0, 1, 4]]


def _seq(shape, dtype=np.float64):
    return LoDTensor(rng.standard_normal(shape).astype(dtype), LOD)


def _value(x):
    return np.asarray(getattr(x, "value", x))


def _lod_of(op, inputs, attrs, slot):
    out = run_op(op, inputs, attrs, return_lod=True)[slot]
    out = out[0] if isinstance(out, list) else out
    return out.lod() or []


def _case(op, inputs, attrs, reference, keeps, name, slot="Out", **kw):
    expected = LOD if keeps else []

    def check(outs, i, a):
        assert _lod_of(op, i, a, slot) == expected, (op, name)
    return OpCase(op, inputs, reference, attrs=attrs, check=check, name="lod_" + name, **kw)


def _xs(out, x):
    return {"Out": out, "XShape": np.zeros((0,) + _value(x).shape)}


S = _seq((4, 3))
S3 = _seq((4, 3, 2))
IDS = LoDTensor(np.array([0, 2, 1, 2]), LOD)
COND = LoDTensor(rng.random((4, 3)) > 0.5, LOD)

CASES = [
    _case("reshape2", {"X": S}, {"shape": [4, 1, 3]},
          lambda i, a: _xs(_value(i["X"]).reshape(4, 1, 3), i["X"]), True, "rows_kept"),
    _case("reshape2", {"X": S}, {"shape": [2, 6]},
          lambda i, a: _xs(_value(i["X"]).reshape(2, 6), i["X"]), False, "rows_changed"),
    _case("flatten_contiguous_range", {"X": S3}, {"start_axis": 1, "stop_axis": 2},
          lambda i, a: _xs(_value(i["X"]).reshape(4, 6), i["X"]), True, "inner"),
    _case("flatten_contiguous_range", {"X": S}, {"start_axis": 0, "stop_axis": 1},
          lambda i, a: _xs(_value(i["X"]).reshape(12), i["X"]), False, "rows_changed"),
    _case("unsqueeze2", {"X": S}, {"axes": [1]},
          lambda i, a: _xs(_value(i["X"]).reshape(4, 1, 3), i["X"]), True, "inner"),
    _case("unsqueeze2", {"X": S}, {"axes": [0]},
          lambda i, a: _xs(_value(i["X"]).reshape(1, 4, 3), i["X"]), False, "rows_changed"),
    _case("squeeze2", {"X": LoDTensor(rng.standard_normal((4, 1, 3)), LOD)}, {"axes": [1]},
          lambda i, a: _xs(_value(i["X"]).reshape(4, 3), i["X"]), True, "inner"),
    _case("transpose2", {"X": S3}, {"axis": [0, 2, 1]},
          lambda i, a: _xs(_value(i["X"]).transpose(0, 2, 1), i["X"]), False, "dropped"),
    _case("tile", {"X": S}, {"repeat_times": [1, 2]},
          lambda i, a: np.tile(_value(i["X"]), [1, 2]), True, "inner"),
    _case("expand_v2", {"X": LoDTensor(rng.standard_normal((4, 1)), LOD)}, {"shape": [4, 3]},
          lambda i, a: np.broadcast_to(_value(i["X"]), (4, 3)), True, "inner"),
    _case("expand_as_v2", {"X": LoDTensor(rng.standard_normal((4, 1)), LOD)},
          {"target_shape": [4, 3]}, lambda i, a: np.broadcast_to(_value(i["X"]), (4, 3)),
          False, "dropped"),
    _case("cast", {"X": S}, {"in_dtype": 6, "out_dtype": 5},
          lambda i, a: _value(i["X"]).astype(np.float32), True, "kept", grad=()),
    _case("gather", {"X": S, "Index": np.array([0, 2])}, {"axis": 1},
          lambda i, a: _value(i["X"])[:, [0, 2]], True, "inner"),
    _case("gather", {"X": S, "Index": np.array([0, 2])}, {},
          lambda i, a: _value(i["X"])[[0, 2]], False, "rows_changed"),
    _case("gather_nd", {"X": S, "Index": np.array([[0], [2], [3], [1]])}, {},
          lambda i, a: _value(i["X"])[[0, 2, 3, 1]], True, "same_rows"),
    _case("index_select", {"X": S, "Index": np.array([2, 0])}, {"dim": 1},
          lambda i, a: _value(i["X"])[:, [2, 0]], True, "inner"),
    _case("strided_slice", {"Input": S},
          {"axes": [1], "starts": [0], "ends": [3], "strides": [2]},
          lambda i, a: _value(i["Input"])[:, 0:3:2], True, "inner"),
    _case("where", {"Condition": COND, "X": S, "Y": S},
          {}, lambda i, a: _value(i["X"]), True, "kept"),
    _case("fill_any_like", {"X": S}, {"value": 2.0},
          lambda i, a: np.full((4, 3), 2.0), True, "kept"),
    _case("argsort", {"X": S}, {"axis": 1},
          lambda i, a: {"Out": np.sort(_value(i["X"]), axis=1)}, True, "kept",
          grad_outputs=("Out",)),
    _case("roll", {"X": S}, {"shifts": [1], "axis": [1]},
          lambda i, a: np.roll(_value(i["X"]), 1, axis=1), True, "kept"),
    _case("flip", {"X": S}, {"axis": [1]}, lambda i, a: _value(i["X"])[:, ::-1], True, "kept"),
    _case("one_hot_v2", {"X": IDS}, {"depth": 3},
          lambda i, a: np.eye(3, dtype=np.float32)[_value(i["X"])], True, "kept"),
    _case("arg_max", {"X": S}, {"axis": 1},
          lambda i, a: np.argmax(_value(i["X"]), axis=1), False, "dropped"),
    _case("stack", {"X": [S, S]}, {"axis": 1},
          lambda i, a: {"Y": np.stack([_value(x) for x in i["X"]], 1)}, True, "inner",
          slot="Y"),
    _case("unstack", {"X": S}, {"axis": 1, "num": 3},
          lambda i, a: {"Y": [_value(i["X"])[:, k] for k in range(3)]}, False, "dropped",
          slot="Y"),
    _case("unbind", {"X": LoDTensor(rng.standard_normal((4, 1, 2)), LOD)}, {"axis": 1},
          lambda i, a: {"Out": [_value(i["X"])[:, 0]]}, True, "inner"),
]
