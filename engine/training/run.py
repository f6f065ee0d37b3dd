"""``TrainingRun``: run a program over a reader for some epochs, emitting events.

    run = train(exe, main_program, reader, epochs=12, fetch_list=[loss, acc])
    result = run.wait()          # TrainingResult: losses per step, epoch means, ...

This module is the loop (``TrainingRun``) and ``train``, which makes and runs one.
Beside it: ``reader``, the feed side (a *reader* returns a fresh iterable of batches,
i.e. feed dicts, per epoch, or is a list of batches); ``result``, the fetch side
(``fetch_list[0]`` is the loss, watched by ``stop_on_nan``; every fetched value is
recorded for every step) and ``TrainingResult``; ``events``, what the loop announces
to its subscribers (``fluidscope.widgets.TrainingMonitor`` is one).

``run()`` runs the loop in the calling thread; ``start()`` in a background thread, which
is what a Jupyter kernel needs for a stop button to work (the kernel handles no widget
messages while a cell runs; ``fluidscope.widgets.train`` does that). ``wait()`` (or
``result``) joins it and re-raises what a step raised. Stopping is always between
steps: a step that has started finishes, so parameters and optimizer state stay
consistent. Nothing here imports a widget library.
"""
from __future__ import annotations

import array
import collections
import math
import threading
import time

import numpy as np

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.scope import global_scope

from .events import BeginEpoch, BeginStep, EndEpoch, EndStep, Progress, Subscribers
from .reader import (batch_size, check_feeding, check_reader, epoch_length, open_epoch, to_feed,
                     variable_names)
from .result import TrainingResult, fetch_names, loss_value, recorded

STATUSES = ("idle", "running", "stopped", "finished", "error")
RATE_UPDATES = 30  # the rate (and so the ETA) is measured over the last 30 updates (~3 s)


