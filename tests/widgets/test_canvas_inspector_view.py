"""The property panel's view of a node, exactly (widgets/canvas/describe.py
``inspector_view``): the doc of a step input and of a memory, the attribute entries
(value, default, choices, required), a mixed layer's rows (issue #17: mutants of the
panel's keys and words survived the canvas tests)."""
from fluidscope.designer import layer_specs
from fluidscope.widgets.canvas.describe import inspector_view

from test_canvas_view import sequence_classifier


def test_a_step_input_and_a_memory_are_explained_in_words():
    d = sequence_classifier()
    word = inspector_view(d, "word")
    assert (word["id"], word["layer"], word["rows"]) == ("word", "step_input", None)
    assert word["doc"] == "an in-link of the zone: one time step of the outer sequence"
    state = inspector_view(d, "state")
    assert state["doc"] == "the previous step's value of the node it remembers"
    assert inspector_view(d, "no_such_node") == {} and inspector_view(d, None) == {}


def test_attribute_entries_carry_value_default_choices_and_required():
    d = sequence_classifier()
    view = inspector_view(d, "logits")
    assert view["doc"] == layer_specs.get("fc").doc and view["rows"] is None
    entries = {e["name"]: e for e in view["attrs"]}
    assert entries["size"] == {"name": "size", "type": "int", "value": 2, "default": None,
                               "choices": [], "required": True}
    flatten = entries["num_flatten_dims"]
    assert (flatten["value"], flatten["default"], flatten["required"]) == (1, 1, False)
    act = entries["act"]
    assert act["value"] is None and act["default"] is None and None in act["choices"]


def test_a_mixed_layers_rows_are_in_the_panel():
    d = sequence_classifier()
    m = d.add("mixed_layer", size=8, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": "pool"})
    (row,) = inspector_view(d, "mix")["rows"]
    assert (row["index"], row["kind"], row["inputs"]) == (0, "full_matrix_projection",
                                                           {"input": ["pool", 0]})
    assert row["doc"] == layer_specs.get("full_matrix_projection").doc
    assert [e["name"] for e in row["attrs"]] == list(
        layer_specs.get("full_matrix_projection").attr_names)
