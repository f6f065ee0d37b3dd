"""``train``: run a program over a reader for some epochs, with an optional live monitor.

    run = train(exe, main_program, reader, epochs=12, fetch_list=[loss, acc])
    result = run.wait()          # TrainingResult: losses per step, epoch means, ...

A *reader* is what the notebooks already feed ``exe.run`` with, packaged so it can be
replayed every epoch: a function with no arguments that returns a fresh iterable of
*batches* (a generator function is the usual one), or a re-iterable collection such as
a list of batches. A batch is a feed dict, name -> numpy array / LoDTensor, exactly
what ``exe.run(feed=...)`` takes. A tuple batch is allowed with ``feed_names`` (its
values in that order), and any other batch with ``feeder`` (a function batch -> feed
dict, e.g. one that stacks a list of samples). A one-shot iterator (a generator
object) can only serve ``epochs=1``.

``fetch_list[0]`` is the loss: the curve shows it and ``stop_on_nan`` watches it. Every
fetched value is recorded for every step.

Inside a running Jupyter kernel the loop runs in a background thread, because the
kernel handles no widget messages while a cell runs: the monitor's stop button can
only reach a loop that is not blocking the cell. ``run.wait()`` (or ``run.result``)
joins it and re-raises what a step raised; do that in a later cell if the stop button
should keep working meanwhile, and read the parameters (run other programs on the same
scope) only after it. Everywhere else (scripts, tests) ``train`` runs the loop
synchronously and returns when it is over. Stopping is always between steps: a step
that has started finishes, so parameters and optimizer state stay consistent.
"""
from __future__ import annotations

import array
import collections
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.scope import global_scope
from fluidscope.engine.tensor import LoDTensor

from .training_monitor import TrainingMonitor

STATUSES = ("idle", "running", "stopped", "finished", "error")
RATE_UPDATES = 30  # the rate (and so the ETA) is measured over the last 30 updates (~3 s)


@dataclass
class TrainingResult:
    """What a training run did (``run.result``, ``run.wait()``, or ``run.history``).

    losses : float64 ndarray [steps]
        ``fetch_list[0]`` after every step, in order (NaN/Inf kept as they came).
    step_epochs : int64 ndarray [steps]
        The epoch (0-based) each step belongs to.
    epoch_losses : list of float
        Mean loss of every epoch that ran steps (the last one partial when stopped).
    fetches : dict name -> list
        Every fetched value of every step: a float for a one-value fetch, else a copy
        of the array.
    status : "finished", "stopped", "error" (or "running" for a live snapshot)
    stopped : bool
        ``stop()`` or a NaN/Inf loss ended the run before the reader ran out.
    stop_reason : str
        Why it stopped ("" when it finished).
    nan_step : int or None
        The first step (1-based, counted over all epochs) whose loss was NaN or Inf.
    error : BaseException or None
        What a step, the reader or ``on_step`` raised.
    """
    losses: np.ndarray
    step_epochs: np.ndarray
    epoch_losses: list
    fetches: dict
    epochs_completed: int
    samples: int | None
    elapsed_s: float
    status: str
    stopped: bool = False
    stop_reason: str = ""
    nan_step: int | None = None
    error: BaseException | None = field(default=None, repr=False)

    @property
    def steps(self):
        return len(self.losses)


