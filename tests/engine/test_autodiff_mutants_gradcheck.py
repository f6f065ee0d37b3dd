"""What the gradient checker promises its callers, beyond a passing check on a correct
gradient (engine/autodiff: issue #17, mutants that survived the autodiff tests):

* check_grad's result is reproducible from its seed: the output weights it draws are
  ``default_rng(seed).uniform(0.5, 1.5)`` per output (each output of a duplicable slot its
  own), and its ``delta`` reaches the central differences;
* an empty input checks nothing and reports 0; a gradient of the wrong shape fails with
  the slot, both shapes and the op;
* the place given to analytic_grads is the one the gradient runs on;
* program_grad_report differentiates a fed variable even when it is declared
  stop_gradient (data layers are), with a 1e-6 step and a 1e-3 floor by default;
* a sub-block's grad block hangs under the forward block's parent.
"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import Scope
from fluidscope.engine.autodiff import gradcheck as gc
from fluidscope.engine.autodiff.backward import GradContext
from fluidscope.engine.ir.descs import add_block, new_program
from fluidscope.engine.runtime.place import CPUPlace

rng = np.random.default_rng(17)


def _worst_from_seed(op, inputs, attrs, wrt, seed, delta):
    """check_grad's documented computation, spelled out: weights from ``seed``, one per
    output array, the analytic and numeric gradients under them, the floored error."""
    draw = np.random.default_rng(seed)
    base = gc.run_op(op, inputs, attrs)
    weights = {}
    for slot, out in base.items():
        arrays = out if isinstance(out, list) else [out]
        ws = [draw.uniform(0.5, 1.5, np.shape(o)) for o in arrays]
        weights[slot] = ws if isinstance(out, list) else ws[0]
    analytic = gc.analytic_grads(op, inputs, attrs, weights, wrt)
    numeric = gc.numeric_grads(op, inputs, attrs, weights, wrt, delta)
    return max(float(gc.relative_error(np.asarray(analytic[s]), numeric[s], 1e-3).max())
               for s in wrt)


@pytest.mark.parametrize("seed", [0, 1])
def test_check_grad_is_reproducible_from_its_seed_and_delta(seed):
    x = rng.uniform(0.5, 2.0, (3, 4))
    want = _worst_from_seed("log", {"X": x}, {}, ["X"], seed, 1e-4)
    assert want > 1e-9  # a step of 1e-4 leaves a visible truncation error
    assert gc.check_grad("log", {"X": x}, {}, delta=1e-4, seed=seed) == want
    if seed == 0:  # the default seed
        assert gc.check_grad("log", {"X": x}, {}, delta=1e-4) == want


def test_each_output_of_a_duplicable_slot_gets_its_own_weights():
    x = rng.uniform(0.5, 2.0, (4, 3))
    attrs = {"num": 2, "axis": 0}
    # split is linear: its check passes whatever the weights, so compare with the exact
    # recomputation, weights drawn for both outputs in order
    want = _worst_from_seed("split", {"X": x}, attrs, ["X"], 0, 1e-4)
    assert gc.check_grad("split", {"X": x}, attrs, delta=1e-4) == want
    # had only the first output been weighted, the second half of X would get no gradient
    analytic = gc.analytic_grads("split", {"X": x}, attrs,
                                 {"Out": [np.ones((2, 3)), 2 * np.ones((2, 3))]}, ["X"])
    np.testing.assert_array_equal(analytic["X"], [[1.0] * 3] * 2 + [[2.0] * 3] * 2)


def test_an_empty_input_checks_nothing_and_reports_zero():
    assert gc.check_grad("scale", {"X": np.zeros((0, 3))}, {"scale": 2.0}) == 0.0
    assert gc.check_grad("elementwise_mul", {"X": np.zeros((0, 2)), "Y": np.zeros((0, 2))},
                         {}) == 0.0


def test_a_gradient_of_the_wrong_shape_fails_naming_op_slot_and_both_shapes(monkeypatch):
    x = rng.standard_normal((2, 3))
    monkeypatch.setattr(gc, "analytic_grads",
                        lambda *args, **kwargs: {"X": np.zeros((3, 2))})
    with pytest.raises(AssertionError) as err:
        gc.check_grad("scale", {"X": x}, {"scale": 2.0})
    assert str(err.value) == "scale: gradient of X[0] has shape (3, 2), input has (2, 3)"


class _WatchedPlace(CPUPlace):
    """The CPU, counting the kernels' reads of its array module."""
    def __init__(self):
        self.reads = 0

    @property
    def xp(self):
        self.reads += 1
        return np


def test_analytic_gradients_run_on_the_place_given():
    x, w = rng.standard_normal((2, 3)), rng.uniform(0.5, 1.5, (2, 3))
    place = _WatchedPlace()
    got = gc.analytic_grads("scale", {"X": x}, {"scale": 2.0}, {"Out": w}, ["X"], place=place)
    np.testing.assert_allclose(got["X"], 2 * w, rtol=1e-12)
    assert place.reads > 0


def test_numeric_gradients_sum_the_loss_in_float64_for_float32_outputs_and_weights():
    # cast to float32 keeps x (small, so float32 still resolves a 1e-6 step well); the
    # loss sums 2000 float32 products: summed in float32 (about 0.5 at 6e-8 resolution)
    # the difference of two such sums would be off by percents, in float64 it is exact
    x = rng.uniform(1e-3, 2e-3, (2000,))
    w = rng.uniform(0.5, 1.5, (2000,)).astype(np.float32)
    attrs = {"in_dtype": 6, "out_dtype": 5}  # FP64 -> FP32
    numeric = gc.numeric_grads("cast", {"X": x}, attrs, {"Out": w}, ["X"])["X"]
    np.testing.assert_allclose(numeric, w, rtol=2e-3)


