"""DesignCanvas gestures that only a browser shows (issue #19 item 5): a memory's boot
edge drawn and made by a drag, a link dropped on empty canvas opening the search for the
layers that take it, a mixed_layer's "+ projection", and the toolbar's "group" over a box
selection. Each test makes the gesture with Playwright's mouse and keyboard, then reads
what the kernel's design became from a following cell's output. Every wait is on a
condition of the page or of the kernel's output; each test leaves a screenshot in
artifacts/e2e.
"""
import json
import os
import pathlib
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import (  # noqa: E402
    SETUP, center, connect, flow, handle, hover_where_it_stays, node, open_wide, python_state,
    settled, views_drawn, wait_for_view_after, wait_until_still)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = pathlib.Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts" / "e2e"))

# the end points of an edge's path on screen (its SVG path through the viewport transform)
EDGE_ENDS_JS = """(g) => {
    const p = g.querySelector('path.react-flow__edge-path');
    const m = p.getScreenCTM();
    const at = (l) => new DOMPoint(p.getPointAtLength(l).x, p.getPointAtLength(l).y).matrixTransform(m);
    const a = at(0), b = at(p.getTotalLength());
    return [[a.x, a.y], [b.x, b.y]];
}"""

# a screen point in the flow's coordinates (React Flow's viewport transform on the pane)
FLOW_POINT_JS = """([root, x, y]) => {
    const pane = root.querySelector('.react-flow__pane').getBoundingClientRect();
    const t = new DOMMatrixReadOnly(getComputedStyle(root.querySelector('.react-flow__viewport')).transform);
    return [(x - pane.left - t.e) / t.a, (y - pane.top - t.f) / t.a];
}"""


