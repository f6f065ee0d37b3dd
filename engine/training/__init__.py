"""Training: the loop that runs a program over a reader for some epochs, and its events.

``train`` / ``TrainingRun`` (``run``) drive the loop; ``events`` are what it announces to
subscribers (begin/end of epoch and step, progress); ``reader`` turns batches into feeds;
``result`` records what each step fetched into a ``TrainingResult``. No widget library is
imported here: ``fluidscope.widgets.TrainingMonitor`` subscribes from the outside.
"""
from .events import (EVENT_TYPES, BeginEpoch, BeginStep, EndEpoch, EndStep, Progress,
                     TrainingEvent)
from .result import TrainingResult
from .run import STATUSES, TrainingRun, train

__all__ = ["train", "TrainingRun", "TrainingResult", "STATUSES", "TrainingEvent", "BeginEpoch",
           "BeginStep", "EndStep", "EndEpoch", "Progress", "EVENT_TYPES"]
