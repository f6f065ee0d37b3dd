"""NodeKey: the one parser and spelling of the graph's node keys."""
import pytest

from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets.keys import NodeKey, group_key, op_key, var_key
from fluidscope.widgets.render.highlight import node_name, normalize_highlight


@pytest.mark.parametrize("text, key", [
    ("op:0:3", NodeKey("op", 0, "3")),
    ("var:1:fc_0.w_0@GRAD", NodeKey("var", 1, "fc_0.w_0@GRAD")),
    ("var:0:a:b", NodeKey("var", 0, "a:b")),  # a name may hold colons
    ("group:0:/fc_0/", NodeKey("group", 0, "/fc_0/")),
    ("group:2:/a/b/@GRAD", NodeKey("group", 2, "/a/b/", "backward")),
    ("group:0:/fc_0/@OPT", NodeKey("group", 0, "/fc_0/", "optimize")),
    ("group:0:fc_0", NodeKey("group", 0, "fc_0")),  # the view accepts a bare layer name
])
def test_parse_and_str_round_trip(text, key):
    assert NodeKey.parse(text) == key
    assert str(key) == text


@pytest.mark.parametrize("text", ["", "op:0", "op:0:x", "op:-1:2", "node:0:1", "var:0:",
                                  "group:x", "fc_0.w_0", 3, None])
def test_what_is_not_a_key(text):
    assert NodeKey.find(text) is None
    with pytest.raises(FluidscopeError, match="is not a node key; expected 'op:<block>"):
        NodeKey.parse(text)


def test_makers_and_readers():
    assert NodeKey.op(1, 4).index == 4 and op_key(1, 4) == "op:1:4"
    assert var_key(0, "x") == "var:0:x"
    assert group_key(0, "/fc_0/", "backward") == "group:0:/fc_0/@GRAD"
    assert NodeKey.parse("group:0:/fc_0/@GRAD").tail == "/fc_0/@GRAD"
    with pytest.raises(FluidscopeError, match="not an op key"):
        NodeKey.var(0, "x").index
    with pytest.raises(FluidscopeError, match="phase must be one of"):
        NodeKey.group(0, "/a/", "sideways")


def test_render_reads_keys_through_nodekey():
    assert node_name("op:0:3") == "op_0_3"
    assert node_name(NodeKey.var(0, "x@GRAD")) == "var_0_x-40-GRAD"
    assert normalize_highlight("op:1:2") == (1, 2)
    with pytest.raises(FluidscopeError, match="highlight must be"):
        normalize_highlight("var:0:x")
