"""TensorInspector and TrainingMonitor in a real JupyterLab: what only a browser shows.

Thin tensors ([64, 1], [3, 96]) keep visible cells, the heatmap carries a colour bar with
values, the histogram has count and value ticks, a conv activation [1, 16, 14, 14] is a
grid of 16 channel images, the gradient check answers in the page; the monitor draws
several series on labelled axes and its PNG export comes back to Python as a file.
Screenshots of each view go to ``$E2E_ARTIFACTS`` (default artifacts/e2e) to look at.
"""
import os
import pathlib
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = pathlib.Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts" / "e2e"))

INSPECTOR_SETUP = """\
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets import TensorInspector

def session_of(build, feed):
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        loss = build()
        fd.optimizer.Adam(0.01).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    return exe.debug(main, feed, [loss], scope)

rng = np.random.default_rng(0)
thin = session_of(lambda: fd.mean(fd.fc(fd.fc(fd.data("x", [None, 96]), 64, act="tanh"), 1)),
                  {"x": rng.standard_normal((3, 96)).astype("float32")})
conv = session_of(lambda: fd.mean(fd.fc(fd.conv2d(fd.data("img", [None, 1, 14, 14]), 16, 3,
                                                  padding=1, act="relu"), 2)),
                  {"img": rng.standard_normal((1, 1, 14, 14)).astype("float32")})
conv.step(); conv.step()
print("CONV", conv.tensor("conv2d_0.tmp_1").shape())
"""


def shot(locator, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(SHOTS / name))


def box(locator):
    found = locator.bounding_box()
    assert found is not None, "not rendered"
    return found


def test_inspector_thin_tensors_colour_bar_histogram_and_feature_maps(lab, page, network):
    cells = [INSPECTOR_SETUP, 'TensorInspector(thin, "fc_1.w_0")', 'TensorInspector(thin, "x")',
             'conv_view = TensorInspector(conv, "conv2d_0.tmp_1")\nconv_view',
             'conv_view.select("conv2d_0.w_0")']
    lab.write_notebook("inspector.ipynb", cells)
    nb = jlab.open_notebook(page, lab, "inspector.ipynb")
    nb.run_cell(0)
    assert "CONV [1, 16, 14, 14]" in nb.output_text(0)

    # [64, 1]: a column of 64 cells, each at least 4 px high and the column wide enough to see
    nb.run_cell(1)
    value = nb.widget(1, '.fs-insp-pane[data-role="value"]')
    heat = value.locator("canvas.fs-insp-heatmap")
    expect(heat).to_have_attribute("data-rows", "64")
    expect(heat).to_have_attribute("data-cols", "1")
    size = box(heat)
    assert size["width"] >= 20 and size["height"] >= 64 * 4, size
    bar = value.locator(".fs-insp-colorbar")
    expect(bar).to_be_visible()
    expect(bar.locator(".fs-insp-colorbar-labels span")).to_have_count(3)
    hist = value.locator("svg.fs-insp-hist")
    expect(hist).to_have_attribute("data-total", "64")
    assert hist.locator("text.fs-insp-tick").count() == 6  # 3 count ticks, 3 value ticks
    expect(hist.locator("text.fs-insp-axis-title").first).to_contain_text("value")
    # the optimizer's state is folded away: Adam's 4 per parameter are not in the list
    picker = nb.widget(1, "select.fs-insp-select")
    assert picker.locator('optgroup[data-group="optimizer state"]').count() == 0
    assert picker.locator('optgroup[data-group="parameters"] option').count() == 4
    shot(nb.widget(1, ".fs-insp"), "inspector_64x1.png")

    # [3, 96]: three rows of 96 cells, none thinner than 4 px
    nb.run_cell(2)
    heat = nb.widget(2, '.fs-insp-pane[data-role="value"] canvas.fs-insp-heatmap')
    expect(heat).to_have_attribute("data-cols", "96")
    size = box(heat)
    assert size["width"] >= 96 * 4 and size["height"] >= 3 * 4 * 4, size
    shot(nb.widget(2, ".fs-insp"), "inspector_3x96.png")

    # [1, 16, 14, 14]: 16 channel tiles of 14 x 14 cells
    nb.run_cell(3)
    grid = nb.widget(3, '.fs-insp-pane[data-role="value"] .fs-insp-grid')
    expect(grid).to_have_attribute("data-tiles", "16")
    tiles = grid.locator("canvas.fs-insp-tile")
    expect(tiles).to_have_count(16)
    tile = box(tiles.first)
    assert tile["width"] >= 14 * 3 and abs(tile["width"] - tile["height"]) < 1, tile
    expect(nb.widget(3, '.fs-insp-pane[data-role="value"] .fs-insp-colorbar')).to_be_visible()
    shot(nb.widget(3, ".fs-insp"), "inspector_conv_16x14x14.png")

    # check gradient on the conv weight, from the page's button
    nb.run_cell(4)
    root = nb.widget(3, ".fs-insp")
    expect(root).to_have_attribute("data-selected", "conv2d_0.w_0")
    check = root.locator("button.fs-insp-check")
    expect(check).to_be_enabled()
    check.click()
    result = root.locator(".fs-insp-check-result")
    expect(result).to_have_attribute("data-ok", "true", timeout=60_000)
    expect(result).to_contain_text("agrees")
    assert float(result.get_attribute("data-max-error")) < 1e-4
    # stopped in the forward pass: the run has no gradient of its own to compare yet
    run_line = result.locator(".fs-insp-check-run")
    expect(run_line).to_have_attribute("data-available", "false")
    expect(run_line).to_contain_text("has not computed conv2d_0.w_0@GRAD")
    shot(root, "inspector_gradient_check.png")
    assert network.outside == [] and network.requests


