"""Bad input to a kernel gets a clear error naming the op, the slot at fault and the
shapes (engine/kernels, issue #17: mutants that dropped or misspelt the slot, or lost a
check, survived the op matrix, which feeds only well-formed inputs)."""
import numpy as np
import pytest

from fluidscope.engine.autodiff.gradcheck import run_op
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.ir import registry
from fluidscope.engine.ir.dtypes import to_var_type


def _infer(op_type, attrs=None, **slots):
    """slot -> (shape, dtype name)."""
    opdef = registry.get(op_type)
    metas = {s: [registry.VarMeta(tuple(shape), to_var_type(np.dtype(dtype)), 0)]
             for s, (shape, dtype) in slots.items()}
    return registry.run_infer_shape(opdef, metas, opdef.parse_attrs(attrs or {}))


def _refused(call):
    with pytest.raises(FluidscopeError) as err:
        call()
    return str(err.value)


F, I = "float64", "int64"


def test_shape_refusals_name_op_slot_and_shapes():
    cases = [
        (lambda: _infer("bilinear_interp_v2", {"out_h": 4, "out_w": 4}, X=((2, 3), F)),
         "op bilinear_interp_v2: slot X: interp_method 'bilinear' does not apply to X [2, 3]: "
         "3-D X takes linear, 4-D bilinear/nearest/bicubic, 5-D trilinear/nearest"),
        (lambda: _infer("lookup_table", W=((5, 2, 2), F), Ids=((3, 1), I)),
         "op lookup_table: slot W: W [5, 2, 2] must be [vocabulary, width]"),
        (lambda: _infer("accuracy", Out=((4, 2), F), Indices=((4,), I), Label=((4, 1), I)),
         "op accuracy: slot Indices: Indices [4] must be [N, k]"),
        (lambda: _infer("accuracy", Out=((4, 2), F), Indices=((4, 2), I), Label=((3, 1), I)),
         "op accuracy: slot Label: Indices [4, 2] and Label [3, 1] differ in N"),
        (lambda: _infer("batch_norm", X=((2, 3, 4, 4), F), Scale=((4,), F), Bias=((3,), F),
                        Mean=((3,), F), Variance=((3,), F)),
         "op batch_norm: slot Scale: Scale [4] must hold 3 values, one per channel "
         "(X [2, 3, 4, 4])"),
        (lambda: _infer("label_smooth", X=((2, 4), F), PriorDist=((1, 3), F)),
         "op label_smooth: slot PriorDist: PriorDist [1, 3] must hold one value per class "
         "(4, X's last dim)"),
        (lambda: _infer("warpctc", Logits=((5, 3), F), Label=((4, 1), "int32"),
                        LogitsLength=((1,), I), LabelLength=((1,), I)),
         "op warpctc: slot Logits: Logits [5, 3] must be [Tmax, N, C+1] with LogitsLength"),
        (lambda: _infer("matmul_v2", X=((), F), Y=((3, 2), F)),
         "0-D operands are not supported"),
    ]
    for call, words in cases:
        message = _refused(call)
        assert words in message, (words, message)


def test_kernel_refusals_name_op_and_slot():
    message = _refused(lambda: run_op("cross_entropy2", {"X": np.full((2, 3), 1 / 3),
                                                         "Label": np.array([[0], [7]])}))
    assert ": op cross_entropy2: slot Label holds class 7, outside [0, 3)" in message
    message = _refused(lambda: run_op("instance_norm", {"X": np.ones((2, 3, 4)),
                                                        "Scale": np.ones(3),
                                                        "Bias": np.ones(4)}))
    assert "op instance_norm: slot Bias: Bias [4] must hold 3 values" in message


def test_flatten2s_gradient_reads_the_forward_input_by_its_slot_name():
    opdef = registry.get("flatten2")
    view = registry.OpView("flatten2", {"X": ["x"]}, {"Out": ["y"], "XShape": ["xs"]},
                           {"axis": 1})
    (grad,) = opdef.grad_maker(view)
    assert grad.type == "flatten2_grad"
    assert set(grad.inputs) <= {s.name for s in registry.get("flatten2_grad").inputs}
    assert grad.inputs["X"] == ["x"] and grad.inputs["XShape"] == ["xs"]


def test_fold_refuses_channels_not_divisible_by_the_kernel_area():
    message = _refused(lambda: run_op("fold", {"X": np.ones((1, 5, 4))}, {
        "output_sizes": [3, 3], "kernel_sizes": [2, 2], "strides": [1, 1],
        "paddings": [0, 0, 0, 0], "dilations": [1, 1]}))
    assert "op fold: slot X: X [1, 5, 4]: dim 1 (5) must be divisible by kh*kw = 4" in message


def test_pad3d_edge_and_circular_modes_over_dims_of_size_one():
    x = np.arange(2.0).reshape(1, 1, 1, 1, 2) + 3
    widths = ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1))
    for mode, numpy_mode in (("replicate", "edge"), ("circular", "wrap")):
        out = run_op("pad3d", {"X": x}, {"paddings": [1] * 6, "mode": mode})["Out"]
        np.testing.assert_array_equal(out, np.pad(x, widths, mode=numpy_mode), err_msg=mode)


def test_unfold_refuses_a_block_larger_than_the_padded_plane():
    message = _refused(lambda: run_op("unfold", {"X": np.ones((1, 2, 3, 3))}, {
        "kernel_sizes": [4, 4], "strides": [1, 1], "paddings": [0, 0, 0, 0],
        "dilations": [1, 1]}))
    assert message.endswith("op unfold: slot X: X [1, 2, 3, 3]: the padded plane 3 + 0 + 0 "
                            "holds no (dilated) 4-wide block")
