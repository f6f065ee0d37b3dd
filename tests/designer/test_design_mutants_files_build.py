"""Design files and builds (designer/design/files.py, build.py): a malformed mixed-layer row
in a design file is a LoadError naming the node and the row; asking a build for the
variable of a node that failed, or that waits on one, says why it was not built."""
import copy

import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError
from fluidscope.engine.errors import LoadError
from design_models import classifier, composites


def _with_row(row):
    data = copy.deepcopy(composites().to_json())
    node = next(n for n in data["nodes"] if n["layer"] == "mixed_layer")
    node["rows"][1] = row
    return data


@pytest.mark.parametrize("row", [["full_matrix_projection"], {"inputs": {}}, {"kind": 3}],
                         ids=["a list", "no kind", "a kind that is no string"])
def test_a_row_that_is_no_object_with_a_kind_names_node_and_row(row):
    with pytest.raises(LoadError, match=r"node 'mixed_layer_0' row 1 is not an object with a "
                                        "kind"):
        fd.Design.from_json(_with_row(row))


def test_row_inputs_and_attrs_must_be_objects():
    with pytest.raises(LoadError, match=r"node 'mixed_layer_0' row 1: inputs and attrs must be "
                                        "objects"):
        fd.Design.from_json(_with_row({"kind": "full_matrix_projection", "inputs": []}))
    loaded = fd.Design.from_json(_with_row({"kind": "full_matrix_projection"}))
    assert loaded.node("mixed_layer_0").rows[1].inputs == {}  # inputs and attrs default empty


def test_the_variable_of_a_node_not_built_says_why():
    d = classifier()
    d.set("fc_0", size=-3)  # an error on this node
    built = d.build(optimize=False)
    assert "fc_0" in built.errors and "fc_1" in built.waiting
    with pytest.raises(DesignError, match="node 'fc_0' was not built: ") as failed:
        built.var("fc_0")
    assert built.errors["fc_0"] in str(failed.value)
    with pytest.raises(DesignError, match="node 'fc_1' was not built: it waits on 'fc_0'"):
        built.var("fc_1")
    with pytest.raises(DesignError, match="node 'x' has no output 3"):
        built.var("x", 3)
    assert built.var("x").name == "x"
