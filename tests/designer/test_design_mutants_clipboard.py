"""Copy and paste of design nodes (designer/design/clipboard.py) from Python: what is
refused and how the error names the node, which edges a paste keeps (among the copies, and
a copied zone's in-links and boots where their outer node exists), the zone's inner
nodes, memories and outputs rebuilt on fresh ids, mixed-layer rows, list inputs, pasting
inside a zone, the layout (shifted to (x, y), 40 px by default, zone contents unshifted),
one undo step, and a clip that later edits do not change."""
import pytest

from fluidscope.designer.design import clipboard
from fluidscope.engine import DesignError
from design_models import composites

G = "recurrent_group_0"


def _body_by_layer(design, group):
    body = design.node(group).body
    return {n.layer + ("_static" if n.attrs.get("static") else ""): n
            for n in body.nodes.values()}, body


def test_what_copy_refuses_names_the_nodes():
    d = composites()
    with pytest.raises(DesignError, match="copy: no node 'nope' in the design"):
        clipboard.copy(d, ["nope"])
    with pytest.raises(DesignError, match="copy: nothing selected"):
        clipboard.copy(d, [])
    with pytest.raises(DesignError, match=r"copy: \['ids', 'fc_0'\] are not all in one graph"):
        clipboard.copy(d, ["ids", "fc_0"])
    with pytest.raises(DesignError, match="copy: 'memory_0' is a memory of its zone; copy the "
                                          "zone"):
        clipboard.copy(d, ["memory_0"])
    with pytest.raises(DesignError, match="copy: 'step_input_0' is a step_input of its zone"):
        clipboard.copy(d, ["fc_0", "step_input_0"])


def test_a_zone_pasted_alone_keeps_reading_its_outer_nodes_on_fresh_inner_ids():
    d = composites()
    renamed = clipboard.paste(d, clipboard.copy(d, [G]), x=10, y=20)
    new = renamed[G]
    assert new != G and d.node(new).layer == "recurrent_group"
    inner, body = _body_by_layer(d, new)
    assert set(inner) == {"step_input", "step_input_static", "memory", "fc"}
    assert inner["step_input"].inputs["outer"].node == "embedding_0"  # exists at the top
    assert inner["step_input_static"].inputs["outer"].node == "ctx"
    memory = inner["memory"]
    assert memory.attrs["size"] == 16 and memory.inputs["boot_layer"].node == "ctx"
    fc = inner["fc"]
    assert memory.inputs["link"].node == fc.id and fc.id != "fc_0"
    assert [r.node for r in fc.inputs["input"]] == [
        inner["step_input"].id, memory.id, inner["step_input_static"].id]
    assert body.outputs[0].node == fc.id
    for old in ("step_input_0", "step_input_1", "memory_0", "fc_0"):
        assert renamed[old] in body.nodes and renamed[old] != old
    assert d.build().errors == {}  # the copy builds, every node without an error


def test_a_zone_pasted_with_its_in_link_reads_the_pasted_copy():
    d = composites()
    renamed = clipboard.paste(d, clipboard.copy(d, ["embedding_0", G]))
    inner, _ = _body_by_layer(d, renamed[G])
    assert inner["step_input"].inputs["outer"].node == renamed["embedding_0"]
    assert d.node(renamed["embedding_0"]).inputs == {}  # ids was not copied


def test_mixed_rows_and_list_inputs_keep_only_copied_sources():
    d = composites()
    renamed = clipboard.paste(d, clipboard.copy(d, ["embedding_0", "mixed_layer_0"]))
    rows = d.node(renamed["mixed_layer_0"]).rows
    assert [r.kind for r in rows] == ["full_matrix_projection"] * 2
    assert rows[0].inputs == {} and rows[1].inputs["input"].node == renamed["embedding_0"]
    renamed = clipboard.paste(d, clipboard.copy(d, ["sequence_pool_0", "concat_0"]))
    refs = d.node(renamed["concat_0"]).inputs["input"]
    assert [r.node for r in refs] == [renamed["sequence_pool_0"]]  # last_step not copied
    renamed = clipboard.paste(d, clipboard.copy(d, ["concat_0"]))
    assert d.node(renamed["concat_0"]).inputs == {}


def test_a_node_pasted_inside_a_zone_lands_there():
    d = composites()
    renamed = clipboard.paste(d, clipboard.copy(d, ["fc_0"]), group=G)
    body = d.node(G).body
    assert renamed["fc_0"] in body.nodes and renamed["fc_0"] not in d.nodes
    assert body.nodes[renamed["fc_0"]].attrs == {"size": 16, "act": "tanh"}
    # a zone pasted into the top level does not find the zone's own inner nodes outside it
    assert d.document.locate(renamed["fc_0"])[2].id == G


def test_layout_shifts_to_x_y_or_by_40_and_zone_contents_keep_their_positions():
    d = composites()
    d.move("embedding_0", 100, 50)
    d.move(G, 300, 40)
    d.move("fc_0", 7, 9)  # inside the zone: relative to it
    clip = clipboard.copy(d, ["embedding_0", G])
    assert clip.layout == {"embedding_0": [100, 50], G: [300, 40], "fc_0": [7, 9]}
    renamed = clipboard.paste(d, clip, x=1000, y=500)
    assert d.layout[renamed["embedding_0"]] == [1000, 510]
    assert d.layout[renamed[G]] == [1200, 500]
    assert d.layout[renamed["fc_0"]] == [7, 9]
    again = clipboard.paste(d, clip)  # default: 40 px right of and below the originals
    assert d.layout[again["embedding_0"]] == [140, 90] and d.layout[again[G]] == [340, 80]
    unplaced = clipboard.paste(d, clipboard.copy(d, ["ctx"]), x=5, y=6)  # no layout entry
    assert d.layout[unplaced["ctx"]] == [5, 6]
    clipboard.paste(d, clipboard.copy(d, ["ids"]))
    assert "ids" not in d.layout  # nothing placed, no x given: left unplaced


def test_a_paste_is_one_undo_step_and_a_clip_is_a_snapshot():
    d = composites()
    clip = clipboard.copy(d, ["fc_1"])
    d.set("fc_1", size=7)  # later edits do not change the clip
    before = set(d.document.ids())
    renamed = clipboard.paste(d, clip)
    assert d.node(renamed["fc_1"]).attrs["size"] == 32
    assert clip.ids == ["fc_1"]
    d.undo()
    assert set(d.document.ids()) == before
