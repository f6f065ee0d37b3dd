"""Grouping a recurrent group into a new one and ungrouping it again (designer/design/
composite_edits.py): the nested group's in-links and boot, which read the top level, are
rewired to step inputs of the new group, and back to the top-level nodes on ungroup."""
from design_models import composites

G = "recurrent_group_0"


def test_a_nested_groups_outer_reads_become_step_inputs_and_come_back():
    d = composites()
    outer = d.group([G])
    body = d.node(outer).body
    steps = {n.inputs["outer"].node: n.id for n in body.nodes.values()
             if n.layer == "step_input"}
    assert set(steps) == {"embedding_0", "ctx"}
    nested = body.nodes[G].body.nodes
    assert nested["step_input_0"].inputs["outer"].node == steps["embedding_0"]
    assert nested["step_input_1"].inputs["outer"].node == steps["ctx"]
    assert nested["memory_0"].inputs["boot_layer"].node == steps["ctx"]
    assert nested["fc_0"].inputs["input"][0].node == "step_input_0"  # inner edges stay
    d.ungroup(outer)
    back = d.node(G).body.nodes
    assert back["step_input_0"].inputs["outer"].node == "embedding_0"
    assert back["step_input_1"].inputs["outer"].node == "ctx"
    assert back["memory_0"].inputs["boot_layer"].node == "ctx"
    assert d.document.graph == composites().document.graph  # the same nodes and edges
