"""train() and TrainingMonitor without a browser: history, progress traits, stopping
exactly between steps, NaN stops, bounded curve, errors, and the background thread."""
import json
import math
import re
import sys
import threading

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.widgets.training import monitor as monitor_module
from fluidscope.widgets.training import TrainingRun, train
from fluidscope.widgets.training import TrainingMonitor, downsample

STATIC = monitor_module.STATIC
BATCH, BATCHES = 24, 10
WAIT_S = 30  # upper bound for thread hand-offs; the waits end as soon as the state is reached


class Model:
    """A 2-layer MLP classifier with SGD, its data cut into BATCHES feed dicts, and a
    scope holding the initial parameters (``fresh_scope`` copies them)."""

    def __init__(self, lr=0.5):
        self.main, self.startup = fd.Program(), fd.Program()
        with fd.unique_name.guard(), fd.program_guard(self.main, self.startup):
            x = fd.data("x", [None, 8], "float32")
            y = fd.data("y", [None, 1], "int64")
            self.logits = fd.fc(fd.fc(x, 16, act="relu"), 3)
            self.loss = fd.mean(fd.softmax_with_cross_entropy(self.logits, y))
            self.acc = fd.accuracy(input=self.logits, label=y, k=1)
            fd.optimizer.SGD(learning_rate=lr).minimize(self.loss)
        rng = np.random.default_rng(0)
        features = rng.normal(size=(BATCH * BATCHES, 8)).astype("float32")
        labels = features[:, :3].argmax(axis=1).astype("int64")[:, None]
        self.batches = [{"x": features[s:s + BATCH], "y": labels[s:s + BATCH]}
                        for s in range(0, len(features), BATCH)]
        self.exe = fd.Executor()
        self.initial = fd.Scope()
        self.exe.run(self.startup, scope=self.initial)

    def fresh_scope(self):
        scope = fd.Scope()
        for name in self.initial.local_var_names():
            value = np.array(self.initial.find_var(name).get_tensor()).copy()
            scope.var(name).get_tensor().set(value)
        return scope

    def reader(self):
        """A generator function: a fresh pass over the batches per call, no len."""
        yield from self.batches

    def params(self, scope):
        return {p.name: np.array(scope.find_var(p.name).get_tensor()).copy()
                for p in self.main.all_parameters()}

    def plain_loop(self, steps):
        """Parameters after ``steps`` steps of a bare exe.run loop (the reference)."""
        scope = self.fresh_scope()
        for i in range(steps):
            self.exe.run(self.main, feed=self.batches[i % BATCHES], fetch_list=[self.loss],
                         scope=scope)
        return self.params(scope)


@pytest.fixture(scope="module")
def model():
    return Model()


class RecordingComm:
    """Stands in for the kernel comm: records every message the widget sends."""
    comm_id = "recording-comm"

    def __init__(self):
        self.messages = []

    def send(self, data=None, buffers=None, **_):
        self.messages.append((data, buffers))

    def on_msg(self, callback):
        self.callback = callback

    def close(self, *_, **__):
        self.messages.append(("closed", None))


def frontend_click_stop(monitor):
    """Deliver the message the JS stop button sends (``{action: "stop"}``)."""
    assert monitor.receive({"action": "stop"})


