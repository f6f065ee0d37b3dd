"""The remaining slots and attributes the coverage meta-test asked for, mostly as variants
of ported cases (``find_case``): the same inputs and reference under the attribute, or a
float64 gradient check of a case that had none.

Where Paddle 3.3.1's kernel does not read an attribute on CPU, the variant asserts the
unchanged result (the reason is given next to it); where it does, the reference models it.
"""
from dataclasses import replace

import numpy as np

from fluidscope.engine.autodiff.gradcheck import analytic_grads, run_op
from fluidscope.engine.ir.proto import framework_pb2 as pb

from . import OpCase, find_case
from .cases_conv_transpose import _ref as conv_transpose_ref
from .cases_optimizer import ADAM_IN, adam_reference

rng = np.random.default_rng(307)


def _variant(case_id, name, attrs=None, inputs=None, reference=None, **changes):
    case = find_case(case_id)
    return replace(case, attrs=dict(case.attrs, **(attrs or {})),
                   inputs=dict(case.inputs, **(inputs or {})),
                   reference=reference or case.reference, name=f"{case.name}_{name}", **changes)


def _gradient(case_id):
    """A ported forward-only case, gradient-checked (float64 inputs)."""
    return _variant(case_id, "grad", grad="auto", check=None)


# --------------------------------------------------------------------- adam
def _adam_master_ref(i, a):
    master = i["MasterParam"]
    p, m1, m2, _, b1p, b2p = adam_reference(
        master, i["Grad"].astype(np.float32), i["LearningRate"], i["Moment1"], i["Moment2"],
        i["Beta1Pow"], i["Beta2Pow"])
    return {"ParamOut": p.astype(np.float16), "MasterParamOut": p.astype(np.float32),
            "Moment1Out": m1, "Moment2Out": m2, "Beta1PowOut": b1p, "Beta2PowOut": b2p}


_ADAM32 = {k: v.astype(np.float32) for k, v in ADAM_IN.items()}
ADAM = [
    # the update runs on the float32 master copy; ParamOut is its float16 cast
    OpCase("adam", dict(_ADAM32, Param=_ADAM32["Param"].astype(np.float16),
                        Grad=_ADAM32["Grad"].astype(np.float16), MasterParam=_ADAM32["Param"]),
           _adam_master_ref, attrs={"multi_precision": True}, grad=(), check_shapes=False,
           rtol=1e-5, atol=1e-6, name="multi_precision_master_param"),
    # lazy_mode only changes a SelectedRows (sparse) gradient's update; dense is plain adam
    _variant("adam", "lazy_mode_dense_grad", attrs={"lazy_mode": True}),
]

# ------------------------------------------------ forward cases, gradient-checked
GRADIENTS = [_gradient(c) for c in ("round-decimals2", "elementwise_mod-axis0")]


# ------------------------------------------------------- element-wise axis
def _axis0(op, fn, x, y, grad="auto"):
    return OpCase(op, {"X": x, "Y": y}, lambda i, a: fn(i["X"], i["Y"].reshape(-1, 1)),
                  attrs={"axis": 0}, name="axis0", grad=grad)


ELEMENTWISE = [
    _axis0("elementwise_mul", np.multiply, rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, 2)),
    _axis0("elementwise_div", np.divide, rng.uniform(-1, 1, (2, 3)), rng.uniform(0.5, 1.5, 2)),
    _axis0("elementwise_floordiv", np.floor_divide, rng.integers(-9, 9, (2, 3)),
           np.array([2, -3]), grad=()),
]

# ------------------------------------------- depthwise_conv2d_transpose settings
_DW = {"Input": rng.standard_normal((1, 3, 3, 3)), "Filter": rng.standard_normal((3, 1, 2, 2))}
DEPTHWISE = [OpCase("depthwise_conv2d_transpose", dict(_DW, **ins), conv_transpose_ref,
                    attrs=dict({"groups": 3}, **attrs), name=name) for name, ins, attrs in (
    ("bias", {"Bias": rng.standard_normal(3)}, {"strides": [2, 2]}),
    ("output_size", {}, {"strides": [2, 2], "output_size": [7, 6]}),
    ("same", {}, {"strides": [2, 1], "padding_algorithm": "SAME"}),
    ("valid", {}, {"strides": [2, 2], "paddings": [1, 1], "padding_algorithm": "VALID"}),
    ("dilations", {}, {"dilations": [2, 1], "paddings": [1, 0]}),
)]
DEPTHWISE.append(replace(DEPTHWISE[0], attrs=dict(DEPTHWISE[0].attrs, data_format="AnyLayout"),
                         reference=lambda i, a: conv_transpose_ref(i, dict(a, data_format="NCHW")),
                         name="bias_AnyLayout_as_NCHW"))

# ------------------------------------------------------------- the rest
def _strided_lists_ref(reference):
    """strided_slice's reference, the Ends/Strides tensor lists read as the attributes."""
    def ref(i, a):
        a = dict(a, ends=[int(t[0]) for t in i["EndsTensorList"]],
                 strides=[int(t[0]) for t in i["StridesTensorList"]])
        return reference({k: v for k, v in i.items() if not k.endswith("List")}, a)
    return ref


def _median_list_ref(reference, axis):
    return lambda i, a: reference({"x": i["x"], "AxisTensor": axis}, a)


def _dtype_is(slot, dtype):
    def check(outs, i, a):
        assert outs[slot].dtype == dtype, outs[slot].dtype
    return check


