"""The events a training run emits, and the subscriptions that receive them.

The shape of the seed's trainer (Paddle v2 ``trainer.train(reader, event_handler)``): the
loop announces what it does, and whoever cares subscribes; the loop knows nothing of
widgets, printing or plots. A handler is called in the loop's thread (a background
thread when the run was started with ``start()``), so it must be quick; it may call
``event.run.stop()``.

=============  ==============================================================
event          when
=============  ==============================================================
BeginEpoch     before the first batch of an epoch is read
BeginStep      before a batch runs
EndStep        after a batch ran: its loss and every fetched value
EndEpoch       after an epoch's last batch: the epoch's mean loss
Progress       when the run starts, at most every ``update_interval`` seconds while
               it runs, and once when it has ended (status set): for displays
=============  ==============================================================

``epoch`` is 0-based; ``step`` counts the steps done in the epoch (1-based in EndStep).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fluidscope.engine.errors import FluidscopeError


@dataclass(frozen=True)
class TrainingEvent:
    """Base of every event: the run that emitted it, and where it was."""

    run: object  # the TrainingRun (not typed: events.py is imported by run.py)
    epoch: int
    step: int


@dataclass(frozen=True)
class BeginEpoch(TrainingEvent):
    """Sent before the first step of ``epoch`` (``step`` is 0)."""


@dataclass(frozen=True)
class BeginStep(TrainingEvent):
    """Sent just before a batch runs (``step``: the steps done so far in the epoch)."""


@dataclass(frozen=True)
class EndStep(TrainingEvent):
    """loss: the step's ``fetch_list[0]``; metrics: fetch name -> the recorded value of
    every fetched variable (the loss included)."""

    loss: float = 0.0
    metrics: dict = field(default_factory=dict)


@dataclass(frozen=True)
class EndEpoch(TrainingEvent):
    """mean_loss: the mean loss of the epoch's steps (None when it ran none)."""

    mean_loss: float | None = None


@dataclass(frozen=True)
class Progress(TrainingEvent):
    """status: the run's status ("running", then "finished", "stopped" or "error")."""

    status: str = "running"


EVENT_TYPES = (BeginEpoch, BeginStep, EndStep, EndEpoch, Progress)


class Subscribers:
    """Handlers per event type. ``wants(kind)`` is a plain lookup, so the loop builds
    a per-step event only when someone listens for it."""

    def __init__(self):
        self._handlers = {kind: [] for kind in EVENT_TYPES}

    def add(self, handler, kinds=None):
        """Call ``handler(event)`` for every event of ``kinds`` (an event class or a
        tuple of them; None: every kind)."""
        if not callable(handler):
            raise FluidscopeError(f"subscribe: a handler must be a function, got "
                                  f"{type(handler).__name__}")
        for kind in self._kinds(kinds):
            if handler not in self._handlers[kind]:
                self._handlers[kind].append(handler)

    def remove(self, handler, kinds=None):
        for kind in self._kinds(kinds):
            if handler in self._handlers[kind]:
                self._handlers[kind].remove(handler)

    def wants(self, kind) -> bool:
        return bool(self._handlers[kind])

    def emit(self, event):
        for handler in list(self._handlers[type(event)]):
            handler(event)

    @staticmethod
    def _kinds(kinds):
        if kinds is None:
            return EVENT_TYPES
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        unknown = [k for k in kinds if k not in EVENT_TYPES]
        if unknown:
            raise FluidscopeError(f"subscribe: unknown event kind(s) {unknown}; the kinds are "
                                  f"{[k.__name__ for k in EVENT_TYPES]}")
        return kinds


__all__ = ["TrainingEvent", "BeginEpoch", "BeginStep", "EndStep", "EndEpoch", "Progress",
           "EVENT_TYPES", "Subscribers"]