class TrainingRun:
    """One training loop over ``reader`` (see the module doc); made and started by ``train``.

    Progress is read from plain attributes written by the loop: ``status`` (one of
    STATUSES), ``epoch`` (0-based), ``step`` (steps done in this epoch), ``done`` (steps
    over all epochs), ``total`` (None while unknown), ``samples`` (None when batches
    carry no readable size), ``message``, ``error`` and ``nan_step``. Listeners
    (``add_listener``) are called from the loop's thread on start, at most every
    ``update_interval`` seconds while it runs, and once at the end.
    """

    def __init__(self, executor, program, reader, epochs=1, fetch_list=None, *, feed_names=None,
                 feeder=None, scope=None, stop_on_nan=True, on_step=None, steps_per_epoch=None,
                 update_interval=0.1):
        if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
            raise FluidscopeError(f"train: epochs must be a positive int, got {epochs!r}")
        if feed_names is not None and feeder is not None:
            raise FluidscopeError("train: give feed_names or feeder, not both")
        if feeder is not None and not callable(feeder):
            raise FluidscopeError(f"train: feeder must be a function batch -> feed dict, "
                                  f"got {type(feeder).__name__}")
        if on_step is not None and not callable(on_step):
            raise FluidscopeError(f"train: on_step must be a function, got "
                                  f"{type(on_step).__name__}")
        self._executor, self._program = executor, program
        self._reader = _check_reader(reader, epochs)
        self.epochs = epochs
        self.fetch_names = _fetch_names(fetch_list, executor, program)
        self._feed_names = None if feed_names is None else _names(feed_names, "feed_names")
        self._feeder, self._on_step = feeder, on_step
        self._scope = scope if scope is not None else global_scope()
        self.stop_on_nan, self.update_interval = bool(stop_on_nan), float(update_interval)
        self._declared_per_epoch = steps_per_epoch
        self._listeners = []
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._thread = None
        self.monitor = None  # the TrainingMonitor that train() attached, if any
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

    def add_listener(self, listener):
        """Call ``listener(run)`` on every progress update (from the loop's thread)."""
        self._listeners.append(listener)

    def remove_listener(self, listener):
        if listener in self._listeners:
            self._listeners.remove(listener)

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
            batches = self._open_epoch(epoch)
            per_epoch = _length(batches) or self._declared_per_epoch or last_epoch_steps
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
            if len(self._losses) > losses_before:
                epoch = np.frombuffer(self._losses[losses_before:], dtype=np.float64)
                self._epoch_losses.append(float(epoch.mean()))
            if self._stop.is_set():
                return
            if self.step == 0:
                raise FluidscopeError(
                    f"train: the reader gave no batches in epoch {epoch + 1}; a reader must "
                    f"return a fresh iterable on every call (a generator function, not a "
                    f"generator)")
            self.epochs_completed += 1
            last_epoch_steps = self.step

    def _open_epoch(self, epoch):
        if not callable(self._reader):
            return self._reader
        try:
            batches = self._reader()
        except Exception as exc:
            raise FluidscopeError(f"train: reader() raised {type(exc).__name__} when epoch "
                                  f"{epoch + 1} began: {exc}") from exc
        if batches is None or not hasattr(batches, "__iter__"):
            raise FluidscopeError(f"train: reader() returned {type(batches).__name__}; it must "
                                  f"return an iterable of batches (e.g. be a generator function)")
        return batches

    def _step(self, batch):
        # The hot path: kept to plain appends, so a fast loop pays about a microsecond.
        try:
            feed = batch if type(batch) is dict and self._feeder is None else self._to_feed(batch)
            values = self._executor.run(self._program, feed=feed, fetch_list=self.fetch_names,
                                        scope=self._scope)
            loss = _loss_value(values[0], self.fetch_names[0])
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
            fetched[i].append(_recorded(values[i]))
        self.done += 1
        self.step += 1
        if self.samples is not None:
            size = _batch_size(feed)
            self.samples = None if size is None else self.samples + size
        now = time.perf_counter()
        if loss != loss or loss in (math.inf, -math.inf):  # NaN or Inf, without a call
            self._on_bad_loss(loss)
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

    def _to_feed(self, batch):
        if self._feeder is not None:
            batch = self._feeder(batch)
        elif self._feed_names is not None and isinstance(batch, (tuple, list)):
            if len(batch) != len(self._feed_names):
                raise FluidscopeError(
                    f"train: the reader gave a batch of {len(batch)} values at {self._where()} "
                    f"but feed_names names {len(self._feed_names)}: {self._feed_names}")
            batch = dict(zip(self._feed_names, batch))
        if not isinstance(batch, dict):
            hint = ("return a dict from feeder" if self._feeder is not None else
                    "yield a dict name -> array, or pass feed_names=[...] for tuples, or "
                    "feeder=function(batch) -> dict")
            raise FluidscopeError(f"train: the batch at {self._where()} is a "
                                  f"{type(batch).__name__}, not a feed dict; {hint}")
        return batch

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
        for listener in list(self._listeners):
            listener(self)


# --------------------------------------------------------------- helpers
def _check_reader(reader, epochs):
    if callable(reader):
        return reader
    if not hasattr(reader, "__iter__"):
        raise FluidscopeError(f"train: reader must be a function returning batches or a list "
                              f"of batches, got {type(reader).__name__}")
    if iter(reader) is reader and epochs > 1:
        raise FluidscopeError(
            f"train: reader is a {type(reader).__name__}, which runs out after one epoch; pass "
            f"the function that makes it (reader=make_batches, not make_batches()) for "
            f"epochs={epochs}")
    return reader


def _names(items, what):
    names = []
    for item in items if isinstance(items, (list, tuple)) else [items]:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str):
            raise FluidscopeError(f"train: {what} holds {type(item).__name__}; give Variables "
                                  f"or names")
        names.append(name)
    return names


