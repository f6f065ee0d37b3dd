"""Design edits: ids, checks that refuse bad edits, composites, undo/redo, transactions."""
import random

import pytest

import fluidscope.designer as fd
from fluidscope.designer import DesignError

from design_models import classifier, composites


def test_issue_example_ids_and_edges():
    d = classifier()
    assert list(d.nodes) == ["x", "label", "fc_0", "fc_1", "softmax_with_cross_entropy_0",
                             "mean_0"]
    assert d.node("fc_1").inputs == {"input": fd.design.Ref("fc_0", 0)}
    assert d.loss == fd.design.Ref("mean_0") and d.document.optimizer["type"] == "Adam"


def test_a_second_wire_into_a_many_input_slot_adds_an_input():
    d = classifier()
    d.connect("x", "fc_1", "input")  # fc takes one or several inputs: fc([fc_0, x])
    assert d.node("fc_1").inputs["input"] == [fd.design.Ref("fc_0"), fd.design.Ref("x")]
    assert d.build().shapes["fc_1"] == [[-1, 10]]
    d.undo()
    assert d.node("fc_1").inputs["input"] == fd.design.Ref("fc_0")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.add("fc", inputs={"input": "x"}, size="big"), "attribute 'size' must be int"),
    (lambda d: d.add("fc", inputs={"input": "x"}, size=3, colour=1), "no attribute 'colour'"),
    (lambda d: d.add("fc", inputs={"input": "x"}), r"needs attribute\(s\) \['size'\]"),
    (lambda d: d.add("fc", inputs={"inp": "x"}, size=3), "no input slot 'inp'"),
    (lambda d: d.add("fc", inputs={"input": "nowhere"}, size=3), "'nowhere' is not a node"),
    (lambda d: d.add("fc", inputs={"input": "x"}, size=3, act="not_an_activation"), "must be one of"),
    (lambda d: d.add("nonsense"), "unknown layer 'nonsense'"),
    (lambda d: d.add("data", name="x", shape=[None, 2]), "a node 'x' already exists"),
    (lambda d: d.set("fc_0", size=-1.5), "attribute 'size' must be int"),
    (lambda d: d.connect("x", "fc_0", "weights"), "no input slot 'weights'"),
    (lambda d: d.add_row("fc_0", "full_matrix_projection"), "not a mixed_layer"),
    (lambda d: d.set_optimizer("Adagrad"), "unknown optimizer"),
])
def test_a_refused_edit_changes_nothing(edit, message):
    d = classifier()
    before = d.document.clone()
    undo_depth = len(d._undo)
    with pytest.raises(DesignError, match=message):
        edit(d)
    assert d.document == before and len(d._undo) == undo_depth


def test_undo_redo_restore_exact_documents():
    d = classifier()
    states = [d.document.clone()]
    d.set("fc_0", size=128)
    states.append(d.document.clone())
    d.remove("fc_1")  # cuts fc_1 -> softmax edge
    states.append(d.document.clone())
    assert "logits" not in d.node("softmax_with_cross_entropy_0").inputs
    d.undo()
    assert d.document == states[1]
    d.undo()
    assert d.document == states[0]
    d.redo()
    d.redo()
    assert d.document == states[2]
    with pytest.raises(DesignError, match="nothing to redo"):
        d.redo()


def test_remove_takes_the_loss_and_layout_with_it_and_undo_brings_them_back():
    d = classifier()
    d.move("mean_0", 10, 20)
    before = d.document.clone()
    d.remove("mean_0")
    assert d.loss is None and "mean_0" not in d.layout
    d.undo()
    assert d.document == before


def test_move_is_layout_only_and_not_an_undo_step():
    d = classifier()
    depth = len(d._undo)
    d.move("fc_0", 1, 2)
    assert d.layout["fc_0"] == [1.0, 2.0] and len(d._undo) == depth


