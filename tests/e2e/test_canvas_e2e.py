"""DesignCanvas in a real JupyterLab: a model composed with the mouse and the keyboard.

Every gesture goes through the browser (Playwright's mouse and keyboard on the React Flow
canvas); every test then reads what Python holds from a following cell's output, so it
checks both what the page shows and what the kernel's design became.
"""
import json
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

SETUP = """\
import json
from fluidscope.widgets import DesignCanvas

def state(canvas):
    view = canvas.view
    print("NODES=" + json.dumps(sorted(n["id"] for n in view["nodes"])))
    print("EDGES=" + json.dumps(sorted([e["source"], e["target"], e["kind"]] for e in view["edges"])))
    print("ERRORS=" + json.dumps(canvas.build.errors, sort_keys=True))
    print("UNDO=%s REDO=%s" % (canvas.can_undo, canvas.can_redo))
"""


def open_wide(page, lab, name):
    """Open the notebook with JupyterLab's left sidebar closed: the canvas gets its width."""
    nb = jlab.open_notebook(page, lab, name)
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    return nb


def flow(nb, i):
    return nb.widget(i, ".fs-canvas")


def node(canvas, node_id):
    return canvas.locator(f'.react-flow__node[data-id="{node_id}"]')


def handle(canvas, node_id, handle_id, kind):
    return node(canvas, node_id).locator(f'.react-flow__handle.{kind}[data-handleid="{handle_id}"]')


def center(locator):
    box = locator.bounding_box()
    assert box is not None, f"{locator} is not on screen"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def pane_point(canvas, fx, fy):
    """A point of the canvas pane, as fractions of its width and height."""
    box = canvas.locator(".react-flow__pane").bounding_box()
    return box["x"] + fx * box["width"], box["y"] + fy * box["height"]


def drop_layer(page, canvas, layer, fx, fy):
    """Drag `layer` from the palette onto the canvas (HTML5 drag and drop)."""
    item = canvas.locator(f'.fs-palette-item[data-layer="{layer}"]')
    pane = canvas.locator(".react-flow__pane")
    box = pane.bounding_box()
    item.drag_to(pane, target_position={"x": fx * box["width"], "y": fy * box["height"]})