def _fetch_names(fetch_list, executor, program):
    if not fetch_list:
        raise FluidscopeError("train: fetch_list must name the loss first, e.g. "
                              "fetch_list=[loss] or [loss, accuracy]")
    names = _names(fetch_list, "fetch_list")
    known = executor.prepare(program).slot
    for i, name in enumerate(names):
        if name not in known:
            raise FluidscopeError(f"train: fetch_list[{i}] '{name}' is not read or written by "
                                  f"any op of the program")
    return names


def _length(batches):
    try:
        return len(batches) or None
    except TypeError:  # a generator: the total stays unknown until an epoch ends
        return None


def _loss_value(value, name):
    if getattr(value, "size", None) == 1:
        return float(value.item())
    shape = list(np.shape(value)) if hasattr(value, "shape") else type(value).__name__
    raise FluidscopeError(f"train: fetch_list[0] '{name}' is taken as the loss and must hold "
                          f"one value, but it has shape {shape}; fetch its mean (fd.mean) first")


def _recorded(value):
    if not hasattr(value, "dtype"):  # a runtime holder (e.g. recurrent step scopes)
        return value
    # copied: a fetched array may be a buffer that a later step updates in place
    return value.item() if value.size == 1 else value.copy()


def _batch_size(feed):
    """Rows of the feed's first value (sequences for a LoDTensor with LoD), or None."""
    value = next(iter(feed.values()), None)
    if type(value) is np.ndarray:
        return value.shape[0] if value.ndim else None
    if isinstance(value, LoDTensor):
        lod = value.lod()
        return len(lod[0]) - 1 if lod else (value.shape()[0] if value.shape() else None)
    shape = getattr(value, "shape", None)
    if shape is not None:
        return shape[0] if len(shape) else None
    return len(value) if isinstance(value, (list, tuple)) else None


def _in_kernel():
    """True inside a running IPython kernel (Jupyter), False in scripts and plain IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # IPython is optional outside notebooks
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def train(executor, program, reader, epochs=1, fetch_list=None, *, feed_names=None, feeder=None,
          scope=None, monitor=None, background=None, stop_on_nan=True, on_step=None,
          steps_per_epoch=None, update_interval=0.1, max_points=2000):
    """Train ``program`` on the batches of ``reader`` for ``epochs`` epochs.

    Parameters
    ----------
    executor, program : the Executor and the (main) program to run once per batch.
    reader : a function returning a fresh iterable of batches per epoch, or a list of
        batches (see the module doc for batches, ``feed_names`` and ``feeder``).
    fetch_list : Variables or names; the first is the loss (one value per step).
    scope : where parameters live (the global scope by default).
    monitor : True: make and show a TrainingMonitor; a TrainingMonitor: drive that one
        (not shown again); False: none; None (default): True inside a Jupyter kernel.
    background : run the loop in a thread (default: inside a kernel with a monitor).
    stop_on_nan : stop after the first step whose loss is NaN or Inf (the default).
    on_step : ``on_step(run)`` after every step, in the loop's thread; it may call
        ``run.stop()``.
    steps_per_epoch : batches per epoch when the reader's iterable has no ``len``
        (otherwise the total is known only after the first epoch).
    update_interval : seconds between monitor updates (throttles the widget traffic).
    max_points : most points of the loss curve sent to the browser.

    Returns the TrainingRun: ``.wait()`` / ``.result`` give the TrainingResult,
    ``.stop()`` stops it, ``.monitor`` is the widget (or None).
    """
    run = TrainingRun(executor, program, reader, epochs, fetch_list, feed_names=feed_names,
                      feeder=feeder, scope=scope, stop_on_nan=stop_on_nan, on_step=on_step,
                      steps_per_epoch=steps_per_epoch, update_interval=update_interval)
    in_kernel = _in_kernel()
    show = monitor is True or (monitor is None and in_kernel)
    if isinstance(monitor, TrainingMonitor):
        widget = monitor
    elif monitor in (True, False, None):
        widget = TrainingMonitor(max_points=max_points) if show else None
    else:
        raise FluidscopeError(f"train: monitor must be True, False, None or a TrainingMonitor, "
                              f"got {type(monitor).__name__}")
    run.monitor = widget
    if widget is not None:
        widget.attach(run)
        if show and in_kernel:
            from IPython.display import display
            display(widget)
    if background if background is not None else (in_kernel and widget is not None):
        run.start()
    else:
        run.run()
    return run


__all__ = ["train", "TrainingRun", "TrainingResult", "STATUSES"]