# ------------------------------------------------------------------ training
def test_mlp_trains_and_records_every_step(model):
    run = train(model.exe, model.main, model.reader, epochs=4,
                fetch_list=[model.loss, model.acc], scope=model.fresh_scope(), monitor=True)
    result = run.result
    assert result.status == "finished" and not result.stopped and result.error is None
    assert result.steps == 4 * BATCHES and result.epochs_completed == 4
    assert result.losses.shape == (4 * BATCHES,) and result.losses.dtype == np.float64
    assert result.step_epochs.tolist() == [e for e in range(4) for _ in range(BATCHES)]
    assert len(result.epoch_losses) == 4
    assert result.epoch_losses[-1] < 0.5 * result.epoch_losses[0]
    assert all(b < a for a, b in zip(result.epoch_losses, result.epoch_losses[1:]))
    np.testing.assert_allclose(result.epoch_losses[1], result.losses[BATCHES:2 * BATCHES].mean())
    assert set(result.fetches) == {model.loss.name, model.acc.name}
    assert [len(v) for v in result.fetches.values()] == [4 * BATCHES] * 2
    assert result.fetches[model.loss.name] == result.losses.tolist()
    assert result.samples == 4 * BATCHES * BATCH and result.elapsed_s > 0
    monitor = run.monitor
    assert isinstance(monitor, TrainingMonitor) and monitor.run is run
    assert (monitor.status, monitor.done, monitor.total) == ("finished", 40, 40)
    assert (monitor.epoch, monitor.epochs, monitor.step) == (4, 4, BATCHES)
    assert monitor.fetch_names == [model.loss.name, model.acc.name]
    assert monitor.message.startswith("finished 4 epochs, 40 steps")
    assert monitor.error == "" and monitor.nan_step is None and monitor.eta_s is None
    assert monitor.rate > 0 and monitor.sample_rate > 0
    assert float(monitor.loss_text) == pytest.approx(result.losses[-1], rel=1e-5)
    np.testing.assert_allclose(monitor.losses, result.losses, rtol=1e-6)  # float32 on the wire
    assert monitor.curve()[0].tolist() == list(range(1, 41))
    assert monitor.wait() is not None and monitor.result.steps == 40


def test_result_equals_a_plain_loop(model):
    scope = model.fresh_scope()
    train(model.exe, model.main, model.batches, epochs=2, fetch_list=[model.loss], scope=scope,
          monitor=False)
    reference = model.plain_loop(2 * BATCHES)
    for name, value in model.params(scope).items():
        np.testing.assert_array_equal(value, reference[name], err_msg=name)


def test_total_known_from_len_or_after_the_first_epoch(model):
    seen = []

    def record(run):
        seen.append((run.epoch, run.step, run.total))

    train(model.exe, model.main, model.batches, epochs=2, fetch_list=[model.loss],
          scope=model.fresh_scope(), monitor=False, on_step=record)
    assert {total for _, _, total in seen} == {2 * BATCHES}  # a list has len
    seen.clear()
    train(model.exe, model.main, model.reader, epochs=3, fetch_list=[model.loss],
          scope=model.fresh_scope(), monitor=False, on_step=record)
    assert [t for e, _, t in seen if e == 0] == [None] * BATCHES  # a generator has no len
    assert {t for e, _, t in seen if e > 0} == {3 * BATCHES}  # learnt from epoch 1
    seen.clear()
    train(model.exe, model.main, model.reader, epochs=2, fetch_list=[model.loss],
          scope=model.fresh_scope(), monitor=False, on_step=record, steps_per_epoch=BATCHES)
    assert {t for _, _, t in seen} == {2 * BATCHES}


def test_rate_and_eta_while_running(model):
    readings = []

    def record(run):
        readings.append((run.rate, run.sample_rate, run.eta_s, run.done, run.total))

    train(model.exe, model.main, model.batches, epochs=1, fetch_list=[model.loss],
          scope=model.fresh_scope(), monitor=False, on_step=record)
    rate, sample_rate, eta, done, total = readings[4]
    # each reading measures up to its own clock reading, microseconds apart
    assert rate > 0 and sample_rate == pytest.approx(rate * BATCH, rel=0.05)
    assert eta == pytest.approx((total - done) / rate, rel=0.05)
    assert readings[-1][2] == 0


def test_sequence_batches_count_sequences_as_samples():
    """LoDTensor feeds (notebook 03's style): a sample is a sequence, not a row."""
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 4], "float32", lod_level=1)
        loss = fd.mean(fd.fc(fd.sequence_pool(x, "sum"), 1))
        fd.optimizer.SGD(learning_rate=0.01).minimize(loss)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(1)

    def reader():  # 3 sequences of 2, 5 and 1 rows per batch
        for _ in range(4):
            yield {"x": fd.LoDTensor(rng.normal(size=(8, 4)).astype("float32"), [[0, 2, 7, 8]])}

    result = train(exe, main, reader, epochs=2, fetch_list=[loss], scope=scope,
                   monitor=False).result
    assert result.steps == 8 and result.samples == 8 * 3


