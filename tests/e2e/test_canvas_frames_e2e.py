"""DesignCanvas at 1,000 layers, what keeps pan and zoom frames short (issue #16 item 4):
zoomed out, the nodes and wires are drawn by one canvas (js/src/canvas/far_canvas.jsx),
not by 1,000 React Flow node components mounted and unmounted as they enter and leave
the view; a pan within the canvas's margin moves the drawn canvas instead of drawing it
again; the minimap is mounted only once the view is still. Each of those must still
draw the same design and keep the canvas usable: a pan moves the view by the drag and
keeps every node drawn and clickable, zooming in past the compact zoom gives the nodes
and wires back to React Flow once the view is still (drawn to real handles), the minimap
appears after the zoom and goes after a fit, the canvas follows Python adding a layer.
Every wait is on a condition of the page or the kernel's output.
"""
import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import flow, open_wide, settled  # noqa: E402
from test_canvas_far_drawing_e2e import WHERE, far, on_screen, wheel, where  # noqa: E402
from test_canvas_size_e2e import DESIGNS  # noqa: E402  (varied_chain, as in the 200-layer tests)

NODES = 1000
SETUP = DESIGNS + """
canvas = DesignCanvas(design=varied_chain(996), height=620)
canvas
"""
ADD = """canvas.design.add("fc", inputs={"input": "fc_10"}, size=8, name="extra")
canvas.refresh()
print("NODES=%d" % len(canvas.view["nodes"]))"""


def whole(canvas, nodes):
    """The far canvas drawing all `nodes` nodes and their wires (a chain: one fewer)."""
    return canvas.locator(f'.fs-far-canvas[data-nodes="{nodes}"][data-drawn-nodes="{nodes}"]'
                          f'[data-wires="{nodes - 1}"][data-drawn-wires="{nodes - 1}"]')


def test_1000_layers_far_canvas_pan_zoom_minimap(lab, page, network):
    lab.write_notebook("canvas_frames.ipynb", [SETUP, WHERE, ADD])
    nb = open_wide(page, lab, "canvas_frames.ipynb")
    nb.run_cell(0, timeout=120_000)
    canvas = flow(nb, 0)
    canvas.scroll_into_view_if_needed()
    # the whole design: every node and wire on the far canvas, none left to React Flow
    expect(whole(canvas, NODES)).to_have_count(1, timeout=60_000)
    expect(canvas.locator(".react-flow__node")).to_have_count(0)
    expect(canvas.locator(".react-flow__edge")).to_have_count(0)
    expect(canvas.locator(".react-flow__minimap")).to_have_count(0)  # the whole design is in view
    settled(page)
    positions, _ = where(nb, canvas)
    before = far(canvas)
    assert before["zoom"] < 0.5, before

    # a pan: the view moves by the drag, the canvas moves with it without being drawn
    # again (within its margin), every node still drawn, and a click on one selects it
    x, y = before["left"] + 8, before["top"] + 8  # the fit's margin: empty canvas
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x + 6 * k, y + 3 * k)
    page.mouse.up()
    moved = far(canvas)
    assert (round(moved["tx"] - before["tx"]), round(moved["ty"] - before["ty"])) == (120, 60), (before, moved)
    assert canvas.locator(".fs-far-canvas").evaluate("(c) => c.style.transform") == "translate(120px, 60px)"
    expect(whole(canvas, NODES)).to_have_count(1)
    settled(page)
    page.mouse.click(*on_screen(canvas, positions["fc_3"]))
    expect(canvas.locator(".fs-inspector")).to_contain_text("fc_3")

    # zoomed in to full detail: once the view is still, React Flow draws the nodes in view
    # and their wires again, to its own handles; the minimap comes (part of the design is
    # out of view)
    pane = canvas.locator(".react-flow__pane").bounding_box()
    wheel(page, canvas, (pane["x"] + pane["width"] / 2, pane["y"] + pane["height"] / 2), 40, 0.6)
    expect(canvas.locator(".fs-far-canvas")).to_have_count(0)
    expect(canvas.locator(".fs-compact")).to_have_count(0)
    edges = canvas.locator(".react-flow__edge path.react-flow__edge-path")
    expect(edges.first).to_be_attached()
    assert edges.count() >= 1
    expect(canvas.locator(".react-flow__handle.fs-handle-out").first).to_be_visible()
    expect(canvas.locator(".react-flow__minimap")).to_be_visible()

    # fit: the far canvas draws everything again and the minimap goes
    canvas.locator('.fs-tool[data-action="fit"]').click()
    expect(whole(canvas, NODES)).to_have_count(1, timeout=60_000)
    expect(canvas.locator(".react-flow__node")).to_have_count(0)
    expect(canvas.locator(".react-flow__minimap")).to_have_count(0)

    # Python adds a layer reading fc_10: the canvas draws it and its wire
    assert f"NODES={NODES + 1}" in nb.run_until(2, f"NODES={NODES + 1}")
    canvas.scroll_into_view_if_needed()
    added = canvas.locator(f'.fs-far-canvas[data-nodes="{NODES + 1}"][data-wires="{NODES}"]')
    expect(added).to_have_count(1, timeout=60_000)
    assert network.outside == []
