"""The canvas's context-menu, tuple-field and help actions (menu_actions.py, attr_text.py)."""
import pytest

from fluidscope.engine import DesignError
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas.attr_text import parse_attr_text
from fluidscope.widgets.canvas.menu_actions import KEYBOARD_HELP

from test_canvas_view import by_id, sequence_classifier


def send(canvas, action, **args):
    assert canvas.receive({"action": action, **args}), canvas.message


def image_canvas():
    c = DesignCanvas()
    send(c, "add_node", layer="data", x=0, y=0, attrs={"shape": [None, 1, 28, 28]})
    send(c, "add_node", layer="conv2d", x=200, y=0, source="data_0")
    return c


@pytest.mark.parametrize("text, value", [
    ("5", 5), ("3, 3", [3, 3]), ("3 5", [3, 5]), ("[3, 3]", [3, 3]), ("(2,2)", [2, 2]),
    ("3x3", [3, 3]), ("", None), ("None", None)])
def test_int_or_ints_text(text, value):
    assert parse_attr_text("conv2d", "filter_size", text) == value


def test_padding_shape_and_list_texts():
    assert parse_attr_text("conv2d", "padding", "same") == "SAME"
    assert parse_attr_text("conv2d", "padding", "1, 1, 2, 2") == [1, 1, 2, 2]
    assert parse_attr_text("conv2d", "padding", "[[0, 0], [0, 0], [1, 1], [2, 2]]") == \
        [[0, 0], [0, 0], [1, 1], [2, 2]]
    assert parse_attr_text("data", "shape", "None, 1, 28, 28") == [None, 1, 28, 28]
    assert parse_attr_text("data", "shape", "-1, 8") == [-1, 8]


@pytest.mark.parametrize("text", ["3,,a", "3.5", "five", "3, x"])
def test_bad_tuple_text_names_the_attribute_and_the_accepted_forms(text):
    with pytest.raises(DesignError, match=r"conv_0: filter_size .* does not read as an int "
                                          r"or ints separated by commas"):
        parse_attr_text("conv2d", "filter_size", text, where="conv_0")


def test_text_of_an_unknown_or_untyped_attribute_is_refused():
    with pytest.raises(DesignError, match="has no attribute 'filter'"):
        parse_attr_text("conv2d", "filter", "3")
    with pytest.raises(DesignError, match="not typed as text"):
        parse_attr_text("conv2d", "act", "relu")


def test_conv2d_drops_with_a_3x3_kernel_and_takes_typed_tuples():
    c = image_canvas()
    assert c.design.node("conv2d_0").attrs["filter_size"] == 3
    assert by_id(c.view)["conv2d_0"]["outputs"][0]["shape"] == "[-1, 16, 26, 26]"
    send(c, "set_attr_text", node="conv2d_0", name="filter_size", text="5")
    assert by_id(c.view)["conv2d_0"]["outputs"][0]["shape"] == "[-1, 16, 24, 24]"
    send(c, "set_attr_text", node="conv2d_0", name="filter_size", text="3, 5")
    send(c, "set_attr_text", node="conv2d_0", name="stride", text="2")
    assert c.design.node("conv2d_0").attrs["filter_size"] == [3, 5]
    assert by_id(c.view)["conv2d_0"]["outputs"][0]["shape"] == "[-1, 16, 13, 12]"
    entry = next(a for a in c.inspector["attrs"] if a["name"] == "filter_size")
    assert entry["type"] == "int_or_ints" and entry["value"] == [3, 5]
    before = c.design.document.clone()
    assert not c.receive({"action": "set_attr_text", "node": "conv2d_0", "name": "filter_size",
                          "text": "3, x"})
    assert "node 'conv2d_0': filter_size '3, x' does not read" in c.message
    assert c.design.document == before
    send(c, "set_attr_text", node="conv2d_0", name="stride", text="")   # back to the default
    assert "stride" not in c.design.node("conv2d_0").attrs
    assert by_id(c.view)["conv2d_0"]["outputs"][0]["shape"] == "[-1, 16, 26, 24]"
    assert c.message == ""                      # a success clears the refusal


def test_rename_from_the_menu_keeps_wires_and_selection():
    c = image_canvas()
    send(c, "rename", node="conv2d_0", name="conv1")
    assert "conv1" in c.design.document.ids() and c.selected == ["conv1"]
    assert c.design.node("conv1").inputs["input"].node == "data_0"
    assert not c.receive({"action": "rename", "node": "conv1", "name": "data_0"})
    assert "already exists" in c.message


def test_clear_memory_link_and_step_source():
    c = DesignCanvas(sequence_classifier())
    send(c, "clear_memory_link", memory="state")
    assert "link" not in c.design.node("state").inputs
    assert "link it to the inner node it remembers" in c.build.errors["state"]
    send(c, "link_memory", memory="state", target="h")
    assert not c.build.errors and not c.build.waiting
    send(c, "clear_step_source", step_input="word")
    assert "outer" not in c.design.node("word").inputs
    assert by_id(c.view)["word"]["detail"] == "no source"
    assert "step input 'word' has no source" in c.build.errors["rnn"]
    c.undo()
    assert c.design.node("word").inputs["outer"].node == "embedding_0"
    assert not c.receive({"action": "clear_memory_link", "memory": "h"})
    assert "node 'h' is a fc, not a memory" in c.message


def test_help_lists_the_keys():
    c = DesignCanvas()
    send(c, "show_help")
    assert c.help[0] == ["?", "show or hide this help"] and len(c.help) == len(KEYBOARD_HELP)
    assert any("Ctrl+G" in keys for keys, _ in c.help)
    send(c, "show_help", visible=False)
    assert c.help == []


def test_every_menu_action_is_a_front_end_action():
    assert {"set_attr_text", "rename", "clear_memory_link", "clear_step_source", "show_help",
            "run_to_here", "inspect_port"} <= set(DesignCanvas().actions)
