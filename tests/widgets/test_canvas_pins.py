"""Removing a layer or cutting a wire leaves the other layers where they are drawn
(widgets/canvas/pins.py): before, a chain cut in two restarted its second half at column
0 and every node under the camera changed."""
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

from test_canvas_actions import send


def wrapped_chain(layers=60):
    """A chain long enough for the default layout to wrap it into bands."""
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, 8])
    for k in range(layers):
        h = d.add("fc", inputs={"input": h}, size=(8, 9)[k % 2], act="relu")
    d.set_loss(d.add("mean", inputs={"x": h}))
    return d


def positions(canvas):
    return {node["id"]: node["position"] for node in canvas.view["nodes"]}


def test_removing_a_layer_in_the_middle_moves_no_other_layer_and_undo_neither():
    c = DesignCanvas(wrapped_chain())
    before = positions(c)
    assert len({y for _, y in before.values()}) > 1  # wrapped into bands
    send(c, "remove", ids=["fc_30"])
    after = positions(c)
    assert "fc_30" not in after and after == {k: v for k, v in before.items() if k != "fc_30"}
    send(c, "undo")
    assert positions(c) == before
    send(c, "redo")
    assert positions(c) == after


def test_the_layout_without_pins_would_have_moved_them():
    """What the pins prevent: the same cut in a design with no canvas pinning it."""
    from fluidscope.widgets.canvas.layout import place
    d = wrapped_chain()
    graph = d.document.graph
    sizes = {nid: (220, 116) for nid in graph.nodes}
    before = place(graph, {}, sizes)
    d.remove("fc_30")
    after = place(d.document.graph, {}, sizes)
    assert sum(after[k] != before[k] for k in after) > 20


def test_cutting_a_wire_moves_no_layer():
    c = DesignCanvas(wrapped_chain())
    before = positions(c)
    edge = next(e["id"] for e in c.view["edges"] if e["target"] == "fc_31")
    send(c, "disconnect", edge=edge)
    assert positions(c) == before


def test_a_layer_the_user_placed_keeps_its_own_place():
    c = DesignCanvas(wrapped_chain())
    send(c, "move", positions={"fc_3": [5, 6]})
    send(c, "remove", ids=["fc_30"])
    assert c.design.layout["fc_3"] == [5.0, 6.0]
    assert positions(c)["fc_3"] == [5.0, 6.0]


def test_a_removal_inside_a_zone_pins_that_step_only():
    c = DesignCanvas()
    send(c, "add_node", layer="data", x=0, y=0)
    send(c, "add_node", layer="recurrent_group", x=300, y=0, source="data_0")
    (word,) = c.design.node("recurrent_group_0").body.nodes
    send(c, "add_node", layer="fc", x=200, y=40, group="recurrent_group_0", source=word)
    send(c, "add_node", layer="fc", x=400, y=40, group="recurrent_group_0", source="fc_0")
    for nid in ("data_0", "fc_0", word):  # placed by the default layout
        c.design.document.layout.pop(nid, None)
    if "recurrent_group_0" in c._collapsed:
        send(c, "toggle_zone", group="recurrent_group_0")
    drawn = {node["id"]: node for node in c.view["nodes"]}
    assert drawn["fc_0"]["parent"] == "recurrent_group_0"
    send(c, "remove", ids=["fc_1"])
    assert c.design.layout["fc_0"] == drawn["fc_0"]["position"]  # the step's own layers
    assert c.design.layout[word] == drawn[word]["position"]
    assert "data_0" not in c.design.layout  # the top level: another graph, not pinned