MONITOR_SETUP = """\
import os
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets import train

main, startup = fd.Program(), fd.Program()
with fd.program_guard(main, startup):
    x = fd.data("x", [None, 8])
    y = fd.data("y", [None, 1], dtype="int64")
    prob = fd.fc(fd.fc(x, 32, act="relu"), 3, act="softmax")
    loss = fd.mean(fd.cross_entropy(prob, y))
    acc = fd.accuracy(prob, y)
    fd.optimizer.SGD(0.2).minimize(loss)
exe, scope = fd.Executor(), fd.Scope()
exe.run(startup, scope=scope)
rng = np.random.default_rng(0)
X = rng.normal(size=(512, 8)).astype("float32")
Y = X[:, :3].argmax(axis=1).astype("int64")[:, None]
batches = [{"x": X[s:s + 32], "y": Y[s:s + 32]} for s in range(0, 512, 32)]
run = train(exe, main, batches, epochs=6, fetch_list=[loss, acc], scope=scope, monitor=True,
            background=False, labels={loss: "cross-entropy loss", acc: "accuracy"})
print("STEPS", run.result.steps)
"""
VALIDATION = """\
for epoch in range(1, 7):
    run.monitor.add_validation(1.1 / epoch ** 0.5, step=16 * epoch)
    run.monitor.add_validation(1 - 0.5 / epoch, metric=acc.name, step=16 * epoch)
"""
PNG_CHECK = """\
data = open("monitor.png", "rb").read() if os.path.exists("monitor.png") else b""
print("PNG", data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", int.from_bytes(data[16:20], "big"),
      int.from_bytes(data[20:24], "big"))
print("CSV", os.path.exists("training_monitor.csv"))
"""


