"""Shape inference and refusals of the kernels at edges the op matrix does not feed
(engine/kernels, issue #17: mutants of these lines survived it): the LoD level, dtype and
second outputs an inference declares, zero-sized channels, negative indices at the
bound, and refusals that name the slot at fault."""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.dtypes import to_var_type


def _meta(shape, dtype="float64", lod_level=0):
    return registry.VarMeta(tuple(shape), to_var_type(np.dtype(dtype)), lod_level)


def _infer(op_type, attrs=None, **slots):
    """slot -> shape, or (shape, dtype, lod_level), or a list of those (duplicable)."""
    def metas(v):
        if isinstance(v, list):
            return [m for item in v for m in metas(item)]
        return [_meta(*v) if isinstance(v[0], tuple) else _meta(v)]
    opdef = registry.get(op_type)
    return registry.run_infer_shape(opdef, {s: metas(v) for s, v in slots.items()},
                                    opdef.parse_attrs(attrs or {}))


def test_conv3d_output_has_no_lod_even_from_a_sequence_input():
    (out,) = _infer("conv3d", Input=((2, 4, 5, 5, 5), "float64", 1),
                    Filter=(3, 4, 3, 3, 3))["Output"]
    assert (out.shape, out.lod_level) == ((2, 3, 3, 3, 3), 0)


def test_a_transposed_conv_with_zero_output_channels_infers_zero_not_unknown():
    (out,) = _infer("conv2d_transpose", Input=(2, 4, 5, 5), Filter=(4, 0, 3, 3))["Output"]
    assert out.shape == (2, 0, 7, 7)


def test_expand_v2_keeps_the_input_dtype():
    (out,) = _infer("expand_v2", {"shape": [2, 3]}, X=((1, 3), "int64"))["Out"]
    assert (out.shape, out.dtype) == ((2, 3), to_var_type(np.dtype("int64")))


def test_squeeze2_declares_its_xshape():
    got = _infer("squeeze2", {"axes": [1]}, X=(2, 1, 3))
    assert got["Out"][0].shape == (2, 3) and got["XShape"][0].shape == (0, 2, 1, 3)


def test_stack_grad_infers_one_gradient_per_input():
    got = _infer("stack_grad", {"axis": 1}, X=[(2, 3), (2, 3)], **{"Y@GRAD": (2, 2, 3)})
    assert [m.shape for m in got["X@GRAD"]] == [(2, 3), (2, 3)]


def test_refusals_name_the_slot_at_fault():
    with pytest.raises(FluidscopeError, match="op flatten_contiguous_range: slot X: start_axis=3"):
        _infer("flatten_contiguous_range", {"start_axis": 3, "stop_axis": 4}, X=(2, 3))
    with pytest.raises(FluidscopeError, match=r"op tile: slot X: repeat_times \[0, -1\]"):
        _infer("tile", {"repeat_times": [0, -1]}, X=(2, 3))


def test_a_padding_index_one_past_the_table_is_refused():
    with pytest.raises(FluidscopeError, match="padding_idx=5 is not a row of W"):
        run_op("lookup_table_v2", {"W": np.ones((5, 2)), "Ids": np.array([[1]])},
               {"padding_idx": 5})
    out = run_op("lookup_table_v2", {"W": np.ones((5, 2)), "Ids": np.array([[4], [1]])},
                 {"padding_idx": 4})["Out"]
    np.testing.assert_array_equal(out, [[[0, 0]], [[1, 1]]])


def test_bernoulli_refuses_a_probability_above_one_in_words():
    with pytest.raises(FluidscopeError) as err:
        run_op("bernoulli", {"X": np.array([0.5, 1.5])})
    assert str(err.value).endswith(
        ": op bernoulli: X holds probabilities, which must be in [0, 1]")


def test_gather_takes_the_most_negative_index_of_a_dim():
    x = np.arange(6.0).reshape(3, 2)
    out = run_op("gather", {"X": x, "Index": np.array([-3, 2])}, {})["Out"]
    np.testing.assert_array_equal(out, x[[0, 2]])
    with pytest.raises(FluidscopeError):
        run_op("gather", {"X": x, "Index": np.array([-4])}, {})


def test_concat_grad_infers_one_gradient_per_input():
    got = _infer("concat_grad", {"axis": 0}, X=[(2, 3), (4, 3)], **{"Out@GRAD": (6, 3)})
    assert [m.shape for m in got["X@GRAD"]] == [(2, 3), (4, 3)]


def test_unique_consecutive_declares_index_and_counts_and_refuses_a_float_index_dtype():
    got = _infer("unique_consecutive", {"return_inverse": True, "return_counts": True,
                                        "dtype": 3}, X=(5,))
    assert got["Index"][0].shape == (5,) and "Counts" in got
    with pytest.raises(FluidscopeError, match=r"^op unique_consecutive: dtype=5 must be 2"):
        _infer("unique_consecutive", {"dtype": 5}, X=(5,))


def test_more_refusals_name_op_and_slot():
    refusals = [
        (lambda: _infer("sequence_softmax", X=((4, 3), "float64", 1)),
         "op sequence_softmax: slot X: X [4, 3] must be [T, 1] or [T]"),
        (lambda: _infer("masked_select", X=(2, 3), Mask=((4, 3), "bool")),
         "op masked_select: slot Mask: X [2, 3] and Mask [4, 3] do not broadcast"),
        (lambda: _infer("index_add", {"axis": 5}, X=(2, 3), Index=((2,), "int64"),
                        AddValue=(2, 3)),
         "op index_add: slot X: axis=5 is out of range for rank 2"),
        (lambda: _infer("slice", {"axes": [0, 1], "starts": [0], "ends": [1, 2]},
                        Input=(4, 3)),
         "op slice: slot Input: Input [4, 3]: axes [0, 1] need one start and one end each"),
    ]
    for call, words in refusals:
        with pytest.raises(FluidscopeError) as err:
            call()
        assert str(err.value).startswith(words), (words, str(err.value))


def test_kthvalue_and_mode_results_have_no_lod_and_a_bad_axis_names_x():
    for op, attrs in (("kthvalue", {"k": 1, "axis": -1}), ("mode", {"axis": -1})):
        got = _infer(op, attrs, X=((4, 3), "float64", 1))
        assert [got[s][0].lod_level for s in ("Out", "Indices")] == [0, 0], op
        with pytest.raises(FluidscopeError, match=rf"^op {op}: slot X: axis=2 "):
            _infer(op, {**attrs, "axis": 2}, X=(4, 3))


def test_reshape_takes_several_ones_and_refuses_bad_targets_in_words():
    out = run_op("reshape2", {"X": np.ones((4, 3))}, {"shape": [1, 1, 12]})["Out"]
    assert out.shape == (1, 1, 12)
    with pytest.raises(FluidscopeError, match=r"op reshape2: shape \[-1, -1\] has more than"):
        run_op("reshape2", {"X": np.ones((4, 3))}, {"shape": [-1, -1]})
    with pytest.raises(FluidscopeError, match=r"op reshape2: shape \[-2, 3\]: dims must be >= 0 "
                                              r"with at most one -1"):
        run_op("reshape2", {"X": np.ones((0, 3))}, {"shape": [-2, 3]})


def test_an_optimizer_without_its_learning_rate_is_refused_naming_the_slot():
    with pytest.raises(FluidscopeError, match="^op sgd: slot LearningRate: needs LearningRate"):
        _infer("sgd", Param=(3,), Grad=(3,))
