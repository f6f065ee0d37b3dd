"""Copy-on-write edits (designer/design/undoable.py ``edit_nodes``, ``Design._own``): an
attribute, edge, row, loss or optimizer edit makes the live document a fork of the
snapshot and clones only the node it changes (a group with its whole step, for a node
inside one). The snapshot never changes, a refused edit leaves the very same document,
and the history shares the unchanged nodes by identity."""
import json

import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError
from design_models import composites


def text(doc):
    """A document as exact JSON text (types included: 2 and 2.0 differ)."""
    return json.dumps(fd.Design(doc).to_json(), sort_keys=True)


def chain(layers=6):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=8 + k, act="relu")
    m = d.add("mixed_layer", size=4, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": h})
    return d


def changed_nodes(live, snapshot):
    return [k for k, n in live.graph.nodes.items() if n is not snapshot.graph.nodes.get(k)]


@pytest.mark.parametrize("gesture, changed", [
    (lambda d: d.set("fc_2", size=30), ["fc_2"]),
    (lambda d: d.disconnect("fc_3", "input"), ["fc_3"]),
    (lambda d: d.connect("fc_0", "fc_4", "input"), ["fc_4"]),
    # no change, so no step (the row's node was cloned before that was known)
    (lambda d: d.set_row("mix", 0, size=None), ["mix"]),
    (lambda d: d.add_row("mix", "identity_projection", inputs={"input": "fc_1"}), ["mix"]),
    (lambda d: d.remove_row("mix", 0), ["mix"]),
    (lambda d: d.set_loss("fc_5"), []),
])
def test_an_edit_clones_only_the_node_it_changes_and_the_snapshot_stays(gesture, changed):
    d = chain()
    d.set("fc_0", size=9)                   # the history has a step already
    snapshot = d.document
    before = text(snapshot)
    steps = len(d._undo)
    gesture(d)
    assert text(snapshot) == before         # the snapshot is as it was
    assert changed_nodes(d.document, snapshot) == changed
    if d.document == snapshot:
        assert len(d._undo) == steps
        return
    assert d._undo[-1] is snapshot and len(d._undo) == steps + 1
    d.undo()
    assert d.document is snapshot and text(d.document) == before


def test_an_edit_inside_a_step_clones_its_group_and_leaves_the_snapshot():
    d = composites()
    snapshot = d.document
    before = text(snapshot)
    group = snapshot.graph.nodes["recurrent_group_0"]
    inner = group.body.nodes["fc_0"]
    d.set("fc_0", size=17)
    assert text(snapshot) == before and inner.attrs["size"] == 16
    assert changed_nodes(d.document, snapshot) == ["recurrent_group_0"]
    live_group = d.document.graph.nodes["recurrent_group_0"]
    assert live_group.body.nodes["fc_0"].attrs["size"] == 17
    assert live_group.body.nodes["fc_0"] is not inner


def test_a_refused_edit_leaves_the_very_same_document():
    d = chain()
    doc = d.document
    node = doc.graph.nodes["fc_2"]
    with pytest.raises(DesignError):
        d.set("fc_2", size="wide")
    with pytest.raises(DesignError):
        d.disconnect("fc_2", "no_such_slot")
    with pytest.raises(DesignError):
        d.set_row("mix", 5, size=3)
    assert d.document is doc and doc.graph.nodes["fc_2"] is node
    assert node.attrs["size"] == 10


def test_a_run_of_edits_shares_every_unchanged_node_by_identity():
    d = chain()
    for k in range(6):
        d.set(f"fc_{k % 3}", size=20 + k)
    live, history = d.document, d._undo[-6:]
    for older, newer in zip(history, history[1:] + [live]):
        assert len(changed_nodes(newer, older)) == 1
    assert all(live.graph.nodes[k] is history[0].graph.nodes[k]
               for k in ("x", "fc_3", "fc_4", "fc_5", "mix"))


def test_edits_inside_a_transaction_are_one_step_and_restore_on_error():
    d = chain()
    before, steps = text(d.document), len(d._undo)
    with d.transaction():
        d.set("fc_1", size=3)
        d.disconnect("fc_2", "input")
    assert len(d._undo) == steps + 1
    assert d.node("fc_1").attrs["size"] == 3 and "input" not in d.node("fc_2").inputs
    d.undo()
    assert text(d.document) == before
    with pytest.raises(DesignError):
        with d.transaction():
            d.set("fc_1", size=4)
            d.set("fc_1", size="wide")
    assert text(d.document) == before
