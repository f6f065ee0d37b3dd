"""Canvas behaviour a second mutation sample (seed 1) found unasserted (issue #17): a
backward op clicked in the debugger's graph, a closed link that publishes nothing more, no
publisher thread for long intervals, a row keeping its place, an empty zone's size,
errors that list every problem, starting attributes after a given one, patches that keep
the order out and never cross a change of zone, memories of 1-D outputs, the design file
written at once once the debounce time has passed."""
import asyncio
import threading

import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import layout
from fluidscope.widgets.canvas.op_owners import op_owners
from fluidscope.widgets.canvas.persistence import DEBOUNCE_S
from fluidscope.widgets.canvas.view_patch import view_patch

from test_canvas_debug_link import debugging
from own_loop import run_in_own_loop
from test_canvas_view import by_id, sequence_classifier


def test_a_backward_op_clicked_in_the_debuggers_graph_selects_its_layer():
    c, view = debugging()
    ops = view.session.program.desc.blocks[0].ops
    mul_grad = next(k for k, op in enumerate(ops) if op.type == "mul_grad")
    view.graph.selected = f"op:0:{mul_grad}"       # its outputs are gradients: no owner
    assert c.selected == ["logits"]


def test_a_closed_link_publishes_nothing_more():
    c, view = debugging(min_interval_s=100)         # no worker: flush() by hand
    link = c.debug_link
    view.session.step()                              # within the interval: not published
    c.unlink_debugger()
    published = link.published
    link.flush()
    assert link.published == published and c.link_state == {"active": False}


def test_an_interval_of_a_minute_starts_no_publisher_thread():
    c, view = debugging(min_interval_s=60)
    before = {t for t in threading.enumerate() if t.name == "fluidscope-debug-link"}
    view.session.step()
    view.session.step()
    after = {t for t in threading.enumerate() if t.name == "fluidscope-debug-link"}
    assert after == before and c.debug_link.stops >= 2


def test_removing_a_rows_input_keeps_the_row_in_its_place():
    d = sequence_classifier()
    mix = d.add("mixed_layer", size=2, name="mix")
    d.add_row(mix, "dot_mul_operator", inputs={"a": "pool", "b": "logits"})
    d.add_row(mix, "full_matrix_projection", inputs={"input": "pool"})
    c = DesignCanvas(d)
    c.disconnect("e:logits:0>mix:row:0:b:0")
    rows = c.design.node("mix").rows
    assert [r.kind for r in rows] == ["dot_mul_operator", "full_matrix_projection"]
    assert rows[0].inputs == {"a": fd.design.Ref("pool")}


def test_an_empty_zone_is_drawn_at_its_empty_size():
    c = DesignCanvas()
    zone = c.add_node("recurrent_group", 0, 0)
    assert by_id(c.view)[zone]["size"] == [layout.NODE_WIDTH + 2 * layout.ZONE_PADDING,
                                           layout.ZONE_HEADER + 2 * layout.ZONE_PADDING + 60]


def test_a_design_that_does_not_build_lists_every_failing_node():
    c = DesignCanvas(sequence_classifier())
    c.add_node("fc", 0, 0)                           # two unconnected layers
    c.add_node("relu", 0, 200)
    assert not c.receive({"action": "export", "folder": "unused"})
    assert c.message.startswith("export: the design does not build: fc_0: ")
    assert "; relu_0: " in c.message


def test_required_attributes_after_a_given_one_are_still_filled():
    c = DesignCanvas()
    conv = c.add_node("conv2d", 0, 0, attrs={"num_filters": 8})
    assert c.design.node(conv).attrs == {"num_filters": 8, "filter_size": 3}


def test_a_patch_leaves_the_order_out_when_it_did_not_change():
    c = DesignCanvas(sequence_classifier())
    old = c.view
    c.set_attr("logits", "size", 3)
    patch = view_patch(old, c.view)
    assert patch["nodes"]["order"] is None and patch["edges"]["order"] is None


def test_a_view_of_another_zone_is_never_a_patch():
    old = {"revision": 1, "path": [], "nodes": [{"id": "a"}, {"id": "b"}], "edges": []}
    new = {"revision": 2, "path": [{"id": "z", "title": "z"}], "nodes": [{"id": "a"},
                                                                      {"id": "b"}],
           "edges": []}
    assert view_patch(old, new) is None


def test_the_op_tables_refusal_says_what_it_suspects():
    built = sequence_classifier().build()
    with pytest.raises(FluidscopeError) as refused:
        op_owners(built.main, ["nothing_here"])
    assert str(refused.value) == ("the program has no op made by a node of this design "
                                  "(a session over another program?)")


def test_a_memory_booted_from_a_one_dimensional_output_takes_its_length():
    d = sequence_classifier()
    d.add("fill_constant", shape=[16], dtype="float32", value=0.0, name="zeros")
    c = DesignCanvas(d)
    assert c.build.shapes["zeros"] == [[16]]
    memory = c.add_memory("rnn", boot="zeros")
    assert c.design.node(memory).attrs["size"] == 16


def test_a_layout_change_after_the_debounce_time_is_written_at_once(tmp_path):
    path = tmp_path / "m.fsdesign.json"

    async def session():
        c = DesignCanvas(sequence_classifier(), path=path)
        await asyncio.sleep(DEBOUNCE_S * 1.5)        # the last write is old enough
        c.move({"logits": [77, 7]})
        written = fd.Design.load(path).layout.get("logits")
        c.close()
        return written
    assert run_in_own_loop(session) == [77.0, 7.0]


def test_a_layer_with_a_step_of_its_own_outputs_what_its_top_level_op_writes():
    """gru_group builds a recurrent op (block 0) and its step's ops (block 1), all in its
    namescope: the layer's output is the recurrent op's, not a step variable."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 12], lod_level=1)
    d.add("gru_group", inputs={"input": x}, size=4, name="g")
    built = d.build(optimize=False)
    table = op_owners(built.main, d.document.ids())
    assert {block for block, _ in table.ops_of("g")} == {0, 1}
    assert table.output_of("g") == built.outputs["g"][0].name


def test_a_publish_clears_a_refusal_but_not_a_message_set_since():
    c = DesignCanvas(sequence_classifier())
    assert not c.receive({"action": "set_attr", "node": "logits", "name": "size",
                          "value": "wide"})
    c.message = "a note of the notebook's own"
    c.set_attr("logits", "size", 3)                  # from Python: a publish, no receive
    assert c.message == "a note of the notebook's own"
    assert not c.receive({"action": "set_attr", "node": "logits", "name": "size",
                          "value": "wide"})
    c.set_attr("logits", "size", 4)
    assert c.message == ""                           # the refusal is old news


def test_a_value_the_front_end_set_is_not_echoed_back():
    c = DesignCanvas(sequence_classifier())
    sent = []
    original = c.send_state
    c.send_state = lambda key=None: sent.append(
        set(key) if isinstance(key, (set, list, tuple)) else {key}) or original(key)
    c.set_state({"height": 480})                    # what a front end's update does
    assert c.height == 480
    assert not any("height" in keys for keys in sent)
