"""TensorInspector without a browser: what it reads from a debugger session, and what
crosses to the front end (binary buffers of fixed size, strict JSON for the rest)."""
import json

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets.tensor import summary as ts
from fluidscope.widgets.tensor import TensorInspector
from sessions import mlp_session, sequence_session



class RecordingComm:
    """Stands in for a kernel comm: keeps every message a widget sends."""
    count = 0

    def __init__(self, **kwargs):
        RecordingComm.count += 1
        self.comm_id = f"recording-{RecordingComm.count}"
        self.opened = kwargs
        self.sent = []

    def send(self, data=None, buffers=None, **_):
        self.sent.append((data, [bytes(b) for b in buffers or []]))

    def on_msg(self, callback):
        self.callback = callback

    def close(self, *_, **__):
        self.closed = True


@pytest.fixture
def recording(monkeypatch):
    import ipywidgets.comm
    monkeypatch.setattr(ipywidgets.comm, "create_comm", lambda **kw: RecordingComm(**kw))




def test_value_before_and_after_its_op_runs():
    session = mlp_session(rows=6)
    view = TensorInspector(session, "fc_0.tmp_0")
    assert view.selected == "fc_0.tmp_0" and view.value["state"] == "unset"
    assert view.where == "block 0 › start" and view.frame is None
    assert "x" in view.variables and "fc_0.w_0@GRAD" in view.variables
    version = view.version
    session.step()
    view.refresh()
    expected = session.tensor("fc_0.tmp_0").numpy()
    value = view.value
    assert view.version == version + 1 and value["state"] == "value"
    assert value["shape"] == [6, 8] and value["dtype"] == "float32"
    assert value["place"] == "CPUPlace()" and value["lod"] == []
    stats = value["stats"]
    assert stats["mean"] == pytest.approx(expected.astype(np.float64).mean(), rel=1e-9)
    assert stats["std"] == pytest.approx(expected.astype(np.float64).std(), rel=1e-9)
    assert (stats["min"], stats["max"]) == (pytest.approx(expected.min()),
                                          pytest.approx(expected.max()))
    assert (stats["nan"], stats["inf"]) == (0, 0)
    assert view.where == "block 0 › #0 mul"


def test_gradient_beside_the_value_once_backward_has_run():
    session = mlp_session(rows=6)
    view = TensorInspector(session, "fc_0.w_0")
    assert view.value["state"] == "value" and view.value["shape"] == [4, 8]
    assert view.gradient == {"name": "fc_0.w_0@GRAD", "state": "unset"}
    session.run_to(op_type="sgd")
    view.refresh()
    grad = session.tensor("fc_0.w_0@GRAD").numpy()
    assert view.gradient["state"] == "value" and view.gradient["shape"] == [4, 8]
    assert view.gradient["stats"]["max"] == pytest.approx(grad.max())
    counts = np.frombuffer(view.gradient["histogram"]["counts"], dtype=ts.HISTOGRAM_DTYPE)
    assert counts.sum() == grad.size


def test_variable_without_gradient_and_nothing_selected():
    session = mlp_session(rows=6)
    view = TensorInspector(session)
    assert view.value == {"name": "", "state": "none"} and view.gradient["state"] == "none"
    view.select("label")
    assert view.value["dtype"] == "int64"
    assert view.gradient == {"name": "label@GRAD", "state": "missing"}
    view.select("")
    assert view.selected == "" and view.value["state"] == "none"


def test_unknown_name_is_reported_and_keeps_the_selection():
    view = TensorInspector(mlp_session(rows=6), "x")
    assert view.select("fc_0.w") == "x"
    assert "no variable 'fc_0.w'" in view.message and "fc_0.w_0" in view.message
    view.select("fc_0.w_0")
    assert view.message == "" and view.selected == "fc_0.w_0"


def test_front_end_select_message():
    view = TensorInspector(mlp_session(rows=6))
    assert view.receive({"action": "select", "name": "fc_1.b_0"})
    assert view.selected == "fc_1.b_0" and view.value["shape"] == [3]
    assert not view.receive({"action": "explode"})
    assert view.message == ("TensorInspector: unknown action 'explode'; known: ['check_gradient', "
                            "'refresh', 'save_npy', 'select', 'set_sample', 'set_show_difference', "
                            "'set_show_optimizer_state']")
    assert not view.receive({"action": "select", "name": 7})
    assert view.message == ("TensorInspector: select: argument 'name' must be a string or null, "
                            "got 7")
    assert view.selected == "fc_1.b_0"


