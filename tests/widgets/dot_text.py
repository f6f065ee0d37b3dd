"""Reading DOT text in tests: edges, nodes and their attributes, and sub-graph bodies.

The render tests assert on the DOT that ``program_to_dot`` writes (its structure, not
its bytes); these small parsers are shared by them.
"""
import re

import pytest

from fluidscope.widgets import has_dot

needs_dot = pytest.mark.skipif(not has_dot(), reason="system Graphviz (dot) is not installed")
SVG_NS = "{http://www.w3.org/2000/svg}"
_ID = r'(?:"(?:[^"\\]|\\.)*"|[^\s"\[]+)'
_ATTR = re.compile(r'([\w]+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def attrs_of(text):
    """'a=1 b="x y"' -> {'a': '1', 'b': 'x y'}."""
    return {k: v[1:-1] if v.startswith('"') else v for k, v in _ATTR.findall(text or "")}


def edges(dot):
    """[(tail, head, attrs)] of every edge statement (node names unquoted)."""
    return [(m.group(1).strip('"'), m.group(2).strip('"'), attrs_of(m.group(3))) for m in
            re.finditer(rf"^\s*({_ID}) -> ({_ID})(?: \[(.*)\])?$", dot, re.M)]


def edge(dot, tail, head):
    """The attributes of the one edge tail -> head."""
    found = [a for t, h, a in edges(dot) if (t, h) == (tail, head)]
    assert len(found) == 1, f"{len(found)} edges {tail} -> {head} in\n{dot}"
    return found[0]


def node(dot, name):
    """The attributes of node ``name``."""
    m = re.search(r'^\s*"?' + re.escape(name) + r'"? \[(.*)\]$', dot, re.M)
    assert m, f"no node {name} in\n{dot}"
    return attrs_of(m.group(1))


def subgraph_body(dot, name):
    """The text between the braces of ``subgraph name { ... }``."""
    start = dot.index(f"subgraph {name} {{") + len(f"subgraph {name} {{")
    depth, i = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(dot[i], 0)
        i += 1
    return dot[start:i - 1]