def drag(page, start, end, hold=None):
    """Press at `start`, move in steps to `end` (React Flow starts a drag only after a few
    moves), run `hold()` while the button is still down, release."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 3, start[1] + 3, steps=2)
    page.mouse.move(*end, steps=15)
    if hold is not None:
        hold()
    page.mouse.up()


def connect(page, canvas, source, target, source_handle="out:0", target_handle="in:input", hold=None):
    """Drag a link from `source`'s output handle to `target`'s input handle, run `hold()`
    while the button is down, release.

    Each step waits until the page has caught up with the mouse, so a loaded machine (the
    page running behind Playwright) cannot turn the gesture into a click on empty canvas:
    both handles stand still and take the pointer before the press (Playwright's
    actionability checks: visible, stable for two frames, not covered); the link line
    exists before the pointer leaves the source; React Flow has marked the target as the
    handle under the pointer before the release."""
    src = handle(canvas, source, source_handle, "source")
    dst = handle(canvas, target, target_handle, "target")
    dst.hover(trial=True)  # only the checks: the pointer stays put
    settled(page)
    hover_where_it_stays(page, src)
    page.mouse.down()
    end = center(dst)
    start = center(src)
    page.mouse.move(start[0] + 3, start[1] + 3, steps=2)
    expect(canvas.locator(".react-flow__connection")).to_have_count(1)
    page.mouse.move(*end, steps=15)
    # the view may still have been moving under the pointer (a node just dropped is panned
    # into view when its panel opens): follow the handle to where it is now, as a hand would
    marked = re.compile(r"\bconnectingto\b")
    for _ in range(10):
        try:
            expect(dst).to_have_class(marked, timeout=3_000)
            break
        except AssertionError:
            page.mouse.move(*center(dst), steps=3)
    expect(dst).to_have_class(marked)
    if hold is not None:
        hold()
    page.mouse.up()


def next_frames(page, count=2):
    """Wait until the page has drawn ``count`` more animation frames."""
    page.evaluate("""(n) => new Promise(done => {
        const step = k => k ? requestAnimationFrame(() => step(k - 1)) : done();
        step(n);
    })""", count)


def settled(page, tries=50):
    """Wait until Python has answered every gesture: the kernel idle and no new view drawn
    for a few frames. A view that lands between the press and the first move re-renders the
    nodes and the press no longer starts a link (seen on a busy machine)."""
    for _ in range(tries):
        page.wait_for_function(jlab.KERNEL_READY_JS)
        drawn = views_drawn(page)
        next_frames(page, 3)
        if views_drawn(page) == drawn and page.evaluate(jlab.KERNEL_READY_JS):
            return
    raise AssertionError("the canvas kept receiving views from Python")


def hover_where_it_stays(page, locator, tries=20):
    """Put the pointer on ``locator`` once it stays put for two frames after the hover: a
    layout change that lands late (the property panel opening for the node just dropped
    narrows the pane and moves every node) must not leave the pointer on empty canvas,
    which made the press start a pan instead of a link on a busy machine."""
    for _ in range(tries):
        locator.hover()
        where = center(locator)
        next_frames(page)
        if center(locator) == where:
            return
    raise AssertionError(f"{locator} kept moving under the pointer")


def views_drawn(page):
    """How many views from Python the canvas has drawn (its performance marks)."""
    return page.evaluate("() => performance.getEntriesByName('fluidscope.canvas.view').length")


def wait_for_view_after(page, count):
    """Until the canvas has drawn a view from Python after the first `count`."""
    page.wait_for_function(
        "(n) => performance.getEntriesByName('fluidscope.canvas.view').length > n", arg=count)


def wait_until_still(locator):
    """Until `locator` keeps its box for two animation frames (a fit or zoom is over)."""
    locator.element_handle().wait_for_element_state("stable")


def python_state(nb, i, text):
    """Cell i prints state(canvas); re-run until it contains `text`; parse it."""
    out = nb.run_until(i, text)
    return {key: json.loads(value) if key != "UNDO" else value
            for key, value in re.findall(r"^(NODES|EDGES|ERRORS)=(.*)$", out, re.M)} | {"raw": out}


def inspector_field(canvas, name):
    return canvas.locator(f'.fs-inspector [data-attr="{name}"]')


def test_palette_connect_refuse_edit_and_error(lab, page, network):
    lab.write_notebook("canvas_compose.ipynb", [
        SETUP + "canvas = DesignCanvas(height=560)\ncanvas",
        "state(canvas)",
        'print("SIZE=%s" % canvas.design.node("fc_0").attrs.get("size"))',
    ])
    nb = open_wide(page, lab, "canvas_compose.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(canvas.locator(".fs-palette-item")).not_to_have_count(0)

    # palette -> canvas: a data layer, an fc, an embedding (it takes ids only)
    drop_layer(page, canvas, "data", 0.1, 0.2)
    expect(node(canvas, "data_0")).to_be_visible()
    drop_layer(page, canvas, "fc", 0.45, 0.2)
    expect(node(canvas, "fc_0")).to_be_visible()
    drop_layer(page, canvas, "embedding", 0.45, 0.65)
    expect(node(canvas, "embedding_0")).to_be_visible()
    # the node just dropped is selected: its panel opens and narrows the pane
    expect(canvas.locator(".fs-inspector")).to_contain_text("embedding_0")

    # connect data -> fc: an edge, and fc's output gets its shape
    connect(page, canvas, "data_0", "fc_0")
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)
    expect(node(canvas, "fc_0").locator(".fs-shape")).to_have_text("[-1, 64]")

    # data (float) -> embedding (ids): refused while dragging (the line turns red) ...
    def refused_while_held():
        expect(canvas.locator(".react-flow__connection.invalid")).to_have_count(1)
        expect(handle(canvas, "embedding_0", "in:input", "target")).to_have_class(re.compile(r"\bconnectingto\b"))
        expect(handle(canvas, "embedding_0", "in:input", "target")).not_to_have_class(re.compile(r"\bvalid\b"))
    connect(page, canvas, "data_0", "embedding_0", hold=refused_while_held)
    # ... and not made
    expect(canvas.locator(".react-flow__connection")).to_have_count(0)
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)
    state = python_state(nb, 1, "NODES=")
    assert state["NODES"] == ["data_0", "embedding_0", "fc_0"], state
    assert state["EDGES"] == [["data_0", "fc_0", "data"]], state

    # the property panel: size 64 -> 32, committed by Enter; the shape follows
    node(canvas, "fc_0").locator(".fs-node-head").click()
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", "fc_0")
    field = inspector_field(canvas, "size")
    expect(field).to_have_value("64")
    field.fill("32")
    field.press("Enter")
    expect(node(canvas, "fc_0").locator(".fs-shape")).to_have_text("[-1, 32]")
    assert "SIZE=32" in nb.run_until(2, "SIZE=32")

    # an impossible size: the node turns red, its badge says why; fixing it clears it
    field = inspector_field(canvas, "size")
    field.fill("-3")
    field.press("Enter")
    badge = node(canvas, "fc_0").locator(".fs-badge")
    expect(badge).to_have_attribute("title", re.compile("size must be a positive int"))
    expect(node(canvas, "fc_0").locator(".fs-node")).to_have_class(re.compile(r"\bfs-has-error\b"))
    state = python_state(nb, 1, '"fc_0"')
    assert "size must be a positive int" in state["ERRORS"]["fc_0"], state
    field = inspector_field(canvas, "size")
    field.fill("16")
    field.press("Enter")
    expect(badge).to_have_count(0)
    expect(node(canvas, "fc_0").locator(".fs-shape")).to_have_text("[-1, 16]")
    state = python_state(nb, 1, 'ERRORS={"embedding_0"')  # not connected: its own error
    assert list(state["ERRORS"]) == ["embedding_0"], state

    # a value Python refuses changes nothing and says why
    node(canvas, "data_0").locator(".fs-node-head").click()
    expect(canvas.locator(".fs-inspector")).to_have_attribute("data-node", "data_0")
    field = inspector_field(canvas, "shape")
    field.fill("[None, 'a']")
    field.press("Enter")
    expect(canvas.locator(".fs-message")).to_contain_text("attribute 'shape' must be shape")
    expect(node(canvas, "data_0").locator(".fs-shape")).to_have_text("[-1, 1]")

    # Backspace typed into a field edits the field; the node stays
    field.fill("[None, 4]")
    field.press("Backspace")
    field.press("Backspace")
    expect(node(canvas, "data_0")).to_be_visible()
    assert network.outside == []


def test_keys_undo_redo_copy_paste_stay_in_the_canvas(lab, page, network):
    lab.write_notebook("canvas_keys.ipynb", [
        SETUP + """canvas = DesignCanvas(height=520)
