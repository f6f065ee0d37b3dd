"""A new canvas view sent as a patch (widgets/canvas/view_patch.py): applying the patch to
the old view gives the new one, whatever the edit; the canvas sends a patch, not the whole
view, once its front end has a view; a big change or a new zone shown goes whole."""
import json

import pytest

from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas.view_patch import apply_patch, view_patch

from test_canvas_size import same_chain, varied_chain
from test_canvas_view import sequence_classifier


def edits():
    yield "set_attr", lambda c: c.set_attr("fc_2", "size", 40)
    yield "add_node", lambda c: c.add_node("fc", 10, 10, source="fc_3")
    yield "remove", lambda c: c.remove(["fc_29"])
    yield "connect", lambda c: c.connect("fc_1", 0, "fc_7", "in:input")
    yield "move", lambda c: c.move({"fc_4": [5, 6]})
    yield "undo", lambda c: c.undo()
    yield "rename", lambda c: c.set_attr("fc_6", "id", "renamed")


@pytest.mark.parametrize("name,edit", list(edits()), ids=[n for n, _ in edits()])
def test_patch_then_apply_gives_the_new_view(name, edit):
    canvas = DesignCanvas(design=varied_chain(30))
    # placed nodes: a node added or removed does not move the default layout's others
    canvas.move({n["id"]: n["position"] for n in canvas.view["nodes"]})
    canvas.set_attr("fc_9", "size", 20)  # something to undo
    old = json.loads(json.dumps(canvas.view))
    edit(canvas)
    new = json.loads(json.dumps(canvas.view))
    patch = view_patch(old, new)
    assert patch is not None and patch["base"] == old["revision"]
    assert apply_patch(old, patch) == new
    assert len(json.dumps(patch)) < len(json.dumps(new)) / 4  # the point of it
    with pytest.raises(ValueError, match="base revision"):
        apply_patch(new, patch)


def test_big_changes_and_a_new_zone_shown_go_whole():
    canvas = DesignCanvas(design=same_chain(30))
    old = canvas.view
    canvas.unfold("fold:fc_0")  # 30 new nodes out of 32
    assert view_patch(old, canvas.view) is None
    canvas = DesignCanvas(design=sequence_classifier())
    old = canvas.view
    canvas.enter("rnn")
    assert view_patch(old, canvas.view) is None
    assert view_patch({}, canvas.view) is None


def recording_states(canvas):
    """Record the keys of each ``send_state`` call, as a copy: ``hold_sync`` passes its own
    set and clears it once sent, so a list of those sets would always read empty."""
    states, original = [], canvas.send_state

    def send_state(key=None):
        states.append(key if key is None or isinstance(key, str) else set(key))
        return original(key)
    canvas.send_state = send_state
    return states


def test_the_canvas_sends_a_patch_and_holds_the_whole_view_back():
    canvas = DesignCanvas(design=varied_chain(30))
    sent = []
    canvas.send = lambda content, buffers=None: sent.append(content)
    states = recording_states(canvas)
    canvas.set_attr("fc_2", "size", 40)
    (patch,) = [m for m in sent if m.get("kind") == "view_patch"]
    assert [n["id"] for n in patch["nodes"]["changed"]] == ["fc_2"]
    assert [e["target"] for e in patch["edges"]["changed"]] == ["fc_3"]  # the new shape label
    assert not any(key and "view" in key for key in states)  # the view itself stayed back
    assert canvas.receive({"action": "resync"})
    assert "view" in states  # a front end that missed a patch gets the whole view


def test_after_a_cell_the_whole_view_goes_once():
    """What a notebook run without a page saves (nbclient keeps the state messages, not the
    custom ones) is the view as it is: after a cell, a patched view is sent whole once."""
    canvas = DesignCanvas(design=varied_chain(30))
    states = recording_states(canvas)
    canvas.set_attr("fc_2", "size", 40)
    assert not any(key and "view" in key for key in states)
    canvas._after_cell()
    assert states.count("view") == 1
    canvas._after_cell()  # nothing patched since: nothing more
    assert states.count("view") == 1
