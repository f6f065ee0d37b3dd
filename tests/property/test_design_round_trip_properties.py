"""Property test: random designs (layers from the catalog, wired to earlier nodes, sizes
and attributes drawn, many of them wrong) through build, save, load, codegen and
program -> design. A design that builds round-trips byte for byte every way; one that
does not names the failing node in every error, and the error is ours (FluidscopeError),
never a Python exception leaking from a layer; its generated code fails naming one too."""
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError

ACTS = [None, "relu", "tanh", "sigmoid", "softmax"]
# a Python exception type in an error text: build formats a non-Fluidscope exception so
LEAKED = re.compile(r"\b(TypeError|KeyError|IndexError|ValueError|AttributeError|"
                    r"ZeroDivisionError|AssertionError|RuntimeError|NameError|"
                    r"UnboundLocalError|RecursionError|OverflowError)\b")


def _layer(draw, nodes):
    """(layer, inputs, attrs) reading earlier ``nodes``."""
    pick = lambda: draw(st.sampled_from(nodes))  # noqa: E731
    kind = draw(st.sampled_from(["fc", "act", "scale", "binary", "concat", "dropout",
                                 "softmax", "reshape", "layer_norm", "mean", "reduce_sum"]))
    if kind == "fc":
        return "fc", {"input": pick()}, {"size": draw(st.integers(1, 6)),
                                        "act": draw(st.sampled_from(ACTS))}
    if kind == "act":
        return draw(st.sampled_from(["relu", "tanh", "sigmoid"])), {"x": pick()}, {}
    if kind == "scale":
        return "scale", {"x": pick()}, {"scale": draw(st.sampled_from([0.5, 2.0])),
                                        "bias": draw(st.sampled_from([0.0, 1.0]))}
    if kind == "binary":
        op = draw(st.sampled_from(["elementwise_add", "elementwise_mul", "elementwise_sub"]))
        return op, {"x": pick(), "y": pick()}, {}
    if kind == "concat":
        parts = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=3))
        return "concat", {"input": parts}, {"axis": draw(st.sampled_from([0, 1, -1]))}
    if kind == "dropout":
        return "dropout", {"x": pick()}, {"dropout_prob": draw(st.sampled_from([0.0, 0.5]))}
    if kind == "softmax":
        return "softmax", {"x": pick()}, {"axis": draw(st.sampled_from([-1, 1, 3]))}
    if kind == "reshape":
        return "reshape", {"x": pick()}, {"shape": draw(st.sampled_from([[-1, 2], [0, -1],
                                                                         [4, -1], [-1]]))}
    if kind == "layer_norm":
        return "layer_norm", {"input": pick()}, {"begin_norm_axis": draw(st.integers(0, 2))}
    return kind, {("x" if kind == "mean" else "input"): pick()}, {}


@st.composite
def designs(draw):
    d = fd.Design()
    nodes = [d.add("data", name="x", shape=[None, draw(st.integers(1, 5))])]
    if draw(st.booleans()):
        nodes.append(d.add("data", name="y", shape=[None, draw(st.integers(1, 5))]))
    for _ in range(draw(st.integers(1, 6))):
        layer, inputs, attrs = _layer(draw, nodes)
        try:
            nodes.append(d.add(layer, inputs=inputs, **attrs))
        except FluidscopeError as exc:  # refused at once: must name what is wrong
            assert layer in str(exc) or any(k in str(exc) for k in attrs), str(exc)
    if draw(st.booleans()) and len(nodes) > 1:
        loss = d.add("mean", inputs={"x": nodes[-1]})
        d.set_loss(loss)
        d.set_optimizer(draw(st.sampled_from(["SGD", "Adam"])), learning_rate=0.1)
    return d


def _bytes(program):
    return program.desc.SerializeToString()


def _run_script(source):
    # Executing our own generated script is the point; fluidscope never runs user files.
    namespace = {}
    exec(compile(source, "generated_design.py", "exec"), namespace)  # noqa: S102
    return namespace["main_program"], namespace["startup_program"]


@given(designs())
def test_random_designs_round_trip_or_name_the_failing_node(tmp_path_factory, d):
    built = d.build(scope=fd.Scope())
    for nid, message in built.errors.items():
        assert nid in message, message
        assert not LEAKED.search(message), f"a Python exception leaked from '{nid}': {message}"
    path = tmp_path_factory.mktemp("designs") / "random.fsdesign.json"
    d.save(path)
    loaded = fd.Design.load(path)
    assert loaded == d
    again = loaded.build(scope=fd.Scope())
    assert _bytes(again.main) == _bytes(built.main)
    assert _bytes(again.startup) == _bytes(built.startup)
    if not built.ok:
        if built.errors:  # its code fails the same way, naming a node that failed
            with pytest.raises(FluidscopeError) as failure:
                _run_script(d.to_python())
            assert any(nid in str(failure.value) for nid in built.errors), str(failure.value)
        return
    main, startup = _run_script(d.to_python())
    assert _bytes(main) == _bytes(built.main) and _bytes(startup) == _bytes(built.startup)
    lifted = fd.Design.from_program(built.main).build(scope=fd.Scope())
    assert lifted.errors == {}
    assert _bytes(lifted.main) == _bytes(built.main)
    assert _bytes(lifted.startup) == _bytes(built.startup)