x = canvas.add_node("data", 0, 40)
h = canvas.add_node("fc", 300, 40, source=x)
canvas""",
        "state(canvas)",
        "print('CELLS_OK')",
    ])
    nb = open_wide(page, lab, "canvas_keys.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)
    cells = nb.panel.locator(".jp-Notebook .jp-Cell")
    expect(cells).to_have_count(3)

    # copy and paste with the keys: a fresh id, next to where the pointer is
    node(canvas, "fc_0").locator(".fs-node-head").click()
    expect(node(canvas, "fc_0")).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Control+c")
    expect(canvas.locator(".fs-status")).to_contain_text("copied 1 node")
    page.mouse.move(*pane_point(canvas, 0.5, 0.75))
    page.keyboard.press("Control+v")
    expect(node(canvas, "fc_1")).to_be_visible()
    state = python_state(nb, 1, '"fc_1"')
    assert state["NODES"] == ["data_0", "fc_0", "fc_1"], state

    # undo / redo with the keys (once the canvas has the focus again) and the toolbar
    # (running cell 1 left the focus in its editor: a click on empty canvas takes it back)
    page.mouse.click(*pane_point(canvas, 0.9, 0.1))
    page.keyboard.press("Control+z")
    expect(node(canvas, "fc_1")).to_have_count(0)
    page.keyboard.press("Control+Shift+Z")
    expect(node(canvas, "fc_1")).to_be_visible()
    canvas.locator('.fs-tool[data-action="undo"]').click()
    expect(node(canvas, "fc_1")).to_have_count(0)
    node(canvas, "fc_0").locator(".fs-node-head").click()
    page.keyboard.press("Control+y")
    expect(node(canvas, "fc_1")).to_be_visible()
    state = python_state(nb, 1, '"fc_1"')
    assert "UNDO=True REDO=False" in state["raw"], state

    # Ctrl+D duplicates the selection
    node(canvas, "data_0").locator(".fs-node-head").click()
    # the keys act on the selection drawn (as a person sees it before pressing them); a
    # press in the same frame as the click could still meet the previous one
    expect(node(canvas, "data_0")).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Control+d")
    expect(node(canvas, "data_1")).to_be_visible()
    state = python_state(nb, 1, '"data_1"')
    assert state["NODES"] == ["data_0", "data_1", "fc_0", "fc_1"], state

    # JupyterLab's command-mode keys do nothing to the notebook from the canvas
    node(canvas, "fc_0").locator(".fs-node-head").click()
    expect(node(canvas, "fc_0")).to_have_class(re.compile(r"\bselected\b"))
    for key in ("d", "d", "x", "a", "b", "m", "z"):
        page.keyboard.press(key)
    expect(cells).to_have_count(3)
    expect(nb.cell(0).locator(".jp-OutputArea-output .fs-canvas")).to_have_count(1)
    expect(node(canvas, "fc_0")).to_be_visible()

    # Delete removes the selected node (and its edge), in Python too; the click is still
    # the selection after the keys (no view that arrived since moved it back)
    expect(node(canvas, "fc_0")).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Delete")
    expect(node(canvas, "fc_0")).to_have_count(0)
    state = python_state(nb, 1, "NODES=")
    assert "fc_0" not in state["NODES"] and ["data_0", "fc_0", "data"] not in state["EDGES"], state
    nb.run_cell(2)
    assert "CELLS_OK" in nb.output_text(2)
    assert network.outside == []


def test_recurrent_group_memory_edge_collapse_and_enter(lab, page, network):
    lab.write_notebook("canvas_zone.ipynb", [
        SETUP + """canvas = DesignCanvas(height=520)
