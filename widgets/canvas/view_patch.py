"""A new ``view`` sent as its difference from the last one (issue #16 item 4).

At 1,000 layers the view is about 800 KB of JSON; an edit changes a handful of nodes, yet
the whole of it crossed the kernel, the Jupyter server and the page after every gesture
(most of an edit's time on the screen). ``view_patch(old, new)`` is the difference: the
node and edge views that changed or appeared, the ids that went, the order when it
changed, and the small top-level fields. The canvas sends it as a custom message and
the front end (js/src/canvas/view_patch.js) applies it to its copy of ``view`` (locally,
so every part of the page that reads the trait sees the new view); a front end whose copy
is not the patch's base asks for the whole view again (the ``resync`` action).
``apply_patch`` is the same function in Python: the tests check the pair round-trips.
"""
from __future__ import annotations

_LISTS = ("nodes", "edges")


def view_patch(old, new, most=0.5):
    """The patch from view ``old`` to view ``new``, or None when there is no base or it
    would carry more than ``most`` of the nodes (then the whole view is as cheap)."""
    if not old or not old.get("nodes") or old.get("path") != new.get("path"):
        return None
    patch = {"base": old["revision"], "revision": new["revision"],
             "rest": {k: v for k, v in new.items() if k not in _LISTS}}
    for key in _LISTS:
        before = {item["id"]: item for item in old[key]}
        changed = [item for item in new[key] if before.get(item["id"]) != item]
        if key == "nodes" and len(changed) > most * max(1, len(new[key])):
            return None
        ids = [item["id"] for item in new[key]]
        kept = set(ids)
        patch[key] = {"changed": changed,
                      "removed": [i for i in before if i not in kept],
                      "order": None if ids == [i for i in before if i in kept]
                      and len(ids) == len(kept) else ids}
    return patch


def apply_patch(view, patch):
    """``view`` with ``patch`` applied (a new dict; what the front end does)."""
    if view.get("revision") != patch["base"]:
        raise ValueError(f"view patch: base revision {patch['base']} is not the view's "
                         f"{view.get('revision')}")
    out = dict(patch["rest"])
    for key in _LISTS:
        part = patch[key]
        items = {item["id"]: item for item in view[key]}
        for gone in part["removed"]:
            items.pop(gone, None)
        added = []
        for item in part["changed"]:
            if item["id"] not in items:
                added.append(item["id"])
            items[item["id"]] = item
        order = part["order"] or [i for i in (item["id"] for item in view[key])
                                   if i in items] + added
        out[key] = [items[i] for i in order]
    return out