# ------------------------------------------------------------------ stopping
@pytest.mark.parametrize("steps", [1, 4, BATCHES + 3])
def test_stop_from_the_reader_stops_exactly_between_steps(model, steps):
    monitor = TrainingMonitor()
    pulled = []

    def reader():
        for batch in model.batches:
            pulled.append(1)
            if len(pulled) == steps + 1:  # asked for one more batch after `steps` steps
                monitor.stop()
            yield batch

    scope = model.fresh_scope()
    run = train(model.exe, model.main, reader, epochs=3, fetch_list=[model.loss], scope=scope,
                monitor=monitor)
    result = run.result
    assert result.steps == steps and result.stopped and result.status == "stopped"
    assert result.stop_reason == "stop() was called"
    assert result.epochs_completed == steps // BATCHES
    assert (monitor.status, monitor.done, monitor.stop_requested) == ("stopped", steps, True)
    assert monitor.message.startswith(f"stopped after epoch {steps // BATCHES + 1}, step "
                                      f"{steps % BATCHES} (step {steps} overall)")
    reference = model.plain_loop(steps)
    for name, value in model.params(scope).items():
        np.testing.assert_array_equal(value, reference[name], err_msg=name)


def test_stop_from_on_step_and_before_start(model):
    run = train(model.exe, model.main, model.reader, epochs=2, fetch_list=[model.loss],
                scope=model.fresh_scope(), monitor=False,
                on_step=lambda r: r.stop() if r.done == 7 else None)
    assert run.result.steps == 7 and run.result.stopped
    assert run.result.epoch_losses == [pytest.approx(run.result.losses.mean())]
    idle = TrainingRun(model.exe, model.main, model.batches, 1, [model.loss],
                       scope=model.fresh_scope())
    idle.stop()
    assert idle.run().steps == 0 and idle.status == "stopped"
    assert TrainingMonitor().stop() is False  # nothing attached: nothing to stop


def test_nan_loss_stops_cleanly_naming_the_step(model):
    batches = [dict(b) for b in model.batches]
    batches[2] = {"x": np.full_like(batches[2]["x"], np.nan), "y": batches[2]["y"]}
    run = train(model.exe, model.main, batches, epochs=2, fetch_list=[model.loss],
                scope=model.fresh_scope(), monitor=True)
    result = run.result
    assert result.steps == 3 and result.stopped and result.nan_step == 3
    assert math.isnan(result.losses[2]) and np.isfinite(result.losses[:2]).all()
    assert result.stop_reason == (f"loss '{model.loss.name}' is nan at epoch 1, step 3 "
                                  f"(step 3 overall)")
    monitor = run.monitor
    assert (monitor.status, monitor.nan_step, monitor.loss_text) == ("stopped", 3, "nan")
    assert monitor.message == f"stopped: {result.stop_reason}"
    assert math.isnan(monitor.losses[-1])
    # JSON has no NaN: every synced non-buffer value must still serialise strictly
    state = {k: v for k, v in monitor.get_state().items() if not isinstance(v, bytes)}
    json.dumps(state, allow_nan=False)

    kept_going = train(model.exe, model.main, batches, epochs=1, fetch_list=[model.loss],
                       scope=model.fresh_scope(), monitor=False, stop_on_nan=False).result
    assert kept_going.status == "finished" and kept_going.steps == BATCHES
    assert kept_going.nan_step == 3


