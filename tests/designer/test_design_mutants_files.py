"""Design files read back (designer/design/files.py, document.py): what a file may leave
out (outputs), the zone view kept with the layout and through a document clone, and the
LoadErrors naming what is wrong (no JSON object, a node that is no object, a layout entry
that is not [x, y])."""
import copy

import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import LoadError
from design_models import composites


def _data():
    return copy.deepcopy(composites().to_json())


def test_graphs_without_an_outputs_entry_read_back_with_none():
    data = _data()
    del data["outputs"]
    group = next(n for n in data["nodes"] if n["layer"] == "recurrent_group")
    del group["body"]["outputs"]
    d = fd.Design.from_json(data)
    assert d.document.graph.outputs == [] and d.node("recurrent_group_0").body.outputs == []


def test_the_zone_view_is_read_back_and_kept_by_a_clone():
    data = _data()
    data["view"] = {"collapsed": ["recurrent_group_0"], "entered": []}
    d = fd.Design.from_json(data)
    assert d.document.view == {"collapsed": ["recurrent_group_0"], "entered": []}
    twin = d.document.clone()
    assert twin.view == d.document.view and twin.view is not d.document.view
    assert d.to_json()["view"] == {"collapsed": ["recurrent_group_0"]}  # empty lists dropped


def test_a_file_that_is_no_json_object_says_so():
    with pytest.raises(LoadError, match="design: the file holds no JSON object"):
        fd.Design.from_json([1, 2])


def test_a_node_that_is_no_object_is_named_by_its_position():
    data = _data()
    data["nodes"][3] = "fc"
    with pytest.raises(LoadError, match=r"design node #3 is not an object"):
        fd.Design.from_json(data)


@pytest.mark.parametrize("pos", [[1, 2, 3], [1], "12", [1, True]])
def test_a_layout_entry_that_is_not_x_y_is_named(pos):
    data = _data()
    data["layout"] = {"ctx": pos}
    with pytest.raises(LoadError, match=r"layout of 'ctx' is not \[x, y\]"):
        fd.Design.from_json(data)


def test_an_out_link_to_a_node_outside_the_step_is_named():
    data = _data()
    group = next(n for n in data["nodes"] if n["layer"] == "recurrent_group")
    group["body"]["outputs"] = [["ctx", 0]]
    with pytest.raises(LoadError, match=r"out-link 0 refers to 'ctx', which is not a node of its "
                                        r"step"):
        fd.Design.from_json(data)


def test_a_layer_input_naming_the_empty_variable_is_refused():
    data = _data()
    fc = next(n for n in data["nodes"] if n["id"] == "fc_1")
    fc["inputs"]["input"] = ["@EMPTY@", 0]
    with pytest.raises(LoadError, match=r"node 'fc_1' \(fc\): input 'input' refers to '@EMPTY@', "
                                        "which is not a node of its graph"):
        fd.Design.from_json(data)
