"""Training in a notebook: ``TrainingMonitor`` (progress, ETA, live loss curve, stop) and
``train``, the engine's loop (``fluidscope.engine.training``) with that monitor attached.
The loop and its results are re-exported, so ``fluidscope.widgets`` stays one import."""
from fluidscope.engine.training import STATUSES, TrainingResult, TrainingRun

from .monitor import TrainingMonitor, downsample
from .notebook import attach_monitor, in_kernel
from .train import train

__all__ = ["train", "TrainingRun", "TrainingResult", "TrainingMonitor", "STATUSES",
           "downsample", "attach_monitor", "in_kernel"]
