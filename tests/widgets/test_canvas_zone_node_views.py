"""The views of a zone's nodes, exactly (widgets/canvas/view.py ``_node_view`` and
``_output_views``): the zone itself, its step input, its memory and a layer inside, with
every key the front end reads; a reversed zone and a static step input (issue #17:
mutants of these keys and flags survived the canvas tests)."""
import fluidscope.designer as fd

from test_canvas_view import by_id, sequence_classifier, view_of

ANY = ["dense", "sequence", "ids", "ids_sequence"]
KEYS = ("id", "layer", "category", "type", "parent", "title", "detail", "outputs", "error",
        "rows", "collapsed", "reverse", "static", "is_loss", "members")


def slot(handle, name, kind="tensor", many=False, optional=False):
    return {"handle": handle, "slot": name, "kind": kind, "many": many, "optional": optional,
            "accepts": ANY}


def out(kind, shape):
    return [{"handle": "out:0", "index": 0, "kind": kind, "shape": shape, "dtype": "float32"}]


def view(node):
    picked = {k: node[k] for k in KEYS}
    picked["inputs"] = [{k: v for k, v in s.items() if k != "connected"} for s in node["inputs"]]
    return picked


def flags(**changed):
    base = {"error": None, "rows": None, "collapsed": False, "reverse": False,
            "static": False, "is_loss": False, "members": None}
    return {**base, **changed}


def test_the_nodes_of_a_zone_show_every_key_the_front_end_reads():
    nodes = by_id(view_of(sequence_classifier()))
    assert view(nodes["rnn"]) == {
        "id": "rnn", "layer": "recurrent_group", "category": "recurrent", "type": "group",
        "parent": None, "title": "rnn", "detail": "1 in · 1 memory · 1 out",
        "inputs": [slot("in:word", "word")], "outputs": out("sequence", "[-1, 16]"), **flags()}
    word = view(nodes["word"])
    assert word == {
        "id": "word", "layer": "step_input", "category": "recurrent", "type": "step_input",
        "parent": "rnn", "title": "word", "detail": "from embedding_0",
        "inputs": [slot("in:outer", "outer")], "outputs": word["outputs"], **flags()}
    assert word["outputs"][0]["kind"] == "dense" and word["outputs"][0]["dtype"] == "float32"
    assert view(nodes["state"]) == {
        "id": "state", "layer": "memory", "category": "recurrent", "type": "memory",
        "parent": "rnn", "title": "state", "detail": "size 16",
        "inputs": [slot("in:boot_layer", "boot_layer", optional=True), slot("in:link", "link")],
        "outputs": out("dense", "[-1, 16]"), **flags()}
    assert view(nodes["h"]) == {
        "id": "h", "layer": "fc", "category": "nn", "type": "layer", "parent": "rnn",
        "title": "h", "detail": "size 16 · tanh",
        "inputs": [slot("in:input", "input", kind="tensor+", many=True)],
        "outputs": out("dense", "[-1, 16]"), **flags()}
    assert nodes["loss"]["is_loss"] is True


def test_a_reversed_zone_and_a_static_step_input_say_so():
    d = sequence_classifier()
    d.set("rnn", reverse=True)
    ctx = d.add("data", name="ctx", shape=[None, 4])
    static = d.add_step_input("rnn", ctx, static=True, name="ctx_in")
    nodes = by_id(view_of(d))
    assert nodes["rnn"]["reverse"] is True and nodes["rnn"]["detail"].endswith(" · reverse")
    assert nodes[static]["static"] is True and nodes["word"]["static"] is False
    assert nodes["h"]["reverse"] is False  # only a zone is reversed
    assert [s["handle"] for s in nodes["rnn"]["inputs"]] == ["in:word", f"in:{static}"]