# ---------------------------------------------------------- curve and traffic
def test_downsample_is_bounded_and_keeps_means_and_nans():
    losses = np.arange(10_001, dtype=np.float64)
    steps, values = downsample(losses, 2000)
    assert len(steps) == len(values) <= 2000
    assert len(steps) == 1667  # buckets of ceil(10001 / 2000) = 6 steps, the last of 5
    assert steps[0] == 3.5 and values[0] == 2.5  # steps 1..6 hold 0..5
    assert steps[-1] == 9999 and values[-1] == 9998  # steps 9997..10001 hold 9996..10000
    assert len(downsample(losses[:10_000], 2000)[0]) == 2000  # buckets of exactly 5
    assert np.all(np.diff(steps) > 0)
    np.testing.assert_allclose(values, steps - 1)
    losses[5000] = np.nan
    values = downsample(losses, 2000)[1]
    assert np.isnan(values).sum() == 1
    small = downsample([3.0, 2.0, 1.0], 2000)
    assert small[0].tolist() == [1, 2, 3] and small[1].tolist() == [3, 2, 1]
    with pytest.raises(FluidscopeError, match="max_points"):
        downsample(losses, 1)


def test_synced_curve_stays_bounded_while_python_keeps_everything(model):
    run = train(model.exe, model.main, model.batches, epochs=12, fetch_list=[model.loss],
                scope=model.fresh_scope(), monitor=True, max_points=50)
    assert run.result.steps == 120 and len(run.monitor.history.losses) == 120
    steps, losses = run.monitor.curve()
    assert len(steps) == len(losses) <= 50 and len(run.monitor.curve_losses) <= 50 * 4
    assert steps[0] == pytest.approx(2.0) and steps[-1] == pytest.approx(119.0)
    np.testing.assert_allclose(losses[0], run.result.losses[:3].mean(), rtol=1e-6)


def test_updates_are_throttled(model):
    def updates(interval):
        monitor = TrainingMonitor()
        monitor.comm = RecordingComm()
        run = train(model.exe, model.main, model.batches, epochs=6, fetch_list=[model.loss],
                    scope=model.fresh_scope(), monitor=monitor, update_interval=interval)
        assert run.result.steps == 6 * BATCHES
        sent = [(data, buffers) for data, buffers in monitor.comm.messages
                if isinstance(data, dict)]
        assert all(data["method"] == "update" for data, _ in sent)
        return sent

    slow = updates(3600)
    # attach (reset + names + first sync), the start, the end: never one per step
    assert len(slow) <= 6
    last, buffers = slow[-1]
    assert last["state"]["status"] == "finished" and last["state"]["done"] == 60
    # the curve goes as binary buffers (60 float32 each), not in the JSON state
    assert sorted(last["buffer_paths"]) == [["curve_losses"], ["curve_steps"]]
    assert [len(b) for b in buffers] == [60 * 4, 60 * 4]
    every = updates(0)
    assert len(every) >= 6 * BATCHES


# -------------------------------------------------------------------- errors
def test_bad_readers_are_named(model):
    def run(reader, **options):
        options.setdefault("epochs", 1)
        return train(model.exe, model.main, reader, fetch_list=[model.loss],
                     scope=model.fresh_scope(), monitor=False, **options)

    with pytest.raises(FluidscopeError, match="reader must be a function returning batches"):
        run(42)
    with pytest.raises(FluidscopeError, match=r"reader=make_batches, not make_batches\(\)"):
        run(model.reader(), epochs=2)
    assert run(iter(model.batches)).result.steps == BATCHES  # one epoch from an iterator is fine
    with pytest.raises(FluidscopeError, match="reader\\(\\) returned NoneType"):
        run(lambda: None)
    with pytest.raises(FluidscopeError, match="gave no batches in epoch 1"):
        run(lambda: iter([]))
    once = model.reader()
    with pytest.raises(FluidscopeError, match="gave no batches in epoch 2.*fresh iterable"):
        run(lambda: once, epochs=2)
    with pytest.raises(FluidscopeError, match="batch at epoch 1, step 1 .* is a tuple, not a "
                                              "feed dict.*feed_names"):
        run([(b["x"], b["y"]) for b in model.batches])
    with pytest.raises(FluidscopeError, match="batch of 1 values .* feed_names names 2"):
        run([(b["x"],) for b in model.batches], feed_names=["x", "y"])

    def broken():
        yield model.batches[0]
        yield model.batches[1]
        raise ValueError("disk gone")

    with pytest.raises(FluidscopeError, match="reader raised ValueError at epoch 1, step 3 "
                                              r"\(step 3 overall\): disk gone"):
        run(broken)
    with pytest.raises(FluidscopeError, match=r"feed 'x': got shape \[24, 5\]") as info:
        run([{"x": b["x"][:, :5], "y": b["y"]} for b in model.batches])
    if sys.version_info >= (3, 11):  # exception notes: the traceback names the step
        assert "while training: epoch 1, step 1 (step 1 overall)" in info.value.__notes__


