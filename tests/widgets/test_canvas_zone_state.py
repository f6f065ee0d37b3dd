"""Zones collapsed or entered on a canvas are saved in the design file and come back."""
import json

import pytest

import fluidscope.designer as fd
from fluidscope.engine import LoadError
from fluidscope.widgets import DesignCanvas

from test_canvas_view import sequence_classifier


def nested():
    """A design with a zone inside a zone: outer > inner."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4], lod_level=2)
    outer = d.add("recurrent_group", name="outer")
    step = d.add_step_input(outer, x, name="sentence")
    inner = d.add("recurrent_group", name="inner", group=outer)
    word = d.add_step_input(inner, step, name="word")
    h = d.add("fc", inputs={"input": word}, size=4, group=inner, name="h")
    d.set_outputs(inner, [h])
    pooled = d.add("sequence_pool", inputs={"input": inner}, pool_type="max", group=outer,
                   name="last")
    d.set_outputs(outer, [pooled])
    return d


def test_collapsed_and_entered_zones_are_saved_and_restored(tmp_path):
    path = tmp_path / "zones.fsdesign.json"
    c = DesignCanvas(sequence_classifier(), path=path)
    c.toggle_zone("rnn")
    c.close()
    data = json.loads(path.read_text())
    assert data["view"] == {"collapsed": ["rnn"]}
    again = DesignCanvas(path=path)
    assert again.view["nodes"][[n["id"] for n in again.view["nodes"]].index("rnn")]["collapsed"]
    again.toggle_zone("rnn")
    again.close()
    assert "view" not in json.loads(path.read_text())      # nothing left to keep


def test_the_entered_zone_chain_comes_back(tmp_path):
    path = tmp_path / "nested.fsdesign.json"
    c = DesignCanvas(nested(), path=path)
    c.enter("inner")
    assert [p["id"] for p in c.view["path"]] == ["outer", "inner"]
    c.close()
    assert json.loads(path.read_text())["view"] == {"entered": ["outer", "inner"]}
    again = DesignCanvas(path=path)
    assert [p["id"] for p in again.view["path"]] == ["outer", "inner"]
    assert {n["id"] for n in again.view["nodes"]} >= {"h", "word"}
    again.leave(0)
    again.close()
    assert "view" not in json.loads(path.read_text())


def test_a_removed_zone_leaves_the_saved_view(tmp_path):
    d = sequence_classifier()
    d.document.view = {"collapsed": ["rnn", "gone"], "entered": ["nowhere"]}
    d.save(tmp_path / "a.fsdesign.json")
    data = json.loads((tmp_path / "a.fsdesign.json").read_text())
    assert data["view"] == {"collapsed": ["rnn"]}
    d.remove("rnn")
    d.save(tmp_path / "b.fsdesign.json")
    assert "view" not in json.loads((tmp_path / "b.fsdesign.json").read_text())
    loaded = fd.Design.load(tmp_path / "a.fsdesign.json")
    assert loaded.document.view == {"collapsed": ["rnn"]}
    assert loaded == sequence_classifier()        # the view is not part of the model


def test_a_bad_view_entry_is_a_load_error(tmp_path):
    path = tmp_path / "bad.fsdesign.json"
    sequence_classifier().save(path)
    data = json.loads(path.read_text())
    data["view"] = {"collapsed": "rnn"}
    path.write_text(json.dumps(data))
    with pytest.raises(LoadError, match="view is not an object of lists of zone ids"):
        fd.Design.load(path)
