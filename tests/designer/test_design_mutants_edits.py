"""Design edits that must be refused (designer/design/edits.py): a memory's link or boot
and a step input's source are set only through the zone's own methods, and a node id must
be a non-empty name without separators; each refusal names the node or the id."""
import pytest

from fluidscope.engine import DesignError
from design_models import composites


@pytest.mark.parametrize("src,dst,slot", [("ctx", "step_input_0", "outer"),
                                          ("ctx", "memory_0", "boot_layer"),
                                          ("fc_0", "memory_0", "link")])
def test_zone_wiring_goes_through_the_zones_methods(src, dst, slot):
    d = composites()
    layer = d.node("recurrent_group_0").body.nodes[dst].layer
    with pytest.raises(DesignError, match=rf"node '{dst}' \({layer}\): set a memory or in-link "
                                          "through add_memory / add_step_input"):
        d.connect(src, dst, slot)


@pytest.mark.parametrize("name", ["", 5, "a b", "x/y", "w@GRAD"])
def test_a_node_id_must_be_a_plain_non_empty_name(name):
    d = composites()
    with pytest.raises(DesignError, match=rf"node id {name!r} must be a non-empty name"):
        d.add("fc", inputs={"input": "ctx"}, name=name, size=2)
    with pytest.raises(DesignError, match=rf"node id {name!r} must be a non-empty name"):
        d.rename("fc_1", name)


@pytest.mark.parametrize("dst,slot,layer,slots", [("fc_1", "link", "fc", "['input']"),
                                                  ("memory_0", "nope", "memory",
                                                   "['boot_layer', 'link']")])
def test_a_slot_the_layer_does_not_have_is_named_with_the_slots_it_has(dst, slot, layer, slots):
    d = composites()
    with pytest.raises(DesignError, match=rf"node '{dst}' \({layer}\): layer {layer} has no "
                                          rf"input slot '{slot}'; its slots are "
                                          + slots.replace("[", r"\[").replace("]", r"\]")):
        d.connect("ctx", dst, slot)
