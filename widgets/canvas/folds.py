"""Runs of identical layers drawn as one node: ``fc x 120`` (TensorBoard's series fold).

A run is a chain of at least ``FOLD_MIN`` nodes of one graph with the same layer and the
same attributes, each reading only the one before it and read only by the one after it
(so no wire leaves or enters the run's middle). A run is folded unless the canvas holds
its first node's id in ``unfolded``; the folded node's id is ``fold:<first id>``, its
inputs are the first member's, its outputs the last member's. Pure functions: the
canvas keeps which runs are open and the view draws them.
"""
from __future__ import annotations

import json

from fluidscope.designer.design.document import GROUP, MEMORY, MIXED, OP, STEP_INPUT, order

FOLD_MIN = 8
PREFIX = "fold:"
_NEVER = (GROUP, MIXED, STEP_INPUT, MEMORY, OP)  # nodes with more than one face


def fold_id(first):
    return PREFIX + first


def first_of(node_id):
    """The first member's id of a fold id, else None."""
    return node_id[len(PREFIX):] if node_id.startswith(PREFIX) else None


def runs(doc, graph, readers=None, ordered=None, config=None):
    """Every foldable run of ``graph``: lists of node ids in chain order. ``readers``
    (``reader_counts(doc)``) and ``ordered`` (``order(graph)``) save their recomputing;
    ``config``: node id -> its ``config_text`` (a canvas keeps them between views)."""
    readers = reader_counts(doc) if readers is None else readers
    ids = (ordered or order(graph))[0]
    return runs_from(ids, chain_links(graph, ids, readers),
                     config or (lambda nid: config_text(graph.nodes[nid])))


def chain_links(graph, ids, readers):
    """For each id of ``ids`` (build order), whether it may continue a run from the id
    before it: 0 no, 1 yes when their configs are equal, None: it can start no run. What
    the structure alone decides (layers, refs, readers), so a canvas reuses it while an
    edit changes attributes only."""
    links, previous = [], None
    for nid in ids:
        node = graph.nodes[nid]
        if node.layer in _NEVER:
            links.append(None)
        elif previous is None or previous.layer != node.layer:
            links.append(0)
        else:
            refs = node.refs()
            links.append(int(len(refs) == 1 and refs[0][1].node == previous.id
                             and refs[0][1].index == 0 and readers.get(previous.id) == 1))
        previous = node
    return links


def runs_from(ids, links, config):
    """The runs of ``ids`` given their ``chain_links`` and ``config`` (id -> text): a run
    goes on while each next node is linked to the one before and configured the same."""
    found, run = [], []
    before = None  # (index, config) of the last config made: each node's is made once
    for k, nid in enumerate(ids):
        link = links[k]
        if run and link:
            previous = before[1] if before is not None and before[0] == k - 1 \
                else config(ids[k - 1])
            mine = config(nid)
            before = (k, mine)
            if mine == previous:
                run.append(nid)
                continue
        if len(run) >= FOLD_MIN:
            found.append(run)
        run = [nid] if link is not None else []
    if len(run) >= FOLD_MIN:
        found.append(run)
    return found


def folded_runs(doc, graph, unfolded, readers=None, ordered=None):
    """{first id: run} of the runs of ``graph`` drawn folded."""
    return {run[0]: run for run in runs(doc, graph, readers, ordered) if run[0] not in unfolded}


def run_of(doc, node_id):
    """The foldable run holding ``node_id`` (a fold id names its run), else None."""
    node_id = first_of(node_id) or node_id
    found = doc.locate(node_id)
    if found is None:
        return None
    graph = found[1]
    return next((r for r in runs(doc, graph) if node_id in r), None)


def config_text(node):
    """What makes two nodes of one layer "identical" for a fold: their attributes, as
    JSON with sorted keys (so key order does not matter)."""
    return json.dumps(node.attrs, sort_keys=True, default=str)


def reader_counts(doc):
    """Node id -> how many references read it (inputs, rows, out-links, the loss)."""
    count = {}
    for node, _graph, _owner in doc.walk():
        for _slot, ref in node.refs():
            count[ref.node] = count.get(ref.node, 0) + 1
        if node.body is not None:
            for ref in node.body.outputs:
                count[ref.node] = count.get(ref.node, 0) + 1
    for ref in doc.graph.outputs:
        count[ref.node] = count.get(ref.node, 0) + 1
    if doc.loss is not None:
        count[doc.loss.node] = count.get(doc.loss.node, 0) + 1
    return count
