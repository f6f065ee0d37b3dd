"""``TrainingMonitor``: progress, rate, ETA and live curves of a training run.

Thin over ``fluidscope.engine.training.TrainingRun``: the monitor subscribes to the
run's ``Progress`` events (throttled, from its loop's thread) and copies the run's
progress into synced traits. The front end (built from ``js/src/training_monitor.js``)
only draws them and reports clicks:

* the stop button sends ``{"action": "stop"}``, which calls :meth:`TrainingMonitor.stop`;
* the log-scale box sets the ``log_scale`` trait (:meth:`set_log_scale` does the same);
* the CSV and PNG buttons call :meth:`export_csv` and :meth:`export_png`.

Besides the loss, every fetched metric with one value per step (accuracy, ...) and every
series added with :meth:`add_point` / :meth:`add_validation` is drawn, one panel per
quantity (``series.panels``), on y axes that start at zero for non-negative quantities.

The loss curve crosses to the browser as two float32 buffers (``curve_steps`` and
``curve_losses``) of at most ``max_points`` points: a longer history is averaged over
equal buckets of consecutive steps (:func:`downsample`). The full history stays in
Python (``monitor.history.losses``). Synced numbers are always finite or None (JSON
has no NaN); a NaN loss shows as ``loss_text == "nan"`` and ``nan_step``.
"""
from __future__ import annotations

import math

import numpy as np
import traitlets

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.training import Progress

from ..base import STATIC, FluidscopeWidget, action
from . import export
from .series import is_scalar_series, panels, validation_name, write_csv



