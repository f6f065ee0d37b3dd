"""DesignCanvas at 1,000 layers zoomed out: the nodes and wires are drawn by one canvas
(js/src/canvas/far_canvas.jsx) and React Flow draws no node component (issue #16 item 4:
zooming without dropped frames). The canvas must draw the design's every node and wire,
and a user must still reach each node: the pointer over a block names it, a click selects
the block under the pointer (Python's selection and the property panel follow), Ctrl+click
adds one, a right-click opens its menu, a drag moves it (Python gets the move), Shift+drag
selects a box of blocks. Zoomed in past the compact threshold and still, React Flow's node
components come back (full detail, only those in view); zoomed out again, the canvas.
Every wait is on a condition of the page or the kernel's output.
"""
import json
import os
import pathlib

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import flow, open_wide, settled  # noqa: E402
from test_canvas_size_e2e import DESIGNS  # noqa: E402

NODES = 1000
SETUP = DESIGNS + """
canvas = DesignCanvas(design=varied_chain(996), height=620)
canvas
"""
WHERE = """import json
print("WHERE=" + json.dumps({n["id"]: n["position"] for n in canvas.view["nodes"]}))
print("SELECTED=" + json.dumps(sorted(canvas.selected)))"""
# The far canvas (its counts) and React Flow's viewport transform.
FAR_JS = """(root) => {
  const c = root.querySelector('.fs-far-canvas');
  const t = root.querySelector('.react-flow__viewport').style.transform;
  const [, tx, ty] = t.match(/translate\\(([-\\d.e]+)px, ([-\\d.e]+)px\\)/).map(Number);
  const zoom = Number(t.match(/scale\\(([^)]+)\\)/)[1]);
  const pane = root.querySelector('.react-flow').getBoundingClientRect();
  return { canvas: !!c, nodes: Number(c?.dataset.nodes ?? -1), wires: Number(c?.dataset.wires ?? -1),
           drawnNodes: Number(c?.dataset.drawnNodes ?? -1), drawnWires: Number(c?.dataset.drawnWires ?? -1),
           flowNodes: root.querySelectorAll('.react-flow__node').length, tx, ty, zoom,
           left: pane.left, top: pane.top };
}"""
BLOCK = (220, 116)  # the compact block's size in flow px (viewport.js COMPACT_SIZE)
SHOTS = os.environ.get("FS_FAR_SHOTS")  # a folder: save what the canvas looked like


def open_far(page, lab, notebook):
    """Open ``notebook``, run its first cell (a 1,000-layer canvas) and wait until React
    Flow has measured every node once and handed them to the far canvas; the canvas."""
    nb = open_wide(page, lab, notebook)
    nb.run_cell(0, timeout=120_000)
    canvas = flow(nb, 0)
    canvas.scroll_into_view_if_needed()
    expect(canvas.locator(".fs-far-canvas")).to_have_count(1, timeout=60_000)
    expect(canvas.locator(".react-flow__node")).to_have_count(0)
    return nb, canvas


def far(canvas):
    return canvas.evaluate(FAR_JS)


def where(nb, canvas):
    """Python's node positions and selection (running the cell scrolls the notebook to
    it: the canvas is scrolled back into view)."""
    out = nb.run_until(1, "SELECTED=")
    lines = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    canvas.scroll_into_view_if_needed()
    return json.loads(lines["WHERE"]), json.loads(lines["SELECTED"])


def on_screen(canvas, position, fx=0.5, fy=0.5):
    """The page point at fraction (fx, fy) of the block at flow `position` (the pane's
    place and the viewport read now)."""
    state = far(canvas)
    x = position[0] + fx * BLOCK[0]
    y = position[1] + fy * BLOCK[1]
    return state["left"] + state["tx"] + x * state["zoom"], state["top"] + state["ty"] + y * state["zoom"]


def shot(canvas, name):
    if SHOTS:
        pathlib.Path(SHOTS).mkdir(parents=True, exist_ok=True)
        canvas.screenshot(path=str(pathlib.Path(SHOTS) / f"{name}.png"))


def wheel(page, canvas, at, steps, until):
    page.mouse.move(*at)
    page.keyboard.down("Control")
    try:
        for _ in range(steps):
            page.mouse.wheel(0, -120 if until > 0 else 120)
            zoom = far(canvas)["zoom"]
            if (until > 0 and zoom >= until) or (until < 0 and zoom <= -until):
                return zoom
    finally:
        page.keyboard.up("Control")
    raise AssertionError(f"Ctrl+wheel did not reach zoom {abs(until)}")


