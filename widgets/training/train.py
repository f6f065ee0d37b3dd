"""``train`` in a notebook: the engine's training loop with a live ``TrainingMonitor``.

    run = train(exe, main_program, reader, epochs=12, fetch_list=[loss, acc])
    result = run.wait()          # TrainingResult: losses per step, epoch means, ...

The loop is ``fluidscope.engine.training.TrainingRun``; this adds the display. Inside a
running Jupyter kernel the loop runs in a background thread, because the kernel handles
no widget messages while a cell runs: the monitor's stop button can only reach a loop
that is not blocking the cell. ``run.wait()`` (or ``run.result``) joins it and re-raises
what a step raised; do that in a later cell if the stop button should keep working
meanwhile, and read the parameters (run other programs on the same scope) only after it.
Everywhere else (scripts, tests) ``train`` runs the loop synchronously and returns when
it is over.
"""
from __future__ import annotations

from fluidscope.engine.training import TrainingRun

from .notebook import attach_monitor, in_kernel


def train(executor, program, reader, epochs=1, fetch_list=None, *, feed_names=None, feeder=None,
          scope=None, monitor=None, background=None, stop_on_nan=True, on_step=None,
          steps_per_epoch=None, update_interval=0.1, max_points=2000, labels=None):
    """Train ``program`` on the batches of ``reader`` for ``epochs`` epochs.

    Parameters
    ----------
    executor, program : the Executor and the (main) program to run once per batch.
    reader : a function returning a fresh iterable of batches per epoch, or a list of
        batches (see ``fluidscope.engine.training.reader`` for batches, ``feed_names``
        and ``feeder``).
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
    labels : what the monitor's plots call the fetches, e.g. ``{loss: "loss", acc:
        "accuracy"}`` (Variables or names as keys).

    Returns the TrainingRun: ``.wait()`` / ``.result`` give the TrainingResult,
    ``.stop()`` stops it, ``.monitor`` is the widget (or None).
    """
    run = TrainingRun(executor, program, reader, epochs, fetch_list, feed_names=feed_names,
                      feeder=feeder, scope=scope, stop_on_nan=stop_on_nan, on_step=on_step,
                      steps_per_epoch=steps_per_epoch, update_interval=update_interval)
    kernel = in_kernel()
    widget = attach_monitor(run, monitor, max_points, kernel)
    if widget is not None and labels:
        widget.labels = {getattr(key, "name", key): str(text) for key, text in labels.items()}
    if background if background is not None else (kernel and widget is not None):
        run.start()
    else:
        run.run()
    return run


__all__ = ["train"]