def _check_uniform_diag(outs, i, a):
    """Out [Input.shape[input_dim_idx], ...] at output_dim_idx, float64, diag entries at
    flat k * (diag_step + 1) set to diag_val, the rest uniform in [min, max)."""
    out = outs["Out"]
    assert out.shape == (5, 3) and out.dtype == np.float64, (out.shape, out.dtype)
    flat = out.reshape(-1)
    diag = [k * (a["diag_step"] + 1) for k in range(a["diag_num"])]
    np.testing.assert_array_equal(flat[diag], a["diag_val"])
    rest = np.delete(flat, diag)
    assert rest.min() >= a["min"] and rest.max() < a["max"] and len(set(rest)) == rest.size


def _check_exclusive_logcumsumexp_grad(outs, i, a):
    """exclusive puts log(0) first on the scan axis (the lowest float64, as Paddle), which
    overflows sum(W * Out) in central differences; with W zero there, X's gradient is
    compared element by element."""
    out = np.asarray(outs["Out"])
    weights = np.where(out > -1e300, rng.uniform(0.5, 1.5, out.shape), 0.0)
    analytic = analytic_grads("logcumsumexp", i, a, {"Out": weights}, ["X"])["X"]
    x, numeric, delta = i["X"], np.zeros_like(i["X"]), 1e-6

    def loss(probe):
        got = np.asarray(run_op("logcumsumexp", {"X": probe}, a)["Out"])
        return float(np.sum(np.where(weights != 0, got, 0.0) * weights))
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += delta
        down[idx] -= delta
        numeric[idx] = (loss(up) - loss(down)) / (2 * delta)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


_MEDIAN = find_case("median-axis_tensor")
_STRIDED = find_case("strided_slice-decrease_axis")
OTHERS = [
    # lp pooling sums |x|^p without a divisor, so exclusive (a divisor rule) is unread
    _variant("lp_pool2d-ceil_padded_p3", "not_exclusive", attrs={"exclusive": False}),
    _variant("lp_pool2d-asymmetric_padding", "valid", attrs={"padding_algorithm": "VALID"}),
    _variant("max_pool3d_with_index-TestCase3", "ceil_mode", attrs={"ceil_mode": True}),
    _variant("layer_norm-axis1", "epsilon", attrs={"epsilon": 0.5}),
    # Paddle adds epsilon to the norm in the gradient only: forward here, no central differences
    _variant("p_norm-paddle_TestPnormOp", "epsilon", attrs={"epsilon": 1e-3}, grad=()),
    # is_test only skips keeping Norm for backward in Paddle's GPU kernel; CPU computes both
    _variant("norm-paddle_TestNormOp", "is_test", attrs={"is_test": True}),
    _variant("median-axis_tensor", "axis_tensor_list",
             inputs={"AxisTensor": None, "AxisTensorList": [
                 np.array([v], np.int64) for v in np.ravel(_MEDIAN.inputs["AxisTensor"])]},
             reference=_median_list_ref(_MEDIAN.reference, _MEDIAN.inputs["AxisTensor"])),
    _variant("strided_slice-decrease_axis", "ends_strides_lists",
             inputs={"EndsTensorList": [np.array([2], np.int64), np.array([3], np.int32)],
                     "StridesTensorList": [np.array([1], np.int64), np.array([1], np.int64)]},
             attrs={"ends": [9, 9], "strides": [2, 2]},
             reference=_strided_lists_ref(_STRIDED.reference)),
    # unpool's output plane is output_size; paddings only ever sized it in Python
    _variant("unpool-paddle_TestUnpoolOp", "paddings", attrs={"paddings": [1, 1]}),
    _variant("unpool3d-paddle_TestUnpool3DOp", "paddings", attrs={"paddings": [1, 0, 1]}),
    _variant("repeat_interleave-paddle_op2_scalar", "output_size",
             attrs={"output_size": 2 * find_case("repeat_interleave-paddle_op2_scalar")
                    .inputs["X"].shape[0]}),
    # Paddle 3.3.1's kernel rejects an out-of-range id with or without the flag (as ours)
    _variant("one_hot_v2-paddle_attr", "allow_out_of_range", attrs={"allow_out_of_range": True}),
    _variant("triu_indices-paddle_rect", "int32", attrs={"dtype": pb.VarType.INT32},
             check=_dtype_is("out", np.int32)),
    _variant("argsort-paddle_axis1", "stable", attrs={"stable": True}),
    _variant("logcumsumexp-exclusive_reverse", "grad_where_finite",
             check=_check_exclusive_logcumsumexp_grad),
    # Paddle 3.3.1's CPU matmul ignores head_number (2 heads gave the plain product: oracle)
    _variant("matmul-paddle_TestMatMulOp_dimX_3_dim_Y_3_transX_False_transY_False",
             "head_number", attrs={"head_number": 2}),
    _variant("lookup_table-paddle_TestLookupTableOp", "is_sparse", attrs={"is_sparse": True}),
    _variant("set_value-paddle_Base", "fp64_values", attrs={"dtype": pb.VarType.FP64}),
    OpCase("uniform_random_batch_size_like", {"Input": np.zeros((2, 3))}, None,
           attrs={"shape": [5, -1], "input_dim_idx": 1, "output_dim_idx": 1, "min": -2.0,
                  "max": 3.0, "seed": 5, "diag_num": 3, "diag_step": 2, "diag_val": 7.0,
                  "dtype": pb.VarType.FP64}, check=_check_uniform_diag, name="dims_diag_fp64"),
]

CASES = ADAM + GRADIENTS + ELEMENTWISE + DEPTHWISE + OTHERS