def downsample(losses, max_points):
    """(steps, losses) of at most ``max_points`` points for drawing ``losses``.

    ``losses``: 1-D array, one value per step (step numbers start at 1). Up to
    ``max_points`` values are returned as they are; beyond that, consecutive steps are
    averaged in buckets of equal size (the last may be shorter), each drawn at its mean
    step. A NaN or Inf inside a bucket makes that bucket NaN, so it stays visible.
    Returns two float64 arrays of the same length.
    """
    losses = np.asarray(losses, dtype=np.float64)
    n = len(losses)
    if max_points < 2:
        raise FluidscopeError(f"downsample: max_points must be at least 2, got {max_points}")
    if n <= max_points:
        return np.arange(1, n + 1, dtype=np.float64), losses.copy()
    size = -(-n // max_points)  # ceil: at most max_points buckets
    full = n // size * size
    with np.errstate(invalid="ignore"):  # inf - inf in a bucket is the NaN we want
        values = losses[:full].reshape(-1, size).mean(axis=1)
        starts = np.arange(0, full, size, dtype=np.float64)
        steps = starts + (size + 1) / 2
        if full < n:
            values = np.append(values, losses[full:].mean())
            steps = np.append(steps, (full + 1 + n) / 2)
    return steps, values


def _finite_or_none(value):
    return None if value is None or not math.isfinite(value) else float(value)


class TrainingMonitor(FluidscopeWidget):
    """Progress bar, rate, ETA, live curves (loss, metrics, validation), exports and a stop
    button for a training run.

    ``train(...)`` makes one (or drives one you pass as ``monitor=``). Synced traits,
    all readable in Python:

    status : "idle", "running", "stopped", "finished" or "error"
    message : one line on where the run is or why it ended (or, until the next update,
        why a front-end message did nothing)
    error : the exception text when status is "error" ("" otherwise)
    epoch, epochs : the current epoch (1-based; 0 before the start) and the number asked
    step, done, total : steps done in this epoch, over all epochs, and the expected total
        (None while unknown: a reader without ``len`` during its first epoch)
    rate, sample_rate : steps and samples per second (sample_rate None when unknown)
    eta_s, elapsed_s : seconds left (None when unknown) and seconds since the start
    loss_text : the last loss as text ("nan" and "inf" kept; "" before the first step)
    nan_step : first step (1-based) whose loss was NaN or Inf, or None
    stop_requested, threaded : stop() was called; the loop runs in a background thread
        (only then can the browser's stop button reach it while the loop runs)
    curve_steps, curve_losses : the drawn curve, float32 little-endian bytes
    series : the other curves, ``[{"name", "panel", "kind" ("metric" or "added"), "steps",
        "values" (float32 bytes, at most ``max_points``), "points"}]``
    panels : what to draw them in, ``[{"name", "y_title", "series", "lo", "hi"}]``
        (``series.panels``: the y range starts at zero for non-negative values)
    x_title : the x axis' title ("step")
    labels : variable name -> what the plots call it, e.g. ``{acc.name: "accuracy"}``
    png_request : ``{"id", "path"}`` of the last ``export_png`` (the page answers it)
    saved : the path the last export wrote ("" before one)
    fetch_names, max_points, log_scale, height : what is fetched; curve size; y-axis
        scale; canvas height in pixels
    """

    _esm = STATIC / "training_monitor.js"
    _css = STATIC / "training_monitor.css"

    status = traitlets.Unicode("idle").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    epoch = traitlets.Int(0).tag(sync=True)
    epochs = traitlets.Int(0).tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    done = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(None, allow_none=True).tag(sync=True)
    rate = traitlets.Float(0.0).tag(sync=True)
    sample_rate = traitlets.Float(None, allow_none=True).tag(sync=True)
    eta_s = traitlets.Float(None, allow_none=True).tag(sync=True)
    elapsed_s = traitlets.Float(0.0).tag(sync=True)
    loss_text = traitlets.Unicode("").tag(sync=True)
    nan_step = traitlets.Int(None, allow_none=True).tag(sync=True)
    stop_requested = traitlets.Bool(False).tag(sync=True)
    threaded = traitlets.Bool(False).tag(sync=True)
    fetch_names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    curve_steps = traitlets.Bytes(b"").tag(sync=True)
    curve_losses = traitlets.Bytes(b"").tag(sync=True)
    max_points = traitlets.Int(2000).tag(sync=True)
    log_scale = traitlets.Bool(False).tag(sync=True)
    height = traitlets.Int(200).tag(sync=True)
    series = traitlets.List(traitlets.Dict()).tag(sync=True)
    panels = traitlets.List(traitlets.Dict()).tag(sync=True)
    x_title = traitlets.Unicode("step").tag(sync=True)
    labels = traitlets.Dict(traitlets.Unicode()).tag(sync=True)
    png_request = traitlets.Dict().tag(sync=True)
    saved = traitlets.Unicode("").tag(sync=True)

    def __init__(self, run=None, *, max_points=2000, **kwargs):
        super().__init__(max_points=max_points, **kwargs)
        self._run = None
        self._curve_done = -1
        self._added = {}          # name -> (panel, steps, values) of add_point
        self._png_pending = {}    # request id -> path, until the page answers
        if run is not None:
            self.attach(run)

    @traitlets.validate("max_points")
    def _check_max_points(self, proposal):
        if proposal["value"] < 2:
            raise FluidscopeError(f"TrainingMonitor: max_points must be at least 2, got "
                                  f"{proposal['value']}")
        return proposal["value"]

    # ----------------------------------------------------------- Python API
    @property
    def run(self):
        """The TrainingRun shown (None before ``attach``)."""
        return self._run

    def attach(self, run):
        """Show ``run`` (a TrainingRun) from now on; the monitor is cleared first."""
        if self._run is not None and self._run.running:
            raise FluidscopeError("TrainingMonitor: it still shows a running run; stop() it "
                                  "and wait() before attaching another")
        self.reset()
        self._run = run
        with self.hold_sync():
            self.fetch_names, self.epochs = list(run.fetch_names), run.epochs
        run.subscribe(self._on_progress, Progress)
        self._sync(run)

    def reset(self):
        """Detach the run (if it has ended) and clear every number and the curve."""
        if self._run is not None:
            if self._run.running:
                raise FluidscopeError("TrainingMonitor.reset: the run is still going; stop() "
                                      "it and wait() first")
            self._run.unsubscribe(self._on_progress, Progress)
        self._run, self._curve_done, self._added = None, -1, {}
        with self.hold_sync():
            for name in ("status", "message", "error", "epoch", "epochs", "step", "done",
                         "total", "rate", "sample_rate", "eta_s", "elapsed_s", "loss_text",
                         "nan_step", "stop_requested", "threaded", "fetch_names",
                         "curve_steps", "curve_losses", "series", "panels"):
                setattr(self, name, self.trait_defaults(name))

    @action()
    def stop(self):
        """Stop the run before its next step (what the stop button calls). Returns
        False when there is nothing running to stop."""
        if self._run is None or not self._run.running:
            return False
        self._run.stop()
        self.stop_requested = True
        return True

    def wait(self, timeout=None):
        """Block until the run ends; return its TrainingResult (re-raising its error)."""
        return self._attached().wait(timeout)

    @property
    def result(self):
        """The run's TrainingResult once it has ended (re-raises its error)."""
        return self._attached().result

    @property
    def history(self):
        """Everything recorded so far (a TrainingResult, full resolution)."""
        return self._attached().history

    @action(on=bool)
    def set_log_scale(self, on=True):
        """Draw the y axes logarithmically (what the "log" box does)."""
        self.log_scale = bool(on)

    @traitlets.observe("log_scale", "labels")
    def _log_scale_changed(self, _change):
        if self._run is not None:
            self._publish_series(self._run)

    def add_point(self, name, value, step=None, *, panel=None):
        """Add ``(step, value)`` to the series ``name`` (made on first use), drawn in the
        panel ``panel`` (default: its own). ``step`` defaults to the steps done so far;
        a validation loss after an epoch is ``add_point("validation loss", v, panel=
        loss_name)`` (``add_validation`` says it shorter)."""
        run = self._attached()
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise FluidscopeError(f"add_point: series '{name}' takes one number per point, "
                                  f"got {type(value).__name__}") from None
        if name in run.fetch_names:
            raise FluidscopeError(f"add_point: '{name}' is fetched by the run and recorded "
                                  f"every step; name the added series otherwise")
        panel_name = panel or (self._added[name][0] if name in self._added else name)
        if name in self._added and self._added[name][0] != panel_name:
            raise FluidscopeError(f"add_point: series '{name}' is drawn in panel "
                                  f"'{self._added[name][0]}', not '{panel_name}'")
        entry = self._added.setdefault(name, (panel_name, [], []))
        entry[1].append(int(run.done if step is None else step))
        entry[2].append(number)
        self._publish_series(run)

    def add_validation(self, value, metric=None, step=None):
        """A validation figure of ``metric`` (default: the loss, the first fetch) at
        ``step``, drawn with that metric as the series "validation <metric>"."""
        run = self._attached()
        metric = metric or run.fetch_names[0]
        self.add_point(validation_name(metric), value, step, panel=metric)

    @action(path=str)
    def export_csv(self, path="training_monitor.csv"):
        """Write every step's fetched figures (full resolution) and the added series
        to ``path`` as CSV; returns the path."""
        run = self._attached()
        history = run.history
        metrics = {run.fetch_names[0]: history.losses.tolist(), **self._metrics(history)}
        steps = range(1, history.steps + 1)
        write_csv(path, steps, (e + 1 for e in history.step_epochs), metrics,
                  {n: entry for n, entry in self._added.items()})
        self.saved = str(path)
        return str(path)

    @action(path=str)
    def export_png(self, path="training_monitor.png"):
        """Ask the page showing the monitor for a PNG of its panels, written to ``path``
        when it answers (``save_png``). In a notebook that is after the cell that asked
        has finished, since the kernel reads the page's answer between cells."""
        request = int(self.png_request.get("id", 0)) + 1
        self._png_pending[request] = str(path)
        self.png_request = {"id": request, "path": str(path)}
        return str(path)

    @action(data=str, request=int)
    def save_png(self, data, request):
        """The page's answer to ``export_png`` request ``request``: a base64 PNG, written
        to the path asked. An answer already written (a second view of the same monitor)
        is ignored; returns the path written or None."""
        path = self._png_pending.pop(request, None)
        if path is None:
            return None
        raw = export.decode_png(data)
        self.saved = export.write_bytes(path, raw)
        return self.saved

    def curve(self):
        """(steps, losses) as drawn: float32 arrays of at most ``max_points``."""
        return (np.frombuffer(self.curve_steps, dtype="<f4").copy(),
                np.frombuffer(self.curve_losses, dtype="<f4").copy())

    @property
    def losses(self):
        """The drawn (downsampled) losses as a list of floats."""
        return self.curve()[1].tolist()

    # ------------------------------------------------------------- internals
    def _attached(self):
        if self._run is None:
            raise FluidscopeError("TrainingMonitor: no run attached; train(..., monitor=m) "
                                  "attaches one")
        return self._run

    def _on_progress(self, event):
        self._sync(event.run)

    def _sync(self, run):
        """Copy ``run``'s progress into the traits (one comm message per call)."""
        losses = run.losses()
        curve = None
        if run.done != self._curve_done:
            steps, values = downsample(losses, self.max_points)
            curve = (steps.astype("<f4").tobytes(), values.astype("<f4").tobytes())
            self._curve_done = run.done
        error = run.error
        with self.hold_sync():
            self.status, self.message = run.status, run.message
            self.error = "" if error is None else f"{type(error).__name__}: {error}"
            self.epoch = run.epoch + 1 if run.status != "idle" else 0
            self.step, self.done, self.total = run.step, run.done, run.total
            self.rate = _finite_or_none(run.rate) or 0.0
            self.sample_rate = _finite_or_none(run.sample_rate)
            self.eta_s = _finite_or_none(run.eta_s)
            self.elapsed_s = run.elapsed_s
            self.loss_text = f"{losses[-1]:.6g}" if len(losses) else ""
            self.nan_step = run.nan_step
            self.stop_requested, self.threaded = run.stop_requested, run.threaded
            if curve is not None:
                self.curve_steps, self.curve_losses = curve
                self._publish_series(run, losses)

    def _metrics(self, history):
        """name -> values of the fetches after the loss that hold one number per step."""
        return {name: values for name, values in list(history.fetches.items())[1:]
                if is_scalar_series(values)}

    def _publish_series(self, run, losses=None):
        """Recompute the curves besides the loss and every panel's y range."""
        losses = run.losses() if losses is None else losses
        metrics = self._metrics(run.history) if len(run.fetch_names) > 1 else {}
        drawn = []
        for name, values in metrics.items():
            steps, points = downsample(values, self.max_points)
            drawn.append(_series(name, name, "metric", steps, points, len(values)))
        for name, (panel, xs, ys) in self._added.items():
            steps = downsample(xs, self.max_points)[1] if xs else np.zeros(0)
            points = downsample(ys, self.max_points)[1] if ys else np.zeros(0)
            drawn.append(_series(name, panel, "added", steps, points, len(ys)))
        loss_name = run.fetch_names[0]
        with self.hold_sync():
            self.series = drawn
            self.panels = panels(loss_name, {loss_name: losses, **metrics}, self._added,
                                 self.log_scale, self.labels)


def _series(name, panel, kind, steps, values, points):
    return {"name": name, "panel": panel, "kind": kind, "points": int(points),
            "steps": np.asarray(steps, "<f4").tobytes(),
            "values": np.asarray(values, "<f4").tobytes()}


__all__ = ["TrainingMonitor", "downsample"]
