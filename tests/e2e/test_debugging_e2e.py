"""notebooks/04_debugging.ipynb in a real JupyterLab: the notebook's cells run in the
browser, then its DebuggerViews are driven by clicks and keys, and every answer is read
back from the page (the highlighted node of the graph, the breadcrumb, the inspector).

Each test opens its own copy of the notebook (so its own kernel) and runs the set-up
cell and the cells of the section it drives. Cells are found by a line of their source,
so editing the notebook's prose does not break the tests.
"""
import os
import pathlib
import re
import shutil

import nbformat

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = pathlib.Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts" / "e2e"))
NOTEBOOK = ROOT / "notebooks" / "04_debugging.ipynb"
CURRENT = "svg g.node.fs-current"      # the op the session stands after (widgets/render/emit.py)
ENCLOSING = "svg g.node.fs-enclosing"  # the recurrent op whose frame it stands in
SETUP = "from fluidscope.widgets import DebuggerView"


class DebuggingNotebook:
    """A copy of notebook 04, open in ``page``."""

    def __init__(self, page, lab, name):
        shutil.copyfile(NOTEBOOK, lab.root_dir / name)
        self.cells = nbformat.read(NOTEBOOK, as_version=4).cells
        self.nb = jlab.open_notebook(page, lab, name)

    def index(self, marker):
        """The one cell whose source contains ``marker``."""
        found = [i for i, c in enumerate(self.cells) if marker in c.source]
        assert len(found) == 1, f"{NOTEBOOK.name}: {len(found)} cells contain {marker!r}"
        return found[0]

    def run(self, *markers):
        """Run the code cells containing each marker; ``(a, "...", b)`` means every code
        cell from a to b. Returns the index of the last cell run."""
        indices = []
        for k, marker in enumerate(markers):
            if marker == "...":
                indices += range(indices[-1] + 1, self.index(markers[k + 1]))
            else:
                indices.append(self.index(marker))
        for i in indices:
            if self.cells[i].cell_type == "code":
                self.nb.run_cell(i)
        return indices[-1]

    def output(self, marker):
        return self.nb.output_text(self.index(marker))


def stat(pane, key):
    return pane.locator(f'[data-stat="{key}"] .fs-insp-number')


def shape(pane):
    return pane.locator('[data-field="shape"] .fs-insp-text')


def expect_current(graph, op_key):
    """Exactly one op node is highlighted as the current one, and it is ``op_key``."""
    expect(graph.locator(CURRENT)).to_have_count(1)
    expect(graph.locator(CURRENT)).to_have_attribute("id", op_key)


def expect_current_in_view(page, graph):
    """The current op lies wholly inside the graph's viewport, tagged with its badge."""
    page.wait_for_function("""g => { const v = g.querySelector('.fs-graph-viewport')
                                         .getBoundingClientRect();
        const c = g.querySelector('svg g.node.fs-current')?.getBoundingClientRect();
        return c && c.left >= v.left && c.right <= v.right && c.top >= v.top
               && c.bottom <= v.bottom; }""", arg=graph.element_handle())
    expect(graph.locator(".fs-graph-now")).to_be_visible()


