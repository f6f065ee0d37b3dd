"""The engine's training loop alone: its events, their order and payloads, stopping from a
handler, and that training imports no widget library."""
import subprocess
import sys
from threading import current_thread

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.training import BeginEpoch, EndEpoch, EndStep, Progress, TrainingRun, train

BATCH, BATCHES = 8, 3


@pytest.fixture(scope="module")
def model():
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], "float32")
        y = fd.data("y", [None, 1], "float32")
        loss = fd.mean(fd.square_error_cost(fd.fc(x, 1), y))
        fd.optimizer.SGD(learning_rate=0.1).minimize(loss)
    rng = np.random.default_rng(0)
    batches = [{"x": rng.normal(size=(BATCH, 4)).astype("float32"),
                "y": rng.normal(size=(BATCH, 1)).astype("float32")} for _ in range(BATCHES)]
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    return exe, main, loss, batches, scope


def test_events_come_in_order_with_the_step_values(model):
    exe, main, loss, batches, scope = model
    seen = []
    run = train(exe, main, batches, epochs=2, fetch_list=[loss], scope=scope,
                handler=seen.append, update_interval=1e9)
    kinds = [type(e).__name__ for e in seen]
    epoch = ["BeginEpoch"] + ["BeginStep", "EndStep"] * BATCHES + ["EndEpoch"]
    assert kinds == ["Progress"] + epoch * 2 + ["Progress"]
    steps = [e for e in seen if isinstance(e, EndStep)]
    assert [(e.epoch, e.step) for e in steps] == [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
    assert [e.loss for e in steps] == list(run.losses())
    assert steps[0].metrics == {loss.name: steps[0].loss}
    ends = [e for e in seen if isinstance(e, EndEpoch)]
    assert [e.mean_loss for e in ends] == run.history.epoch_losses
    assert seen[-1].status == "finished" and all(e.run is run for e in seen)


def test_a_handler_subscribes_to_some_kinds_and_may_stop_the_run(model):
    exe, main, loss, batches, scope = model
    run = TrainingRun(exe, main, batches, 5, [loss], scope=scope)
    epochs, steps = [], []
    run.subscribe(epochs.append, (BeginEpoch, EndEpoch))

    def stop_after_four(event):
        steps.append(event.step)
        if len(steps) == 4:
            event.run.stop()

    run.subscribe(stop_after_four, EndStep)
    result = run.run()
    assert result.status == "stopped" and run.done == 4 and len(steps) == 4
    assert [type(e) for e in epochs] == [BeginEpoch, EndEpoch, BeginEpoch, EndEpoch]
    run.unsubscribe(stop_after_four, EndStep)
    with pytest.raises(FluidscopeError, match="unknown event kind"):
        run.subscribe(print, int)
    with pytest.raises(FluidscopeError, match="a handler must be a function"):
        run.subscribe(3, Progress)


def test_background_run_emits_from_its_thread(model):
    exe, main, loss, batches, scope = model
    threads = []
    run = train(exe, main, batches, epochs=1, fetch_list=[loss], scope=scope,
                handler=lambda event: threads.append((type(event), current_thread().name)),
                background=True)
    assert run.wait(60).status == "finished" and run.threaded
    # start() announces the run from the caller; everything after comes from the loop
    assert threads[0] == (Progress, "MainThread")
    assert {name for _, name in threads[1:]} == {"fluidscope-train"}


def test_training_imports_no_widget_library():
    code = ("import sys, fluidscope.engine.training as t; t.TrainingRun; "
            "print(sorted(m for m in ('anywidget', 'ipywidgets', 'traitlets', 'IPython', "
            "'fluidscope.widgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
