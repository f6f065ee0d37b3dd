"""Round trips: design -> code -> program and program -> design -> program, byte for byte."""
import pytest

import fluidscope.designer as fd
from fluidscope.designer import DesignError

from design_models import (NOTEBOOK_MODELS, char_lstm, char_lstm_code, classifier, composites,
                           program_bytes)


def _run_script(source):
    # Executing our own generated script is the point of this test; nothing a user loads
    # is ever executed by fluidscope.
    namespace = {}
    exec(compile(source, "generated_design.py", "exec"), namespace)  # noqa: S102
    return namespace["main_program"], namespace["startup_program"]


@pytest.mark.parametrize("make", [classifier, composites, char_lstm])
def test_generated_code_builds_the_same_bytes(make):
    d = make()
    built = d.build(scope=fd.Scope())
    main, startup = _run_script(d.to_python())
    assert main.desc.SerializeToString() == built.main.desc.SerializeToString()
    assert startup.desc.SerializeToString() == built.startup.desc.SerializeToString()


def test_generated_code_is_readable():
    source = composites().to_python()
    assert "with fd.design_guard(main_program, startup_program):" in source
    assert "    def recurrent_group_0_step(step_input_0, step_input_1):" in source
    assert "        memory_0 = fd.memory('fc_0', boot_layer=ctx, size=16)" in source
    assert "fd.StaticInput(ctx)" in source and "dynamic_lstm_0[1]" in source
    assert "fd.optimizer.SGD(learning_rate=0.1).minimize(loss)" in source
    assert all(len(line) < 400 for line in source.splitlines())


@pytest.mark.parametrize("make", [classifier, composites, char_lstm])
def test_program_to_design_to_program_is_byte_identical(make):
    built = make().build(scope=fd.Scope())
    again = fd.Design.from_program(built.main).build(scope=fd.Scope())
    assert again.errors == {}
    assert again.main.desc.SerializeToString() == built.main.desc.SerializeToString()
    assert again.startup.desc.SerializeToString() == built.startup.desc.SerializeToString()


def test_notebook_model_written_in_code_comes_back_as_its_design():
    main, startup = char_lstm_code()
    d = fd.Design.from_program(main)
    assert d == char_lstm()
    b = d.build(scope=fd.Scope())
    # the code recorded its source lines, the design records none: equal apart from those
    assert program_bytes(b.main) == program_bytes(main)
    assert program_bytes(b.startup) == program_bytes(startup)
    assert program_bytes(_run_script(fd.program_to_python(main))[0]) == program_bytes(main)


def test_code_with_a_with_block_mixed_layer_and_a_group_with_static_input():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        words = fd.data("words", [None, 1], "int64", lod_level=1)
        topic = fd.data("topic", [None, 4])
        emb = fd.embedding(words, size=[30, 6])
        with fd.mixed_layer(size=5, act="tanh") as m:
            m += fd.full_matrix_projection(fd.fc(emb, 3))  # a layer made inside the block
            m += fd.table_projection(words, vocab_size=30)

        def step(x_t, t):
            h_pre = fd.memory("state", 5)
            return fd.fc([x_t, h_pre, t], 5, act="tanh", name="state")

        out = fd.recurrent_group(step, [m, fd.StaticInput(topic)], reverse=True)
        fd.optimizer.Momentum(0.1, momentum=0.5).minimize(fd.mean(out))
    d = fd.Design.from_program(main)
    group = d.node("recurrent_group_0")
    assert group.attrs == {"reverse": True}
    assert [n.layer for n in group.body.nodes.values()] == ["step_input", "step_input",
                                                             "memory", "fc"]
    assert d.node("memory_0").inputs["link"] == fd.design.Ref("state")
    assert [r.kind for r in d.node("mixed_0").rows] == ["full_matrix_projection",
                                                        "table_projection"]
    assert d.document.optimizer == {"type": "Momentum", "learning_rate": 0.1, "momentum": 0.5}
    b = d.build(scope=fd.Scope())
    assert b.errors == {}
    assert program_bytes(b.main) == program_bytes(main)
    assert program_bytes(b.startup) == program_bytes(startup)


def test_an_argument_without_a_design_form_is_named():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 3])
        fd.fc(x, 2, param_attr=fd.ParamAttr(initializer=fd.Constant(0.5)))
    with pytest.raises(DesignError, match="node 'fc_0': param_attr=.*no design form"):
        fd.Design.from_program(main)


@pytest.mark.parametrize("model", NOTEBOOK_MODELS, ids=lambda f: f.__name__)
def test_notebook_models_round_trip_byte_for_byte(model):
    main, startup = fd.Program(), fd.Program()
    with fd.design_guard(main, startup):  # the notebook's code, as a design build makes it
        model()
    d = fd.Design.from_program(main)
    assert fd.Design.from_json(d.to_json()) == d                       # design -> JSON -> design
    built = d.build(scope=fd.Scope())
    assert built.main.desc.SerializeToString() == main.desc.SerializeToString()  # program ->
    assert built.startup.desc.SerializeToString() == startup.desc.SerializeToString()
    again_main, again_startup = _run_script(d.to_python())            # design -> code -> program
    assert again_main.desc.SerializeToString() == main.desc.SerializeToString()
    assert again_startup.desc.SerializeToString() == startup.desc.SerializeToString()


def test_program_to_design_keeps_the_attributes_layers_take_as_keywords():
    # softmax, leaky_relu and gelu take their attributes as **attrs: the layer-call record
    # lists each as an argument of its own, so the design has them and rebuilds the bytes
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, 4, 3])
        fd.gelu(fd.leaky_relu(fd.softmax(x, axis=1), alpha=0.1), approximate=True)
    d = fd.Design.from_program(main)
    attrs = {n.layer: n.attrs for n in d.nodes.values() if n.layer != "data"}
    assert attrs == {"softmax": {"axis": 1}, "leaky_relu": {"alpha": 0.1},
                     "gelu": {"approximate": True}}
    assert program_bytes(d.build(scope=fd.Scope()).main) == program_bytes(main)