x = canvas.add_node("data", 0, 0, attrs={"shape": [None, 8], "lod_level": 1})
canvas""",
        "state(canvas)",
        'zone = canvas.design.node("recurrent_group_0")\n'
        'print("MEMORY_LINK=%s" % [(n.id, n.inputs.get("link")) for n in zone.body.nodes.values() if n.layer == "memory"])\n'
        'print("CODE_HAS_MEMORY=%s" % ("fd.memory(" in canvas.design.to_python()))',
    ])
    nb = open_wide(page, lab, "canvas_zone.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "data_0")).to_be_visible()
    # the first view's placement (once React Flow measured the node) moves the viewport
    expect(canvas.locator(".react-flow__viewport")).not_to_have_attribute(
        "style", re.compile(r"translate\(0px, 0px\) scale\(1\)"))
    for _ in range(2):  # room to the right of the data layer
        canvas.locator(".react-flow__controls-zoomout").click()
    wait_until_still(node(canvas, "data_0"))

    # a recurrent group from the palette, right of the data layer; an fc dropped inside it
    pane = canvas.locator(".react-flow__pane")
    data_box = node(canvas, "data_0").bounding_box()
    pane_box = pane.bounding_box()
    canvas.locator('.fs-palette-item[data-layer="recurrent_group"]').drag_to(pane, target_position={
        "x": min(data_box["x"] + data_box["width"] + 60 - pane_box["x"], 0.5 * pane_box["width"]),
        "y": max(data_box["y"] - pane_box["y"], 20)})
    zone = node(canvas, "recurrent_group_0")
    expect(zone.locator(".fs-zone-open")).to_be_visible()
    zone_box = zone.bounding_box()
    # inside the zone, right of where its step inputs go, and inside the visible pane
    fc_x = min(zone_box["x"] + 0.55 * zone_box["width"], pane_box["x"] + pane_box["width"] - 40)
    canvas.locator('.fs-palette-item[data-layer="fc"]').drag_to(pane, target_position={
        "x": fc_x - pane_box["x"], "y": zone_box["y"] + 50 - pane_box["y"]})
    expect(node(canvas, "fc_0")).to_be_visible()
    expect(zone.locator(".fs-zone-open")).to_be_visible()
    state = python_state(nb, 1, '"fc_0"')
    assert state["NODES"] == ["data_0", "fc_0", "recurrent_group_0"], state

    # the sequence from outside into the step: an in-link (a step_input node inside)
    connect(page, canvas, "data_0", "fc_0")
    expect(canvas.locator(".react-flow__node .fs-small-step_input")).to_have_count(1)
    expect(canvas.locator(".react-flow__edge.fs-edge-inlink")).to_have_count(1)
    # a memory; elkjs lays the zone out; the memory remembers the fc: the dashed back-edge
    zone.locator('.fs-zone-button[data-action="add_memory"]').click()
    expect(node(canvas, "memory_0")).to_be_visible()
    drawn = views_drawn(page)
    canvas.locator('.fs-tool[data-action="auto_layout"]').click()
    wait_for_view_after(page, drawn)  # the layout's move, answered by a new view
    connect(page, canvas, "fc_0", "memory_0", target_handle="in:link")
    expect(canvas.locator(".react-flow__edge.fs-edge-memory")).to_have_count(1)
    expect(canvas.locator(".react-flow__edge.fs-edge-memory path.react-flow__edge-path").first).to_have_css(
        "stroke-dasharray", re.compile(r"^6(px)?,? 4(px)?$"))
    # the fc's output leaves the zone every step (its "+ output" hangs on the zone's right)
    canvas.locator('.fs-tool[data-action="fit"]').click()  # connect waits for its animation
    connect(page, canvas, "fc_0", "recurrent_group_0", target_handle="out:new")
    expect(canvas.locator(".react-flow__edge.fs-edge-outlink")).to_have_count(1)
    state = python_state(nb, 1, '"outlink"')
    assert ["fc_0", "memory_0", "memory"] in state["EDGES"], state
    assert ["data_0", "step_input_0", "inlink"] in state["EDGES"], state
    assert ["fc_0", "recurrent_group_0", "outlink"] in state["EDGES"], state
    out = nb.run_until(2, "MEMORY_LINK=")
    assert "('memory_0', Ref(node='fc_0'" in out and "CODE_HAS_MEMORY=True" in out, out

    # double-click the zone's head: collapsed to one box, the step's nodes gone; again: back.
    # The out-link's "+ output" handle is near the pane's edge, where React Flow pans the
    # view while a wire is held (auto-pan on connect): under load the drag lasts long enough
    # to pan the zone out of view, so the view is fitted again first, as a person would.
    canvas.locator('.fs-tool[data-action="fit"]').click()
    wait_until_still(zone)
    zone.locator(".fs-zone-head .fs-node-title").dblclick()
    expect(zone.locator(".fs-zone-closed")).to_be_visible()
    expect(node(canvas, "fc_0")).to_have_count(0)
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)  # the in-link, now to the box
    zone.locator(".fs-zone-head .fs-node-title").dblclick()
    expect(zone.locator(".fs-zone-open")).to_be_visible()
    expect(node(canvas, "fc_0")).to_be_visible()

    # enter the zone: its step alone, a breadcrumb back to the design
    zone.locator('.fs-zone-button[data-action="enter"]').click()
    expect(canvas.locator('.fs-crumb[data-depth="1"]')).to_have_text("recurrent_group_0")
    expect(node(canvas, "data_0")).to_have_count(0)
    expect(node(canvas, "fc_0")).to_be_visible()
    canvas.locator('.fs-crumb[data-depth="0"]').click()
    expect(node(canvas, "data_0")).to_be_visible()
    assert network.outside == []


def test_drag_moves_once_auto_layout_code_and_export(lab, page, network):
    lab.write_notebook("canvas_export.ipynb", [
        SETUP + """canvas = DesignCanvas(height=520)
