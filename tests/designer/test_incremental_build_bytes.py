"""A design rebuilt after each edit (reusing what unchanged nodes built) equals a cold build.

The design has a recurrent group (booted memory, static input), a mixed layer, a run of
identical fc layers (what a canvas folds into one box), a named parameter, and, after
the first edits, a failing node whose error the nodes after it wait on. Each step of a
sequence of edits (attribute edits, undo, redo, disconnect/connect, delete, rename,
add, the failure made and fixed) is built incrementally, forward only and with
backward and optimizer, and compared with a fresh build of the same document: the
ProgramDesc bytes of both programs, every node's shapes, errors and waits, the
outputs' names and kinds, the loss, what the scope must reinitialise, the recorded
layer calls and the learning rates.
"""
import pytest

import fluidscope.designer as fd
from fluidscope.designer.design.build import build
from design_models import composites


def design_under_test():
    d = composites()
    h = "fc_2"
    for _ in range(5):  # a run of identical layers: the canvas folds it
        h = d.add("fc", inputs={"input": h}, size=6, act="relu")
    d.add("fc", inputs={"input": h}, size=4, param_attr="tail_w", bias_attr=False, name="tail")
    return d


def summary(b):
    """Everything a caller reads from a Build, bytes where there are bytes."""
    return {
        "main": b.main.desc.SerializeToString(),
        "startup": b.startup.desc.SerializeToString(),
        "shapes": b.shapes, "errors": b.errors, "waiting": b.waiting,
        "outputs": {k: [(v.block.idx, v.name, type(v).__name__, v.shape) for v in vs]
                    for k, vs in b.outputs.items()},
        "output_order": list(b.outputs), "shape_order": list(b.shapes),
        "loss": None if b.loss is None else b.loss.name,
        "optimizer_error": b.optimizer_error,
        "reinitialised": b.reinitialised,
        "calls": [(c.layer, c.helper_name, sorted(c.arguments), len(c.body))
                  for c in b.main.layer_calls],
        "rates": b.main.param_learning_rates,
        "blocks": [(blk.idx, len(blk.desc.ops), len(blk.desc.vars)) for blk in b.main.blocks],
    }


def assert_same_as_cold(d):
    for optimize in (False, True):
        incremental = d.build(scope=fd.Scope(), optimize=optimize)
        cold = build(d.document, fd.Scope(), optimize)
        got, want = summary(incremental), summary(cold)
        for field in want:
            assert got[field] == want[field], field
        # the Variables handed out read the program they belong to
        for nid, vs in incremental.outputs.items():
            for v in vs:
                assert v.block.program is incremental.main
                assert v.desc.name == v.name


def edits(d):
    """(label, edit) pairs; each is applied then checked."""
    return [
        ("nothing", lambda: None),
        ("early size", lambda: d.set("fc_2", size=3)),
        ("again", lambda: None),
        ("act", lambda: d.set("fc_0", act="relu")),
        ("folded layer", lambda: d.set("fc_5", size=7)),
        ("undo", d.undo),
        ("redo", d.redo),
        ("undo twice", lambda: (d.undo(), d.undo())),
        ("redo once", d.redo),
        ("disconnect", lambda: d.disconnect("fc_6", "input")),
        ("connect", lambda: d.connect("fc_4", "fc_6", "input")),
        ("fail", lambda: d.set("fc_0", size=5)),  # the memory holds 16: the group fails
        ("edit while failing", lambda: d.set("fc_7", size=9)),
        ("fix", lambda: d.set("fc_0", size=32)),
        ("undo the fix", d.undo),
        ("redo the fix", d.redo),
        ("delete", lambda: d.remove("fc_5")),
        ("reconnect", lambda: d.connect("fc_4", "fc_6", "input")),
        ("rename", lambda: d.rename("fc_4", "renamed")),
        ("rename back by undo", d.undo),
        ("add", lambda: d.add("relu", inputs={"x": "fc_2"})),
        ("embedding", lambda: d.set("embedding_0", size=[50, 6])),
        ("row", lambda: d.set_row("mixed_layer_0", 1, size=12)),
        ("rename group node", lambda: d.rename("lstm", "lstm2")),
        ("undo all", lambda: [d.undo() for _ in range(30) if d.can_undo]),
        ("redo all", lambda: [d.redo() for _ in range(30) if d.can_redo]),
    ]


