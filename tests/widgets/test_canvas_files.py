"""DesignCanvas files and runs: autosave, reopening, export, training, debugging, graph."""
import json
import os

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError
from fluidscope.widgets import DebuggerView, DesignCanvas, TrainingMonitor, has_dot

from test_canvas_view import sequence_classifier


def batches(count=4, vocab=30, seed=0):
    """Sequences of ids labelled by whether they hold more small ids than large ones."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        lengths = rng.integers(3, 8, 6)
        ids = rng.integers(0, vocab, int(lengths.sum()))
        offsets = [[0] + np.cumsum(lengths).tolist()]
        cuts = np.split(ids, np.cumsum(lengths)[:-1])
        label = np.array([[int((c < vocab // 2).mean() > 0.5)] for c in cuts], dtype="int64")
        out.append({"ids": fd.LoDTensor(ids[:, None].astype("int64"), offsets),
                    "label": label})
    return out


def test_a_second_canvas_on_the_same_path_shows_the_same_design(tmp_path):
    path = tmp_path / "model.fsdesign.json"
    first = DesignCanvas(sequence_classifier(), path=path)
    assert path.exists()  # a new file gets the starting design at once
    first.add_node("relu", 900, 40, source="logits")
    first.move({"pool": [640, 80]})
    first.set_attr("logits", "size", 3)
    second = DesignCanvas(path=path)
    assert second.design == first.design
    assert second.design.layout["pool"] == [640.0, 80.0]
    assert second.view["nodes"] == first.view["nodes"]
    assert second.view["edges"] == first.view["edges"]


def test_undo_steps_are_saved_and_a_refused_edit_keeps_the_file(tmp_path):
    path = tmp_path / "d.fsdesign.json"
    c = DesignCanvas(sequence_classifier(), path=path)
    c.set_attr("logits", "size", 7)
    saved = path.read_text()
    assert c.receive({"action": "set_attr", "node": "logits", "name": "size", "value": -1.5}) \
        is False
    assert path.read_text() == saved
    c.undo()
    assert fd.Design.load(path).node("logits").attrs["size"] == 2


def test_a_file_that_does_not_load_is_reported_and_never_overwritten(tmp_path):
    path = tmp_path / "broken.fsdesign.json"
    path.write_text('{"format": "fluidscope-design", "version": 99, "nodes": []}')
    before = path.read_bytes()
    c = DesignCanvas(path=path)
    assert "did not load" in c.message and "will not save over it" in c.message
    c.add_node("data", 0, 0)
    c.move({"data_0": [5, 5]})
    assert path.read_bytes() == before
    assert "data_0" in c.design.nodes


def test_python_edits_are_saved_by_refresh(tmp_path):
    path = tmp_path / "p.fsdesign.json"
    c = DesignCanvas(path=path)
    c.design.add("data", name="x", shape=[None, 3])
    c.refresh()
    assert "x" in fd.Design.load(path).nodes


def test_export_writes_files_that_load_back_and_run(tmp_path):
    c = DesignCanvas(sequence_classifier())
    folder = tmp_path / "out"
    assert c.receive({"action": "export", "folder": str(folder)}), c.message
    names = sorted(os.listdir(folder))
    expected = {"model.pdmodel", "model.pdiparams", "model.pbtxt", "model.py",
                "model.fsdesign.json"} | ({"model.svg"} if has_dot() else set())
    assert set(names) == expected
    assert c.status.startswith(f"exported {len(expected)} files to {folder}")
    assert fd.Design.load(folder / "model.fsdesign.json") == c.design
    text_program = fd.io.load_program(str(folder / "model.pbtxt"))
    assert [op.type for op in text_program.global_block().ops][-1] == "fetch"
    scope = fd.Scope()
    exe = fd.Executor(fd.CPUPlace())
    with fd.scope_guard(scope):
        program, feeds, fetches = fd.io.load_inference_model(str(folder / "model"), exe)
        assert sorted(feeds) == ["ids", "label"]
        (loss,) = exe.run(program, feed=batches(1)[0], fetch_list=fetches, scope=scope)
    assert np.isfinite(loss).all()
    if has_dot():
        assert (folder / "model.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    code = (folder / "model.py").read_text()
    compile(code, "model.py", "exec")


def test_train_then_debug_then_graph_open_views_below_the_canvas():
    c = DesignCanvas(sequence_classifier())
    with pytest.raises(FluidscopeError, match="set canvas.reader"):
        c.train()
    c.reader = batches(6)
    run = c.train(epochs=3)
    result = run.wait()
    assert len(result.losses) == 18 and np.isfinite(result.losses).all()
    assert isinstance(c.panel.children[0], TrainingMonitor)
    weights = np.array(c.scope.find_var("logits.w_0").get_tensor()).copy()
    c.show_graph()  # rebuilds: the trained weights stay
    assert np.array_equal(np.array(c.scope.find_var("logits.w_0").get_tensor()), weights)
    view = c.debug()
    assert isinstance(view, DebuggerView) and not view.finished
    view.step()
    assert view.op_index == 0
    view.continue_()
    assert view.finished
    assert [type(w).__name__ for w in c.panel.children] == ["GraphView", "TrainingMonitor",
                                                           "DebuggerView"]
    assert c.receive({"action": "train", "epochs": 1}), c.message
    assert c.receive({"action": "show_graph"}) and c.status.startswith("graph of")
    assert c.receive({"action": "debug"}) and c.status.startswith("debugging")
    assert c.panel.children[2] is not view  # the newest debugger replaces the last one


def test_train_refuses_a_design_that_does_not_build():
    d = sequence_classifier()
    d.set("logits", size=5)
    d.add("elementwise_add", inputs={"x": "logits", "y": "pool"}, name="bad")
    c = DesignCanvas(d)
    c.reader = batches(1)
    assert c.receive({"action": "train"}) is False
    assert "the design does not build: bad:" in c.message


def test_display_shows_the_editor_and_the_panel():
    c = DesignCanvas()
    bundle = c._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    model_id = json.loads(json.dumps(data["application/vnd.jupyter.widget-view+json"]))
    assert model_id["model_id"] != c.model_id  # a VBox of the editor and its panel


def test_drags_are_saved_debounced_inside_an_event_loop(tmp_path):
    import asyncio
    import time

    from fluidscope.widgets.canvas import persistence
    from own_loop import run_in_own_loop

    path = tmp_path / "drag.fsdesign.json"

    async def drag():
        c = DesignCanvas(sequence_classifier(), path=path)
        c.set_attr("logits", "size", 4)          # an undo step: written at once
        assert fd.Design.load(path).node("logits").attrs["size"] == 4
        for x in range(5):                        # a drag's end, five times quickly
            c.move({"pool": [float(x), 0.0]})
        assert "pool" not in fd.Design.load(path).layout  # not yet
        started = time.monotonic()
        while "pool" not in fd.Design.load(path).layout:
            assert time.monotonic() - started < 5 * persistence.DEBOUNCE_S
            await asyncio.sleep(0.05)
        assert fd.Design.load(path).layout["pool"] == [4.0, 0.0]  # the last one

    run_in_own_loop(drag)  # the main thread may hold Playwright's loop (own_loop.py)


def test_cells_that_edit_the_design_redraw_it():
    class Events:
        def __init__(self):
            self.hooks = []

        def register(self, name, hook):
            assert name == "post_run_cell"
            self.hooks.append(hook)

        def unregister(self, name, hook):
            self.hooks.remove(hook)

    class Shell:
        kernel = object()
        events = Events()

    import IPython
    original = IPython.get_ipython
    IPython.get_ipython = lambda: Shell
    try:
        c = DesignCanvas(sequence_classifier())
    finally:
        IPython.get_ipython = original
    (hook,) = Shell.events.hooks
    c.design.add("relu", inputs={"x": "logits"}, name="from_a_cell")
    hook(None)                                   # the cell finished
    assert "from_a_cell" in {n["id"] for n in c.view["nodes"]}
    c.close()
    assert Shell.events.hooks == []


def test_export_without_a_loss_writes_the_last_layer_from_the_inputs_it_needs(tmp_path):
    d = sequence_classifier()
    d.set_loss(None)
    d.remove("loss")
    d.remove("cost")
    c = DesignCanvas(d)
    c.export(str(tmp_path))
    with fd.scope_guard(fd.Scope()):
        _, feeds, fetches = fd.io.load_inference_model(str(tmp_path / "model"))
    assert feeds == ["ids"] and [v.name for v in fetches] == ["logits.tmp_1"]
