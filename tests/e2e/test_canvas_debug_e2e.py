"""DesignCanvas in a real JupyterLab, linked to a debugger; LeNet composed by hand.

What only a browser shows: the node lit while a DebuggerView (or Python) steps the
canvas's program, in the backward colour after stepping into the backward; a recurrent
zone's frame; the port card; the node context menu and the key help; and a small LeNet
dropped, wired and sized in the property panel (filter_size typed as text) with its NCHW
shapes on the nodes. Waits are on conditions (Playwright's expect, the kernel idle).
Screenshots go to artifacts/e2e/canvas_debug/.
"""
import pathlib
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import (connect, drop_layer, flow, inspector_field, node,  # noqa: E402
                             open_wide, settled, wait_until_still)

SHOTS = pathlib.Path(__file__).resolve().parents[2] / "artifacts" / "e2e" / "canvas_debug"
FORWARD, BACKWARD = "rgb(245, 158, 11)", "rgb(139, 92, 246)"

SEQUENCE_MODEL = """\
import json
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas

d = fd.Design()
ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
label = d.add("data", name="label", shape=[None, 1], dtype="int64")
emb = d.add("embedding", inputs={"input": ids}, size=[30, 16])
g = d.add("recurrent_group", name="rnn")
word = d.add_step_input(g, emb, name="word")
mem = d.add_memory(g, size=16, name="state")
h = d.add("fc", inputs={"input": [word, mem]}, size=16, act="tanh", group=g, name="h")
d.link_memory(mem, h)
d.set_outputs(g, [h])
pooled = d.add("sequence_pool", inputs={"input": g}, pool_type="max", name="pool")
logits = d.add("fc", inputs={"input": pooled}, size=2, name="logits")
cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label}, name="cost")
d.set_loss(d.add("mean", inputs={"x": cost}, name="loss"))
d.set_optimizer("Adam", learning_rate=0.01)
rng = np.random.default_rng(0)
feed = {"ids": fd.LoDTensor(rng.integers(0, 30, (12, 1)).astype("int64"), [[0, 3, 8, 12]]),
        "label": np.array([[0], [1], [0]], dtype="int64")}
canvas = DesignCanvas(d, height=560)
canvas
"""


def shot(locator, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(SHOTS / name))


def lit(page, canvas, node_id, phase, color):
    """Wait until the canvas lights ``node_id`` in ``phase``'s colour."""
    expect(canvas).to_have_attribute("data-debug-node", node_id)
    expect(canvas).to_have_attribute("data-debug-phase", phase)
    face = node(canvas, node_id).locator(":scope > .fs-node, :scope > .fs-zone").first
    expect(face).to_have_css("outline-color", color)


def zoom_until_detailed(page, canvas, node_id, clicks=8):
    """Zoom in with the canvas's + button until ``node_id`` draws its ports (semantic
    zoom draws a compact block when zoomed out)."""
    ports = node(canvas, node_id).locator(".fs-port-out")
    for _ in range(clicks):
        if ports.count():
            return
        canvas.locator(".react-flow__controls-zoomin").click()
        wait_until_still(node(canvas, node_id))
    expect(ports.first).to_be_visible()


def pseudo_content(locator, which="::after"):
    return locator.evaluate("(el, w) => getComputedStyle(el, w).content", which)


