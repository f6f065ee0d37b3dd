"""The fetch side of ``train``: what each step fetches and records, and the ``TrainingResult``.

``fetch_list[0]`` is the loss: the curve shows it and ``stop_on_nan`` watches it, so it
must hold one value. Every fetched value is recorded for every step (``recorded``);
the run gathers the records into a ``TrainingResult``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fluidscope.engine.errors import FluidscopeError

from .reader import variable_names


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


def fetch_names(fetch_list, executor, program):
    """Names of ``fetch_list`` (loss first), each read or written by an op of ``program``."""
    if not fetch_list:
        raise FluidscopeError("train: fetch_list must name the loss first, e.g. "
                              "fetch_list=[loss] or [loss, accuracy]")
    names = variable_names(fetch_list, "fetch_list")
    known = executor.prepare(program).slot
    for i, name in enumerate(names):
        if name not in known:
            raise FluidscopeError(f"train: fetch_list[{i}] '{name}' is not read or written by "
                                  f"any op of the program")
    return names


def loss_value(value, name):
    """The fetched loss ``value`` (of the variable ``name``) as a float."""
    if getattr(value, "size", None) == 1:
        return float(value.item())
    shape = list(np.shape(value)) if hasattr(value, "shape") else type(value).__name__
    raise FluidscopeError(f"train: fetch_list[0] '{name}' is taken as the loss and must hold "
                          f"one value, but it has shape {shape}; fetch its mean (fd.mean) first")


def recorded(value):
    """What is kept of a fetched ``value``: a one-value array as a number, else a copy."""
    if not hasattr(value, "dtype"):  # a runtime holder (e.g. recurrent step scopes)
        return value
    # copied: a fetched array may be a buffer that a later step updates in place
    return value.item() if value.size == 1 else value.copy()


__all__ = ["TrainingResult", "fetch_names", "loss_value", "recorded"]