def test_each_incremental_rebuild_equals_a_cold_build():
    d = design_under_test()
    assert_same_as_cold(d)
    for label, edit in edits(d):
        edit()
        try:
            assert_same_as_cold(d)
        except AssertionError as exc:
            raise AssertionError(f"after '{label}': {exc}") from None


def test_the_failing_node_is_reported_and_waited_on_in_a_rebuild():
    d = design_under_test()
    d.build(optimize=False)
    d.set("fc_0", size=5)
    b = d.build(optimize=False)
    assert "memory('fc_0') has size 16" in b.errors["recurrent_group_0"]
    assert b.waiting["mixed_layer_0"] == "recurrent_group_0"
    d.undo()
    b = d.build(optimize=False)
    assert b.errors == {} and b.waiting == {}


@pytest.mark.parametrize("node,size", [("fc_2", 48), ("fc_0", 20), ("x", None)])
def test_a_long_chain_rebuilds_to_the_cold_bytes(node, size):
    """A 60-layer chain with sizes cycling 32, 33, 34 (as the 1,000-layer benchmark)."""
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 32])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    for k in range(60):
        h = d.add("fc", inputs={"input": h}, size=(32, 33, 34)[k % 3], act="relu")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer("SGD", learning_rate=0.1)
    assert_same_as_cold(d)
    if size is None:
        d.set(node, shape=[None, 31])
    else:
        d.set(node, size=size)
    assert_same_as_cold(d)
    d.undo()
    assert_same_as_cold(d)
    d.redo()
    assert_same_as_cold(d)


def _reference_order(graph):
    """The build order by its definition: repeatedly the earliest (in document order)
    node whose dependencies are all placed."""
    from fluidscope.designer.design.document import OUTER_SLOTS
    deps = {nid: {r.node for s, r in n.refs(ordering=True)
                  if s not in OUTER_SLOTS.get(n.layer, ()) and r.node in graph.nodes
                  and r.node != nid}
            for nid, n in graph.nodes.items()}
    placed, result = set(), []
    while True:
        ready = [nid for nid in graph.nodes if nid not in placed and deps[nid] <= placed]
        if not ready:
            return result, [nid for nid in graph.nodes if nid not in placed]
        placed.add(ready[0])
        result.append(ready[0])


@pytest.mark.parametrize("seed", range(6))
def test_build_order_is_dependencies_first_then_document_order(seed):
    """Documents in dependency order (the fast path) and shuffled ones agree with the
    definition, cycles included."""
    import random
    from fluidscope.designer.design.document import Graph, Node, Ref, order
    rng = random.Random(seed)
    ids = [f"n{k}" for k in range(25)]
    nodes = {}
    for k, nid in enumerate(ids):
        sources = rng.sample(ids[:k], min(k, rng.randint(0, 3)))
        if seed % 3 == 2 and k > 20:
            sources.append(ids[k + 1] if k + 1 < len(ids) else ids[20])  # a cycle
        refs = [Ref(s) for s in sources]
        # a single input is a plain Ref on odd nodes (order's quick pass reads both forms)
        nodes[nid] = Node(nid, "concat", inputs={"input": refs[0] if len(refs) == 1 and k % 2
                                                 else refs})
    keys = list(nodes)
    if seed % 2:
        rng.shuffle(keys)
    graph = Graph({nid: nodes[nid] for nid in keys})
    assert order(graph) == _reference_order(graph)


def test_a_node_before_the_one_it_reads_is_built_after_it():
    """Plain (single) refs out of document order leave order's quick pass."""
    from fluidscope.designer.design.document import Graph, Node, Ref, order
    graph = Graph({"b": Node("b", "relu", inputs={"x": Ref("a")}),
                   "c": Node("c", "relu", inputs={"x": [Ref("b")]}),
                   "a": Node("a", "data")})
    assert order(graph) == (["a", "b", "c"], [])
    assert order(Graph({"a": graph.nodes["a"], "b": graph.nodes["b"]})) == (["a", "b"], [])
