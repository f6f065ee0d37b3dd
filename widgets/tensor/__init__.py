"""One variable of a debugger session: ``TensorInspector`` (``inspector``) and the
fixed-size summaries it sends to the browser (``summary``)."""
from .inspector import TensorInspector, read_tensor

__all__ = ["TensorInspector", "read_tensor"]
