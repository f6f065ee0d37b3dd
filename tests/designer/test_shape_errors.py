"""Shape inference: impossible shapes fail with messages naming the op and both shapes,
and unknown (-1) dims propagate instead of failing."""
import pytest

from fluidscope.engine import registry
from fluidscope.engine.errors import ShapeError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import VarMeta


def infer(op_type, attrs=None, **inputs):
    """Run ``op_type``'s shape inference on input shapes (lists of shapes for duplicable
    slots); returns slot -> list of shapes."""
    opdef = registry.get(op_type)
    metas = {}
    for slot, value in inputs.items():
        shapes = value if opdef.input_slot(slot).duplicable else [value]
        metas[slot] = [VarMeta(tuple(s)) for s in shapes]
    out = registry.run_infer_shape(opdef, metas, opdef.parse_attrs(attrs or {}))
    return {slot: [list(m.shape) for m in ms] for slot, ms in out.items()}


def fails(op_type, attrs=None, **inputs):
    with pytest.raises(ShapeError) as info:
        infer(op_type, attrs, **inputs)
    return str(info.value)


# ------------------------------------------------------------------ errors
def test_mul_inner_dim_mismatch_names_both_shapes():
    msg = fails("mul", X=[-1, 13], Y=[12, 1])
    assert msg == ("op mul: X [-1, 13] (flattened to [-1, 13]) and Y [12, 1]: "
                   "inner dims 13 and 12 differ")


def test_mul_flattened_mismatch_and_bad_num_col_dims():
    msg = fails("mul", {"x_num_col_dims": 2}, X=[-1, 3, 4], Y=[5, 2])
    assert "X [-1, 3, 4] (flattened to [-1, 4])" in msg and "inner dims 4 and 5" in msg
    assert "x_num_col_dims=2" in fails("mul", {"x_num_col_dims": 2}, X=[3, 4], Y=[4, 2])


def test_matmul_v2_mismatch_mentions_transposes():
    msg = fails("matmul_v2", {"trans_y": True}, X=[-1, 3], Y=[3, 4])
    assert msg.startswith("op matmul_v2: X [-1, 3] (trans_x=False) and Y [3, 4] (trans_y=True)")
    assert "inner dims 3 and 4 differ" in msg
    assert "batch dims" in fails("matmul_v2", X=[2, 3, 4], Y=[5, 4, 2])


def test_concat_rank_mismatch():
    msg = fails("concat", X=[[2, 3], [2, 3, 1]])
    assert msg.startswith("op concat: slot X: input 1 has shape [2, 3, 1] (rank 3)")
    assert "input 0 has [2, 3] (rank 2)" in msg


def test_concat_other_dim_mismatch_and_bad_axis():
    assert "differ in dim 0" in fails("concat", {"axis": 1}, X=[[2, 3], [4, 1]])
    assert "axis=2 is out of range" in fails("concat", {"axis": 2}, X=[[2, 3], [2, 3]])


def test_reshape2_impossible_size():
    msg = fails("reshape2", {"shape": [4, 2]}, X=[2, 3])
    assert msg == "op reshape2: cannot reshape X [2, 3] (6 elements) to [4, 2] (8 elements)"
    assert "not a multiple of 4" in fails("reshape2", {"shape": [-1, 4]}, X=[2, 3])
    assert "more than one -1" in fails("reshape2", {"shape": [-1, -1]}, X=[2, 3])


def test_reshape2_impossible_with_unknown_batch():
    # b * 6 elements can never be 35, whatever b is.
    msg = fails("reshape2", {"shape": [5, 7]}, X=[-1, 6])
    assert "X [-1, 6]" in msg and "[5, 7]" in msg
    assert "not a multiple of 4" in fails("reshape2", {"shape": [0, -1, 4]}, X=[-1, 6])


def test_elementwise_mismatch():
    msg = fails("elementwise_add", X=[-1, 3], Y=[4])
    assert msg == "op elementwise_add: slot Y: X [-1, 3] and Y [4] do not broadcast (axis=-1)"


def test_split_sections_and_num_mismatch():
    assert "sections [2, 2] do not add up" in fails("split", {"sections": [2, 2]}, X=[5, 2])
    assert "num=3 does not divide" in fails("split", {"num": 3}, X=[4, 2])
    assert "one -1" in fails("split", {"sections": [-1, -1]}, X=[4, 2])


def test_transpose2_softmax_reduce_bad_axes():
    assert "not a permutation" in fails("transpose2", {"axis": [0, 0]}, X=[2, 3])
    assert "axis=2 is out of range" in fails("softmax", {"axis": 2}, X=[2, 3])
    assert "dim 3 is out of range" in fails("reduce_sum", {"dim": [3]}, X=[2, 3])


# ------------------------------------------------------- -1 propagation
def test_unknown_batch_dim_propagates():
    assert infer("mul", X=[-1, 13], Y=[13, 1]) == {"Out": [[-1, 1]]}
    assert infer("mul", {"x_num_col_dims": 2}, X=[-1, 5, 4], Y=[4, 3]) == {"Out": [[-1, 5, 3]]}
    assert infer("matmul_v2", {"trans_y": True}, X=[-1, 7, 3], Y=[2, 3]) == {"Out": [[-1, 7, 2]]}
    assert infer("matmul_v2", X=[-1, 3], Y=[3]) == {"Out": [[-1]]}
    assert infer("relu", X=[-1, 4]) == {"Out": [[-1, 4]]}
    assert infer("softmax", X=[-1, 4]) == {"Out": [[-1, 4]]}
    assert infer("reduce_mean", {"dim": [-1]}, X=[-1, 4]) == {"Out": [[-1]]}
    assert infer("reduce_sum", {"reduce_all": True}, X=[-1, 4]) == {"Out": [[]]}
    assert infer("concat", {"axis": 1}, X=[[-1, 3], [-1, 2]]) == {"Out": [[-1, 5]]}
    assert infer("concat", X=[[-1, 3], [2, 3]]) == {"Out": [[-1, 3]]}
    assert infer("split", {"sections": [1, -1], "axis": 1}, X=[-1, 6]) == {
        "Out": [[-1, 1], [-1, 5]]}
    assert infer("transpose2", {"axis": [1, 0]}, X=[-1, 6]) == {
        "Out": [[6, -1]], "XShape": [[0, -1, 6]]}


def test_reshape2_infers_through_an_unknown_batch():
    assert infer("reshape2", {"shape": [0, -1]}, X=[-1, 2, 3]) == {
        "XShape": [[0, -1, 2, 3]], "Out": [[-1, 6]]}
    assert infer("reshape2", {"shape": [-1, 3]}, X=[-1, 6])["Out"] == [[-1, 3]]
    assert infer("reshape2", {"shape": [0, 3, -1]}, X=[-1, 6])["Out"] == [[-1, 3, 2]]


def test_reduce_sum_dtype_rules():
    opdef = registry.get("reduce_sum")
    out = registry.run_infer_shape(opdef, {"X": [VarMeta((2, 3), pb.VarType.INT32)]},
                                   opdef.parse_attrs({}))
    assert out["Out"][0] == VarMeta((3,), pb.VarType.INT64)