def test_per_sequence_rows_from_the_lod():
    session, x = sequence_session()
    view = TensorInspector(session, "x")
    value = view.value
    assert value["lod"] == [[0, 2, 3, 7]]
    rows = value["sequences"]["rows"]
    assert value["sequences"]["total"] == 3
    assert [(r["start"], r["end"], r["length"]) for r in rows] == [(0, 2, 2), (2, 3, 1), (3, 7, 4)]
    for r in rows:
        part = x[r["start"]:r["end"]].astype(np.float64)
        assert r["mean"] == pytest.approx(part.mean(), rel=1e-6)
        assert r["min"] == pytest.approx(part.min())


@pytest.mark.filterwarnings("ignore:.*encountered in log:RuntimeWarning")
def test_nan_and_inf_counts_of_a_session_tensor():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 3])
        fd.log(x)
    exe = fd.Executor()
    x = np.array([[1.0, 0.0, -1.0], [np.e, 0.0, 2.0]], dtype=np.float32)
    session = exe.debug(main, {"x": x}, None, fd.Scope())
    session.step()
    out = [op for op in main.desc.blocks[0].ops][0].outputs[0].arguments[0]
    view = TensorInspector(session, out)
    stats = view.value["stats"]
    assert (stats["nan"], stats["inf"], stats["finite"]) == (1, 2, 3)
    assert stats["max"] == pytest.approx(1.0) and stats["min"] == 0.0


def test_large_tensor_is_summarised_within_the_caps():
    session = mlp_session(rows=3000, features=700)
    view = TensorInspector(session, "x", cells=(32, 48), bins=20, preview_values=10)
    value = view.value
    assert value["shape"] == [3000, 700] and value["stats"]["size"] == 2_100_000
    hm = value["heatmap"]
    assert (hm["rows"], hm["cols"], hm["binned"]) == (32, 48, True)
    assert len(hm["data"]) == 32 * 48 * 4
    assert len(value["histogram"]["counts"]) == 20 * 4
    assert len(value["preview"]["data"]) == 10 * 8


def last_update(view, trait):
    """(state, {buffer path: bytes}) of the last update message that carried ``trait``."""
    for data, buffers in reversed(view.comm.sent):
        if data.get("method") == "update" and trait in data["state"]:
            return data["state"], dict(zip(map(tuple, data["buffer_paths"]), buffers))
    raise AssertionError(f"no update carried {trait!r}")


def test_summaries_cross_as_binary_buffers(recording):
    session = mlp_session(rows=6)
    view = TensorInspector(session, "fc_0.w_0")
    state, buffers = last_update(view, "value")
    json.dumps(state, allow_nan=False)  # strict JSON: the arrays left as buffers
    assert {("value", "histogram", "counts"), ("value", "heatmap", "data"),
            ("value", "preview", "data")} <= set(buffers)
    assert "counts" not in state["value"]["histogram"]
    assert len(buffers["value", "heatmap", "data"]) == 4 * 8 * 4  # [4, 8] float32 cells
    assert len(buffers["value", "histogram", "counts"]) == ts.HISTOGRAM_BINS * 4
    weights = session.tensor("fc_0.w_0").numpy()
    np.testing.assert_array_equal(
        np.frombuffer(buffers["value", "heatmap", "data"], dtype="<f4").reshape(4, 8), weights)

    session.run_to(op_type="sgd")
    view.refresh()
    state, buffers = last_update(view, "gradient")
    assert state["gradient"]["state"] == "value"
    json.dumps(state, allow_nan=False)
    grad = session.tensor("fc_0.w_0@GRAD").numpy()
    np.testing.assert_array_equal(
        np.frombuffer(buffers["gradient", "heatmap", "data"], dtype="<f4").reshape(4, 8), grad)
    assert all(len(b) <= 64 * 64 * 4 for b in buffers.values())


class UnreadableSession:
    """A session whose tensors cannot be handed out (as a broken engine might)."""
    frame = None

    class plan:
        var_descs = {}

    class position:
        @staticmethod
        def breadcrumb():
            return "block 0 › #3 mean"

    def variables(self):
        return ["loss"]

    def tensor(self, name):
        if name == "loss":
            raise ValueError("cannot read this value")
        raise FluidscopeError(f"tensor: the program has no variable '{name}'")


def test_a_value_that_cannot_be_read_is_shown_not_raised():
    view = TensorInspector(UnreadableSession(), "loss")
    assert view.selected == "loss" and view.message == ""
    assert view.value == {"name": "loss", "state": "error",
                          "error": "ValueError: cannot read this value"}
    assert view.gradient == {"name": "loss@GRAD", "state": "missing"}