def test_1000_layers_far_canvas_draws_all_and_every_gesture_reaches_its_node(lab, page, network):
    lab.write_notebook("canvas_far.ipynb", [SETUP, WHERE])
    # the first view: every node measured once by React Flow, then handed to the canvas
    nb, canvas = open_far(page, lab, "canvas_far.ipynb")
    settled(page)
    state = far(canvas)
    assert state["nodes"] == NODES and state["wires"] == NODES - 1, state
    assert state["drawnNodes"] == NODES and state["drawnWires"] == NODES - 1, state  # all in view
    assert state["zoom"] < 0.5, state
    shot(canvas, "far_1000_fit")

    positions, selected = where(nb, canvas)
    assert selected == []
    # the pointer over fc_3 names it; a click selects it (Python and the panel follow)
    page.mouse.move(*on_screen(canvas, positions["fc_3"]))
    pane = canvas.locator(".react-flow__pane")
    expect(pane).to_have_attribute("data-far-hover", "fc_3")
    assert pane.get_attribute("title").startswith("fc_3")
    page.mouse.click(*on_screen(canvas, positions["fc_3"], 0.9, 0.1))  # near a corner: still fc_3
    expect(canvas.locator(".fs-inspector")).to_contain_text("fc_3")
    assert where(nb, canvas)[1] == ["fc_3"]
    # Ctrl+click adds fc_700
    page.keyboard.down("Control")
    page.mouse.click(*on_screen(canvas, positions["fc_700"], 0.1, 0.9))
    page.keyboard.up("Control")
    nb_selected = where(nb, canvas)[1]
    assert nb_selected == ["fc_3", "fc_700"], nb_selected

    # a right-click opens that node's menu
    page.mouse.click(*on_screen(canvas, positions["fc_41"]), button="right")
    expect(canvas.locator('.fs-menu[data-node="fc_41"]')).to_be_visible()
    page.keyboard.press("Escape")  # closes the menu and clears the selection
    expect(canvas.locator(".fs-menu")).to_have_count(0)
    settled(page)

    # a drag moves fc_20 by the pointer's move over the zoom, once, in Python
    start = on_screen(canvas, positions["fc_20"])
    page.mouse.move(*start)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(start[0] + 3 * k, start[1] + 2 * k)
    page.mouse.up()
    settled(page)
    moved, chosen = where(nb, canvas)
    dx, dy = (moved["fc_20"][i] - positions["fc_20"][i] for i in range(2))
    assert abs(dx - 30 / state["zoom"]) <= 2 and abs(dy - 20 / state["zoom"]) <= 2, (dx, dy)
    assert chosen == ["fc_20"]  # what is dragged is selected
    assert moved["fc_21"] == positions["fc_21"]

    # a click on empty canvas (the fit's margin) clears the selection: the property panel
    # closes before the box is drawn (the pane widens)
    corner = far(canvas)
    page.mouse.click(corner["left"] + 6, corner["top"] + 6)
    settled(page)
    expect(canvas.locator(".fs-inspector")).to_have_count(0)
    # Shift+drag around fc_500 and its right neighbour (mid-pane: no auto-pan) selects
    # what lies wholly inside the box
    row = sorted((p[0], k) for k, p in positions.items() if p[1] == positions["fc_500"][1])
    right = next(k for x, k in row if x > positions["fc_500"][0])
    a = on_screen(canvas, positions["fc_500"], -0.05, -0.1)
    b = on_screen(canvas, positions[right], 1.05, 1.1)
    page.keyboard.down("Shift")
    page.mouse.move(*a)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(a[0] + (b[0] - a[0]) * k / 10, a[1] + (b[1] - a[1]) * k / 10)
    page.mouse.up()
    page.keyboard.up("Shift")
    settled(page)
    assert where(nb, canvas)[1] == sorted(["fc_500", right])

    # zoomed in on fc_500 past the compact threshold: once still, React Flow draws the
    # nodes in view in full detail and the canvas is gone
    state = far(canvas)
    zoom = wheel(page, canvas, on_screen(canvas, positions["fc_500"]), 40, 0.6)
    expect(canvas.locator(".fs-far-canvas")).to_have_count(0)
    drawn = canvas.locator(".react-flow__node")
    expect(drawn.first).to_be_attached()
    assert 1 <= drawn.count() < 200, drawn.count()
    expect(canvas.locator('.react-flow__node[data-id="fc_500"] .fs-node-head')).to_be_visible()
    expect(canvas.locator(".fs-compact")).to_have_count(0)
    assert zoom >= 0.6
    shot(canvas, "near_1000_fc500")

    # zoomed out again below the threshold: the canvas at once, no node component left
    state = far(canvas)
    wheel(page, canvas, (state["left"] + 300, state["top"] + 300), 40, -0.3)
    expect(canvas.locator(".fs-far-canvas")).to_have_count(1)
    expect(canvas.locator(".react-flow__node")).to_have_count(0)
    assert far(canvas)["nodes"] == NODES
    shot(canvas, "far_1000_zoom03")
    assert network.outside == []
