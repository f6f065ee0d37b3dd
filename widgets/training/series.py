"""What the TrainingMonitor plots besides the loss, and the axes it plots on: pure functions.

A run fetches the loss first and maybe metrics after it (accuracy, ...); a user may add
points of their own, typically a validation loss or accuracy once per epoch. Each is a
*series* of (step, value); series are drawn in *panels*, one per quantity, so accuracy
in [0, 1] is not flattened against a loss of 2.3: the loss panel holds the loss and the
validation loss, an "acc" panel holds acc and the validation acc.

``axis_range`` is the y-axis rule: a quantity that is never negative is drawn from zero
(a loss curve that dips "below zero" misleads), a log axis spans its positive values.
"""
from __future__ import annotations

import csv
import math
import numbers

import numpy as np

VALIDATION = "validation"


def axis_range(values, log=False):
    """(lo, hi) of the y axis for the finite ``values`` of a panel (data units), or None
    when there is nothing to draw.

    Linear: from 0 when no value is negative, else from the minimum, to the maximum, 5%
    of the span added at the open ends. Log: the positive values' range, padded by 5% of
    its span in decades. A single value v gets [0, 2v] (linear, v > 0) or a decade around
    it (log)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if log:
        values = values[values > 0]
    if not values.size:
        return None
    lo, hi = float(values.min()), float(values.max())
    if log:
        a, b = math.log10(lo), math.log10(hi)
        pad = (b - a) * 0.05 if b > a else 0.5
        return 10 ** (a - pad), 10 ** (b + pad)
    if lo >= 0:
        return 0.0, (hi * 1.05 if hi > 0 else 1.0)
    span = hi - lo if hi > lo else abs(lo)
    return lo - 0.05 * span, hi + 0.05 * span


def is_scalar_series(values) -> bool:
    """True when every recorded value is one number (a metric a curve can show)."""
    return bool(values) and all(isinstance(v, numbers.Real) for v in values)


def validation_name(metric):
    return f"{VALIDATION} {metric}"


def label_of(name, labels):
    """What a series or panel is called on screen: ``labels[name]``, "validation
    <label of the metric>" for a validation series, else the variable's own name."""
    if name in labels:
        return labels[name]
    prefix = f"{VALIDATION} "
    if name.startswith(prefix) and name[len(prefix):] in labels:
        return prefix + labels[name[len(prefix):]]
    return name


def panels(loss_name, metrics, extra, log=False, labels=None):
    """The panels to draw: ``[{"name", "y_title", "series": [names], "labels", "lo",
    "hi"}]``.

    loss_name : the first fetch; metrics : name -> values (one per step);
    extra : name -> (panel, steps, values) added with ``TrainingMonitor.add_point``;
    labels : variable name -> what to call it ("accuracy" for "accuracy_0.tmp_2").
    Values of every series of a panel (the loss's come in ``metrics`` too) set its range.
    """
    labels = labels or {}
    order = [loss_name] + [m for m in metrics if m != loss_name]
    members = {name: [name] for name in order}
    for name, (panel, _, _) in extra.items():
        members.setdefault(panel, []).append(name)
    out = []
    for panel, names in members.items():
        values = []
        for name in names:
            values.extend(metrics[name] if name in metrics else extra[name][2])
        found = axis_range(values, log)
        out.append({"name": panel, "y_title": label_of(panel, labels), "series": names,
                    "labels": [label_of(n, labels) for n in names],
                    "lo": None if found is None else found[0],
                    "hi": None if found is None else found[1]})
    return out


def write_csv(path, steps, epochs, metrics, extra):
    """One row per step: ``step, epoch, <each fetched metric>, <each added series>``
    (a cell is empty where a series has no point at that step); points added at steps
    the run never reached get rows of their own. Returns the number of rows."""
    columns = list(metrics) + list(extra)
    rows = {int(s): {"epoch": int(e)} for s, e in zip(steps, epochs)}
    for name, values in metrics.items():
        for s, v in zip(steps, values):
            rows[int(s)][name] = v
    for name, (_, xs, ys) in extra.items():
        for s, v in zip(xs, ys):
            rows.setdefault(int(s), {})[name] = v
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["step", "epoch"] + columns)
        for step in sorted(rows):
            row = rows[step]
            writer.writerow([step, row.get("epoch", "")] + [_cell(row.get(c)) for c in columns])
    return len(rows)


def _cell(value):
    return "" if value is None else repr(float(value))


__all__ = ["axis_range", "panels", "label_of", "write_csv", "is_scalar_series", "validation_name",
           "VALIDATION"]
