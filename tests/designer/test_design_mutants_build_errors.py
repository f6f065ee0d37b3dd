"""A design's errors name the node and what to do (designer/design/build.py, validate.py,
composite_edits.py): a recurrent group without out-links, a step input whose source was
cleared, a memory booted from an output its source does not have, a row index past the
last row, a row input slot its kind does not have. Each error lands on the node (the build
carries on) or refuses the edit."""
import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError
from design_models import composites

G = "recurrent_group_0"


def test_a_group_without_out_links_says_what_it_needs():
    d = composites()
    d.set_outputs(G, [])
    errors = d.build(optimize=False).errors
    assert errors[G] == (f"recurrent_group '{G}': needs at least one step input "
                         "(add_step_input) and one out-link (set_outputs)")


def test_a_step_input_without_source_says_to_connect_it():
    d = composites()
    d.disconnect("step_input_0", "outer")
    errors = d.build(optimize=False).errors
    assert errors[G] == (f"recurrent_group '{G}': step input 'step_input_0' has no source; "
                         "connect the outer sequence it steps through")


@pytest.mark.parametrize("index", [1, 3])
def test_a_memory_booted_from_a_missing_output_names_the_boot_slot(index):
    d = composites()
    d.boot_memory("memory_0", fd.design.Ref("ctx", index))
    errors = d.build(optimize=False).errors
    assert errors["memory_0"] == (f"memory layer 'memory_0': input 'boot_layer' takes output "
                                  f"{index} of 'ctx', which has 1 output(s)")
    assert errors[G] == f"recurrent_group '{G}': its step has an error (see its nodes)"


def test_row_indices_past_the_last_row_and_unknown_row_slots_are_refused():
    d = composites()
    for index in (2, -3):
        with pytest.raises(DesignError, match=rf"node 'mixed_layer_0' \(mixed_layer\) has no "
                                              rf"row {index}"):
            d.set_row("mixed_layer_0", index, size=3)
    d.set_row("mixed_layer_0", -2, inputs={"input": "ctx"})  # the first row, from the end
    assert d.node("mixed_layer_0").rows[0].inputs["input"].node == "ctx"
    with pytest.raises(DesignError, match=r"node 'mixed_layer_0' \(mixed_layer\) row: "
                                          r"full_matrix_projection has no input slot 'nope'; "
                                          r"its slots are \['input'\]"):
        d.add_row("mixed_layer_0", "full_matrix_projection", inputs={"nope": "ctx"})
