// The one message convention of fluidscope widgets (Python side: widgets/base.py).
//
// A front end asks Python for something with {action: name, ...args}; the action is a
// public Python method of that name. Python never replies to a message: it changes synced
// traits, which the front end draws. What an action could not do (an unknown action, a
// bad argument, an error) comes back in the `message` trait, which every front end shows.

export function sendAction(model, action, args = {}) {
  model.send({ action, ...args });
}

// Redraw with `draw` once per burst of changes to any of `keys` (Python sets many traits
// in one message); returns the cleanup.
export function onChanges(model, keys, draw) {
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      draw();
    });
  };
  for (const key of keys) model.on(`change:${key}`, schedule);
  return () => {
    for (const key of keys) model.off(`change:${key}`, schedule);
  };
}

// Show the `message` trait in `node` (hidden while empty); returns the cleanup.
export function showMessage(model, node) {
  node.setAttribute("role", "alert");
  const show = () => {
    const text = model.get("message") ?? "";
    node.textContent = text;
    node.hidden = !text;
  };
  show();
  model.on("change:message", show);
  return () => model.off("change:message", show);
}
