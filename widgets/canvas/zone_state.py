"""Which zones a canvas shows collapsed and which one it shows entered, kept in the
design file (``Document.view``, written next to the layout by designer/design/files.py).

The canvas holds the state as ``_collapsed`` (a set) and ``_path`` (the entered zone and
the zones around it); ``store`` copies it into the document at every publish, so the
file saved after a toggle or an enter holds it, and ``restore`` reads it back when a
design is opened: a zone collapsed or entered before a restart is so again.
"""
from __future__ import annotations

from fluidscope.designer.design.document import GROUP


def _groups(doc):
    return {n.id: owner.id if owner is not None else None
            for n, _, owner in doc.walk() if n.layer == GROUP}


def restore(design):
    """(collapsed set, entered path) from the design's saved view: unknown ids dropped,
    the entered chain kept only as far as each zone lies inside the one before."""
    doc = design.document
    groups = _groups(doc)
    collapsed = {g for g in doc.view.get("collapsed", ()) if g in groups}
    path, owner = [], None
    for g in doc.view.get("entered", ()):
        if g not in groups or groups[g] != owner:  # (ids are free text: no sentinel)
            break
        path.append(g)
        owner = g
    return collapsed, path


def store(design, collapsed, path):
    """Write the canvas's zone state into the design (saved with it); the view's other
    keys (the folds' "unfolded") are left as they are."""
    view = design.document.view
    for key, ids in (("collapsed", sorted(collapsed)), ("entered", list(path))):
        if ids:
            view[key] = ids
        else:
            view.pop(key, None)
