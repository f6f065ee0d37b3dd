"""Paddle's own ResNet-18 (``paddle.vision.models.resnet18``, saved by PaddlePaddle 3.3.1)
opens on the canvas as layers and stays readable (issue #15): the first view holds every
node in the pane, conv2d / batch_norm / relu are layer nodes, the eight residual adds are
there, and at the zoomed-out first view every conv2d, batch_norm and residual add reads
its whole name (the compact block splits a long name over its two lines) in type at least
11 px tall. Skipped without .venv-paddle (CI has it)."""
import pytest

import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

from test_canvas_e2e import flow, open_wide, settled  # noqa: E402
from test_canvas_size_e2e import GEOMETRY_JS, shot  # noqa: E402
from paddle_oracle import run_paddle  # noqa: E402

PADDLE_SCRIPT = r'''
import sys
import paddle
paddle.enable_static()
main, start = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, start):
    x = paddle.static.data("image", [None, 3, 32, 32], "float32")
    net = paddle.vision.models.resnet18(num_classes=10)
    net.eval()
    out = net(x)
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(start)
paddle.static.save_inference_model(sys.argv[1], [x], [out], exe, program=main)
'''

# Each compact line of the named nodes: its text, whether it is cut short (ellipsis), and
# its height on screen (font size times the viewport's zoom).
LINES_JS = """(root, ids) => {
    const zoom = new DOMMatrixReadOnly(getComputedStyle(root.querySelector('.react-flow__viewport')).transform).a;
    return ids.map(id => [...root.querySelectorAll(`.react-flow__node[data-id="${id}"] .fs-compact > div:not(.react-flow__handle)`)]
        .map(l => ({id, text: l.textContent, cut: l.scrollWidth > l.clientWidth + 1,
                    px: parseFloat(getComputedStyle(l).fontSize) * zoom})));
}"""


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resnet18")
    run_paddle(PADDLE_SCRIPT, folder, folder / "resnet18")
    return folder / "resnet18.pdmodel"

def test_paddles_resnet18_opens_as_layers_whole_and_readable(lab, page, network, resnet18):
    lab.write_notebook("resnet18.ipynb", [
        "import collections\n"
        "import fluidscope.designer as fd\n"
        "from fluidscope.widgets import DesignCanvas\n"
        f"d = fd.Design.from_program(fd.io.load_program({str(resnet18)!r}), layers=True)\n"
        "kinds = collections.Counter(n.attrs['type'] if n.layer == 'op' else n.layer\n"
        "                            for n in d.nodes.values())\n"
        "print('KINDS', sorted(kinds.items()))\n"
        "print('IDS', ' '.join(n for n in d.nodes if n.startswith(('conv2d', 'batch_norm', 'elementwise_add'))))\n"
        "canvas = DesignCanvas(design=d)\n"
        "canvas",
    ])
    nb = open_wide(page, lab, "resnet18.ipynb")
    nb.run_cell(0, timeout=120_000)
    out = nb.output_text(0)
    assert "('conv2d', 20)" in out and "('batch_norm', 20)" in out, out
    assert "('elementwise_add', 8)" in out, out  # the residual adds
    ids = out.split("IDS ", 1)[1].splitlines()[0].split()
    assert len(ids) == 48

    canvas = flow(nb, 0)
    expect(canvas.locator(".react-flow__node")).to_have_count(72)
    expect(canvas.locator(".fs-compact")).to_have_count(72)
    settled(page)
    geometry = canvas.evaluate(GEOMETRY_JS)
    shot(canvas, "canvas_resnet18_first_view.png")
    assert geometry["outside"] == [], geometry
    lines = [line for node in canvas.evaluate(LINES_JS, ids)
             for line in node]
    assert len(lines) == 2 * len(ids)
    assert min(line["px"] for line in lines) >= 11, lines
    by_node = {}
    for line in lines:
        by_node.setdefault(line["id"], []).append(line)
    for node_id, (first, second) in by_node.items():
        if node_id.startswith("elementwise_add"):  # "elementwise_" is cut; "add_<k>" reads whole
            assert second["text"].startswith("add_") and not second["cut"], (node_id, first, second)
        else:  # "conv2d" / "conv2d_3"; conv2d_12 -> "conv2d_" / "12"; "batch_" / "norm_3"
            assert not first["cut"] and not second["cut"], (node_id, first, second)
            assert node_id in (second["text"], first["text"] + second["text"]), (first, second)