def test_nan_breakpoint_step_and_back_in_the_browser(lab, page, network):
    book = DebuggingNotebook(page, lab, "04_nan.ipynb")
    cell = book.run(SETUP, "mlp, mlp_startup = fd.Program()", "...", "nan_view = DebuggerView")
    hunt = book.output("sess.break_on(nan_inf=True)")
    bad_var = re.search(r"wrote '([^']+)'", hunt).group(1)
    inf_count = re.search(r"holds \d+ NaN and (\d+) Inf", hunt).group(1)

    # the notebook's stop, as the view shows it: the op, the reason, the variable
    dbg = book.nb.widget(cell, ".fs-dbg")
    graph = book.nb.widget(cell, ".fs-graph")
    insp = book.nb.widget(cell, ".fs-insp")
    value = insp.locator('.fs-insp-pane[data-role="value"]')
    crumb, reason = dbg.locator(".fs-dbg-breadcrumb"), dbg.locator(".fs-dbg-reason")
    expect(crumb).to_have_text("block 0 › #3 mul")
    expect(reason).to_contain_text("NaN/Inf: #3 mul wrote")
    expect(reason).to_contain_text(bad_var)
    expect(dbg).to_have_attribute("data-op-type", "mul")
    expect_current(graph, "op:0:3")
    expect(insp).to_have_attribute("data-selected", bad_var)
    expect(stat(value, "inf")).to_have_text(inf_count)

    # the notebook steps back in a second session: the relu before it, its huge but finite
    # values in the inspector; the first view keeps the stop its text describes
    back_cell = book.run("back_session = exe.debug(")
    hidden = re.search(r"largest \|value\| in (\S+):", book.nb.output_text(back_cell)).group(1)
    back_dbg = book.nb.widget(back_cell, ".fs-dbg")
    back_graph = book.nb.widget(back_cell, ".fs-graph")
    back_insp = book.nb.widget(back_cell, ".fs-insp")
    expect(back_dbg.locator(".fs-dbg-breadcrumb")).to_have_text("block 0 › #2 relu")
    expect_current(back_graph, "op:0:2")
    expect(back_insp).to_have_attribute("data-selected", hidden)
    expect(stat(back_insp.locator('.fs-insp-pane[data-role="value"]'), "inf")).to_have_text("0")
    expect(crumb).to_have_text("block 0 › #3 mul")
    expect_current(graph, "op:0:3")

    # by hand: restart, step three times, the highlight moves down the graph
    dbg.locator(".fs-dbg-restart").click()
    expect(crumb).to_have_text("block 0 › start")
    expect(graph.locator(CURRENT)).to_have_count(0)
    expect(dbg.locator(".fs-dbg-back")).to_be_disabled()
    for i, op_type in enumerate(["mul", "elementwise_add", "relu"]):
        dbg.locator(".fs-dbg-step").click()
        expect(crumb).to_have_text(f"block 0 › #{i} {op_type}")
        expect_current(graph, f"op:0:{i}")
    dbg.focus()
    page.keyboard.press("F10")  # step, from the keyboard
    expect_current(graph, "op:0:3")
    dbg.locator(".fs-dbg-back").click()
    expect(crumb).to_have_text("block 0 › #2 relu")
    expect(reason).to_have_text("stopped: back")
    expect_current(graph, "op:0:2")

    # continue: the NaN/Inf breakpoint of the notebook stops at the same op again
    dbg.locator(".fs-dbg-continue").click()
    expect(reason).to_contain_text("NaN/Inf: #3 mul wrote")
    expect(reason).to_have_class(re.compile(r"\bfs-dbg-hit\b"))
    expect(crumb).to_have_text("block 0 › #3 mul")
    expect_current(graph, "op:0:3")
    expect(insp).to_have_attribute("data-selected", bad_var)
    expect(stat(value, "inf")).to_have_text(inf_count)
    expect(dbg.locator(".fs-dbg-message")).to_be_hidden()
    assert network.outside == [] and network.requests


