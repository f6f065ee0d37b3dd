"""Design files: round trips, atomic save, and every bad-file case named and refused."""
import json
import os

import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError

from design_models import char_lstm, classifier, composites


@pytest.mark.parametrize("make", [classifier, composites, char_lstm])
def test_save_load_round_trip_is_exact(tmp_path, make):
    d = make()
    d.move(next(iter(d.nodes)), 3, 4)
    path = tmp_path / "model.fsdesign.json"
    d.save(path)
    loaded = fd.Design.load(path)
    assert loaded == d
    a, b = d.build(scope=fd.Scope()), loaded.build(scope=fd.Scope())
    assert a.main.desc.SerializeToString() == b.main.desc.SerializeToString()
    assert a.startup.desc.SerializeToString() == b.startup.desc.SerializeToString()


def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "model.fsdesign.json"
    classifier().save(path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken_replace)
    d = composites()
    with pytest.raises(OSError, match="disk full"):
        d.save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.fsdesign.json"]


def _file(tmp_path, mutate):
    data = composites().to_json()
    mutate(data)
    path = tmp_path / "bad.fsdesign.json"
    path.write_text(json.dumps(data))
    return path


def _node(data, node_id):
    def find(nodes):
        for n in nodes:
            if n["id"] == node_id:
                return n
            if "body" in n:
                found = find(n["body"]["nodes"])
                if found:
                    return found
    return find(data["nodes"])


BAD = {
    "unknown layer": (lambda d: _node(d, "fc_1").update(layer="fcc"),
                      r"node 'fc_1'.*unknown layer 'fcc'"),
    "unknown attribute": (lambda d: _node(d, "fc_1")["attrs"].update(colour=3),
                          r"node 'fc_1' \(fc\): layer fc has no attribute 'colour'"),
    "wrong type": (lambda d: _node(d, "fc_1")["attrs"].update(size="32"),
                   r"node 'fc_1' \(fc\): attribute 'size' must be int"),
    "dangling reference": (lambda d: _node(d, "fc_1")["inputs"].update(input=["gone", 0]),
                           r"node 'fc_1' \(fc\): input 'input' refers to 'gone'"),
    "dangling row input": (lambda d: _node(d, "mixed_layer_0")["rows"][0]["inputs"].update(
        input=["gone", 0]), r"node 'mixed_layer_0'.*rows\[0\].input' refers to 'gone'"),
    "dangling memory link": (lambda d: _node(d, "memory_0")["inputs"].update(link=["ctx", 0]),
                             r"node 'memory_0' \(memory\): input 'link' refers to 'ctx'"),
    "cycle": (lambda d: _node(d, "embedding_0")["inputs"].update(input=["fc_1", 0]),
              r"cycle that is not through a recurrent memory"),
    "future version": (lambda d: d.update(version=99), r"version 99 is newer"),
    "wrong format": (lambda d: d.update(format="something"), r"format is 'something'"),
    "bad reference": (lambda d: _node(d, "fc_1")["inputs"].update(input="fc_0"),
                      r"node 'fc_1' input 'input': 'fc_0' is not a reference"),
    "duplicate id": (lambda d: d["nodes"].append(dict(_node(d, "fc_1"))), r"'fc_1'.*twice"),
    "bad optimizer": (lambda d: d["optimizer"].update(type="os.system"), "unknown optimizer"),
    "bad loss": (lambda d: d.update(loss=["nowhere", 0]), "loss: node 'nowhere'"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_a_bad_file_is_refused_with_node_and_field_and_left_untouched(tmp_path, case):
    mutate, message = BAD[case]
    path = _file(tmp_path, mutate)
    before = path.read_bytes()
    with pytest.raises(FluidscopeError, match=message):
        fd.Design.load(path)
    assert path.read_bytes() == before


def test_not_json_is_a_load_error(tmp_path):
    path = tmp_path / "x.fsdesign.json"
    path.write_text("import os; os.system('echo hi')")
    with pytest.raises(FluidscopeError, match="not a readable design file"):
        fd.Design.load(path)
