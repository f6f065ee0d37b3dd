"""TrainingMonitor beyond the loss, without a browser: fetched metrics and added
(validation) series as curves, panels whose y axis starts at zero for non-negative
quantities, the log axis, CSV export at full resolution and the PNG round trip."""
import base64
import csv
import struct
import zlib

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.widgets import train
from fluidscope.widgets.training import TrainingMonitor
from fluidscope.widgets.training.series import axis_range

BATCHES, BATCH = 6, 16


@pytest.fixture(scope="module")
def classifier():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 4])
        y = fd.data("y", [None, 1], dtype="int64")
        prob = fd.fc(fd.fc(x, 16, act="relu"), 3, act="softmax")
        loss = fd.mean(fd.cross_entropy(prob, y))
        acc = fd.accuracy(prob, y)
        fd.optimizer.SGD(0.5).minimize(loss)
    rng = np.random.default_rng(1)
    features = rng.standard_normal((BATCHES * BATCH, 4)).astype(np.float32)
    labels = features[:, :3].argmax(axis=1).astype(np.int64)[:, None]
    batches = [{"x": features[s:s + BATCH], "y": labels[s:s + BATCH]}
               for s in range(0, len(features), BATCH)]
    return main, startup, loss, acc, batches


def run_classifier(classifier, epochs=3, **kwargs):
    main, startup, loss, acc, batches = classifier
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    monitor = TrainingMonitor()
    run = train(exe, main, batches, epochs=epochs, fetch_list=[loss, acc], scope=scope,
                monitor=monitor, update_interval=0, **kwargs)
    return run, monitor, loss.name, acc.name


def test_axis_range_starts_at_zero_for_non_negative_values():
    assert axis_range([0.4, 2.0, 1.1]) == (0.0, pytest.approx(2.1))
    assert axis_range([3.0]) == (0.0, pytest.approx(3.15))
    assert axis_range([0.0, 0.0]) == (0.0, 1.0)
    lo, hi = axis_range([-1.0, 3.0])  # a quantity that goes negative keeps its minimum
    assert lo == pytest.approx(-1.2) and hi == pytest.approx(3.2)
    assert axis_range([np.nan, np.inf]) is None and axis_range([]) is None
    lo, hi = axis_range([0.01, 1.0, 0.0, -2.0], log=True)  # positive values only
    assert lo == pytest.approx(10 ** -2.1) and hi == pytest.approx(10 ** 0.1)
    assert axis_range([5.0], log=True) == (pytest.approx(10 ** (np.log10(5) - 0.5)),
                                           pytest.approx(10 ** (np.log10(5) + 0.5)))


def test_fetched_metric_is_a_series_in_a_panel_of_its_own(classifier):
    run, monitor, loss, acc = run_classifier(classifier)
    history = run.result
    assert [s["name"] for s in monitor.series] == [acc]
    series = monitor.series[0]
    assert series["panel"] == acc and series["kind"] == "metric"
    assert series["points"] == history.steps == 3 * BATCHES
    np.testing.assert_allclose(np.frombuffer(series["values"], "<f4"), history.fetches[acc],
                               rtol=1e-6)
    assert np.frombuffer(series["steps"], "<f4").tolist() == list(range(1, 19))
    loss_panel, acc_panel = monitor.panels
    assert (loss_panel["name"], loss_panel["series"]) == (loss, [loss])
    assert (acc_panel["name"], acc_panel["series"]) == (acc, [acc])
    assert loss_panel["lo"] == 0.0 and loss_panel["hi"] >= history.losses.max()
    assert acc_panel["lo"] == 0.0 and acc_panel["hi"] >= max(history.fetches[acc])
    assert monitor.x_title == "step" and acc_panel["y_title"] == acc


def test_validation_series_joins_its_metric_and_log_axis(classifier):
    run, monitor, loss, acc = run_classifier(classifier)
    monitor.add_validation(0.9, step=6)
    monitor.add_validation(0.5, step=12)
    monitor.add_validation(0.25)  # at the steps done: 18
    monitor.add_validation(0.7, metric=acc, step=18)
    names = {s["name"]: s for s in monitor.series}
    val = names[f"validation {loss}"]
    assert val["panel"] == loss and val["kind"] == "added" and val["points"] == 3
    assert np.frombuffer(val["steps"], "<f4").tolist() == [6, 12, 18]
    assert np.frombuffer(val["values"], "<f4").tolist() == pytest.approx([0.9, 0.5, 0.25])
    panels = {p["name"]: p for p in monitor.panels}
    assert panels[loss]["series"] == [loss, f"validation {loss}"]
    assert panels[acc]["series"] == [acc, f"validation {acc}"]
    top = max(run.result.losses.max(), 0.9)
    assert panels[loss]["hi"] == pytest.approx(top * 1.05)
    monitor.set_log_scale(True)
    low = min(run.result.losses.min(), 0.25)
    lo = {p["name"]: p for p in monitor.panels}[loss]["lo"]
    assert 0 < lo < low and lo == pytest.approx(
        10 ** (np.log10(low) - 0.05 * (np.log10(top) - np.log10(low))))
    monitor.reset()
    assert monitor.series == [] and monitor.panels == []


