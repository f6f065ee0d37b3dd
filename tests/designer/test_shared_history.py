"""Undo snapshots share the nodes an edit did not change, and no edit reaches them.

An edit keeps the document as it was as the snapshot and changes a fresh clone
(designer/design/undoable.py); ``share_unchanged`` points a new snapshot's unchanged
nodes at the previous snapshot's objects. These tests check that the history really
shares, that no gesture after an undo (which installs a snapshot as the live document)
changes any snapshot, and that "unchanged" means the same values of the same types.
"""
import json

import fluidscope.designer as fd
from design_models import composites


def chain(layers=12):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=8 + k % 3, act="relu")
        d.move(h, 10 * k, 0)
    d.add("scale", inputs={"x": h}, scale=2, name="scaled")
    return d


def text(doc):
    """A document as exact JSON text (types included: 2 and 2.0 differ)."""
    return json.dumps(fd.Design(doc).to_json(), sort_keys=True)


def history(d):
    return d._undo + d._redo


def test_snapshots_share_the_nodes_an_edit_did_not_change():
    d = chain()
    d.set("fc_3", size=20)
    d.set("fc_7", act="tanh")
    newest, older = d._undo[-1].graph.nodes, d._undo[-2].graph.nodes
    assert newest["fc_0"] is older["fc_0"] and newest["fc_11"] is older["fc_11"]
    assert newest["fc_3"] is not older["fc_3"]  # the node the previous edit changed
    assert newest["fc_3"].attrs["size"] == 20 and older["fc_3"].attrs["size"] == 8
    assert d._undo[-1].layout["fc_2"] is d._undo[-2].layout["fc_2"]
    # an attribute edit is copy-on-write (undoable.edit_nodes): the live document holds
    # the snapshot's very nodes but the one it changed, which is nobody's snapshot
    live = d.document.graph.nodes
    assert [k for k, n in live.items() if n is not newest[k]] == ["fc_7"]
    assert not {id(live["fc_7"])} & {id(n) for doc in history(d) for n in doc.graph.nodes.values()}


def gestures(d):
    return [
        lambda: d.set("fc_2", size=30),
        lambda: d.set("scaled", scale=3.5),
        lambda: d.disconnect("fc_5", "input"),
        lambda: d.connect("fc_3", "fc_5", "input"),
        lambda: d.rename("fc_4", "renamed"),
        lambda: d.remove("fc_8"),
        lambda: d.add("relu", inputs={"x": "fc_1"}),
        lambda: d.move("fc_1", 99, 99),
        lambda: d.set_loss("scaled"),
    ]


def test_no_gesture_after_an_undo_changes_a_snapshot():
    d = chain()
    for k in range(4):
        d.set("fc_0", size=9 + k)
    for gesture in gestures(d):
        d.undo()  # the live document is now a snapshot, sharing nodes with the history
        snapshots, live = history(d), d.document
        before, live_before = [text(doc) for doc in snapshots], text(live)
        gesture()
        assert [text(doc) for doc in snapshots] == before
        if d.document is not live:  # an undo step (a move changes the live layout only)
            d.undo()
            assert text(d.document) == live_before
            d.redo()


def test_undo_all_and_redo_all_restore_each_document_exactly():
    d = composites()
    texts = [text(d.document)]
    for gesture in (lambda: d.set("fc_2", size=5), lambda: d.set_row("mixed_layer_0", 1, size=7),
                    lambda: d.rename("lstm", "lstm2"), lambda: d.remove("concat_0")):
        gesture()
        texts.append(text(d.document))
    for expected in reversed(texts[:-1]):
        d.undo()
        assert text(d.document) == expected
    for expected in texts[1:]:
        d.redo()
        assert text(d.document) == expected


def test_equal_values_of_other_types_are_not_shared():
    d = chain()
    d.set("fc_1", size=11)          # a step: the snapshot holds scale=2
    d.set("scaled", scale=2.0)      # equal, so no step; the document now holds 2.0
    d.set("fc_1", size=12)          # a step: its snapshot holds 2.0, the one before 2
    assert type(d._undo[-1].graph.nodes["scaled"].attrs["scale"]) is float
    assert type(d._undo[-2].graph.nodes["scaled"].attrs["scale"]) is int
    d.undo()
    assert d.node("scaled").attrs["scale"] == 2.0
    assert type(d.node("scaled").attrs["scale"]) is float
    d.undo()
    assert type(d.node("scaled").attrs["scale"]) is int



def test_groups_and_mixed_layers_are_shared_with_their_types_kept():
    d = composites()
    d.set("fc_2", size=5)
    d.set("fc_2", size=6)
    newest, older = d._undo[-1].graph.nodes, d._undo[-2].graph.nodes
    assert newest["recurrent_group_0"] is older["recurrent_group_0"]
    assert newest["mixed_layer_0"] is older["mixed_layer_0"]


def test_share_unchanged_looks_at_the_types_inside_rows_and_steps():
    from fluidscope.designer.design.undoable import share_unchanged
    d = composites()
    older = d.document.clone()
    for path in ("row", "step", None):
        doc = older.clone()
        if path == "row":
            doc.graph.nodes["mixed_layer_0"].rows[0].attrs["size"] = 12.0
            older.graph.nodes["mixed_layer_0"].rows[0].attrs["size"] = 12
        elif path == "step":
            inner = doc.graph.nodes["recurrent_group_0"].body.nodes["fc_0"]
            inner.attrs["size"] = float(inner.attrs["size"])
        share_unchanged(doc, older)
        nodes = doc.graph.nodes
        assert (nodes["mixed_layer_0"] is older.graph.nodes["mixed_layer_0"]) == (path != "row")
        assert (nodes["recurrent_group_0"] is older.graph.nodes["recurrent_group_0"]) == \
            (path != "step")
        assert nodes["fc_2"] is older.graph.nodes["fc_2"]
