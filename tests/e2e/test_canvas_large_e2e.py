"""DesignCanvas at 1,000 layers in a real JupyterLab (issue #16 item 4): the first view
draws every node (the whole design in view: compact blocks, then, once React Flow has
measured each, the far canvas, js/src/canvas/far_canvas.jsx); zoomed in, only the nodes in
view are drawn (React Flow's onlyRenderVisibleElements, from 300 nodes on), so an edit
or an undo restyles a few dozen nodes, not 20,000 elements; an attribute edit
keeps the focus in its field (a field mounted again dropped it to the page, and the next
press made JupyterLab focus the notebook and the cell: a restyle of the page each);
undo brings the old shape back; a node selected from Python while out of view (not
drawn) opens in the property panel and the view moves to show it (its box read from
React Flow's store, as there is none in the page); "fit" draws every node again (the far
canvas). Every
wait is on a condition of the page or of the kernel's output.
"""
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import flow, inspector_field, node, open_wide, settled  # noqa: E402
from test_canvas_size_e2e import DESIGNS, box  # noqa: E402  (varied_chain, as in the 200-layer tests)

NODES = 1000
SETUP = DESIGNS + """
canvas = DesignCanvas(design=varied_chain(996), height=620)
canvas
"""


def test_1000_layers_drawn_whole_then_only_in_view_edit_keeps_focus_undo(lab, page, network):
    lab.write_notebook("canvas_1000.ipynb", [
        SETUP, 'print("SIZE=%s" % canvas.design.node("fc_500").attrs.get("size"))',
        'canvas.select(["fc_900"])\nprint("SELECTED=%s" % canvas.selected)'])
    nb = open_wide(page, lab, "canvas_1000.ipynb")
    nb.run_cell(0, timeout=120_000)
    canvas = flow(nb, 0)
    nodes = canvas.locator(".react-flow__node")
    # the whole design: every node drawn, by the far canvas once React Flow measured them
    whole = canvas.locator(f'.fs-far-canvas[data-nodes="{NODES}"][data-drawn-nodes="{NODES}"]')
    expect(whole).to_have_count(1, timeout=60_000)
    expect(nodes).to_have_count(0)
    settled(page)

    # find fc_500: zoomed in, it is drawn in full detail, and only what is in view is drawn
    find = canvas.locator(".fs-find")
    find.fill("fc_500")
    find.press("Enter")
    target = node(canvas, "fc_500")
    expect(target).to_have_class(re.compile(r"\bfs-found\b"))
    expect(target.locator(".fs-node-detail")).to_be_visible()
    target.element_handle().wait_for_element_state("stable")
    drawn = nodes.count()
    assert 1 < drawn < 200, f"zoomed in on one of {NODES} nodes, {drawn} are in the page"
    assert canvas.locator(".fs-compact").count() == 0  # none left as a compact block

    # an edit in the property panel: the new shape on the node, the focus still in the field
    target.locator(".fs-node-head").click()
    field = inspector_field(canvas, "size")
    expect(field).to_have_value("18")  # 16 + 500 % 3
    field.fill("40")
    field.press("Enter")
    shape = target.locator(".fs-port-out .fs-shape")
    expect(shape).to_have_text("[-1, 40]")
    expect(field).to_have_value("40")
    expect(field).to_be_focused()
    assert "SIZE=40" in nb.run_until(1, "SIZE=40")

    # undo from the toolbar: the old shape, the field showing the old value
    canvas.locator('.fs-tool[data-action="undo"]').click()
    expect(shape).to_have_text("[-1, 18]")
    expect(field).to_have_value("18")
    assert "SIZE=18" in nb.run_until(1, "SIZE=18")

    # selected from Python while out of view: the panel shows it and the view moves to it
    far = node(canvas, "fc_900")
    expect(far).to_have_count(0)  # not drawn: only the nodes in view are
    nb.run_cell(2)
    assert "SELECTED=['fc_900']" in nb.output_text(2)
    expect(canvas.locator(".fs-inspector")).to_contain_text("fc_900")
    expect(far).to_be_visible()
    far.element_handle().wait_for_element_state("stable")
    pane, shown = box(canvas.locator(".fs-flow")), box(far)
    assert pane["x"] <= shown["x"] and shown["x"] + shown["width"] <= pane["x"] + pane["width"], (pane, shown)
    assert pane["y"] <= shown["y"] and shown["y"] + shown["height"] <= pane["y"] + pane["height"], (pane, shown)

    # fit: the whole design again, every node drawn by the far canvas
    canvas.locator('.fs-tool[data-action="fit"]').click()
    expect(whole).to_have_count(1, timeout=60_000)
    expect(nodes).to_have_count(0)
    assert network.outside == []
