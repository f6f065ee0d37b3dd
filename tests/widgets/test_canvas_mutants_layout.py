"""The default layout's promises (widgets/canvas/layout.py) that mutation testing found
unasserted (issue #17): boxes never overlap and keep their gaps, a tall node pushes the
next one in its column down, a memory sits beside what reads it, a zone holds a moved
inner node, and a moved inner node stays exactly where it was put."""
import fluidscope.designer as fd
from fluidscope.widgets.canvas import layout

from test_canvas_view import by_id, sequence_classifier, view_of


def boxes(design, view):
    """{id: (x, y, w, h)} of the top-level nodes, sized as the layout estimates them."""
    return {k: (*n["position"], *layout.node_size(design.node(k), len(n["inputs"]),
                                                  len(n["outputs"])))
            for k, n in by_id(view).items() if n["parent"] is None}


def vertical_gaps(placed):
    """Gaps between each box and every box below it that shares some of its width."""
    return [by - (ay + ah) for a, (ax, ay, aw, ah) in placed.items()
            for b, (bx, by, bw, bh) in placed.items()
            if a != b and ax < bx + bw and bx < ax + aw and by >= ay]


def test_a_wrapped_design_keeps_a_band_gap_below_its_tallest_column():
    """Two data layers stacked in the first column make it the tallest of the first band;
    the second band starts BAND_GAP below its bottom, and no box comes closer than
    ROW_GAP to the one above it."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 8])
    y = d.add("data", name="y", shape=[None, 8])
    prev = d.add("fc", inputs={"input": [x, y]}, size=8, name="f0")
    for k in range(1, 60):          # sizes alternate: no run of identical layers to fold
        prev = d.add("fc", inputs={"input": prev}, size=8 + k % 2, name=f"f{k}")
    placed = boxes(d, view_of(d))
    first_column = sorted((y0, h) for x0, y0, _, h in placed.values() if x0 == 0.0)
    (top_x, x_h), (top_y, y_h), (band_2, _) = first_column[:3]
    assert (top_x, top_y) == (0.0, x_h + layout.ROW_GAP)
    assert band_2 == top_y + y_h + layout.BAND_GAP
    assert min(vertical_gaps(placed)) >= layout.ROW_GAP


def test_a_node_with_more_outputs_than_inputs_is_taller():
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 8])
    d.add("split", inputs={"input": x}, num_or_sections=4, dim=1, name="parts")
    d.add("fc", inputs={"input": x}, size=2, name="side")
    nodes = by_id(view_of(d))
    height = layout.HEADER + 4 * layout.PORT_ROW     # four output handles
    assert height > layout.COMPACT[1]
    assert nodes["parts"]["position"] == [nodes["side"]["position"][0], 0.0]
    assert nodes["side"]["position"][1] == height + layout.ROW_GAP


def test_a_memory_sits_beside_its_reader_not_after_what_it_remembers():
    """A memory remembers ``a`` (a node before it in the step) and is read by ``b``: the
    link is through time, so the memory takes the first column, beside ``b``'s inputs."""
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    emb = d.add("embedding", inputs={"input": ids}, size=[30, 8])
    g = d.add("recurrent_group", name="rnn")
    word = d.add_step_input(g, emb, name="word")
    a = d.add("fc", inputs={"input": word}, size=8, name="a", group=g)
    m = d.add_memory(g, size=8, name="m")
    d.link_memory(m, a)
    b = d.add("fc", inputs={"input": [word, m]}, size=8, name="b", group=g)
    d.set_outputs(g, [b])
    nodes = by_id(view_of(d))
    x = {k: nodes[k]["position"][0] for k in ("word", "a", "m", "b")}
    assert x["m"] == x["word"] < x["a"] == x["b"]


def test_a_zone_holds_an_inner_node_moved_far_and_the_node_stays_where_it_was_put():
    d = sequence_classifier()
    d.move("h", 500, 300)
    nodes = by_id(view_of(d))
    assert nodes["h"]["position"] == [500.0, 300.0]           # no header offset added
    w, h = layout.node_size(d.node("h"), len(nodes["h"]["inputs"]),
                            len(nodes["h"]["outputs"]))
    assert nodes["rnn"]["size"] == [500.0 + w + layout.ZONE_PADDING,
                                    300.0 + h + layout.ZONE_PADDING]
    assert nodes["word"]["position"] == [layout.ZONE_PADDING,
                                         layout.ZONE_HEADER + layout.ZONE_PADDING]


def test_a_zones_default_layout_is_shifted_past_its_header_column_by_column():
    nodes = by_id(view_of(sequence_classifier()))
    inside = (layout.ZONE_PADDING, layout.ZONE_HEADER + layout.ZONE_PADDING)
    assert nodes["word"]["position"] == [inside[0], inside[1]]
    assert nodes["h"]["position"] == [inside[0] + layout.NODE_WIDTH + layout.COLUMN_GAP,
                                      inside[1]]          # the next column, level with word
    assert nodes["state"]["position"][0] == inside[0]
    assert nodes["state"]["position"][1] > inside[1]