def test_monitor_panels_axes_series_log_and_exports(lab, page, network):
    cells = [MONITOR_SETUP, VALIDATION, 'run.monitor.export_png("monitor.png")', PNG_CHECK]
    lab.write_notebook("monitor.ipynb", cells)
    nb = jlab.open_notebook(page, lab, "monitor.ipynb")
    nb.run_cell(0)
    assert "STEPS 96" in nb.output_text(0)
    monitor = nb.widget(0, ".fs-train")
    expect(monitor).to_have_attribute("data-status", "finished")
    panels = monitor.locator(".fs-train-panel")
    expect(panels).to_have_count(2)
    loss_panel, acc_panel = panels.nth(0), panels.nth(1)
    curve = loss_panel.locator("canvas.fs-train-curve")
    expect(curve).to_have_attribute("data-x-title", "step")
    expect(curve).to_have_attribute("data-y-title", "cross-entropy loss")
    expect(acc_panel.locator("canvas")).to_have_attribute("data-y-title", "accuracy")
    # a non-negative loss: the axis starts at zero
    expect(curve).to_have_attribute("data-y-ticks", re.compile(r"^0 "))
    expect(acc_panel.locator("canvas")).to_have_attribute("data-y-ticks", re.compile(r"^0 "))

    nb.run_cell(1)  # a validation series joins each panel
    for panel in (loss_panel, acc_panel):
        expect(panel.locator(".fs-train-legend-item")).to_have_count(2)
        expect(panel.locator('.fs-train-legend-item[data-kind="added"]')).to_contain_text(
            "validation ")
        painted = panel.locator("canvas").evaluate(
            """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                      let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }""")
        assert painted > 1000, painted
    shot(monitor, "monitor_two_panels.png")

    monitor.locator(".fs-train-log input").check()
    expect(curve).to_have_attribute("data-log", "true")
    expect(curve).not_to_have_attribute("data-y-ticks", re.compile(r"^0 "))
    shot(monitor, "monitor_log.png")
    monitor.locator(".fs-train-log input").uncheck()
    expect(curve).to_have_attribute("data-log", "false")

    nb.run_cell(2)  # Python asks; the page paints and answers
    expect(monitor).to_have_attribute("data-png-sent", "1")
    monitor.locator("button.fs-train-csv").click()
    expect(monitor.locator(".fs-train-saved")).to_have_text("saved training_monitor.csv")
    out = nb.run_until(3, "PNG True")
    width, height = (int(v) for v in re.search(r"PNG True (\d+) (\d+)", out).groups())
    assert width >= 300 and height >= 2 * 200, out
    assert "CSV True" in out
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "monitor_export.png").write_bytes((lab.root_dir / "monitor.png").read_bytes())
    assert network.outside == [] and network.requests


def test_notebook_02_monitor_and_inspector_at_real_size(lab, page, network):
    """Notebook 02 as a user runs it: the monitor of its 12 epochs (loss and accuracy,
    each with the test figures as a validation series) and the inspector of its
    [64, 128] first-layer weight with Adam's state folded away."""
    import shutil

    import nbformat

    source = ROOT / "notebooks" / "02_mlp_digits.ipynb"
    shutil.copyfile(source, lab.root_dir / "02.ipynb")
    cells = nbformat.read(source, as_version=4).cells
    nb = jlab.open_notebook(page, lab, "02.ipynb")
    for i, cell in enumerate(cells):
        if cell.cell_type == "code":
            nb.run_cell(i, timeout=180_000)
    monitor_cell = next(i for i, c in enumerate(cells) if "run = train(" in c.source)
    monitor = nb.widget(monitor_cell, ".fs-train")
    expect(monitor).to_have_attribute("data-status", "finished")
    panels = monitor.locator(".fs-train-panel")
    expect(panels).to_have_count(2)
    for panel in (panels.nth(0), panels.nth(1)):
        expect(panel.locator(".fs-train-legend-item")).to_have_count(2)
        expect(panel.locator("canvas")).to_have_attribute("data-y-ticks", re.compile(r"^0 "))
    shot(monitor, "notebook02_monitor.png")

    inspector_cell = next(i for i, c in enumerate(cells) if "TensorInspector(session" in c.source)
    inspector = nb.widget(inspector_cell, ".fs-insp")
    picker = inspector.locator("select.fs-insp-select")
    assert picker.locator('optgroup[data-group="optimizer state"]').count() == 0
    expect(inspector.locator(".fs-insp-opt-state")).not_to_be_checked()
    value = inspector.locator('.fs-insp-pane[data-role="value"]')
    expect(value.locator('[data-field="shape"] .fs-insp-text')).to_have_text("[64, 128]")
    expect(value.locator(".fs-insp-colorbar")).to_be_visible()
    expect(inspector.locator('.fs-insp-pane[data-role="gradient"]')).to_have_attribute(
        "data-state", "value")
    expect(inspector.locator('.fs-insp-pane[data-role="difference"]')).to_have_attribute(
        "data-state", "value")
    expect(inspector.locator(".fs-insp-check-result")).to_have_attribute("data-ok", "true")
    inspector.locator(".fs-insp-opt-state").check()
    expect(picker.locator('optgroup[data-group="optimizer state"]')).to_have_count(1)
    shot(inspector, "notebook02_inspector.png")
    assert network.outside == [] and network.requests


