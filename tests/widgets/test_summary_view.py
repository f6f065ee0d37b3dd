"""SummaryView: fd.summary as a table widget, driven through its Python API and its
front-end messages (no browser)."""
import json
import pathlib
import sys

import fluidscope.designer as fd
from fluidscope.widgets import SummaryView

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "designer"))
from test_summary import cnn, mlp  # noqa: E402


def test_the_widget_shows_the_summary_cells_and_totals():
    main, _ = mlp()
    view = SummaryView(main)
    made = fd.summary(main)
    assert view.columns == list(made.columns) and view.rows == made.table()
    assert view.rows[0][0] == "hidden (mul+elementwise_add+relu)"
    assert view.rows[0][1:] == ["[-1, 8]", "40", "160", "40"]
    assert view.totals["Total params"] == "67" and view.totals["Total MACs"].startswith("67 ")
    assert "relu" in view.uncounted and view.summary.total_macs == 67
    json.dumps({"rows": view.rows, "totals": view.totals})  # what the comm sends


def test_front_end_actions_regroup_and_rescale_through_the_python_methods():
    view = SummaryView(cnn())
    assert view.receive({"action": "group_by", "by": "op"})
    assert view.by == "op" and len(view.rows) == 8 and view.rows[0][0] == "conv1/#0 (conv2d)"
    assert view.receive({"action": "set_batch_size", "batch_size": 3})
    assert view.batch_size == 3 and view.summary.total_macs == 3 * 9344
    assert view.totals["Total MACs"] == "28,032 (batch size 3)"
    view.group_by("layer")
    assert [r[0].split()[0] for r in view.rows] == ["conv1", "pool1", "bn1", "up1", "head"]


def test_bad_messages_are_reported_in_the_message_line_and_change_nothing():
    view = SummaryView(cnn())
    before = list(view.rows)
    assert not view.receive({"action": "group_by", "by": "layers"})
    assert "by must be 'layer' or 'op'" in view.message and view.rows == before
    assert not view.receive({"action": "set_batch_size", "batch_size": "2"})
    assert "batch_size" in view.message
    assert view.receive({"action": "refresh"}) and view.message == ""


def test_refresh_follows_a_program_that_grew():
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], dtype="float32")
        h = fd.fc(x, 8, name="first")
    view = SummaryView(main)
    assert len(view.rows) == 1
    with fd.program_guard(main, startup):
        fd.fc(h, 2, name="second")
    view.refresh()
    assert [r[0].split()[0] for r in view.rows] == ["first", "second"]
    assert view.totals["Total params"] == f"{4 * 8 + 8 + 8 * 2 + 2}"