def test_transaction_is_one_step_and_an_error_rolls_it_back():
    d = classifier()
    before = d.document.clone()
    with d.transaction():
        d.set("fc_0", size=64)
        d.add("relu", inputs={"x": "fc_0"})
    d.undo()
    assert d.document == before
    with pytest.raises(DesignError):
        with d.transaction():
            d.set("fc_0", size=32)
            d.set("fc_0", size="no")
    assert d.document == before


def test_an_edit_that_changes_nothing_is_not_an_undo_step():
    d = classifier()
    depth = len(d._undo)
    d.set("fc_0", size=256)
    assert len(d._undo) == depth


def test_history_is_bounded():
    d = classifier()
    d.history_limit = 5
    for size in range(1, 20):
        d.set("fc_0", size=size)
    assert len(d._undo) == 5


def test_fresh_ids_are_never_reused():
    d = classifier()
    d.remove("fc_1")
    assert d.add("fc", inputs={"input": "fc_0"}, size=3) == "fc_2"


def test_rename_moves_every_edge():
    d = classifier()
    d.rename("fc_0", "hidden")
    assert d.node("fc_1").inputs["input"].node == "hidden"
    assert d.build().var("hidden").name.startswith("hidden.")


def test_mixed_rows_edit_and_undo():
    d = composites()
    start = d.document.clone()
    m = "mixed_layer_0"
    d.add_row(m, "dot_mul_projection", inputs={"input": "recurrent_group_0"})
    d.set_row(m, 0, size=12)
    d.move_row(m, 2, 0)
    assert [r.kind for r in d.node(m).rows] == ["dot_mul_projection", "full_matrix_projection",
                                                "full_matrix_projection"]
    d.remove_row(m, 0)
    with pytest.raises(DesignError, match="no row 7"):
        d.remove_row(m, 7)
    for _ in range(4):
        d.undo()
    assert d.document == start


def test_group_edits_and_undo():
    d = composites()
    start = d.document.clone()
    inner = d.add("relu", inputs={"x": "fc_0"}, group="recurrent_group_0")
    d.set_outputs("recurrent_group_0", [inner])
    d.set_step_input("step_input_1", static=False)
    d.boot_memory("memory_0", None)
    assert "boot_layer" not in d.node("memory_0").inputs
    with pytest.raises(DesignError, match="not a node of the same graph"):
        d.link_memory("memory_0", "x_missing")
    with pytest.raises(DesignError, match="not a node of the same graph"):
        d.add("relu", inputs={"x": "ctx"}, group="recurrent_group_0")  # outer node inside
    for _ in range(4):
        d.undo()
    assert d.document == start
    d.remove("recurrent_group_0")
    assert not any(n == "fc_0" for n in d.document.ids())
    d.undo()
    assert d.document == start


def _random_edit(d, rng):
    top = [n for n in d.nodes]
    fcs = [n for n in top if d.nodes[n].layer == "fc"]
    choice = rng.randrange(7)
    if choice == 0 or not fcs:
        d.add("fc", inputs={"input": rng.choice(top)}, size=rng.randrange(1, 9))
    elif choice == 1:
        d.set(rng.choice(fcs), size=rng.randrange(1, 9), act=rng.choice([None, "relu"]))
    elif choice == 2:
        d.remove(rng.choice(top[2:] or fcs))
    elif choice == 3:
        d.connect(rng.choice(top), rng.choice(fcs), "input")
    elif choice == 4:
        d.disconnect(rng.choice(fcs), "input")
    elif choice == 5:
        with d.transaction():
            m = d.add("mixed_layer", size=4)
            d.add_row(m, "full_matrix_projection", inputs={"input": rng.choice(top)})
    else:
        with d.transaction():
            d.add("relu", inputs={"x": rng.choice(top)})
            d.set(rng.choice(fcs), size=rng.randrange(1, 9))


@pytest.mark.parametrize("seed", range(8))
def test_random_edit_sequences_undo_and_redo_exactly(seed):
    rng = random.Random(seed)
    d = classifier()
    states = [d.document.clone()]
    for _ in range(25):
        try:
            _random_edit(d, rng)
        except DesignError:
            assert d.document == states[-1]  # a refused edit changed nothing
            continue
        if d.document != states[-1]:  # an edit that changes nothing is no undo step
            states.append(d.document.clone())
    for state in reversed(states[:-1]):
        d.undo()
        assert d.document == state
    for state in states[1:]:
        d.redo()
        assert d.document == state