def test_tuples_with_feed_names_and_a_feeder(model):
    pairs = [(b["x"], b["y"]) for b in model.batches]
    by_names = train(model.exe, model.main, pairs, fetch_list=[model.loss], monitor=False,
                     feed_names=["x", model.main.global_block().var("y")],
                     scope=model.fresh_scope()).result
    samples = [[(x, y) for x, y in zip(b["x"], b["y"])] for b in model.batches]
    stacked = train(model.exe, model.main, samples, fetch_list=[model.loss], monitor=False,
                    feeder=lambda rows: {"x": np.stack([r[0] for r in rows]),
                                         "y": np.stack([r[1] for r in rows])},
                    scope=model.fresh_scope()).result
    np.testing.assert_array_equal(by_names.losses, stacked.losses)
    assert stacked.samples == BATCH * BATCHES
    with pytest.raises(FluidscopeError, match="feed_names or feeder, not both"):
        train(model.exe, model.main, pairs, fetch_list=[model.loss], feed_names=["x", "y"],
              feeder=dict, monitor=False)


def test_bad_fetch_list_is_named(model):
    def run(fetch_list):
        return train(model.exe, model.main, model.batches, fetch_list=fetch_list,
                     scope=model.fresh_scope(), monitor=False)

    with pytest.raises(FluidscopeError, match="fetch_list must name the loss first"):
        run(None)
    with pytest.raises(FluidscopeError, match=r"fetch_list\[1\] 'no_such_var' is not read"):
        run([model.loss, "no_such_var"])
    with pytest.raises(FluidscopeError, match="fetch_list holds int"):
        run([model.loss, 3])
    monitor = TrainingMonitor()
    with pytest.raises(FluidscopeError, match=rf"'{model.logits.name}' is taken as the loss and "
                                              r"must hold one value, .*shape \[24, 3\]"):
        train(model.exe, model.main, model.batches, fetch_list=[model.logits],
              scope=model.fresh_scope(), monitor=monitor)
    assert monitor.status == "error" and "must hold one value" in monitor.error
    assert monitor.message.startswith("FluidscopeError (epoch 1, step 1 (step 1 overall)):")
    with pytest.raises(FluidscopeError, match="must hold one value"):
        monitor.result  # the run's error again, for whoever asks later
    assert monitor.history.steps == 0


def test_on_step_errors_and_bad_options(model):
    def boom(run):
        raise KeyError("x")

    with pytest.raises(FluidscopeError, match="on_step raised KeyError after epoch 1, step 1"):
        train(model.exe, model.main, model.batches, fetch_list=[model.loss], on_step=boom,
              scope=model.fresh_scope(), monitor=False)
    for bad, pattern in [({"epochs": 0}, "epochs must be a positive int"),
                         ({"monitor": "yes"}, "monitor must be True, False, None"),
                         ({"on_step": 3}, "on_step must be a function"),
                         ({"feeder": 3}, "feeder must be a function")]:
        with pytest.raises(FluidscopeError, match=pattern):
            train(model.exe, model.main, model.batches, fetch_list=[model.loss], **bad)