LOD_SETUP = """\
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets import TensorInspector

# notebook 03's input side at its sizes: 16 windows of 16-48 characters, embedding 32,
# the gates' projection 4 * 96
rng = np.random.default_rng(0)
main, startup = fd.Program(), fd.Program()
with fd.program_guard(main, startup):
    ids = fd.data("ids", [None, 1], "int64", lod_level=1)
    gates = fd.fc(fd.embedding(ids, size=[60, 32]), 4 * 96, bias_attr=False)
    fd.optimizer.Adam(0.01).minimize(fd.mean(gates))
scope, exe = fd.Scope(), fd.Executor()
exe.run(startup, scope=scope)
lengths = rng.integers(16, 49, 16)
offsets = [0] + np.cumsum(lengths).tolist()
batch = fd.LoDTensor(rng.integers(0, 60, (offsets[-1], 1)), [offsets])
session = exe.debug(main, {"ids": batch}, None, scope)
session.run_to(op_type="mul")
print("GATES", session.tensor(gates.name).shape(), len(offsets) - 1)
view = TensorInspector(session, gates.name)
view
"""


def test_lod_rows_are_labelled_per_sequence(lab, page, network):
    lab.write_notebook("lod.ipynb", [LOD_SETUP, "view.set_show_difference(True)"])
    nb = jlab.open_notebook(page, lab, "lod.ipynb")
    nb.run_cell(0)
    assert "16" in nb.output_text(0).split("GATES", 1)[1]
    value = nb.widget(0, '.fs-insp-pane[data-role="value"]')
    heat = value.locator("canvas.fs-insp-heatmap")
    expect(heat).to_have_attribute("data-rows", "64")  # [~500, 384]: 64 x 64 block means
    labels = value.locator(".fs-insp-seq-label")
    rules = value.locator(".fs-insp-seq-rule")
    expect(rules).to_have_count(16)  # one mark per sequence start
    expect(value.locator(".fs-insp-seq-line")).to_have_count(15)  # and a line across the map
    count = labels.count()
    assert 8 <= count <= 16, count  # labels never overlap: some may give way
    expect(labels.first).to_have_text("#0")
    tops = [box(labels.nth(k))["y"] for k in range(count)]
    assert all(b - a >= 11 for a, b in zip(tops, tops[1:])), tops
    bottom = box(heat)
    assert tops[0] >= bottom["y"] - 1 and tops[-1] <= bottom["y"] + bottom["height"]
    expect(value.locator("details.fs-insp-seqs-box")).to_be_attached()
    shot(nb.widget(0, ".fs-insp"), "inspector_lod_gates.png")
    root = nb.widget(0, ".fs-insp")
    root.locator("button.fs-insp-save").click()  # numpy.save in the kernel's folder
    expect(root.locator(".fs-insp-saved")).to_have_text("saved to fc_0.tmp_0.npy")
    assert (lab.root_dir / "fc_0.tmp_0.npy").read_bytes().startswith(b"\x93NUMPY")
    nb.run_cell(1)
    diff = nb.widget(0, '.fs-insp-pane[data-role="difference"]')
    expect(diff).to_have_attribute("data-state", "none")
    expect(diff).to_contain_text("no value at a previous stop")
    assert network.outside == [] and network.requests
