"""The kernels' refusals and shape rules at their edges (engine/kernels, issue #17: mutants
of these lines survived the op matrix, which feeds well-formed inputs): an axis one past
a rank-1 input, an index out of range named by its slot, a bad axis named by its op,
a 1x1 SAME convolution pads nothing, unknown spatial dims stay unknown, and a filter
whose channel count does not fit is refused even when its depth is unknown."""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.dtypes import to_var_type

rng = np.random.default_rng(5)


def _meta(shape):
    return registry.VarMeta(tuple(shape), to_var_type(np.dtype("float64")), 0)


def _infer(op_type, attrs=None, **slots):
    opdef = registry.get(op_type)
    return registry.run_infer_shape(opdef, {s: [_meta(shape)] for s, shape in slots.items()},
                                    opdef.parse_attrs(attrs or {}))


def test_an_axis_one_past_a_vector_is_refused():
    x = np.arange(4.0)
    with pytest.raises(FluidscopeError, match="axis=1 is out of range for rank 1"):
        run_op("index_select", {"X": x, "Index": np.array([0, 1])}, {"dim": 1})
    with pytest.raises(FluidscopeError, match="axis=-2 is out of range for rank 1"):
        run_op("index_select", {"X": x, "Index": np.array([0, 1])}, {"dim": -2})
    np.testing.assert_array_equal(
        run_op("index_select", {"X": x, "Index": np.array([3, 0])}, {"dim": -1})["Out"], [3, 0])


def test_along_axis_errors_name_the_index_slot_and_the_op():
    with pytest.raises(FluidscopeError, match="op take_along_axis: Index holds 5, outside"):
        run_op("take_along_axis", {"Input": np.ones((2, 3)), "Index": np.array([[5, 0, 0]])},
               {"Axis": 1})
    with pytest.raises(FluidscopeError, match="op put_along_axis: .*axis=3 is out of range"):
        run_op("put_along_axis", {"Input": np.ones((2, 3)), "Index": np.array([[0]]),
                                  "Value": np.ones((1, 1))}, {"Axis": 3})
    # the kernel checks again when called without shape inference (as the op matrix's
    # direct cases call kernels)
    opdef = registry.get("put_along_axis")
    with pytest.raises(FluidscopeError, match="put_along_axis: axis=3 is out of range"):
        opdef.kernel_for("cpu")(np, opdef.parse_attrs({"Axis": 3}), np.ones((2, 3)),
                                np.array([[0]]), np.ones((1, 1)))


def test_a_same_padded_1x1_convolution_pads_nothing():
    x, w = rng.standard_normal((1, 2, 4, 5)), rng.standard_normal((3, 2, 1, 1))
    out = run_op("conv2d", {"Input": x, "Filter": w}, {"padding_algorithm": "SAME"})["Output"]
    np.testing.assert_allclose(out, np.einsum("nchw,mc->nmhw", x, w[:, :, 0, 0]), rtol=1e-12)
    assert _infer("conv2d", {"padding_algorithm": "SAME"}, Input=(1, 2, 4, 5),
                  Filter=(3, 2, 1, 1))["Output"][0].shape == (1, 3, 4, 5)


def test_conv3d_keeps_unknown_spatial_dims_unknown():
    (meta,) = _infer("conv3d", Input=(2, 4, -1, 5, 5), Filter=(3, 4, 3, 3, 3))["Output"]
    assert meta.shape == (2, 3, -1, 3, 3)


def test_conv3d_refuses_a_filter_that_does_not_fit_with_its_shape_in_words():
    with pytest.raises(FluidscopeError, match=r"Filter must be 5-D \[M, C/groups, kd, kh, kw\]"):
        _infer("conv3d", Input=(2, 4, 5, 5, 5), Filter=(3, 4, 3, 3))
    with pytest.raises(FluidscopeError, match="Input has 4 channels but Filter takes 2 per group"):
        _infer("conv3d", Input=(2, 4, 5, 5, 5), Filter=(3, 2, -1, 3, 3))