def test_frames_forward_and_backward_in_the_browser(lab, page, network):
    book = DebuggingNotebook(page, lab, "04_frames.ipynb")
    cell = book.run(SETUP, "lm, lm_startup = fd.Program()", "...", "lm_view = DebuggerView")
    frames = len(re.findall(r"^\s*\d+\s+\d+\s", book.output("last_step_op ="), re.M))
    last = frames - 1

    # forward: standing in the last frame; the slider reads the earlier ones
    dbg = book.nb.widget(cell, ".fs-dbg")
    graph = book.nb.widget(cell, ".fs-graph")
    insp = book.nb.widget(cell, ".fs-insp")
    value = insp.locator('.fs-insp-pane[data-role="value"]')
    slider = dbg.locator(".fs-dbg-frame-slider")
    expect(dbg.locator(".fs-dbg-breadcrumb")).to_contain_text(f"#2 recurrent › frame {last} ›")
    expect(dbg.locator(".fs-dbg-frames")).to_be_visible()
    expect_current(graph, "op:1:18")
    expect(graph.locator(ENCLOSING)).to_have_attribute("id", "op:0:2")
    expect(slider).to_have_attribute("data-frame", str(last))
    expect(insp).to_have_attribute("data-selected", "lstm_h.tmp_0")
    expect(shape(value)).to_have_text("[1, 96]")
    mean_last = stat(value, "mean").inner_text()
    slider.focus()
    page.keyboard.press("Home")  # the first frame: all three sequences alive
    expect(slider).to_have_attribute("data-frame", "0")
    expect(insp).to_have_attribute("data-frame", "0")
    expect(shape(value)).to_have_text("[3, 96]")
    expect(stat(value, "mean")).not_to_have_text(mean_last)
    expect(dbg.locator(".fs-dbg-frame-label")).to_have_text(f"t = 0 (1/{frames})")
    page.keyboard.press("ArrowRight")
    expect(insp).to_have_attribute("data-frame", "1")
    expect(dbg.locator(".fs-dbg-frame-label")).to_have_text(f"t = 1 (2/{frames})")

    # backward through time, in a session of its own: the gradient of lstm.w_0 in each
    # frame, last frame first; the forward view above keeps its frame
    forward_crumb = dbg.locator(".fs-dbg-breadcrumb")
    cell = book.run("bptt_sess = exe.debug(", "...", "bptt_view = DebuggerView(")
    expect(forward_crumb).to_contain_text(f"#2 recurrent › frame {last} ›")
    dbg = book.nb.widget(cell, ".fs-dbg")
    graph = book.nb.widget(cell, ".fs-graph")
    insp = book.nb.widget(cell, ".fs-insp")
    gradient = insp.locator('.fs-insp-pane[data-role="gradient"]')
    slider = dbg.locator(".fs-dbg-frame-slider")
    expect(dbg).to_have_attribute("data-phase", "backward")
    expect(dbg.locator(".fs-dbg-breadcrumb")).to_contain_text(
        "#12 recurrent_grad › frame 0 › block 2 › #18 matmul_v2_grad")
    expect_current(graph, "op:2:18")
    expect(graph.locator(ENCLOSING)).to_have_attribute("id", "op:0:12")
    expect_current_in_view(page, graph)  # stepped into backward: on screen, tagged
    page.set_viewport_size({"width": 760, "height": 1000})  # a narrower window
    page.wait_for_function("g => g.querySelector('.fs-graph-viewport').clientWidth < 500",
                           arg=graph.element_handle())
    expect_current_in_view(page, graph)
    graph.screenshot(path=str(SHOTS / "debugger_backward_narrow.png"))
    page.set_viewport_size({"width": 1280, "height": 1000})
    expect(insp).to_have_attribute("data-selected", "lstm.w_0")
    expect(gradient).to_have_attribute("data-state", "value")
    expect(stat(gradient, "max")).to_have_text("0")  # frame 0: h_prev is the zero memory
    slider.focus()
    page.keyboard.press("Home")  # the first frame run backward: the last one
    expect(insp).to_have_attribute("data-frame", str(last))
    expect(dbg.locator(".fs-dbg-frame-label")).to_have_text(f"t = {last} (1/{frames})")
    expect(stat(gradient, "max")).not_to_have_text("0")

    # one step on and back by hand: the highlight follows, and the notebook's own
    # bit-for-bit check below still holds where the session stands
    dbg.locator(".fs-dbg-step").click()
    expect(dbg.locator(".fs-dbg-breadcrumb")).to_contain_text("frame 0 › block 2 › #19 elementwise_add_grad")
    expect_current(graph, "op:2:19")
    dbg.locator(".fs-dbg-back").click()
    expect_current(graph, "op:2:18")
    expect(insp).to_have_attribute("data-frame", "0")
    expect(stat(gradient, "max")).to_have_text("0")

    # "forward only": the grad op is not drawn; its forward op in the step block is marked,
    # tagged with why, and in view
    graph.locator("select.fs-graph-mode").select_option(label="forward only")
    current = graph.locator(CURRENT)
    expect(current).to_have_count(1)
    expect(current).to_have_attribute("id", re.compile(r"^op:1:\d+$"))
    expect(current).to_contain_text("matmul_v2")
    expect(graph.locator(".fs-graph-now")).to_contain_text(
        "now at #18 matmul_v2_grad (block 2), the gradient of this op")
    expect_current_in_view(page, graph)
    graph.screenshot(path=str(SHOTS / "debugger_backward_forward_only.png"))
    graph.locator("select.fs-graph-mode").select_option(label="with gradients")
    expect_current(graph, "op:2:18")

    last_cell = book.run("def snapshot(session):", "...", "end_view.step_out()")
    assert "0 differ" in book.output("def snapshot(session):")
    assert "finished: True" in book.nb.output_text(last_cell)
    end_dbg = book.nb.widget(last_cell, ".fs-dbg")
    expect(end_dbg.locator(".fs-dbg-breadcrumb")).to_have_text(re.compile(r"#\d+ adam$"))
    expect(end_dbg).to_have_attribute("data-finished", "true")
    # back and forth ended where it began: the backward view still shows its frame-0 stop
    expect(dbg.locator(".fs-dbg-breadcrumb")).to_contain_text("frame 0 › block 2 › #18 matmul_v2_grad")
    expect_current(graph, "op:2:18")
    assert network.outside == [] and network.requests
