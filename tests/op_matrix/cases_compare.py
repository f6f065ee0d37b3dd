"""Cases for comparisons, logical ops and isnan_v2/isinf_v2/isfinite_v2 (kernels/compare.py).

Ported from Paddle's test/legacy_test/test_compare_op.py (every comparison on float32,
float64, uint8, int8, int16, int32, int64 at a smaller shape; its API cases: int64,
broadcasting both ways, inf/nan, test_not_equal), plus cases of our own for the logical
and finiteness ops (bool, int and float inputs, broadcasting, 0-d). Float ``equal`` and
``not_equal`` follow Paddle 3.3.1's measured rule: finite values < 1e-15 apart are equal.
Every case also matched PaddlePaddle 3.3.1's legacy static executor on the same inputs
(bool outputs equal), except ``axis1``: Paddle 3.3.1's kernel honours axis as we do
(``axis0_square`` matched, where its compile-time check lets it through), but its
compile-time shape check rejects placements numpy broadcasting would reject (Y [3] at
axis 1 of X [2, 3, 4]).
"""
import numpy as np

from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase

NOT_PORTED = {
    "less_than_float16": "float16 (every <op>_float16 class): no float16 kernels here",
    "TestCompareOpError": "Python API type checks",
    "test_dynamic_api*": "dygraph API: fluidscope runs static programs",
    "test_zero_dim_api_*": "random 0-d inputs via paddle.randint; a 0-d case is kept instead",
    "TestCompareOpPlace": "Paddle place handling (force_cpu is accepted and has no effect)",
}
R = np.random.default_rng(31)



def _close(p, q):
    """Paddle 3.3.1's float ==: exact, or both finite and less than 1e-15 apart."""
    if isinstance(p, (float, np.floating)) or isinstance(q, (float, np.floating)):
        p, q = float(p), float(q)
        return p == q or (abs(p) != float("inf") and abs(q) != float("inf") and abs(p - q) < 1e-15)
    return p == q


_FNS = {"less_than": np.less, "less_equal": np.less_equal, "greater_than": np.greater,
        "greater_equal": np.greater_equal, "equal": _close,
        "not_equal": lambda p, q: not _close(p, q)}


def _ref(op, axis=-1):
    def ref(i, a):
        y = i["Y"]
        if axis != -1:
            y = y.reshape(y.shape + (1,) * (i["X"].ndim - axis - y.ndim))
        out = np.empty(np.broadcast_shapes(i["X"].shape, y.shape), dtype=bool)
        for idx in np.ndindex(*out.shape):  # element by element, independent of the kernel
            xb = np.broadcast_to(i["X"], out.shape)[idx]
            yb = np.broadcast_to(y, out.shape)[idx]
            out[idx] = _FNS[op](xb, yb)
        return out
    return ref


def _is_bool(outs, inputs, attrs):
    assert outs["Out"].dtype == np.bool_, outs["Out"].dtype


def _typed(dtype, shape=(4, 3)):
    if np.issubdtype(dtype, np.floating):
        a, b = R.random(shape), R.random(shape)
        b[0] = a[0]  # some equal pairs
        return a.astype(dtype), b.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -20), min(info.max, 20)
    return (R.integers(lo, hi, shape).astype(dtype), R.integers(lo, hi, shape).astype(dtype))


def _compare_cases():
    cases = []
    for op in _FNS:
        for dtype in (np.float32, np.float64, np.uint8, np.int8, np.int16, np.int32, np.int64):
            a, b = _typed(dtype)
            cases.append(OpCase(op, {"X": a, "Y": b}, _ref(op), check=_is_bool,
                                name=f"{op}_{np.dtype(dtype).name}"))
        i32 = np.int32
        cases += [
            OpCase(op, {"X": np.array([1, 2, 3, 4], np.int64),
                        "Y": np.array([1, 3, 2, 4], np.int64)},
                   _ref(op), name="test_api"),
            OpCase(op, {"X": np.arange(1, 7, dtype=i32).reshape(1, 2, 1, 3),
                        "Y": np.arange(0, 6, dtype=i32).reshape(1, 2, 3)}, _ref(op),
                   name="test_broadcast_api_1"),
            OpCase(op, {"X": np.arange(0, 6, dtype=i32).reshape(1, 2, 3),
                        "Y": np.arange(1, 7, dtype=i32).reshape(1, 2, 1, 3)}, _ref(op),
                   name="test_broadcast_api_2"),
            OpCase(op, {"X": np.arange(0, 5, dtype=i32), "Y": np.array([[5], [3], [2]], i32)},
                   _ref(op), name="test_broadcast_api_3"),
            OpCase(op, {"X": np.array(1, i32), "Y": np.array(-2, i32)}, _ref(op), name="zero_dim"),
            OpCase(op, {"X": np.array([[1., 2.], [1., 2.]]), "Y": np.array([1., 2.])},
                   _ref(op, axis=0), attrs={"axis": 0, "force_cpu": True}, name="axis0_square"),
        ]
    cases.append(OpCase("equal", {"X": np.array([1., np.inf, np.inf, np.nan, -0.0], np.float32),
                                  "Y": np.array([1., -np.inf, np.inf, np.nan, 0.0], np.float32)},
                        _ref("equal"), name="inf_nan"))
    # Paddle's test_not_equal: 1.2e-15 and 1.1e-15 are "equal" (closer than 1e-15).
    cases.append(OpCase("not_equal", {"X": np.array([1.2e-15, 2, 2, 1], np.float32),
                                      "Y": np.array([1.1e-15, 2, 2, 1], np.float32)},
                        lambda i, a: np.zeros(4, bool), name="test_not_equal"))
    cases.append(OpCase("equal", {"X": np.array([1e-30, 1e-3, 1e-3, 1.0, 5.0]),
                                  "Y": np.array([9e-16, 1e-3 + 9e-16, 1e-3 + 1.1e-15,
                                                 np.nextafter(1.0, 2.0), 5.0 + 1e-9])},
                        lambda i, a: np.array([True, True, False, True, False]),
                        name="tolerance_1e-15"))
    cases.append(OpCase("less_than", {"X": R.random((2, 3, 4)), "Y": R.random(3)},
                        _ref("less_than", axis=1), attrs={"axis": 1}, check_shapes=True,
                        name="axis1"))
    return cases


_LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or,
            "logical_xor": np.logical_xor}


def _logical_ref(op):
    def ref(i, a):
        if op == "logical_not":
            return np.array([not v for v in i["X"].ravel()], bool).reshape(i["X"].shape)
        shape = np.broadcast_shapes(i["X"].shape, i["Y"].shape)
        xs, ys = np.broadcast_to(i["X"], shape), np.broadcast_to(i["Y"], shape)
        py = {"logical_and": lambda p, q: p and q, "logical_or": lambda p, q: p or q,
              "logical_xor": lambda p, q: p != q}[op]
        return np.array([py(bool(p), bool(q)) for p, q in zip(xs.ravel(), ys.ravel())],
                        bool).reshape(shape)
    return ref


def _logical_cases():
    bits = R.integers(0, 2, (3, 4)).astype(bool)
    cases = []
    for op in _LOGICAL:
        cases += [
            OpCase(op, {"X": bits, "Y": R.integers(0, 2, (3, 4)).astype(bool)}, _logical_ref(op),
                   check=_is_bool, name="bool"),
            OpCase(op, {"X": bits, "Y": R.integers(0, 2, (2, 1, 4)).astype(bool)},
                   _logical_ref(op), name="broadcast"),
            OpCase(op, {"X": R.integers(-2, 3, (3, 4)).astype(np.int32),
                        "Y": R.integers(-2, 3, (4,)).astype(np.int32)}, _logical_ref(op),
                   check=_is_bool, name="int32_nonzero_true"),
            OpCase(op, {"X": R.choice([0.0, 0.5, -2.0], (3, 4)), "Y": R.choice([0.0, 1.0], (3, 4))},
                   _logical_ref(op), name="float64_nonzero_true"),
        ]
    cases += [
        OpCase("logical_not", {"X": bits}, _logical_ref("logical_not"), check=_is_bool,
               name="bool"),
        OpCase("logical_not", {"X": R.choice([0.0, 0.5, -2.0], (2, 3, 2))},
               _logical_ref("logical_not"), name="float64"),
        OpCase("logical_not", {"X": np.array(0, np.int64)}, _logical_ref("logical_not"),
               name="zero_dim_int64"),
    ]
    return cases


SPECIAL = np.array([[1.0, np.nan, np.inf], [-np.inf, 0.0, -3.5]])
_FINITE_REFS = {"isnan_v2": lambda v: v != v,
                "isinf_v2": lambda v: v in (float("inf"), float("-inf")),
                "isfinite_v2": lambda v: v == v and v not in (float("inf"), float("-inf"))}


def _finite_ref(op):
    return lambda i, a: np.array([_FINITE_REFS[op](float(v)) for v in i["X"].ravel()],
                                 bool).reshape(i["X"].shape)


def _finite_cases():
    cases = []
    for op in _FINITE_REFS:
        cases += [
            OpCase(op, {"X": SPECIAL}, _finite_ref(op), check=_is_bool, name="float64"),
            OpCase(op, {"X": SPECIAL.astype(np.float32)}, _finite_ref(op), name="float32"),
            OpCase(op, {"X": np.arange(6, dtype=np.int32).reshape(2, 3)}, _finite_ref(op),
                   name="int32"),
            OpCase(op, {"X": np.array(np.nan)}, _finite_ref(op), name="zero_dim"),
        ]
    return cases


def _infers_bool(outs, inputs, attrs):
    from fluidscope.engine.autodiff.gradcheck import build_single_op
    inferred = build_single_op("greater_than", inputs, attrs)[3]
    assert inferred["Out"][0].dtype == pb.VarType.BOOL


CASES = _compare_cases() + _logical_cases() + _finite_cases() + [
    OpCase("greater_than", {"X": R.random((2, 3)), "Y": R.random((2, 3))}, _ref("greater_than"),
           check=_infers_bool, name="inferred_bool"),
]
