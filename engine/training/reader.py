"""The feed side of ``train``: readers, their batches, and batches turned into feed dicts.

A *reader* is what the notebooks already feed ``exe.run`` with, packaged so it can be
replayed every epoch: a function with no arguments that returns a fresh iterable of
*batches* (a generator function is the usual one), or a re-iterable collection such as
a list of batches. A batch is a feed dict, name -> numpy array / LoDTensor, exactly
what ``exe.run(feed=...)`` takes. A tuple batch is allowed with ``feed_names`` (its
values in that order), and any other batch with ``feeder`` (a function batch -> feed
dict, e.g. one that stacks a list of samples). A one-shot iterator (a generator
object) can only serve ``epochs=1``.

Every error names ``train`` and what to pass instead; ``where`` arguments are functions
returning the step's position ("epoch 2, step 5 (step 17 overall)"), called only when
there is an error to report.
"""
from __future__ import annotations

import numpy as np

from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.tensor import LoDTensor


def check_reader(reader, epochs):
    """``reader`` as given, once it is known to serve ``epochs`` epochs."""
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


def check_feeding(feed_names, feeder):
    """Raise unless at most one of ``feed_names`` and ``feeder`` is given and ``feeder``,
    if given, is a function (the names themselves are read by ``variable_names``)."""
    if feed_names is not None and feeder is not None:
        raise FluidscopeError("train: give feed_names or feeder, not both")
    if feeder is not None and not callable(feeder):
        raise FluidscopeError(f"train: feeder must be a function batch -> feed dict, "
                              f"got {type(feeder).__name__}")


def variable_names(items, what):
    """Names of ``items``: one or a list of Variables (anything with ``.name``) or names."""
    names = []
    for item in items if isinstance(items, (list, tuple)) else [items]:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str):
            raise FluidscopeError(f"train: {what} holds {type(item).__name__}; give Variables "
                                  f"or names")
        names.append(name)
    return names


def open_epoch(reader, epoch):
    """The iterable of batches of ``epoch`` (0-based): a fresh one from a reader function."""
    if not callable(reader):
        return reader
    try:
        batches = reader()
    except Exception as exc:
        raise FluidscopeError(f"train: reader() raised {type(exc).__name__} when epoch "
                              f"{epoch + 1} began: {exc}") from exc
    if batches is None or not hasattr(batches, "__iter__"):
        raise FluidscopeError(f"train: reader() returned {type(batches).__name__}; it must "
                              f"return an iterable of batches (e.g. be a generator function)")
    return batches


def epoch_length(batches):
    """Batches in ``batches``, or None when it has no (or a zero) ``len``."""
    try:
        return len(batches) or None
    except TypeError:  # a generator: the total stays unknown until an epoch ends
        return None


def to_feed(batch, feeder, feed_names, where):
    """The feed dict of a batch that is not already one (or that ``feeder`` converts)."""
    if feeder is not None:
        batch = feeder(batch)
    elif feed_names is not None and isinstance(batch, (tuple, list)):
        if len(batch) != len(feed_names):
            raise FluidscopeError(
                f"train: the reader gave a batch of {len(batch)} values at {where()} "
                f"but feed_names names {len(feed_names)}: {feed_names}")
        batch = dict(zip(feed_names, batch))
    if not isinstance(batch, dict):
        hint = ("return a dict from feeder" if feeder is not None else
                "yield a dict name -> array, or pass feed_names=[...] for tuples, or "
                "feeder=function(batch) -> dict")
        raise FluidscopeError(f"train: the batch at {where()} is a "
                              f"{type(batch).__name__}, not a feed dict; {hint}")
    return batch


def batch_size(feed):
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


__all__ = ["check_reader", "check_feeding", "variable_names", "open_epoch", "epoch_length",
           "to_feed", "batch_size"]
