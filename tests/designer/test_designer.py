"""Designer API: names, design-time checks, clone, listing, parameters."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.designer import DesignError


@pytest.fixture
def progs():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        yield main, startup


def test_paddle_style_unique_names(progs):
    main, startup = progs
    x = fd.data("x", [None, 4])
    h = fd.fc(x, 3, act="relu")
    fd.fc(h, 2)
    params = [p.name for p in main.all_parameters()]
    assert params == ["fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]
    assert h.name == "fc_0.tmp_2"  # mul -> tmp_0, add -> tmp_1, relu -> tmp_2
    assert main.global_block().var("fc_0.w_0").shape == (4, 3)


def test_startup_program_initialises_every_parameter(progs):
    main, startup = progs
    x = fd.data("x", [None, 4])
    fd.fc(x, 3, param_attr=fd.ParamAttr(initializer=fd.Constant(0.5)))
    ops = {op.output("Out")[0]: op for op in startup.global_block().ops}
    assert ops["fc_0.w_0"].type == "fill_constant" and ops["fc_0.w_0"].attr("value") == 0.5
    assert ops["fc_0.w_0"].attr("shape") == [4, 3]
    assert ops["fc_0.b_0"].attr("value") == 0.0
    scope = fd.Scope()
    fd.Executor().run(startup, scope=scope)
    np.testing.assert_allclose(np.array(scope.find_var("fc_0.w_0").get_tensor()), 0.5)


def test_shape_mistake_names_layer_op_slot_shapes_and_user_line(progs):
    x = fd.data("x", [None, 3])
    y = fd.data("y", [None, 4])
    with pytest.raises(DesignError) as info:
        fd.elementwise_add(x, y)      # the line the message must point at
    message = str(info.value)
    assert "elementwise_add layer 'elementwise_add_0'" in message
    assert "op elementwise_add" in message and "slot Y" in message
    assert "[-1, 3]" in message and "[-1, 4]" in message
    assert f"{__file__}:" in message


def test_mul_inner_dim_mismatch_is_reported_at_design_time(progs):
    main, _ = progs
    x = fd.data("x", [None, 13])
    w = main.global_block().create_parameter("w", [12, 1])
    out = main.global_block().create_var("out")
    with pytest.raises(DesignError, match=r"op mul.*13.*12"):
        main.global_block().append_op("mul", {"X": x, "Y": w}, {"Out": out})


def test_wrong_attribute_type_and_unknown_slot(progs):
    main, _ = progs
    x = fd.data("x", [None, 3])
    block = main.global_block()
    out = block.create_var("o")
    with pytest.raises(DesignError, match=r"attribute 'scale' \(FLOAT\).*expected a number"):
        block.append_op("scale", {"X": x}, {"Out": out}, {"scale": "two"})
    with pytest.raises(DesignError, match="no input slot 'Z'"):
        block.append_op("scale", {"Z": x}, {"Out": out})
    with pytest.raises(DesignError, match="unknown attribute 'scal'"):
        block.append_op("scale", {"X": x}, {"Out": out}, {"scal": 2.0})
    with pytest.raises(DesignError, match="unknown op type 'scael'; did you mean scale"):
        block.append_op("scael", {"X": x}, {"Out": out})
    assert len(block.ops) == 0  # nothing half-added


def test_bad_layer_arguments(progs):
    with pytest.raises(DesignError, match="size must be a positive int"):
        fd.fc(fd.data("x", [None, 3]), 0)
    with pytest.raises(DesignError, match="already exists"):
        fd.data("x", [None, 3])
    with pytest.raises(DesignError, match="shape must be a list"):
        fd.data("z", "3")
    with pytest.raises(DesignError, match="must be known"):
        fd.fc(fd.data("seq", [None, None]), 3)


def test_clone_for_test_drops_training_ops_and_sets_is_test(progs):
    main, _ = progs
    x = fd.data("x", [None, 4])
    h = fd.dropout(fd.fc(x, 8, act="relu"), 0.5)
    loss = fd.mean(fd.fc(h, 1))
    test_prog = main.clone(for_test=True)
    fd.optimizer.SGD(0.1).minimize(loss)
    assert any(op.type == "sgd" for op in main.global_block().ops)
    types = [op.type for op in test_prog.global_block().ops]
    assert "sgd" not in types and not any(t.endswith("_grad") for t in types)
    dropout = next(op for op in test_prog.global_block().ops if op.type == "dropout")
    assert dropout.attr("is_test") is True
    again = main.clone(for_test=True)
    assert [op.type for op in again.global_block().ops] == types
    assert not any("@GRAD" in v.name for v in again.list_vars())


def test_to_string_lists_vars_with_shapes_and_ops(progs):
    main, _ = progs
    x = fd.data("x", [None, 2])
    fd.mean(fd.fc(x, 1))
    text = main.to_string()
    assert "var x : DENSE_TENSOR[?, 2] float32" in text
    assert "param var fc_0.w_0 : DENSE_TENSOR[2, 1] float32" in text
    assert "= mul(X=['x'], Y=['fc_0.w_0']" in text and "= mean(" in text


def test_program_guard_restores_defaults():
    before = fd.default_main_program()
    inner = fd.Program()
    with fd.program_guard(inner):
        assert fd.default_main_program() is inner
    assert fd.default_main_program() is before
    with pytest.raises(DesignError):
        with fd.program_guard("not a program"):
            fd.data("never_built", [1])


def test_shared_parameter_by_name_and_shape_clash(progs):
    main, _ = progs
    x = fd.data("x", [None, 3])
    a = fd.fc(x, 2, param_attr="shared_w", bias_attr=False)
    b = fd.fc(x, 2, param_attr="shared_w", bias_attr=False)
    assert [p.name for p in main.all_parameters()] == ["shared_w"]
    assert a.name != b.name
    with pytest.raises(DesignError, match="shared but has shape"):
        fd.fc(x, 5, param_attr="shared_w")


def test_variable_arithmetic_builds_ops(progs):
    main, startup = progs
    x = fd.data("x", [None, 2])
    y = (x * 2.0 + 1.0) - x / 4.0
    scope = fd.Scope()
    out, = fd.Executor().run(main, feed={"x": np.array([[4.0, 8.0]], np.float32)},
                             fetch_list=[y], scope=scope)
    np.testing.assert_allclose(out, [[8.0, 15.0]])


def test_program_revision_changes_on_every_edit(progs):
    main, _ = progs
    r0 = main.revision
    x = fd.data("x", [None, 2])
    r1 = main.revision
    fd.relu(x)
    assert r0 < r1 < main.revision


def test_linear_regression_of_reference_003_trains(progs):
    main, startup = progs
    x = fd.data("x", [None, 1])
    y = fd.data("y", [None, 1])
    y_predict = fd.fc(x, 1)
    avg_cost = fd.mean(fd.square_error_cost(y_predict, y))
    fd.optimizer.SGD(learning_rate=0.01).minimize(avg_cost)
    exe, scope = fd.Executor(fd.CPUPlace()), fd.Scope()
    exe.run(startup, scope=scope)
    xs = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    losses = [exe.run(main, feed={"x": xs, "y": 2 * xs}, fetch_list=[avg_cost], scope=scope)[0]
              for _ in range(100)]
    assert losses[-1] < losses[0] / 10
