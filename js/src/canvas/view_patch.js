// The front end's half of widgets/canvas/view_patch.py: a new view arrives as its
// difference from the last one (a custom message), is applied to the model's `view`
// locally (model.set without save_changes: every reader of the trait sees it, nothing
// goes back to Python), and a copy that is not the patch's base asks for the whole view.

const LISTS = ["nodes", "edges"];

// `view` with `patch` applied (a new object; unchanged items keep theirs), or null when
// `view` is not the patch's base.
export function applyPatch(view, patch) {
  if (!view || view.revision !== patch.base) return null;
  const out = { ...patch.rest };
  for (const key of LISTS) {
    const part = patch[key];
    const items = new Map((view[key] ?? []).map((item) => [item.id, item]));
    for (const gone of part.removed) items.delete(gone);
    const added = [];
    for (const item of part.changed) {
      if (!items.has(item.id)) added.push(item.id);
      items.set(item.id, item);
    }
    const order = part.order ?? [...(view[key] ?? []).map((item) => item.id).filter((id) => items.has(id)), ...added];
    out[key] = order.map((id) => items.get(id));
  }
  return out;
}

// Once per widget model: patches -> the model's view; a gap -> `resync`.
export function followPatches(model, send) {
  model.on("msg:custom", (msg) => {
    if (msg?.kind !== "view_patch") return;
    const next = applyPatch(model.get("view"), msg);
    if (next) model.set("view", next);
    else send("resync");
  });
}