def _cube_program(stop_gradient):
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], dtype="float64")
        x.stop_gradient = stop_gradient
        loss = fd.mean(x * x * x)
    return main, loss


def test_program_grad_report_differentiates_a_stop_gradient_feed():
    main, loss = _cube_program(stop_gradient=True)
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    report = gc.program_grad_report(main.desc, loss.name, {"x": x}, ["x"], Scope())
    np.testing.assert_allclose(report["x"]["analytic"], (3 * x * x / 6).ravel(), rtol=1e-12)


def test_program_grad_report_defaults_to_a_small_step_and_a_1e_3_floor():
    main, loss = _cube_program(stop_gradient=False)
    x = np.array([[0.01, -0.02, 0.015], [0.5, 1.0, -0.3]])  # gradients below and above 1e-3
    report = gc.program_grad_report(main.desc, loss.name, {"x": x}, ["x"], Scope())["x"]
    want = (3 * x * x / 6).ravel()
    np.testing.assert_allclose(report["numeric"], want, rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(
        report["error"], gc.relative_error(report["analytic"], report["numeric"], 1e-3))
    assert report["indices"] == list(np.ndindex(2, 3))


def test_a_sub_blocks_grad_block_hangs_under_the_forward_blocks_parent():
    desc, _ = new_program()
    outer = add_block(desc, 0)
    inner = add_block(desc, outer.idx)
    grad_idx = GradContext(desc, set()).backward_block(inner.idx, [])
    grad = desc.blocks[grad_idx]
    assert (grad.idx, grad.parent_idx, grad.forward_block_idx) == (3, outer.idx, inner.idx)


def test_program_grad_report_reads_and_perturbs_parameters_in_the_scope_given():
    from fluidscope.designer.layer_helper import LayerHelper
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64")
        w = LayerHelper("w").create_parameter(fd.ParamAttr(name="w"), [2, 3], "float64")
        loss = fd.reduce_sum(fd.tanh(fd.matmul(x, w)))
    scope = Scope()
    fd.Executor().run(startup, scope=scope)
    w_value = rng.standard_normal((2, 3))
    scope.find_var("w").get_tensor().set(w_value.copy())
    x_value = rng.standard_normal((4, 2))
    report = gc.program_grad_report(main.desc, loss.name, {"x": x_value}, ["w"], scope)["w"]
    want = x_value.T @ (1 - np.tanh(x_value @ w_value) ** 2)  # d sum(tanh(xW)) / dW
    np.testing.assert_allclose(report["analytic"], want.ravel(), rtol=1e-12)
    np.testing.assert_allclose(report["numeric"], want.ravel(), rtol=1e-6)
    np.testing.assert_array_equal(scope.find_var("w").get_tensor().value, w_value)  # restored


def test_program_grad_report_probes_a_sequence_feed_and_only_the_elements_asked():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 2], "float64", lod_level=1)
        x.stop_gradient = False
        loss = fd.reduce_sum(fd.tanh(x))
    value = rng.standard_normal((5, 2))
    feed = {"x": fd.LoDTensor(value.copy(), [[0, 2, 5]])}
    want = 1 - np.tanh(value) ** 2
    full = gc.program_grad_report(main.desc, loss.name, feed, ["x"], Scope())["x"]
    np.testing.assert_allclose(full["numeric"], want.ravel(), rtol=1e-6)
    np.testing.assert_array_equal(feed["x"].value, value)  # each probe restored
    some = gc.program_grad_report(main.desc, loss.name, feed, ["x"], Scope(),
                                  elements={"x": [[4, 1], [0, 0]]})["x"]
    assert some["indices"] == [(4, 1), (0, 0)]
    np.testing.assert_allclose(some["analytic"], [want[4, 1], want[0, 0]], rtol=1e-12)
    np.testing.assert_allclose(some["numeric"], [want[4, 1], want[0, 0]], rtol=1e-6)


def test_run_op_runs_on_the_place_given():
    x = rng.standard_normal((2, 3))
    place = _WatchedPlace()
    np.testing.assert_allclose(gc.run_op("scale", {"X": x}, {"scale": 2.0}, place=place)["Out"],
                               2 * x)
    assert place.reads > 0


def test_build_single_op_declares_each_input_with_its_shape_and_dtype():
    x, ids = rng.standard_normal((3, 2)), np.array([[1], [0]], dtype=np.int64)
    desc, *_ = gc.build_single_op("lookup_table_v2", {"W": x, "Ids": ids}, {})
    var = {v.name: v.type.dense_tensor.tensor for v in desc.blocks[0].vars}
    assert list(var["w_0"].dims) == [3, 2] and list(var["ids_0"].dims) == [2, 1]
    assert var["ids_0"].data_type != var["w_0"].data_type


def test_build_single_op_declares_outputs_with_their_inferred_dtype():
    x = rng.standard_normal((3, 2))
    desc, _, out_names, inferred = gc.build_single_op("argsort", {"X": x}, {"axis": -1})
    var = {v.name: v.type.dense_tensor.tensor for v in desc.blocks[0].vars}
    for slot in ("Out", "Indices"):
        (name,) = out_names[slot]
        assert var[name].data_type == inferred[slot][0].dtype
    assert var[out_names["Out"][0]].data_type != var[out_names["Indices"][0]].data_type
