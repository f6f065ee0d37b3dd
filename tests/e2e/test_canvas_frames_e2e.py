"""DesignCanvas at 1,000 layers, what keeps pan and zoom frames short (issue #16 item 4):
zoomed out, the top-level wires are one SVG path per kind of wire (js/src/canvas/far_edges.jsx),
not 999 React Flow edges; a compact block's handles are plain elements React Flow still
reads (no store subscription each); the minimap is mounted only once the view is still.
Each of those must still draw the same picture and keep the canvas usable: every wire of
the far layer starts on its source's output handle, the wires follow the nodes when
Python adds one, a pan keeps the nodes drawn and clickable, zooming in past the compact
zoom gives the wires back to React Flow (drawn to real handles), the minimap appears
after the zoom and goes after a fit. Every wait is on a condition of the page or the
kernel's output.
"""
import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import flow, node, open_wide, settled  # noqa: E402
from test_canvas_size_e2e import DESIGNS  # noqa: E402  (varied_chain, as in the 200-layer tests)

NODES = 1000
SETUP = DESIGNS + """
canvas = DesignCanvas(design=varied_chain(996), height=620)
canvas
"""
ADD = """canvas.design.add("fc", inputs={"input": "fc_10"}, size=8, name="extra")
canvas.refresh()
print("NODES=%d" % len(canvas.view["nodes"]))"""

# The far layer's wires (how many its groups say they draw, each subpath's start) and the
# right-middle of every drawn output handle, both in flow coordinates (React Flow places a
# wire's source end there), and the largest distance from a start to its nearest handle
# (meaningful while every node is in view, hence drawn).
FAR_JS = """(root) => {
  const flowBox = root.querySelector('.react-flow').getBoundingClientRect();
  const t = root.querySelector('.react-flow__viewport').style.transform;
  const [, tx, ty] = t.match(/translate\\(([-\\d.e]+)px, ([-\\d.e]+)px\\)/).map(Number);
  const zoom = Number(t.match(/scale\\(([^)]+)\\)/)[1]);
  const groups = [...root.querySelectorAll('.fs-far-wires')];
  const starts = [];
  for (const g of groups) {
    const d = g.querySelector('path.react-flow__edge-path').getAttribute('d');
    for (const m of d.matchAll(/M\\s*([-\\d.e]+)[ ,]+([-\\d.e]+)/g)) starts.push([Number(m[1]), Number(m[2])]);
  }
  const outs = [...root.querySelectorAll('.react-flow__node .react-flow__handle.source')].map((h) => {
    const b = h.getBoundingClientRect();
    return [(b.right - flowBox.left - tx) / zoom, (b.top + b.height / 2 - flowBox.top - ty) / zoom, h.dataset.nodeid];
  });
  let worst = 0;
  const from = {};
  for (const [x, y] of starts) {
    let best = Infinity, id = null;
    for (const [hx, hy, nodeId] of outs) {
      const dist = Math.hypot(hx - x, hy - y);
      if (dist < best) { best = dist; id = nodeId; }
    }
    worst = Math.max(worst, best);
    from[id] = (from[id] ?? 0) + 1;
  }
  return { count: groups.reduce((k, g) => k + Number(g.dataset.edges), 0), starts: starts.length,
           path: starts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' '),
           outs: outs.length, worst, from, zoom, tx, ty,
           flowEdges: root.querySelectorAll('.react-flow__edge').length };
}"""


def far_wires(canvas):
    return canvas.evaluate(FAR_JS)


def zoom_in_past_compact(page, canvas):
    """Ctrl+wheel at the pane's middle until the zoom reaches full detail (>= 0.5)."""
    box = canvas.locator(".react-flow__pane").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.down("Control")
    try:
        for _ in range(40):
            page.mouse.wheel(0, -120)
            if far_wires(canvas)["zoom"] >= 0.6:
                return
    finally:
        page.keyboard.up("Control")
    raise AssertionError("Ctrl+wheel did not zoom the canvas in to full detail")


def test_1000_layers_far_wires_pan_zoom_minimap(lab, page, network):
    lab.write_notebook("canvas_frames.ipynb", [SETUP, ADD])
    nb = open_wide(page, lab, "canvas_frames.ipynb")
    nb.run_cell(0, timeout=120_000)
    canvas = flow(nb, 0)
    canvas.scroll_into_view_if_needed()
    nodes = canvas.locator(".react-flow__node")
    expect(nodes).to_have_count(NODES, timeout=60_000)
    expect(canvas.locator(".fs-compact")).to_have_count(NODES)
    settled(page)

    # the whole design: 999 wires in the far layer, none left to React Flow, each starting
    # on an output handle of a compact block (React Flow read the plain handles)
    far = far_wires(canvas)
    assert far["count"] == far["starts"] == NODES - 1, far
    assert far["flowEdges"] == 0, far
    assert far["outs"] == NODES, far  # every layer has an output (the mean too)
    assert far["worst"] < 1.5, far
    assert far["zoom"] < 0.5
    expect(canvas.locator(".react-flow__minimap")).to_have_count(0)  # the whole design is in view

    # a pan: the view moves by the drag, the wires stay where they are in the flow, the
    # nodes are still drawn and a click on one selects it
    pane = canvas.locator(".react-flow__pane").bounding_box()
    x, y = pane["x"] + 8, pane["y"] + 8
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x + 6 * k, y + 3 * k)
    page.mouse.up()
    moved = far_wires(canvas)
    assert (round(moved["tx"] - far["tx"]), round(moved["ty"] - far["ty"])) == (120, 60), (far, moved)
    assert moved["path"] == far["path"] and moved["count"] == NODES - 1  # nodes out of view: not drawn
    settled(page)
    node(canvas, "fc_3").click()
    expect(canvas.locator(".fs-inspector")).to_contain_text("fc_3")

    # zoomed in to full detail: React Flow draws the wires again, to its own handles; the
    # minimap comes once the view is still (part of the design is out of view)
    zoom_in_past_compact(page, canvas)
    expect(canvas.locator(".fs-far-wires")).to_have_count(0)
    expect(canvas.locator(".fs-compact")).to_have_count(0)
    edges = canvas.locator(".react-flow__edge path.react-flow__edge-path")
    expect(edges.first).to_be_attached()
    assert edges.count() >= 1
    expect(canvas.locator(".react-flow__handle.fs-handle-out").first).to_be_visible()
    expect(canvas.locator(".react-flow__minimap")).to_be_visible()

    # fit: the far layer draws every wire again and the minimap goes
    canvas.locator('.fs-tool[data-action="fit"]').click()
    expect(canvas.locator(".fs-compact")).to_have_count(NODES, timeout=60_000)
    expect(canvas.locator(".react-flow__minimap")).to_have_count(0)
    settled(page)
    back = far_wires(canvas)
    assert back["count"] == NODES - 1 and back["worst"] < 1.5 and back["flowEdges"] == 0, back

    # Python adds a layer reading fc_10: its wire joins the far layer, from fc_10's output
    assert f"NODES={NODES + 1}" in nb.run_until(1, f"NODES={NODES + 1}")
    expect(nodes).to_have_count(NODES + 1, timeout=60_000)
    page.wait_for_function("""(root) => [...root.querySelectorAll('.fs-far-wires')]
        .reduce((k, g) => k + Number(g.dataset.edges), 0) === %d""" % NODES,
                           arg=canvas.element_handle())
    added = far_wires(canvas)
    assert added["worst"] < 1.5 and added["from"].get("fc_10") == 2, added
    assert network.outside == []