# ------------------------------------------------------------------- monitor
def test_monitor_reset_attach_and_frontend_messages(model, caplog):
    monitor = TrainingMonitor(max_points=100)
    assert (monitor.status, monitor.done, monitor.total, monitor.losses) == ("idle", 0, None, [])
    with pytest.raises(FluidscopeError, match="no run attached"):
        monitor.wait()
    train(model.exe, model.main, model.batches, fetch_list=[model.loss],
          scope=model.fresh_scope(), monitor=monitor)
    assert monitor.done == BATCHES and len(monitor.losses) == BATCHES
    monitor.set_log_scale()
    assert monitor.log_scale is True
    monitor.reset()
    assert (monitor.status, monitor.done, monitor.losses, monitor.run) == ("idle", 0, [], None)
    assert monitor.log_scale is True  # a view setting, not run state
    assert not monitor.receive({"event": "stop"})  # the old dialect: reported, not raised
    assert monitor.message.startswith("TrainingMonitor: a front-end message must be an object "
                                      "with an 'action' string")
    assert not monitor.receive({"action": "explode"})
    assert monitor.message == ("TrainingMonitor: unknown action 'explode'; known: "
                               "['export_csv', 'export_png', 'save_png', 'set_log_scale', "
                               "'stop']")
    assert not monitor.receive({"action": "set_log_scale", "on": "yes"})
    assert "argument 'on' must be true or false, got 'yes'" in monitor.message
    assert monitor.receive({"action": "set_log_scale", "on": False})
    assert monitor.log_scale is False and monitor.message == ""
    with pytest.raises(FluidscopeError, match="max_points must be at least 2"):
        TrainingMonitor(max_points=1)
    run = TrainingRun(model.exe, model.main, model.batches, 1, [model.loss],
                      scope=model.fresh_scope())
    run.run()
    with pytest.raises(FluidscopeError, match="already finished"):
        run.run()


# -------------------------------------------------------- background thread
def gated_reader(model, open_after):
    """Yields ``open_after`` batches, then sets ``reached`` and waits for ``gate``."""
    reached, gate = threading.Event(), threading.Event()

    def reader():
        for i, batch in enumerate(model.batches):
            if i == open_after:
                reached.set()
                assert gate.wait(WAIT_S), "the test never opened the gate"
            yield batch

    return reader, reached, gate


def test_background_thread_stops_on_a_frontend_click(model):
    reader, reached, gate = gated_reader(model, 3)
    scope = model.fresh_scope()
    run = train(model.exe, model.main, reader, epochs=2, fetch_list=[model.loss], scope=scope,
                monitor=True, background=True)
    monitor = run.monitor
    assert reached.wait(WAIT_S)  # three steps done; the loop waits for the 4th batch
    assert run.running and monitor.threaded and run.threaded
    with pytest.raises(FluidscopeError, match="not ended"):
        run.result
    with pytest.raises(FluidscopeError, match="still running after 0.01 s"):
        run.wait(0.01)
    frontend_click_stop(monitor)
    assert monitor.stop_requested
    gate.set()
    result = monitor.wait(WAIT_S)
    assert result.steps == 3 and result.stopped and monitor.status == "stopped"
    reference = model.plain_loop(3)
    for name, value in model.params(scope).items():
        np.testing.assert_array_equal(value, reference[name], err_msg=name)


def test_background_thread_error_is_shown_and_reraised(model):
    batches = list(model.batches)
    batches[4] = {"x": batches[4]["x"][:, :5], "y": batches[4]["y"]}
    run = train(model.exe, model.main, batches, epochs=1, fetch_list=[model.loss],
                scope=model.fresh_scope(), monitor=True, background=True)
    with pytest.raises(FluidscopeError, match=r"feed 'x': got shape \[24, 5\]"):
        run.wait(WAIT_S)
    with pytest.raises(FluidscopeError, match="feed 'x'"):
        run.monitor.result
    assert run.status == "error" and run.history.steps == 4
    assert run.monitor.status == "error"
    assert run.monitor.error.startswith("FluidscopeError: feed 'x'")
    assert "epoch 1, step 5 (step 5 overall)" in run.monitor.message