x = canvas.add_node("data", 0, 40, attrs={"shape": [None, 4]})
h = canvas.add_node("fc", 300, 40, source=x, attrs={"size": 3, "act": "softmax"})
moves = []
_move = canvas.move
canvas.move = lambda positions, layout=False: (moves.append((sorted(positions), layout)), _move(positions, layout))
canvas""",
        'print("MOVES=" + json.dumps(moves))',
        'import os, numpy as np, fluidscope.designer as fd\n'
        'files = sorted(os.listdir("exported"))\n'
        'print("FILES=" + json.dumps(files))\n'
        'exe = fd.Executor(fd.CPUPlace())\n'
        'with fd.scope_guard(fd.Scope()):\n'
        '    program, feeds, fetches = fd.io.load_inference_model("exported/model", exe)\n'
        '    out, = exe.run(program, feed={feeds[0]: np.ones((2, 4), "float32")}, fetch_list=fetches)\n'
        'print("LOADED", feeds, np.asarray(out).shape)\n'
        'print("DESIGN_BACK=%s" % (fd.Design.load("exported/model.fsdesign.json").document == canvas.design.document))',
    ])
    nb = open_wide(page, lab, "canvas_export.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "fc_0")).to_be_visible()

    # a drag sends one move, at its end, with the node's new place
    start = center(node(canvas, "fc_0").locator(".fs-node-head"))
    drag(page, start, (start[0] + 40, start[1] + 120))
    out = nb.run_until(1, '"fc_0"]')
    moves = json.loads(re.search(r"^MOVES=(.*)$", out, re.M).group(1))
    assert moves == [[["fc_0"], False]], moves

    # auto-layout: Python asks, elkjs answers with one move of every node (layout=true)
    canvas.locator('.fs-tool[data-action="auto_layout"]').click()
    out = nb.run_until(1, "true]]")
    moves = json.loads(re.search(r"^MOVES=(.*)$", out, re.M).group(1))
    assert moves[-1] == [["data_0", "fc_0"], True], moves

    # the code pane shows the generated Python
    canvas.locator('.fs-tool[data-action="show_code"]').click()
    expect(canvas.locator(".fs-code")).to_contain_text("fd.fc(")
    canvas.locator('.fs-tool[data-action="show_code"]').click()
    expect(canvas.locator(".fs-code")).to_have_count(0)

    # export to a folder typed in the toolbar; the files load back in the next cell
    folder = canvas.locator(".fs-export-folder")
    folder.fill("exported")
    canvas.locator('.fs-tool[data-action="export"]').click()
    expect(canvas.locator(".fs-status")).to_contain_text("files to exported")
    nb.run_cell(2)
    out = nb.output_text(2)
    files = json.loads(re.search(r"^FILES=(.*)$", out, re.M).group(1))
    assert {"model.pdmodel", "model.pdiparams", "model.py", "model.fsdesign.json"} <= set(files), files
    assert "LOADED ['data_0'] (2, 3)" in out and "DESIGN_BACK=True" in out, out
    assert network.outside == []


def test_design_file_survives_a_kernel_restart(lab, page, network):
    lab.write_notebook("canvas_restart.ipynb", [
        SETUP + 'canvas = DesignCanvas(path="kept.fsdesign.json", height=480)\ncanvas',
        "state(canvas)",
    ])
    nb = open_wide(page, lab, "canvas_restart.ipynb")
    nb.run_cell(0)
    canvas = flow(nb, 0)
    drop_layer(page, canvas, "data", 0.1, 0.3)
    drop_layer(page, canvas, "fc", 0.5, 0.3)
    expect(node(canvas, "fc_0")).to_be_visible()
    connect(page, canvas, "data_0", "fc_0")
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)
    python_state(nb, 1, '"fc_0", "data"')

    # restart the kernel (no dialog: skipKernelRestartDialog), then a new canvas on the file
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
    page.wait_for_function(jlab.KERNEL_READY_JS, timeout=60_000)
    # the new kernel counts from [1] again: clear the prompts, so run_cell sees the new run
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    expect(nb.cell(0).locator(".fs-canvas")).to_have_count(0)
    nb.run_cell(0)
    canvas = flow(nb, 0)
    expect(node(canvas, "data_0")).to_be_visible()
    expect(node(canvas, "fc_0")).to_be_visible()
    expect(canvas.locator(".react-flow__edge")).to_have_count(1)
    state = python_state(nb, 1, '"fc_0", "data"')
    assert state["NODES"] == ["data_0", "fc_0"] and state["EDGES"] == [["data_0", "fc_0", "data"]], state
    assert network.outside == []
