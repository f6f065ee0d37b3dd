"""Fields of the canvas's view (widgets/canvas/view.py, PROTOCOL.md) that mutation testing
found unasserted (issue #17): a fold's detail and outputs, the output handle an edge
leaves from, a mixed row's connection count, zone-only flags on other nodes, the summary
of a build whose optimizer failed, and the palette's doc and many-output entries."""
from types import SimpleNamespace

import fluidscope.designer as fd
from fluidscope.widgets.canvas import canvas_view, palette_view

from test_canvas_view import by_id, sequence_classifier, view_of


def chain(layer, count, first_shape, **attrs):
    d = fd.Design()
    slot = fd.layer_specs.get(layer).inputs[0].name
    prev = d.add("data", name="src", shape=first_shape)
    for k in range(count):
        prev = d.add(layer, inputs={slot: prev}, name=f"{layer}{k}", **attrs)
    return d


def test_a_fold_of_layers_without_attributes_names_its_ends_only():
    nodes = by_id(view_of(chain("relu", 8, [None, 4])))
    fold = nodes["fold:relu0"]
    assert (fold["title"], fold["detail"]) == ("relu \u00d7 8", "relu0 \u2026 relu7")
    d = chain("relu", 8, [None, 4])
    for k in range(8):
        d.rename(f"relu{k}", f"relu{k}_X")       # only " \u00b7" comes off, not an id's end
    assert by_id(view_of(d))["fold:relu0_X"]["detail"] == "relu0_X \u2026 relu7_X"


def test_a_fold_shows_its_last_members_outputs():
    """Eight 2x2 pools of a 256 x 256 image: the fold's output is the last pool's 1 x 1."""
    nodes = by_id(view_of(chain("pool2d", 8, [None, 1, 256, 256], pool_size=2,
                                pool_stride=2)))
    fold = nodes["fold:pool2d0"]
    assert fold["detail"] == "pool2d0 \u2026 pool2d7 \u00b7 pool_size 2 \u00b7 pool_stride 2"
    assert fold["outputs"] == [{"handle": "out:0", "index": 0, "kind": "dense",
                                "shape": "[-1, 1, 1, 1]", "dtype": "float32"}]
    assert [p["handle"] for p in fold["inputs"]] == ["in:input"]


def test_an_edge_from_a_second_output_leaves_from_that_output():
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4])
    d.add("split", inputs={"input": x}, num_or_sections=[1, 3], dim=1, name="halves")
    d.add("fc", inputs={"input": ("halves", 1)}, size=3, name="right")
    view = view_of(d)
    (edge,) = [e for e in view["edges"] if e["target"] == "right"]
    assert (edge["sourceHandle"], edge["label"]) == ("out:1", "[-1, 3]")
    assert [o["shape"] for o in by_id(view)["halves"]["outputs"]] == ["[-1, 1]", "[-1, 3]"]


def test_a_mixed_rows_connection_count():
    d = sequence_classifier()
    m = d.add("mixed_layer", size=8, name="mix")
    d.add_row(m, "full_matrix_projection", inputs={"input": "pool"})
    d.add_row(m, "full_matrix_projection")
    rows = by_id(view_of(d))["mix"]["rows"]
    assert [(r["handle"], r["connected"], r["source"]) for r in rows] == \
        [("row:0:input", 1, "pool"), ("row:1:input", 0, None)]


def test_zone_flags_are_for_zones_only():
    """``reverse`` and ``collapsed`` describe a zone; a gru_group run backwards or a plain
    layer named in ``collapsed`` is drawn as a layer (its detail says reverse)."""
    d = sequence_classifier()
    d.add("gru_group", inputs={"input": "embedding_0"}, size=4, reverse=True, name="back")
    d.set("rnn", reverse=True)
    nodes = by_id(view_of(d, collapsed=["logits", "rnn"]))
    assert nodes["back"]["reverse"] is False and nodes["back"]["detail"].endswith("reverse True")
    assert nodes["logits"]["collapsed"] is False and nodes["logits"]["type"] == "layer"
    assert nodes["rnn"]["reverse"] is True and nodes["rnn"]["collapsed"] is True


def test_the_summary_says_when_the_optimizer_was_not_added():
    d = sequence_classifier()
    d.set_optimizer("SGD", learning_rate=0.1, momentum_of_nothing=3)
    built = d.build()                   # the full build: the optimizer fails, the rest stands
    assert built.optimizer_error.startswith("optimizer SGD:")
    assert canvas_view(d, built)["summary"] == "9 layers, optimizer not added"


def test_palette_entries_carry_their_doc_and_many_outputs():
    palette = {e["name"]: e for e in palette_view()}
    assert palette["fc"]["doc"] == fd.layer_specs.get("fc").doc and palette["fc"]["doc"]
    assert palette["split"]["outputs"] == [{"name": "outs", "many": True, "optional": False}]
    assert palette["fc"]["outputs"] == [{"name": "out", "many": False, "optional": False}]


def test_a_palette_of_another_catalog_keeps_output_names_whole():
    """Only the ``?`` / ``*`` marks come off an output's name: op-style names such as X
    stay as they are."""
    spec = SimpleNamespace(name="pair", category="ops", doc="two outputs", inputs=(),
                           outputs=("X", "Out?", "XShape*"), attr_names=())
    (entry,) = palette_view([spec])
    assert entry["outputs"] == [{"name": "X", "many": False, "optional": False},
                                {"name": "Out", "many": False, "optional": True},
                                {"name": "XShape", "many": True, "optional": False}]
