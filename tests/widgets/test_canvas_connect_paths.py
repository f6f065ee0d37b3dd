"""Every path of the canvas's connect gesture (widgets/canvas/gestures.py ``_connect``):
onto a zone's in-handle, a step input, a memory's boot and link, a zone's out-links, a
second wire into a many-input slot, across a zone's edge, and the refusals' words
(issue #17: mutants of these paths survived the canvas tests)."""
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

from test_canvas_actions import refused, send
from test_canvas_view import sequence_classifier

Ref = fd.design.Ref


def ids(c):
    return {n["id"] for n in c.view["nodes"]}


def add_data(c, shape, lod_level):
    before = ids(c)
    c.add_node("data", 0, 500, attrs={"shape": shape, "lod_level": lod_level})
    (new,) = ids(c) - before
    return new


def test_a_zones_in_handle_rebinds_its_step_input_or_boots_its_memory():
    c = DesignCanvas(sequence_classifier())
    seq, dense = add_data(c, [None, 16], 1), add_data(c, [None, 16], 0)
    send(c, "connect", source=seq, source_index=0, target="rnn", handle="in:word")
    assert c.design.node("word").inputs["outer"] == Ref(seq, 0)
    send(c, "connect", source=dense, source_index=0, target="rnn", handle="in:state")
    assert c.design.node("state").inputs["boot_layer"] == Ref(dense, 0)
    assert c.design.node("state").inputs["link"] == Ref("h", 0)  # still remembers h
    assert c.design.node("word").inputs["outer"] == Ref(seq, 0)


def test_a_step_input_and_a_memory_take_wires_on_their_own_handles():
    c = DesignCanvas(sequence_classifier())
    seq, dense = add_data(c, [None, 16], 1), add_data(c, [None, 16], 0)
    send(c, "connect", source=seq, source_index=0, target="word", handle="in:outer")
    assert c.design.node("word").inputs["outer"] == Ref(seq, 0)
    send(c, "connect", source=dense, source_index=0, target="state", handle="in:boot_layer")
    assert c.design.node("state").inputs["boot_layer"] == Ref(dense, 0)
    send(c, "connect", source="word", source_index=0, target="state", handle="in:link")
    assert c.design.node("state").inputs["link"] == Ref("word", 0)
    assert c.design.node("state").inputs["boot_layer"] == Ref(dense, 0)


def test_out_handles_replace_an_out_link_or_add_one_and_only_zones_have_them():
    c = DesignCanvas(sequence_classifier())
    send(c, "connect", source="word", source_index=0, target="rnn", handle="out:1")
    assert c.design.node("rnn").body.outputs == [Ref("h", 0), Ref("word", 0)]  # past the end
    send(c, "connect", source="state", source_index=0, target="rnn", handle="out:1")
    assert c.design.node("rnn").body.outputs == [Ref("h", 0), Ref("state", 0)]
    message = refused(c, "connect", source="pool", source_index=0, target="logits",
                      handle="out:0")
    assert "no input handle 'out:0'" in message and "'in:input'" in message


def test_a_second_wire_into_a_many_input_slot_adds_to_the_first():
    c = DesignCanvas(sequence_classifier())
    dense = add_data(c, [None, 16], 0)
    assert c.design.node("logits").inputs["input"] == Ref("pool", 0)
    send(c, "connect", source=dense, source_index=0, target="logits", handle="in:input")
    assert c.design.node("logits").inputs["input"] == [Ref("pool", 0), Ref(dense, 0)]


def test_a_wire_into_a_zone_from_outside_goes_through_a_new_step_input():
    c = DesignCanvas(sequence_classifier())
    seq = add_data(c, [None, 16], 1)
    before = set(c.design.node("rnn").body.nodes)
    send(c, "connect", source=seq, source_index=0, target="h", handle="in:input")
    (step,) = set(c.design.node("rnn").body.nodes) - before
    assert c.design.node(step).layer == "step_input"
    assert c.design.node(step).inputs["outer"] == Ref(seq, 0)
    assert c.design.node("h").inputs["input"] == [Ref("word", 0), Ref("state", 0),
                                                  Ref(step, 0)]


def test_nodes_of_two_sibling_zones_cannot_be_wired():
    c = DesignCanvas(sequence_classifier())
    seq = add_data(c, [None, 16], 1)
    before = ids(c)
    send(c, "add_node", layer="recurrent_group", x=300, y=400, source=seq)
    (other,) = {n for n in ids(c) - before if c.design.node(n).layer == "recurrent_group"}
    (word2,) = c.design.node(other).body.nodes
    send(c, "add_node", layer="fc", x=200, y=440, group=other, source=word2)
    fc2 = next(n for n in c.design.node(other).body.nodes if n != word2)
    message = refused(c, "connect", source="h", source_index=0, target=fc2, handle="in:input")
    assert message.endswith(f"connect: 'h' and '{fc2}' are not in one zone nor on the two "
                            "sides of one zone's edge"), message