def test_background_thread_finishes_and_returns_the_result(model):
    run = train(model.exe, model.main, model.reader, epochs=2, fetch_list=[model.loss],
                scope=model.fresh_scope(), monitor=False, background=True)
    result = run.wait(WAIT_S)
    assert result.status == "finished" and result.steps == 2 * BATCHES and run.monitor is None


def test_no_widget_outside_a_kernel_by_default(model):
    run = train(model.exe, model.main, model.batches, fetch_list=[model.loss],
                scope=model.fresh_scope())
    assert run.monitor is None and not run.threaded and run.result.steps == BATCHES


# --------------------------------------------------------------- real kernel
KERNEL_CELL = """
import time
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets.training import train

main, startup = fd.Program(), fd.Program()
with fd.program_guard(main, startup):
    x = fd.data("x", [None, 8], "float32")
    loss = fd.mean(fd.fc(x, 1))
    fd.optimizer.SGD(learning_rate=0.01).minimize(loss)
exe, scope = fd.Executor(), fd.Scope()
exe.run(startup, scope=scope)
feed = {"x": np.ones((4, 8), "float32")}

def slow_reader():  # about 20 s in all, unless the stop button works
    for _ in range(2000):
        time.sleep(0.01)
        yield feed

run = train(exe, main, slow_reader, fetch_list=[loss], scope=scope)
"""


def test_stop_button_reaches_a_run_in_a_real_kernel(tmp_path, monkeypatch):
    """In a Jupyter kernel train() returns at once and runs in a thread, so the stop
    message the browser sends while it trains is handled, and the run stops between
    steps (a synchronous cell would only see it after the last step)."""
    from jupyter_client.manager import start_new_kernel

    for var in ("IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        (tmp_path / var).mkdir()
        monkeypatch.setenv(var, str(tmp_path / var))
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")  # python3 = this venv's kernel
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=120)
    try:
        found = {"comm_id": None, "shown": False}

        def look(msg):
            content = msg["content"]
            if msg["msg_type"] == "display_data":
                found["shown"] |= "application/vnd.jupyter.widget-view+json" in content["data"]
            if msg["msg_type"] == "comm_msg" and content["data"]["state"].get("done", 0) >= 3:
                found["comm_id"] = content["comm_id"]

        reply = client.execute_interactive(KERNEL_CELL, timeout=120, output_hook=look)
        assert reply["content"]["status"] == "ok", reply["content"]
        assert found["shown"]  # train() displayed its monitor
        while found["comm_id"] is None:  # wait on the widget's own updates, not on a clock
            look(client.get_iopub_msg(timeout=WAIT_S))
        comm_id = found["comm_id"]
        client.shell_channel.send(client.session.msg("comm_msg", {
            "comm_id": comm_id, "data": {"method": "custom", "content": {"action": "stop"}}}))
        printed = []
        client.execute_interactive(
            "r = run.wait(60); print(r.status, r.steps, run.threaded, run.monitor.status)",
            timeout=120, output_hook=lambda m: printed.append(m["content"].get("text", "")))
        status, steps, threaded, shown_status = "".join(printed).split()
        assert (status, threaded, shown_status) == ("stopped", "True", "stopped")
        assert 3 <= int(steps) < 2000
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


# ---------------------------------------------------------------- static files
def test_front_end_is_self_contained_and_sends_stop():
    js = (STATIC / "training_monitor.js").read_text(encoding="utf-8")
    assert re.search(r"training_monitor_default = \{ render \};\nexport \{\n  "
                     r"training_monitor_default as default\n\}", js)
    assert 'sendAction(model, "stop")' in js
    assert "data-lm-suppress-shortcuts" in js and "focusin" in js
    assert "import " not in js  # no CDN or bare imports: the browser may be offline
    css = (STATIC / "training_monitor.css").read_text(encoding="utf-8")
    assert ".fs-train-bar" in css and ".fs-train-unknown" in css
    monitor = TrainingMonitor()
    assert monitor._esm == js and monitor._css == css  # what the browser is sent