class TrainingRun:
    """One training loop over ``reader`` (see the module doc); made and started by ``train``.

    Progress is read from plain attributes written by the loop: ``status`` (one of
    STATUSES), ``epoch`` (0-based), ``step`` (steps done in this epoch), ``done`` (steps
    over all epochs), ``total`` (None while unknown), ``samples`` (None when batches
    carry no readable size), ``message``, ``error`` and ``nan_step``. Subscribers
    (``subscribe``) receive the loop's events (see ``events``) in the loop's thread:
    begin/end of every epoch and step, and ``Progress`` on start, at most every
    ``update_interval`` seconds while it runs, and once at the end.
    """

    def __init__(self, executor, program, reader, epochs=1, fetch_list=None, *, feed_names=None,
                 feeder=None, scope=None, stop_on_nan=True, on_step=None, steps_per_epoch=None,
                 update_interval=0.1):
        if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
            raise FluidscopeError(f"train: epochs must be a positive int, got {epochs!r}")
        check_feeding(feed_names, feeder)
        if on_step is not None and not callable(on_step):
            raise FluidscopeError(f"train: on_step must be a function, got "
                                  f"{type(on_step).__name__}")
        self._executor, self._program = executor, program
        self._reader = check_reader(reader, epochs)
        self.epochs = epochs
        self.fetch_names = fetch_names(fetch_list, executor, program)
        self._feed_names = (None if feed_names is None else
                            variable_names(feed_names, "feed_names"))
        self._feeder, self._on_step = feeder, on_step
        self._scope = scope if scope is not None else global_scope()
        self.stop_on_nan, self.update_interval = bool(stop_on_nan), float(update_interval)
        self._declared_per_epoch = steps_per_epoch
        self._subscribers = Subscribers()
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._thread = None
        self.monitor = None  # a display attached by fluidscope.widgets.train, if any
        self._failed_at = ""
        self._nan_stopped = False
        self.status, self.message, self.error, self.nan_step = "idle", "", None, None
        self.epoch = self.step = self.done = self.epochs_completed = 0
        self.total, self.samples, self.stop_reason = None, 0, ""
        # array.array: appending is a C call (the loop's hot path); copies are one memcpy
        self._losses, self._step_epochs = array.array("d"), array.array("q")
        self._fetched = {name: [] for name in self.fetch_names}
        self._fetched_lists = list(self._fetched.values())
        self._epoch_losses = []
        self._snapshots = collections.deque(maxlen=RATE_UPDATES)  # (time, done, samples)
        self._started = self._ended_at = None
        self._last_notify = 0.0

    # ------------------------------------------------------------ control
    def run(self):
        """Run the whole loop in this thread; return the TrainingResult (or raise what a
        step, the reader or ``on_step`` raised, after recording it)."""
        self._begin()
        try:
            self._loop()
        except BaseException as exc:  # KeyboardInterrupt too: record it, then re-raise
            self._finish(exc)
            raise
        self._finish(None)
        return self.result

    def start(self):
        """Run the loop in a background thread and return at once; ``wait()`` joins it."""
        self._check_idle()
        # set before _begin, so the first update already says the run is threaded
        self._thread = threading.Thread(target=self._run_in_thread, name="fluidscope-train",
                                        daemon=True)
        self._begin()
        self._thread.start()
        return self

    def stop(self):
        """Ask the loop to stop before its next step (the current step completes).
        Safe from any thread, the loop's own callbacks and the reader included."""
        if not self._stop.is_set():
            self._stop.set()
            if not self.stop_reason:
                self.stop_reason = "stop() was called"

    @property
    def stop_requested(self):
        return self._stop.is_set()

    def wait(self, timeout=None):
        """Block until the loop has ended; return ``result`` (re-raising its error).

        While a cell is blocked here the kernel handles no widget messages, so the stop
        button waits too; call ``stop()`` in code or wait in a later cell."""
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise FluidscopeError(f"training is still running after {timeout} s "
                                      f"(step {self.done}); call stop() or wait longer")
        return self.result

    @property
    def result(self):
        """The TrainingResult of a run that has ended; re-raises the run's error."""
        if self.status in ("idle", "running") or not self._ended.is_set():
            state = "not started" if self.status == "idle" else "not ended"
            raise FluidscopeError(f"training has {state} (status {self.status!r}); call wait() "
                                  f"to block until it ends")
        if self.error is not None:
            raise self.error
        return self.history

    @property
    def history(self):
        """A TrainingResult of everything so far; never raises (see ``error``)."""
        return TrainingResult(
            losses=self.losses(), step_epochs=np.frombuffer(self._step_epochs[:], np.int64),
            epoch_losses=list(self._epoch_losses),
            fetches={name: list(values) for name, values in self._fetched.items()},
            epochs_completed=self.epochs_completed, samples=self.samples,
            elapsed_s=self.elapsed_s, status=self.status, stopped=self.status == "stopped",
            stop_reason=self.stop_reason if self.status == "stopped" else "",
            nan_step=self.nan_step, error=self.error)

    def subscribe(self, handler, kinds=None):
        """Call ``handler(event)`` for every event of ``kinds`` (an event class of
        ``events`` or a tuple of them; None: all), from the loop's thread."""
        self._subscribers.add(handler, kinds)

    def unsubscribe(self, handler, kinds=None):
        self._subscribers.remove(handler, kinds)

    # ----------------------------------------------------------- progress
    @property
    def running(self):
        return self.status == "running"

    @property
    def threaded(self):
        """True when the loop runs in a background thread (the stop button works)."""
        return self._thread is not None

    def losses(self):
        """A copy of the losses so far (float64 ndarray); safe while the loop appends, as
        slicing an array.array is one call under the GIL."""
        return np.frombuffer(self._losses[:], dtype=np.float64)

    @property
    def elapsed_s(self):
        if self._started is None:
            return 0.0
        return (self._ended_at or time.perf_counter()) - self._started

    @property
    def rate(self):
        """Steps per second since the oldest of the last RATE_UPDATES updates (0 at first)."""
        return self._windowed(1)

    @property
    def sample_rate(self):
        """Samples per second over the same window, or None when batch sizes are unknown."""
        return None if self.samples is None else self._windowed(2)

    @property
    def eta_s(self):
        """Seconds left at the current rate, or None while the total or rate is unknown."""
        rate = self.rate
        if self.total is None or rate <= 0 or not self.running:
            return None
        return max(self.total - self.done, 0) / rate

    def _windowed(self, column):
        # measured up to now, so a stalled loop's rate falls and its ETA grows
        if not self._snapshots:
            return 0.0
        then = self._snapshots[0]
        now = self._ended_at or time.perf_counter()
        current = (now, self.done, self.samples or 0)
        seconds = now - then[0]
        return (current[column] - then[column]) / seconds if seconds > 0 else 0.0

    # ---------------------------------------------------------------- loop
    def _check_idle(self):
        if self.status != "idle":
            raise FluidscopeError(f"this training run is already {self.status}; start a new "
                                  f"one with train(...)")

    def _begin(self):
        self._check_idle()
        self.status, self.message = "running", "starting"
        self._started = time.perf_counter()
        self._notify()

    def _run_in_thread(self):
        try:
            self._loop()
        except BaseException as exc:  # kept for wait()/result, shown by the monitor
            self._finish(exc)
        else:
            self._finish(None)

    def _loop(self):
        last_epoch_steps = self._declared_per_epoch
        for epoch in range(self.epochs):
            if self._stop.is_set():
                return
            self.epoch, self.step = epoch, 0
            if self._subscribers.wants(BeginEpoch):
                self._subscribers.emit(BeginEpoch(self, epoch, 0))
            batches = open_epoch(self._reader, epoch)
            per_epoch = epoch_length(batches) or self._declared_per_epoch or last_epoch_steps
            remaining = self.epochs - epoch
            self.total = None if per_epoch is None else self.done + per_epoch * remaining
            iterator = iter(batches)
            losses_before = len(self._losses)
            while not self._stop.is_set():
                try:
                    batch = next(iterator)
                except StopIteration:
                    break
                except Exception as exc:
                    raise FluidscopeError(f"train: the reader raised {type(exc).__name__} at "
                                          f"{self._where()}: {exc}") from exc
                if self._stop.is_set():  # the reader itself may have asked to stop
                    break
                self._step(batch)
            mean_loss = None
            if len(self._losses) > losses_before:
                mean_loss = float(np.frombuffer(self._losses[losses_before:],
                                                dtype=np.float64).mean())
                self._epoch_losses.append(mean_loss)
            if self._subscribers.wants(EndEpoch):
                self._subscribers.emit(EndEpoch(self, epoch, self.step, mean_loss))
            if self._stop.is_set():
                return
            if self.step == 0:
                raise FluidscopeError(
                    f"train: the reader gave no batches in epoch {epoch + 1}; a reader must "
                    f"return a fresh iterable on every call (a generator function, not a "
                    f"generator)")
            self.epochs_completed += 1
            last_epoch_steps = self.step

    def _step(self, batch):
        # The hot path: kept to plain appends, so a fast loop pays about a microsecond;
        # per-step events are built only when someone subscribed to them.
        subscribers = self._subscribers
        if subscribers.wants(BeginStep):
            subscribers.emit(BeginStep(self, self.epoch, self.step))
        try:
            if type(batch) is dict and self._feeder is None:
                feed = batch
            else:
                feed = to_feed(batch, self._feeder, self._feed_names, self._where)
            values = self._executor.run(self._program, feed=feed, fetch_list=self.fetch_names,
                                        scope=self._scope)
            loss = loss_value(values[0], self.fetch_names[0])
        except BaseException as exc:
            self._failed_at = self._where()
            if hasattr(exc, "add_note"):  # Python 3.11+: the traceback names the step too
                exc.add_note(f"while training: {self._failed_at}")
            raise
        self._losses.append(loss)
        self._step_epochs.append(self.epoch)
        fetched = self._fetched_lists
        fetched[0].append(loss)
        for i in range(1, len(values)):
            fetched[i].append(recorded(values[i]))
        self.done += 1
        self.step += 1
        if self.samples is not None:
            size = batch_size(feed)
            self.samples = None if size is None else self.samples + size
        now = time.perf_counter()
        if loss != loss or loss in (math.inf, -math.inf):  # NaN or Inf, without a call
            self._on_bad_loss(loss)
        if subscribers.wants(EndStep):
            metrics = {name: values[-1] for name, values in zip(self.fetch_names, fetched)}
            subscribers.emit(EndStep(self, self.epoch, self.step, loss, metrics))
        if self._on_step is not None:
            try:
                self._on_step(self)
            except Exception as exc:
                raise FluidscopeError(f"train: on_step raised {type(exc).__name__} after "
                                      f"{self._where(done=True)}: {exc}") from exc
        if now - self._last_notify >= self.update_interval:
            self._notify(now)

    def _on_bad_loss(self, loss):
        if self.nan_step is not None:
            return
        self.nan_step = self.done
        if self.stop_on_nan and not self._stop.is_set():
            self.stop_reason = (f"loss '{self.fetch_names[0]}' is {loss} at "
                                f"{self._where(done=True)}")
            self._nan_stopped = True
            self._stop.set()

    def _where(self, done=False):
        """'epoch 2, step 5 (step 17 overall)' of the step running (or just done)."""
        step = self.step if done else self.step + 1
        overall = self.done if done else self.done + 1
        return f"epoch {self.epoch + 1}, step {step} (step {overall} overall)"

    def _finish(self, error):
        self._ended_at = time.perf_counter()
        if error is not None:
            self.status, self.error = "error", error
            where = f" ({self._failed_at})" if self._failed_at else ""
            self.message = f"{type(error).__name__}{where}: {error}"
        elif self._stop.is_set():
            self.status = "stopped"
            # a NaN stop's reason already names the step
            where = "" if self._nan_stopped else f" after {self._where(done=True)}"
            self.message = f"stopped{where}: {self.stop_reason}"
        else:
            self.status, self.total = "finished", self.done
            epochs = self.epochs_completed
            self.message = (f"finished {epochs} epoch{'s' * (epochs != 1)}, {self.done} steps "
                            f"in {self.elapsed_s:.1f} s")
        try:
            self._notify()
        finally:
            self._ended.set()

    def _notify(self, now=None):
        self._last_notify = now = now or time.perf_counter()
        self._snapshots.append((now, self.done, self.samples or 0))
        if self.status == "running" and self.done:
            self.message = f"epoch {self.epoch + 1}/{self.epochs}, step {self.step}"
        self._subscribers.emit(Progress(self, self.epoch, self.step, self.status))


