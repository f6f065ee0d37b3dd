"""The notebook side of ``train``: telling a Jupyter kernel apart, and the monitor it shows.

Inside a running kernel ``train`` shows a TrainingMonitor by default and runs its loop
in a background thread (``fluidscope.engine.training.run`` says why); in scripts, tests and
plain IPython it does neither. IPython is imported only when asked for, since it is
optional outside notebooks.
"""
from __future__ import annotations

from fluidscope.engine.errors import FluidscopeError

from .monitor import TrainingMonitor


def in_kernel():
    """True inside a running IPython kernel (Jupyter), False in scripts and plain IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # IPython is optional outside notebooks
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def attach_monitor(run, monitor, max_points, kernel):
    """Attach to ``run`` the TrainingMonitor that ``monitor`` asks for; return it or None.

    monitor : True: make one (of ``max_points`` curve points) and show it; a
        TrainingMonitor: drive that one (not shown again); False: none; None: True when
        ``kernel`` (the result of ``in_kernel()``). A widget is only displayed in a kernel.
    The widget is also set as ``run.monitor``.
    """
    show = monitor is True or (monitor is None and kernel)
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
        if show and kernel:
            from IPython.display import display
            display(widget)
    return widget


__all__ = ["in_kernel", "attach_monitor"]