def shot(canvas, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    canvas.screenshot(path=str(SHOTS / name))


def near(a, b, slack):
    return abs(a[0] - b[0]) <= slack and abs(a[1] - b[1]) <= slack


def printed(out, key):
    """The JSON a cell printed after ``KEY=``."""
    return json.loads(re.search(rf"^{key}=(.*)$", out, re.M).group(1))


def empty_point(page, canvas, x, y):
    """The point of empty canvas nearest (x, y): on the pane itself (no node, handle,
    control or minimap there) and at least 40 px from every node, so a wire released
    there lands on no handle (React Flow snaps within 20 px)."""
    found = page.evaluate("""([root, x, y]) => {
        const pane = root.querySelector('.react-flow__pane').getBoundingClientRect();
        const nodes = [...root.querySelectorAll('.react-flow__node')].map((n) => n.getBoundingClientRect());
        const clear = (px, py) => nodes.every((b) => px < b.left - 40 || px > b.right + 40
            || py < b.top - 40 || py > b.bottom + 40);
        let best = null;
        for (let px = pane.left + 30; px < pane.right - 30; px += 10) {
            for (let py = pane.top + 30; py < pane.bottom - 60; py += 10) {
                const el = document.elementFromPoint(px, py);
                if (!el || !el.classList.contains('react-flow__pane') || !clear(px, py)) continue;
                const d = (px - x) ** 2 + (py - y) ** 2;
                if (!best || d < best[2]) best = [px, py, d];
            }
        }
        return best && [best[0], best[1]];
    }""", [canvas.element_handle(), x, y])
    assert found is not None, "no empty canvas left to drop a wire on"
    return tuple(found)


def drop_link(page, canvas, source, end, source_handle="out:0"):
    """Drag a wire from `source`'s output and release it on empty canvas at `end`."""
    src = handle(canvas, source, source_handle, "source")
    settled(page)
    hover_where_it_stays(page, src)
    page.mouse.down()
    start = center(src)
    page.mouse.move(start[0] + 3, start[1] + 3, steps=2)
    expect(canvas.locator(".react-flow__connection")).to_have_count(1)
    page.mouse.move(*end, steps=15)
    page.mouse.up()
    expect(canvas.locator(".react-flow__connection")).to_have_count(0)


BOOT_DESIGN = SETUP + """import fluidscope.designer as fd
d = fd.Design()
ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
ctx = d.add("data", name="ctx", shape=[None, 16])
emb = d.add("embedding", inputs={"input": ids}, size=[30, 16], name="emb")
g = d.add("recurrent_group", name="rnn")
word = d.add_step_input(g, emb, name="word")
state_ = d.add_memory(g, size=16, name="state", boot=ctx)   # booted from outside
cell = d.add_memory(g, size=16, name="cell")                # not booted (zeros)
h = d.add("fc", inputs={"input": [word, state_, cell]}, size=16, act="tanh", group=g, name="h")
d.link_memory(state_, h)
d.link_memory(cell, h)
d.set_outputs(g, [h])
d.add("sequence_pool", inputs={"input": g}, pool_type="max", name="pool")
canvas = DesignCanvas(d, height=600)
canvas"""


def test_boot_edges_drawn_and_made_by_a_drag(lab, page, network):
    lab.write_notebook("canvas_boot.ipynb", [
        BOOT_DESIGN,
        "state(canvas)\n"
        'print("BOOT=" + json.dumps({m: getattr(canvas.design.node(m).inputs.get("boot_layer"), "node", None)'
        ' for m in ("state", "cell")}))\n'
        'print("CODE_BOOTS=%s" % canvas.design.to_python().count("boot_layer=ctx"))',
    ])
    nb = open_wide(page, lab, "canvas_boot.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "cell")).to_be_visible()
    settled(page)

    # the boot edge: from the outer ctx into the memory's boot_layer, purple and dotted
    boot = canvas.locator(".react-flow__edge.fs-edge-boot")
    expect(boot).to_have_count(1)
    path = boot.locator("path.react-flow__edge-path")
    expect(path).to_have_css("stroke-dasharray", re.compile(r"^2(px)?,? 3(px)?$"))
    expect(path).to_have_css("stroke", "rgb(142, 124, 195)")
    # not the memory's back-edge style (dashed 6 4): the two kinds read apart
    expect(canvas.locator(".react-flow__edge.fs-edge-memory")).to_have_count(2)
    start, end = boot.evaluate(EDGE_ENDS_JS)
    assert near(start, center(handle(canvas, "ctx", "out:0", "source")), 10), (start, "ctx")
    assert near(end, center(handle(canvas, "state", "in:boot_layer", "target")), 10), (end, "state")

    # a drag from ctx onto the other memory's boot handle boots it too
    connect(page, canvas, "ctx", "cell", target_handle="in:boot_layer")
    expect(boot).to_have_count(2)
    out = nb.run_until(1, '"cell": "ctx"')
    assert printed(out, "BOOT") == {"state": "ctx", "cell": "ctx"}, out
    assert printed(out, "ERRORS") == {}, out
    assert ["ctx", "cell", "boot"] in printed(out, "EDGES"), out
    assert "CODE_BOOTS=2" in out, out  # the generated code boots both memories
    second = canvas.locator('.react-flow__edge.fs-edge-boot[data-id*=">cell:"]')
    start, end = second.evaluate(EDGE_ENDS_JS)
    assert near(end, center(handle(canvas, "cell", "in:boot_layer", "target")), 10), (end, "cell")
    shot(canvas, "gestures_boot_edges.png")
    assert network.outside == []


def test_a_link_dropped_on_empty_canvas_opens_the_search_for_what_takes_it(lab, page, network):
    lab.write_notebook("canvas_link_drop.ipynb", [
        SETUP + """import fluidscope.designer as fd
d = fd.Design()
x = d.add("data", name="x", shape=[None, 8])
d.add("fc", inputs={"input": x}, size=6, name="hidden")
canvas = DesignCanvas(d, height=560)
canvas""",
        "state(canvas)\n"
        'print("POS=" + json.dumps({n["id"]: n["position"] for n in canvas.view["nodes"]}))\n'
        'print("INPUTS=" + json.dumps({n.id: {s: getattr(r, "node", None) for s, r in n.inputs.items()}'
        " for n in canvas.design.document.graph.nodes.values()}))",
        # the layers Python lets a dense output feed (ports.py's rule, as the palette says)
        'print("TAKE_DENSE=" + json.dumps(sorted(e["name"] for e in canvas.palette'
        ' if any("dense" in (s["accepts"] or ["dense"]) for s in e["inputs"]))))',
    ])
    nb = open_wide(page, lab, "canvas_link_drop.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "hidden")).to_be_visible()
    root = canvas.element_handle()
    # read now: running a cell takes the focus, and the drop search closes when it loses it
    take_dense = set(printed(nb.run_until(2, "TAKE_DENSE="), "TAKE_DENSE"))
    assert "fc" in take_dense and "embedding" not in take_dense, take_dense

    # a wire from hidden's output released on empty canvas below-right of it
    box = node(canvas, "hidden").bounding_box()
    end = empty_point(page, canvas, box["x"] + box["width"] + 60, box["y"] + box["height"] + 90)
    drop_link(page, canvas, "hidden", end)
    at = page.evaluate(FLOW_POINT_JS, [root, *end])  # now: a screenshot may scroll the page
    search = canvas.locator(".fs-drop-search")
    expect(search).to_be_visible()
    field = search.locator(".fs-drop-search-input")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("placeholder", "add a layer taking dense")
    # it opens where the wire was dropped
    opened = search.bounding_box()
    assert near((opened["x"], opened["y"]), end, 3), (opened, end)

    # only layers with a slot taking a dense output: a part of Python's list
    items = search.locator(".fs-drop-search-item")
    expect(items).not_to_have_count(0)
    offered = set(items.evaluate_all("(els) => els.map((e) => e.dataset.layer)"))
    assert offered <= take_dense and "embedding" not in offered, offered - take_dense
    # typing filters; a layer that takes ids only is never offered
    field.fill("embedding")
    expect(search.locator('.fs-drop-search-item[data-layer="embedding"]')).to_have_count(0)
    field.fill("fc")
    expect(search.locator('.fs-drop-search-item[data-layer="fc"]')).to_be_visible()
    shot(canvas, "gestures_link_drop_search.png")
    offered = set(items.evaluate_all("(els) => els.map((e) => e.dataset.layer)"))
    assert offered <= take_dense and "data" not in offered, offered  # data takes nothing

    # a click on "fc" adds it where the wire was dropped, fed by hidden
    search.locator('.fs-drop-search-item[data-layer="fc"]').click()
    expect(search).to_have_count(0)
    expect(node(canvas, "fc_0")).to_be_visible()
    expect(canvas.locator(".react-flow__edge")).to_have_count(2)
    out = nb.run_until(1, '"fc_0"')
    assert ["hidden", "fc_0", "data"] in printed(out, "EDGES"), out
    assert printed(out, "INPUTS")["fc_0"] == {"input": "hidden"}, out
    assert near(printed(out, "POS")["fc_0"], at, 1.5), (printed(out, "POS")["fc_0"], at)

    # again from the new fc, elsewhere: Enter picks the first layer the query leaves. A fit
    # first: the whole design in view, so no minimap (it covered fc_0's output after a fit,
    # until the canvas judged "whole" on the nodes' drawn sizes)
    canvas.locator('.fs-tool[data-action="fit"]').click()
    expect(canvas.locator(".react-flow__minimap")).to_have_count(0)
    wait_until_still(node(canvas, "fc_0"))
    settled(page)
    box = node(canvas, "fc_0").bounding_box()
    end = empty_point(page, canvas, box["x"] + box["width"] + 60, box["y"] + 40)
    drop_link(page, canvas, "fc_0", end)
    at = page.evaluate(FLOW_POINT_JS, [root, *end])
    expect(search).to_be_visible()
    field = search.locator(".fs-drop-search-input")
    field.press_sequentially("softmax")
    expect(field).to_have_value("softmax")  # React filters on each key, synchronously
    first = items.first
    expect(first).to_be_visible()
    layer = first.get_attribute("data-layer")
    assert layer in take_dense, layer
    drawn = views_drawn(page)
    field.press("Enter")
    expect(search).to_have_count(0)
    wait_for_view_after(page, drawn)
    new_id = f"{layer}_0"
    expect(node(canvas, new_id)).to_be_visible()
    out = nb.run_until(1, f'"{new_id}"')
    assert ["fc_0", new_id, "data"] in printed(out, "EDGES"), out
    assert "fc_0" in printed(out, "INPUTS")[new_id].values(), out
    assert near(printed(out, "POS")[new_id], at, 1.5), (printed(out, "POS")[new_id], at)

    # Escape closes a search without adding anything
    settled(page)
    box = node(canvas, "hidden").bounding_box()
    end = empty_point(page, canvas, box["x"] + 20, box["y"] + box["height"] + 120)
    drop_link(page, canvas, "hidden", end)
    expect(search).to_be_visible()
    search.locator(".fs-drop-search-input").press("Escape")
    expect(search).to_have_count(0)
    out = nb.run_until(1, "NODES=")
    assert printed(out, "NODES") == sorted(["x", "hidden", "fc_0", new_id]), out
    assert network.outside == []


def test_plus_projection_adds_a_row_that_takes_a_wire(lab, page, network):
    lab.write_notebook("canvas_projection.ipynb", [
        SETUP + """import fluidscope.designer as fd
d = fd.Design()
x = d.add("data", name="x", shape=[None, 8])
y = d.add("data", name="y", shape=[None, 5])
m = d.add("mixed_layer", size=4, name="mix")
d.add_row(m, "full_matrix_projection", inputs={"input": x})
canvas = DesignCanvas(d, height=560)
canvas""",
        "state(canvas)\n"
        'rows = canvas.design.node("mix").rows\n'
        'print("ROWS=" + json.dumps([[r.kind, {s: getattr(v, "node", None) for s, v in r.inputs.items()}]'
        " for r in rows]))",
    ])
    nb = open_wide(page, lab, "canvas_projection.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    mix = node(canvas, "mix")
    expect(mix.locator(".fs-row")).to_have_count(1)
    settled(page)

    mix.locator(".fs-add-row").click()
    expect(mix.locator(".fs-row")).to_have_count(2)
    new_row = handle(canvas, "mix", "row:1:input", "target")
    expect(new_row).to_be_visible()
    # the empty row is an error of the node until something feeds it
    expect(mix.locator(".fs-row").nth(1)).to_have_class(re.compile(r"\bfs-row-error\b"))
    out = nb.run_until(1, "full_matrix_projection\", {}")
    assert printed(out, "ROWS") == [["full_matrix_projection", {"input": "x"}],
                                    ["full_matrix_projection", {}]], out
    assert "row 1" in printed(out, "ERRORS")["mix"], out

    # a wire from y into the new row's handle: the row reads y, the node builds
    connect(page, canvas, "y", "mix", target_handle="row:1:input")
    expect(canvas.locator(".react-flow__edge")).to_have_count(2)
    expect(mix.locator(".fs-row-error")).to_have_count(0)
    expect(mix.locator(".fs-shape")).to_have_text("[-1, 4]")
    out = nb.run_until(1, '"input": "y"')
    assert printed(out, "ROWS") == [["full_matrix_projection", {"input": "x"}],
                                    ["full_matrix_projection", {"input": "y"}]], out
    assert printed(out, "ERRORS") == {}, out
    assert ["y", "mix", "data"] in printed(out, "EDGES"), out
    # the edge ends on the new row's handle, not on the first row's
    start, end = canvas.locator('.react-flow__edge[data-id*="row:1:input"]').evaluate(EDGE_ENDS_JS)
    assert near(end, center(new_row), 10), (end, center(new_row))
    shot(canvas, "gestures_plus_projection.png")
    assert network.outside == []


def test_group_button_turns_a_box_selection_into_a_recurrent_group_and_undo_restores(lab, page, network):
    lab.write_notebook("canvas_group.ipynb", [
        SETUP + """import fluidscope.designer as fd
d = fd.Design()
x = d.add("data", name="x", shape=[None, 8], lod_level=1)
a = d.add("fc", inputs={"input": x}, size=8, act="tanh", name="fc_a")
b = d.add("fc", inputs={"input": a}, size=8, act="tanh", name="fc_b")
d.add("sequence_pool", inputs={"input": b}, pool_type="max", name="pool")
canvas = DesignCanvas(d, height=560)
LOG = []
_receive = canvas.receive
canvas.receive = lambda content: (LOG.append(dict(content)), _receive(content))[1]
canvas""",
        "state(canvas)\n"
        'print("LOG=" + json.dumps([c for c in LOG if c.get("action") in ("select", "group")]))\n'
        "doc = canvas.design.document\n"
        'print("TOP=" + json.dumps(list(doc.graph.nodes)))\n'
        'groups = [n for n in doc.graph.nodes.values() if n.layer == "recurrent_group"]\n'
        'print("GROUP=" + json.dumps([{"id": g.id, "body": sorted(g.body.nodes),'
        ' "outputs": [r.node for r in g.body.outputs]} for g in groups]))\n'
        'print("POOL_READS=" + json.dumps(doc.graph.nodes["pool"].inputs["input"].node))\n'
        'print("SELECTED=" + json.dumps(canvas.selected))',
    ])
    nb = open_wide(page, lab, "canvas_group.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "fc_b")).to_be_visible()
    group_button = canvas.locator('.fs-tool[data-action="group"]')
    expect(group_button).to_be_disabled()
    settled(page)

    # Shift + drag on empty canvas: a selection box around fc_a and fc_b only
    a, b = node(canvas, "fc_a").bounding_box(), node(canvas, "fc_b").bounding_box()
    left, top = min(a["x"], b["x"]) - 14, min(a["y"], b["y"]) - 14
    right = max(a["x"] + a["width"], b["x"] + b["width"]) + 14
    bottom = max(a["y"] + a["height"], b["y"] + b["height"]) + 14
    start = (left, top)
    on = page.evaluate("([x, y]) => document.elementFromPoint(x, y).className", list(start))
    assert "react-flow__pane" in on, f"the selection box must start on empty canvas, not on {on}"
    page.keyboard.down("Shift")
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(left + 10, top + 10, steps=3)
    expect(canvas.locator(".react-flow__selection")).to_have_count(1)
    page.mouse.move(right, bottom, steps=15)
    page.mouse.up()
    page.keyboard.up("Shift")
    expect(node(canvas, "fc_a")).to_have_class(re.compile(r"\bselected\b"))
    expect(node(canvas, "fc_b")).to_have_class(re.compile(r"\bselected\b"))
    expect(node(canvas, "x")).not_to_have_class(re.compile(r"\bselected\b"))
    expect(node(canvas, "pool")).not_to_have_class(re.compile(r"\bselected\b"))

    group_button.click()
    zone = node(canvas, "recurrent_group_0")
    expect(zone.locator(".fs-zone-open")).to_be_visible()
    # the pieces the group inferred: an in-link from x, an out-link read by pool
    expect(canvas.locator(".react-flow__node .fs-small-step_input")).to_have_count(1)
    expect(canvas.locator(".react-flow__edge.fs-edge-inlink")).to_have_count(1)
    expect(canvas.locator(".react-flow__edge.fs-edge-outlink")).to_have_count(1)
    settled(page)
    zone_box = zone.bounding_box()
    for inner in ("fc_a", "fc_b"):
        box = node(canvas, inner).bounding_box()
        assert (box["x"] >= zone_box["x"] and box["y"] >= zone_box["y"]
                and box["x"] + box["width"] <= zone_box["x"] + zone_box["width"]
                and box["y"] + box["height"] <= zone_box["y"] + zone_box["height"]), (inner, box, zone_box)
    out = nb.run_until(1, "recurrent_group_0")
    assert printed(out, "TOP") == ["x", "recurrent_group_0", "pool"], out
    assert printed(out, "GROUP") == [{"id": "recurrent_group_0", "body": ["fc_a", "fc_b", "step_input_0"],
                                      "outputs": ["fc_b"]}], out
    assert printed(out, "POOL_READS") == "recurrent_group_0", out
    assert printed(out, "ERRORS") == {}, out
    assert printed(out, "SELECTED") == ["recurrent_group_0"], out
    # the page sent no selection after the group (a stale report of the box selection
    # once undid Python's selection of the group)
    assert printed(out, "LOG")[-1] == {"action": "group", "ids": ["fc_a", "fc_b"]}, out
    # the page agrees: the new group selected, the layers moved into it no longer
    expect(zone).to_have_class(re.compile(r"\bselected\b"))
    for inner in ("fc_a", "fc_b"):
        expect(node(canvas, inner)).not_to_have_class(re.compile(r"\bselected\b"))
    shot(canvas, "gestures_group.png")

    # undo from the toolbar: the layers back at the top level, pool reading fc_b again
    canvas.locator('.fs-tool[data-action="undo"]').click()
    expect(zone).to_have_count(0)
    expect(node(canvas, "fc_a")).to_be_visible()
    expect(canvas.locator(".react-flow__edge.fs-edge-data")).to_have_count(3)
    out = nb.run_until(1, '"fc_b", "pool"]')
    assert printed(out, "TOP") == ["x", "fc_a", "fc_b", "pool"], out
    assert printed(out, "GROUP") == [] and printed(out, "POOL_READS") == "fc_b", out
    assert printed(out, "EDGES") == [["fc_a", "fc_b", "data"], ["fc_b", "pool", "data"],
                                     ["x", "fc_a", "data"]], out
    assert network.outside == []
