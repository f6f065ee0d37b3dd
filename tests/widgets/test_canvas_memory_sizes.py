"""A memory added or linked on the canvas is sized like what it remembers (or its boot
layer): from the last build's shape, else the node's ``size`` attribute, else the
starting size (widgets/canvas/zone_actions.py ``_width``/``_link``); an out-link made for
a wire leaving a zone (``_out_link``); a drop fed into its first slot that takes the
source (gestures ``_feed_first_slot``). Issue #17: these survived as mutants."""
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

from test_canvas_actions import refused, send
from test_canvas_view import sequence_classifier

Ref = fd.design.Ref


def ids(c):
    return {n["id"] for n in c.view["nodes"]}


def added(c, action, **args):
    before = ids(c)
    send(c, action, **args)
    return ids(c) - before


def zone_with_fc(size):
    """data [None, 8] (LoD 1) -> zone -> fc(size) inside: the step has no out-link yet,
    so nothing inside is built and the fc's width is its size attribute."""
    c = DesignCanvas()
    c.add_node("data", 0, 0, attrs={"shape": [None, 8], "lod_level": 1})
    send(c, "add_node", layer="recurrent_group", x=300, y=0, source="data_0")
    (word,) = c.design.node("recurrent_group_0").body.nodes
    send(c, "add_node", layer="fc", x=200, y=40, group="recurrent_group_0", source=word,
         attrs={"size": size})
    return c, word


def memory_of(c, new):
    (memory,) = [n for n in new if c.design.node(n).layer == "memory"]
    return memory


def test_a_memory_takes_the_size_attribute_of_an_unbuilt_node_it_remembers():
    c, _ = zone_with_fc(5)
    assert c.build.shapes.get("fc_0") in (None, ())  # not built: no out-link yet
    memory = memory_of(c, added(c, "add_memory", group="recurrent_group_0", link="fc_0"))
    assert c.design.node(memory).attrs["size"] == 5
    assert c.design.node(memory).inputs["link"] == Ref("fc_0", 0)


def test_a_memory_takes_the_built_width_of_what_it_remembers_or_of_its_boot():
    c = DesignCanvas(sequence_classifier(width=12))
    assert c.build.shapes["h"][0][-1] == 12
    memory = memory_of(c, added(c, "add_memory", group="rnn", link="h"))
    assert c.design.node(memory).attrs["size"] == 12
    c.add_node("data", 0, 400, attrs={"shape": [None, 6]})
    boot = next(n for n in ids(c) if c.design.node(n).layer == "data"
                and c.design.node(n).attrs["shape"] == [None, 6])
    memory = memory_of(c, added(c, "add_memory", group="rnn", boot=boot))
    assert c.design.node(memory).attrs["size"] == 6
    assert c.design.node(memory).inputs["boot_layer"] == Ref(boot, 0)


def test_a_memory_with_nothing_to_measure_gets_the_starting_size():
    c, _ = zone_with_fc(5)
    memory = memory_of(c, added(c, "add_memory", group="recurrent_group_0"))
    assert c.design.node(memory).attrs["size"] == 64
    memory = memory_of(c, added(c, "add_memory", group="recurrent_group_0", size=3))
    assert c.design.node(memory).attrs["size"] == 3


def test_linking_a_memory_resizes_it_to_the_new_width_and_keeps_it_otherwise():
    c, word = zone_with_fc(5)
    memory = memory_of(c, added(c, "add_memory", group="recurrent_group_0", size=9))
    assert c.design.node(memory).attrs["size"] == 9
    send(c, "link_memory", memory=memory, target="fc_0")
    assert c.design.node(memory).attrs["size"] == 5
    assert c.design.node(memory).inputs["link"] == Ref("fc_0", 0)
    c.design.set("fc_0", size=1)  # a width of 1 is a width
    send(c, "link_memory", memory=memory, target="fc_0")
    assert c.design.node(memory).attrs["size"] == 1
    # an unbuilt step input has neither a shape nor a size: the memory keeps its size
    send(c, "link_memory", memory=memory, target=word)
    assert c.design.node(memory).inputs["link"] == Ref(word, 0)
    assert c.design.node(memory).attrs["size"] == 1


def test_a_wire_leaving_a_zone_from_a_node_without_an_out_link_makes_one():
    c = DesignCanvas(sequence_classifier())
    c.add_node("sequence_pool", 900, 0, attrs={"pool_type": "sum"})
    send(c, "connect", source="state", source_index=0, target="sequence_pool_0",
         handle="in:input")
    assert c.design.node("rnn").body.outputs == [Ref("h", 0), Ref("state", 0)]
    assert c.design.node("sequence_pool_0").inputs["input"] == Ref("rnn", 1)
    send(c, "connect", source="h", source_index=0, target="sequence_pool_0",
         handle="in:input")  # h already leaves the zone: its out-link is reused
    assert c.design.node("rnn").body.outputs == [Ref("h", 0), Ref("state", 0)]
    assert c.design.node("sequence_pool_0").inputs["input"] == Ref("rnn", 0)


def test_a_dropped_node_is_fed_through_its_first_slot_that_takes_the_source():
    c = DesignCanvas(sequence_classifier())
    (mixed,) = added(c, "add_node", layer="mixed_layer", x=0, y=600, source="pool")
    (row,) = c.design.node(mixed).rows
    assert row.kind == "full_matrix_projection" and row.inputs["input"] == Ref("pool", 0)
    new = added(c, "add_node", layer="recurrent_group", x=0, y=800, source="embedding_0")
    group = next(n for n in new if c.design.node(n).layer == "recurrent_group")
    (step,) = c.design.node(group).body.nodes
    assert c.design.node(step).inputs["outer"] == Ref("embedding_0", 0)
    (cost,) = added(c, "add_node", layer="softmax_with_cross_entropy", x=0, y=900,
                    source="label")
    assert c.design.node(cost).inputs == {"logits": Ref("label", 0)}
    message = refused(c, "add_node", layer="embedding", x=0, y=1000, source="logits")
    assert "add_node: no input of 'embedding_1' (embedding) takes 'logits' (dense)" in message