def test_debugger_lights_the_layer_forward_backward_and_in_the_zone(lab, page, network):
    lab.write_notebook("canvas_debug.ipynb", [
        SEQUENCE_MODEL,
        "view = canvas.debug(feed=feed)\nview",
        'view.run_to(op_type="mul_grad")\nprint("AT", view.op_type, view.phase)',
        'view.session.restart()\nfor _ in range(3): view.session.step_into()\n'
        'print("FRAME", view.session.position)',
        'print("SELECTED=" + json.dumps(canvas.selected), "INSPECTED=" + view.inspector.selected)',
    ])
    nb = open_wide(page, lab, "canvas_debug.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "logits")).to_be_visible()
    nb.run_cell(1)
    expect(canvas).to_have_attribute("data-debug-node", "")   # paused before the first op

    # stepped into the backward from Python: the layer's grad ops light the same node
    assert "AT mul_grad backward" in nb.run_cell(2).inner_text()
    lit(page, canvas, "logits", "backward", BACKWARD)
    label = pseudo_content(node(canvas, "logits"), "::before")
    assert "grad mul_grad" in label, label
    shot(canvas, "backward_lit.png")

    # hovering an output port while paused: its value's shape and min/mean/max. Zoomed
    # out (the first view of this design), a compact block stands for its first output
    card = canvas.locator(".fs-port-card")
    block = node(canvas, "logits").locator(".fs-compact")
    if block.count():
        block.hover()
        expect(card).to_contain_text(re.compile(r"\[3, 2\]\s*min -?\d.*mean.*max"))
        shot(canvas, "port_card_compact.png")
        canvas.locator(".react-flow__pane").hover(position={"x": 10, "y": 10})
        expect(card).to_have_count(0)
    zoom_until_detailed(page, canvas, "logits")
    node(canvas, "logits").locator(".fs-port-out").first.hover()
    expect(card).to_contain_text(re.compile(r"\[3, 2\]\s*min -?\d.*mean.*max"))
    shot(canvas, "port_card.png")

    # a Python loop into the recurrent op: the inner node lit, the zone shows its frame
    nb.run_cell(3)
    lit(page, canvas, "h", "forward", FORWARD)
    expect(node(canvas, "rnn")).to_have_js_property("dataset.id", "rnn")
    frame = pseudo_content(node(canvas, "rnn"))
    assert re.search(r"t 0 of 5", frame), frame
    zone = node(canvas, "rnn").locator(":scope > .fs-zone")
    expect(zone).to_have_css("outline-style", "dashed")
    expect(zone).to_have_css("outline-color", FORWARD)
    shot(canvas, "zone_frame.png")

    # the debugger's graph and the canvas select together: a click on the canvas...
    node(canvas, "cost").locator(".fs-node-head").click()
    out = nb.run_until(4, 'SELECTED=["cost"]')
    assert "INSPECTED=cost" in out, out
    # ... and a click on an op in the debugger's graph selects its layer on the canvas
    nb.widget(1, ".fs-graph").locator('svg g.node[id="op:0:2"]').click()   # sequence_pool
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", "pool")
    assert network.outside == []


def test_context_menu_run_to_here_rename_and_key_help(lab, page, network):
    lab.write_notebook("canvas_menu.ipynb", [
        SEQUENCE_MODEL,
        "view = canvas.debug(feed=feed)",
        'print("AT", view.op_type, view.phase, "IDS=" + json.dumps(sorted(canvas.design.document.ids())))',
        'canvas.reader = [feed] * 30\ncanvas.train(epochs=1).wait()\n'
        'print("LOSS=" + canvas.link_state["loss"]["text"])',
    ])
    nb = open_wide(page, lab, "canvas_menu.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "pool")).to_be_visible()
    nb.run_cell(1)
    settled(page)

    # right-click a node: its menu; "Run to here" runs the session to the end of the layer
    node(canvas, "pool").click(button="right")
    menu = canvas.locator('.fs-menu[data-node="pool"]')
    expect(menu).to_be_visible()
    expect(menu.locator(".fs-menu-item")).to_have_text(
        ["Rename…", "Duplicate", "Delete", "Run to here"])
    shot(canvas, "context_menu.png")
    menu.locator('[data-action="run_to_here"]').click()
    expect(menu).to_have_count(0)
    lit(page, canvas, "pool", "forward", FORWARD)
    assert "AT sequence_pool forward" in nb.run_cell(2).inner_text()

    # rename through the menu: type the name, Enter
    node(canvas, "logits").click(button="right")
    menu = canvas.locator('.fs-menu[data-node="logits"]')
    menu.locator('[data-action="rename"]').click()
    field = menu.locator(".fs-menu-rename")
    field.fill("head")
    field.press("Enter")
    expect(node(canvas, "head")).to_be_visible()
    out = nb.run_until(2, '"head"')
    assert '"logits"' not in out, out

    # the keyboard opens the selected node's menu too: Shift+F10, Down, Enter
    node(canvas, "cost").click()
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", "cost")
    page.keyboard.press("Shift+F10")
    menu = canvas.locator('.fs-menu[data-node="cost"]')
    expect(menu.locator('[data-action="rename"]')).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.locator('[data-action="duplicate"]')).to_be_focused()
    page.keyboard.press("Enter")
    copy = node(canvas, "softmax_with_cross_entropy_0")     # the duplicate, selected
    expect(copy).to_be_visible()
    expect(menu).to_have_count(0)
    copy.click()
    page.keyboard.press("Delete")                             # and gone again
    expect(copy).to_have_count(0)

    # a memory's menu clears its link (the dashed edge goes, the memory says what it needs);
    # Ctrl+Z puts it back
    memory_edge = canvas.locator('[data-testid="rf__edge-e:h:0>state:in:link:0"]')
    expect(memory_edge).to_have_count(1)
    node(canvas, "state").click(button="right")
    canvas.locator('.fs-menu[data-node="state"] [data-action="clear_memory_link"]').click()
    expect(memory_edge).to_have_count(0)
    expect(node(canvas, "state").locator(".fs-node")).to_have_class(re.compile(r"\bfs-has-error\b"))
    canvas.locator(".react-flow__pane").click(position={"x": 20, "y": 20})
    page.keyboard.press("Control+z")
    expect(memory_edge).to_have_count(1)

    # a zone's menu collapses it
    node(canvas, "rnn").click(button="right", position={"x": 12, "y": 8})
    canvas.locator('.fs-menu[data-node="rnn"] [data-action="toggle_zone"]').click()
    expect(node(canvas, "rnn").locator(".fs-zone")).to_have_class(re.compile(r"\bfs-zone-closed\b"))

    # "?" shows the keys; Escape hides them
    canvas.locator(".react-flow__pane").click(position={"x": 20, "y": 20})
    page.keyboard.press("?")
    help_box = canvas.locator(".fs-help")
    expect(help_box).to_be_visible()
    expect(help_box.locator("tr").first).to_contain_text("show or hide this help")
    expect(help_box).to_contain_text("Ctrl+G")
    shot(canvas, "key_help.png")
    page.keyboard.press("Escape")
    expect(help_box).to_have_count(0)

    # training: the loss node shows the live loss (the last one once it is done)
    nb.run_cell(3)
    last = re.search(r"LOSS=(\S+)", nb.output_text(3)).group(1)
    page.wait_for_function("([el, text]) => getComputedStyle(el, '::after').content.includes(text)",
                           arg=[node(canvas, "loss").element_handle(), last])
    shot(canvas, "live_loss.png")
    assert network.outside == []


def dropped(page, canvas, node_id):
    """Wait until the node just dropped is drawn, selected in the panel and still (the
    panel opening narrows the pane, and the canvas keeps the node in view)."""
    expect(node(canvas, node_id)).to_be_visible()
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", node_id)
    settled(page)
    wait_until_still(node(canvas, node_id))


def set_field(canvas, name, text):
    field = inspector_field(canvas, name)
    field.fill(text)
    field.press("Enter")
    return field


def select_node(canvas, node_id):
    node(canvas, node_id).locator(".fs-node-head").click()
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", node_id)


def shape_of(canvas, node_id):
    return node(canvas, node_id).locator(".fs-port-out .fs-shape").first


def test_compose_lenet_with_mouse_and_keyboard(lab, page, network):
    lab.write_notebook("canvas_lenet.ipynb", [
        "import json\nfrom fluidscope.widgets import DesignCanvas\n"
        "canvas = DesignCanvas(height=560)\ncanvas",
        "b = canvas.design.build(optimize=False)\n"
        "print('SHAPES=' + json.dumps({k: v[0] for k, v in b.shapes.items()}, sort_keys=True))\n"
        "print('ATTRS=' + json.dumps({n: canvas.design.node(n).attrs for n in canvas.design.nodes},"
        " sort_keys=True))",
    ])
    nb = open_wide(page, lab, "canvas_lenet.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(canvas.locator(".fs-palette")).to_be_visible()

    # the image input: a data layer, its shape typed in the panel
    drop_layer(page, canvas, "data", 0.03, 0.12)
    dropped(page, canvas, "data_0")
    select_node(canvas, "data_0")
    set_field(canvas, "shape", "[None, 1, 28, 28]")
    expect(shape_of(canvas, "data_0")).to_have_text("[-1, 1, 28, 28]")

    # conv: a 3x3 kernel as dropped; 6 filters of 5x5 typed in the panel
    drop_layer(page, canvas, "conv2d", 0.36, 0.12)
    dropped(page, canvas, "conv2d_0")
    connect(page, canvas, "data_0", "conv2d_0")
    expect(shape_of(canvas, "conv2d_0")).to_have_text("[-1, 16, 26, 26]")
    select_node(canvas, "conv2d_0")
    expect(inspector_field(canvas, "filter_size")).to_have_value("3")
    set_field(canvas, "num_filters", "6")
    set_field(canvas, "filter_size", "5")
    expect(shape_of(canvas, "conv2d_0")).to_have_text("[-1, 6, 24, 24]")
    # a bad text: the field says why and keeps it; nothing changes
    field = set_field(canvas, "filter_size", "5, x")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(canvas.locator(".fs-inspector .fs-field-error")).to_contain_text("filter_size '5, x' does not read")
    expect(shape_of(canvas, "conv2d_0")).to_have_text("[-1, 6, 24, 24]")
    shot(canvas, "lenet_bad_filter_size.png")
    field = set_field(canvas, "filter_size", "5, 5")
    expect(shape_of(canvas, "conv2d_0")).to_have_text("[-1, 6, 24, 24]")
    expect(canvas.locator(".fs-inspector .fs-field-error")).to_have_count(0)

    # pool 2x2 stride 2, then a second conv (16 of 5x5) and pool, then fc 120, 84 and 10:
    # LeNet-5 (the first conv pads its 28x28 input in the original; here it is unpadded)
    def pool(node_id, x, y, source, shape):
        drop_layer(page, canvas, "pool2d", x, y)
        dropped(page, canvas, node_id)
        connect(page, canvas, source, node_id)
        select_node(canvas, node_id)
        set_field(canvas, "pool_size", "2")
        set_field(canvas, "pool_stride", "2")
        expect(shape_of(canvas, node_id)).to_have_text(shape)

    def fc(node_id, x, y, source, size):
        drop_layer(page, canvas, "fc", x, y)
        dropped(page, canvas, node_id)
        connect(page, canvas, source, node_id)
        select_node(canvas, node_id)
        set_field(canvas, "size", str(size))
        expect(shape_of(canvas, node_id)).to_have_text(f"[-1, {size}]")

    pool("pool2d_0", 0.66, 0.12, "conv2d_0", "[-1, 6, 12, 12]")
    drop_layer(page, canvas, "conv2d", 0.03, 0.45)
    dropped(page, canvas, "conv2d_1")
    connect(page, canvas, "pool2d_0", "conv2d_1")
    select_node(canvas, "conv2d_1")
    set_field(canvas, "filter_size", "5")
    expect(shape_of(canvas, "conv2d_1")).to_have_text("[-1, 16, 8, 8]")
    pool("pool2d_1", 0.36, 0.45, "conv2d_1", "[-1, 16, 4, 4]")
    fc("fc_0", 0.66, 0.45, "pool2d_1", 120)
    fc("fc_1", 0.03, 0.78, "fc_0", 84)
    fc("fc_2", 0.36, 0.78, "fc_1", 10)
    page.keyboard.press("Escape")
    shot(canvas, "lenet.png")

    out = nb.run_until(1, '"fc_2": [-1, 10]')
    assert '"conv2d_0": [-1, 6, 24, 24]' in out and '"pool2d_0": [-1, 6, 12, 12]' in out, out
    assert '"pool2d_1": [-1, 16, 4, 4]' in out and '"fc_0": [-1, 120]' in out, out
    assert '"fc_1": [-1, 84]' in out, out
    assert '"filter_size": [5, 5]' in out and '"num_filters": 6' in out, out
    assert network.outside == []
