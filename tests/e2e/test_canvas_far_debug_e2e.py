"""DesignCanvas at 1,000 layers zoomed out (the far canvas draws the nodes, far_canvas.jsx)
linked to a debugger session: the node owning the op just run must be lit there as on
React Flow's nodes (debug_link.js: outlined in the phase's colour, its "▶ op" label), at
that node's place, and the mark must move with each stop of the session. Checked on the
pixels of the marks' canvas (.fs-far-link) at the lit node's outline, and on the id it
reports drawing. Screenshots go to artifacts/e2e/canvas_far_debug/.
"""
import json
import pathlib

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import settled  # noqa: E402
from test_canvas_far_drawing_e2e import BLOCK, far, open_far  # noqa: E402
from test_canvas_size_e2e import DESIGNS  # noqa: E402

SHOTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "e2e" / "canvas_far_debug"
FORWARD, BACKWARD = (245, 158, 11), (139, 92, 246)  # debug_link.js PHASE_COLOR
SETUP = DESIGNS + """
import numpy as np
design = varied_chain(996)
design.set_optimizer("SGD", learning_rate=0.01)  # a backward to step into
canvas = DesignCanvas(design=design, height=620)
canvas
"""
# a session over the canvas's program, linked without a DebuggerView (its graph of 3,000
# ops is not what this test is about); every stop published at once
LINK = """import json
built = canvas.full_build(need_loss=True)
feed = {"x": np.ones((2, 16), "float32"), "label": np.zeros((2, 1), "int64")}
session = canvas.executor.debug(built.main, feed, [built.loss], canvas.scope)
canvas.link_debugger(session, min_interval_s=0)
print("WHERE=" + json.dumps({n["id"]: n["position"] for n in canvas.view["nodes"]}))"""
# The RGBA of the marks' canvas at page point (x, y) (its box on screen includes the
# transform it is moved or scaled by).
PIXEL_JS = """(root, [x, y]) => {
  const c = root.querySelector('.fs-far-link');
  const r = c.getBoundingClientRect();
  const px = Math.floor((x - r.left) * c.width / r.width), py = Math.floor((y - r.top) * c.height / r.height);
  return [...c.getContext('2d').getImageData(px, py, 1, 1).data];
}"""


def outline_points(canvas, position):
    """Page points on the lit outline of the block at flow `position` (left and right
    middle, 3 screen px outside its box: debug_link.js draws it 2-6 px out at zoom 1,
    far_scene.js at least 3 px wide on screen) and its centre (no mark there)."""
    s = far(canvas)
    zoom = s["zoom"]
    out = max(4.0, 4 * max(1.0, 0.75 / zoom) * zoom) if zoom < 0.75 else 4 * zoom
    x0 = s["left"] + s["tx"] + position[0] * zoom
    y0 = s["top"] + s["ty"] + position[1] * zoom
    w, h = BLOCK[0] * zoom, BLOCK[1] * zoom
    return [(x0 - out + 0.5, y0 + h / 2), (x0 + w + out - 0.5, y0 + h / 2)], (x0 + w / 2, y0 + h / 2)


def pixel(canvas, point):
    return canvas.evaluate(PIXEL_JS, list(point))


def near(rgba, rgb, tol=40):
    return rgba[3] >= 200 and all(abs(a - b) <= tol for a, b in zip(rgba, rgb))


def assert_lit(canvas, positions, node_id, rgb):
    expect(canvas.locator(".fs-far-link")).to_have_attribute("data-debug-node", node_id)
    expect(canvas).to_have_attribute("data-debug-node", node_id)  # the DOM path's own mark
    ring, centre = outline_points(canvas, positions[node_id])
    for point in ring:
        got = pixel(canvas, point)
        assert near(got, rgb), f"{node_id}'s outline at {point}: {got}, expected {rgb}"
    assert pixel(canvas, centre)[3] == 0, f"{node_id}'s face covered by the mark"


def assert_unlit(canvas, positions, node_id):
    """No outline drawn around `node_id` (a lit neighbour's faint glow may reach it)."""
    ring, _ = outline_points(canvas, positions[node_id])
    for point in ring:
        got = pixel(canvas, point)
        assert got[3] < 128, f"{node_id} still outlined at {point}: {got}"


def test_far_canvas_lights_the_debugged_layer_and_follows_each_stop(lab, page, network):
    lab.write_notebook("canvas_far_debug.ipynb", [
        SETUP, LINK,
        'session.run_to(op_index=3 * 500 + 1)\nprint("AT", canvas.link_state["node"])',
        'for _ in range(3): session.step_into()\nprint("AT", canvas.link_state["node"])',
        'session.run_to(op_type="relu_grad")\nprint("AT", canvas.link_state["node"], canvas.link_state["phase"])',
    ])
    nb, canvas = open_far(page, lab, "canvas_far_debug.ipynb")
    out = nb.run_until(1, "WHERE=")
    positions = json.loads(out.split("WHERE=", 1)[1].splitlines()[0])
    canvas.scroll_into_view_if_needed()
    settled(page)
    assert far(canvas)["zoom"] < 0.5  # the whole design in view: the far canvas draws
    expect(canvas.locator(".fs-far-link")).to_have_attribute("data-debug-node", "")  # before the first op

    assert "AT fc_500" in nb.run_cell(2).inner_text()
    canvas.scroll_into_view_if_needed()
    settled(page)
    assert_lit(canvas, positions, "fc_500", FORWARD)
    SHOTS.mkdir(parents=True, exist_ok=True)
    canvas.screenshot(path=str(SHOTS / "far_lit_fc500.png"))

    # one layer on: the mark moves, the layer before is no longer lit
    assert "AT fc_501" in nb.run_cell(3).inner_text()
    canvas.scroll_into_view_if_needed()
    settled(page)
    assert_lit(canvas, positions, "fc_501", FORWARD)
    assert_unlit(canvas, positions, "fc_500")

    # into the backward: the last layer's grad op, in the backward colour
    assert "AT fc_995 backward" in nb.run_cell(4).inner_text()
    canvas.scroll_into_view_if_needed()
    settled(page)
    assert_lit(canvas, positions, "fc_995", BACKWARD)
    assert_unlit(canvas, positions, "fc_501")
    canvas.screenshot(path=str(SHOTS / "far_lit_fc995_backward.png"))
    assert network.outside == []