def train(executor, program, reader, epochs=1, fetch_list=None, *, feed_names=None, feeder=None,
          scope=None, handler=None, background=False, stop_on_nan=True, on_step=None,
          steps_per_epoch=None, update_interval=0.1):
    """Train ``program`` on the batches of ``reader`` for ``epochs`` epochs.

    Parameters
    ----------
    executor, program : the Executor and the (main) program to run once per batch.
    reader : a function returning a fresh iterable of batches per epoch, or a list of
        batches (see ``reader`` for batches, ``feed_names`` and ``feeder``).
    fetch_list : Variables or names; the first is the loss (one value per step).
    scope : where parameters live (the global scope by default).
    handler : ``handler(event)`` for every event of the run (see ``events``), or None.
    background : run the loop in a thread and return at once (``wait()`` joins it).
    stop_on_nan : stop after the first step whose loss is NaN or Inf (the default).
    on_step : ``on_step(run)`` after every step, in the loop's thread; it may call
        ``run.stop()``.
    steps_per_epoch : batches per epoch when the reader's iterable has no ``len``.
    update_interval : seconds between ``Progress`` events.

    Returns the TrainingRun: ``.wait()`` / ``.result`` give the TrainingResult.
    ``fluidscope.widgets.train`` is this plus a live monitor in a notebook.
    """
    run = TrainingRun(executor, program, reader, epochs, fetch_list, feed_names=feed_names,
                      feeder=feeder, scope=scope, stop_on_nan=stop_on_nan, on_step=on_step,
                      steps_per_epoch=steps_per_epoch, update_interval=update_interval)
    if handler is not None:
        run.subscribe(handler)
    if background:
        run.start()
    else:
        run.run()
    return run


__all__ = ["TrainingRun", "train", "STATUSES"]