def _sequence_design():
    d = fd.Design()
    d.add("data", name="words", shape=[None, 6], lod_level=1)
    d.add("fc", inputs={"input": "words"}, size=5, act="tanh")
    d.add("fc", inputs={"input": "fc_0"}, size=4)
    d.add("sequence_pool", inputs={"input": "fc_1"}, pool_type="sum")
    d.set_loss(d.add("mean", inputs={"x": "sequence_pool_0"}))
    return d


def test_group_a_selection_into_a_recurrent_group_infers_in_and_out_links():
    d = _sequence_design()
    before = d.document.clone()
    flat_shapes = d.build(scope=fd.Scope()).shapes
    g = d.group(["fc_0", "fc_1"])
    group = d.node(g)
    assert [n.layer for n in group.body.nodes.values()] == ["step_input", "fc", "fc"]
    assert d.node("step_input_0").inputs == {"outer": fd.design.Ref("words")}
    assert group.body.outputs == [fd.design.Ref("fc_1")]
    assert d.node("sequence_pool_0").inputs["input"] == fd.design.Ref(g)
    b = d.build(scope=fd.Scope())
    assert b.errors == {} and b.shapes[g] == flat_shapes["fc_1"]
    assert b.shapes["sequence_pool_0"] == flat_shapes["sequence_pool_0"]
    d.undo()
    assert d.document == before
    d.redo()
    d.ungroup(g)
    assert list(d.nodes) == ["words", "fc_0", "fc_1", "sequence_pool_0", "mean_0"]
    assert [(n.id, n.inputs) for n in d.nodes.values()] == [
        (n.id, n.inputs) for n in before.graph.nodes.values()]
    with pytest.raises(DesignError, match="has memories"):
        composites().ungroup("recurrent_group_0")
    with pytest.raises(DesignError, match="data node"):
        d.group(["words", "fc_0"])


def _random_composite_edit(d, rng):
    m, g = "mixed_layer_0", "recurrent_group_0"
    rows = len(d.node(m).rows) if m in d.document.ids() else 0
    choice = rng.randrange(8)
    if choice == 0 and m in d.document.ids():
        d.add_row(m, rng.choice(["full_matrix_projection", "dot_mul_projection"]),
                  inputs={"input": rng.choice(["embedding_0", "fc_1"])})
    elif choice == 1 and rows > 1:
        d.move_row(m, rng.randrange(rows), rng.randrange(rows))
    elif choice == 2 and rows:
        d.set_row(m, rng.randrange(rows), size=rng.choice([None, 12]))
    elif choice == 3 and g in d.document.ids():
        d.add("relu", inputs={"x": "fc_0"}, group=g)
    elif choice == 4 and g in d.document.ids():
        d.set_step_input("step_input_1", static=rng.random() < 0.5)
    elif choice == 5:
        d.remove(rng.choice([n for n in d.nodes if n not in ("ids", "ctx")]))
    elif choice == 6:
        d.group([rng.choice([n for n, node in d.nodes.items() if node.layer == "fc"])])
    else:
        d.rename(rng.choice(list(d.nodes)), f"renamed_{rng.randrange(1000)}")


@pytest.mark.parametrize("seed", range(6))
def test_random_composite_edits_undo_and_redo_exactly(seed):
    rng = random.Random(seed)
    d = composites()
    states = [d.document.clone()]
    for _ in range(20):
        try:
            _random_composite_edit(d, rng)
        except (DesignError, StopIteration, IndexError):
            assert d.document == states[-1]
            continue
        if d.document != states[-1]:
            states.append(d.document.clone())
    for state in reversed(states[:-1]):
        d.undo()
        assert d.document == state
    for state in states[1:]:
        d.redo()
        assert d.document == state
