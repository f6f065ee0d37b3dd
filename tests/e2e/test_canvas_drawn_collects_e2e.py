"""The page tells the kernel when it drew a view, and a paused edit's full garbage
collection runs then (widgets/canvas/collector.py, PROTOCOL.md ``drawn``): an edit made
in the property panel, its new shape on screen, then the page's ``drawn`` and the
collector's full collection, before any other gesture, with the fallback timers set far
away so that only the page's message can have started it."""
import json
import re

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

SETUP = """\
import json
import fluidscope.designer as fd
from fluidscope.widgets import DesignCanvas
from fluidscope.widgets.canvas import collector

policy = collector.COLLECTOR
policy.after_view_s, policy.idle_s, policy.pause_s = 600.0, 600.0, 0.0  # only 'drawn' is soon
LOG = []
_thaw = policy.thaw
def _logged_thaw():
    LOG.append("thaw")
    _thaw()
policy.thaw = _logged_thaw

d = fd.Design()
h = d.add("data", name="x", shape=[None, 8])
d.add("fc", inputs={"input": h}, size=4, name="fc0")
canvas = DesignCanvas(d, height=420)
_receive = canvas.receive
canvas.receive = lambda content: (LOG.append(content.get("action")), _receive(content))[1]
"""
SHOW = "canvas"
REPORT = 'print("LOG=" + json.dumps(LOG)); print("GESTURES=%d" % policy.gestures)'


def printed(out, key):
    return json.loads(re.search(rf"^{key}=(.*)$", out, re.M).group(1))


def test_the_page_says_it_drew_the_edit_and_the_collection_follows(lab, page):
    lab.write_notebook("drawn.ipynb", [SETUP, SHOW, REPORT])
    nb = jlab.open_notebook(page, lab, "drawn.ipynb")
    nb.run_cell(0)
    nb.run_cell(1)
    canvas = nb.widget(1, ".fs-canvas")
    head = canvas.locator('.react-flow__node[data-id="fc0"] .fs-node-head')
    expect(head).to_be_visible()
    head.click()
    field = canvas.locator('.fs-inspector [data-attr="size"]')
    expect(field).to_have_value("4")
    field.fill("7")
    field.press("Enter")
    expect(canvas.locator('.react-flow__node[data-id="fc0"] .fs-shape')).to_have_text("[-1, 7]")
    out = nb.run_until(2, '"thaw"')
    log = printed(out, "LOG")
    edit = log.index("set_attr")
    # right after the edit: the page's drawing of its view, then the full collection
    assert log[edit + 1:edit + 3] == ["drawn", "thaw"], log
    assert printed(out, "GESTURES") == 0, out
