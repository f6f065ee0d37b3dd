"""NodeViewCache's signature reuse (widgets/canvas/node_views.py), in the cases mutation
testing found unasserted (issue #17): a node's signature is computed once per pattern of
connection counts and reused while it holds; a fold's (made of several nodes) never is."""
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas.node_views import NodeViewCache

from test_canvas_size import varied_chain


def counting():
    calls = []

    def compute(view):
        calls.append(view["id"])
        return f"sig{len(calls)}"
    return calls, compute


def test_a_nodes_signature_is_computed_once_per_connection_pattern():
    cache, (calls, compute) = NodeViewCache(), counting()
    view = {"id": "fc_0", "type": "layer", "inputs": [], "rows": None}
    cache.store("fc_0", ("key",), view)
    assert cache.signature(view, ((1,), ()), compute) == "sig1"
    assert cache.signature(view, ((1,), ()), compute) == "sig1"      # reused
    assert cache.signature(view, ((0,), ()), compute) == "sig2"      # another pattern
    assert calls == ["fc_0", "fc_0"]


def test_a_folds_signature_is_never_reused():
    """A fold's view is made from several nodes: even under an id the cache holds (a
    layer may be called anything, "fold:fc_0" included) it is signed afresh."""
    cache, (calls, compute) = NodeViewCache(), counting()
    fold = {"id": "fold:fc_0", "type": "fold", "inputs": [], "rows": None}
    cache.store("fold:fc_0", ("key",), fold)
    assert cache.signature(fold, ((1,), ()), compute) == "sig1"
    assert cache.signature(fold, ((1,), ()), compute) == "sig2"
    assert calls == ["fold:fc_0", "fold:fc_0"]


def test_an_edit_signs_only_the_edited_node_again(monkeypatch):
    from fluidscope.widgets.canvas import view as view_module
    canvas = DesignCanvas(design=varied_chain(40))
    signed = []
    real = view_module._signature
    monkeypatch.setattr(view_module, "_signature",
                        lambda view: signed.append(view["id"]) or real(view))
    canvas.set_attr("fc_20", "size", 30)
    assert signed == ["fc_20"]