def test_labels_name_panels_and_their_validation_series(classifier):
    main, startup, loss, acc, batches = classifier
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    run = train(exe, main, batches, epochs=1, fetch_list=[loss, acc], scope=scope,
                monitor=TrainingMonitor(), labels={loss: "loss", acc.name: "accuracy"})
    monitor = run.monitor
    assert monitor.labels == {loss.name: "loss", acc.name: "accuracy"}
    monitor.add_validation(0.5, metric=acc.name)
    loss_panel, acc_panel = monitor.panels
    assert (loss_panel["y_title"], loss_panel["labels"]) == ("loss", ["loss"])
    assert acc_panel["y_title"] == "accuracy"
    assert acc_panel["labels"] == ["accuracy", "validation accuracy"]
    assert acc_panel["series"] == [acc.name, f"validation {acc.name}"]


def test_add_point_refuses_what_it_cannot_draw(classifier):
    run, monitor, loss, acc = run_classifier(classifier, epochs=1)
    with pytest.raises(Exception, match="takes one number per point, got str"):
        monitor.add_point("val", "high")
    with pytest.raises(Exception, match="is fetched by the run"):
        monitor.add_point(acc, 0.5)
    monitor.add_point("lr", 0.1)
    with pytest.raises(Exception, match="drawn in panel 'lr', not 'other'"):
        monitor.add_point("lr", 0.1, panel="other")
    with pytest.raises(Exception, match="no run attached"):
        TrainingMonitor().add_point("x", 1.0)


def test_export_csv_has_every_step_and_the_added_points(classifier, tmp_path):
    run, monitor, loss, acc = run_classifier(classifier, epochs=2)
    monitor.add_validation(0.75, step=6)
    monitor.add_point("late", 1.5, step=40)  # a point past the last step gets its own row
    path = tmp_path / "curves.csv"
    assert monitor.receive({"action": "export_csv", "path": str(path)})
    assert monitor.saved == str(path)
    rows = list(csv.reader(path.open()))
    assert rows[0] == ["step", "epoch", loss, acc, f"validation {loss}", "late"]
    body = rows[1:]
    assert len(body) == 2 * BATCHES + 1
    result = run.result
    for k, row in enumerate(body[:-1]):
        assert int(row[0]) == k + 1 and int(row[1]) == 1 + k // BATCHES
        assert float(row[2]) == result.losses[k]  # full precision, not the float32 curve
        assert float(row[3]) == result.fetches[acc][k]
        assert row[4] == ("0.75" if k + 1 == 6 else "")
    assert body[-1] == ["40", "", "", "", "", "1.5"]


def tiny_png(width=3, height=2):
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height,
                                                              8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_png_export_is_a_request_the_page_answers(classifier, tmp_path):
    run, monitor, *_ = run_classifier(classifier, epochs=1)
    path = tmp_path / "curve.png"
    assert monitor.receive({"action": "export_png", "path": str(path)})
    request = monitor.png_request
    assert request == {"id": 1, "path": str(path)} and not path.exists()
    png = tiny_png()
    data = "data:image/png;base64," + base64.b64encode(png).decode()
    assert monitor.receive({"action": "save_png", "data": data, "request": 1})
    assert path.read_bytes() == png and monitor.saved == str(path)
    # a second view answering the same request writes nothing
    path.unlink()
    assert monitor.save_png(data, 1) is None and not path.exists()
    monitor.export_png(str(path))
    assert monitor.png_request["id"] == 2
    bad = base64.b64encode(b"GIF89a not a png").decode()
    assert not monitor.receive({"action": "save_png", "data": bad, "request": 2})
    assert "are not a PNG" in monitor.message and not path.exists()
    monitor.export_png(str(path))
    assert not monitor.receive({"action": "save_png", "data": "%%%", "request": 3})
    assert "no base64 data" in monitor.message
