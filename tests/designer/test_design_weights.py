"""Edits keep trained weights: unchanged layers keep their values, changed ones restart."""
import numpy as np

import fluidscope.designer as fd

from design_models import classifier


def _value(scope, name):
    return np.array(scope.find_var(name).get_tensor()).copy()


def _train(b, scope, steps=3):
    exe, rng = fd.Executor(), np.random.default_rng(0)
    for _ in range(steps):
        feed = {"x": rng.standard_normal((4, 784)).astype("float32"),
                "label": rng.integers(0, 10, (4, 1)).astype("int64")}
        exe.run(b.main, feed=feed, fetch_list=[b.loss], scope=scope)


def test_train_edit_one_layer_keep_training_with_the_kept_weights():
    scope = fd.Scope()
    d = classifier()
    b = d.build(scope=scope)
    assert "fc_0.w_0" in b.reinitialised          # a fresh scope: everything is new
    assert set(b.initialise(scope=scope)) == set(b.reinitialised)
    _train(b, scope)
    trained_w0 = _value(scope, "fc_0.w_0")
    trained_m0 = _value(scope, "fc_0.w_0_moment1_0")

    d.set("fc_1", size=12)                         # reshapes fc_1 only
    b2 = d.build(scope=scope)
    assert sorted(b2.reinitialised) == sorted(
        n for n in b2.reinitialised if n.startswith("fc_1."))
    assert {"fc_1.w_0", "fc_1.b_0", "fc_1.w_0_moment1_0"} <= set(b2.reinitialised)
    assert "fc_0.w_0" not in b2.reinitialised
    b2.initialise(scope=scope)
    np.testing.assert_array_equal(_value(scope, "fc_0.w_0"), trained_w0)
    np.testing.assert_array_equal(_value(scope, "fc_0.w_0_moment1_0"), trained_m0)
    assert _value(scope, "fc_1.w_0").shape == (256, 12)
    _train(b2, scope)                              # and training goes on
    assert not np.array_equal(_value(scope, "fc_0.w_0"), trained_w0)


def test_a_new_layer_never_inherits_a_removed_layers_values():
    scope = fd.Scope()
    d = classifier()
    d.build(scope=scope).initialise(scope=scope)
    d.remove("fc_1")
    new = d.add("fc", inputs={"input": "fc_0"}, size=10)
    d.connect(new, "softmax_with_cross_entropy_0", "logits")
    assert new == "fc_2" and "fc_2.w_0" in d.build(scope=scope).reinitialised
