// Which connections the design accepts, decided in the browser while the user drags
// (Python checks again and reports a refusal in `message`). A slot lists the output
// kinds it accepts (`accepts`, the same rule Python applies); an output whose kind is not
// known yet (the node did not build) is let through for Python to judge.

// The output port behind a source handle, or null.
export function outputOf(view, handle) {
  return (view?.outputs ?? []).find((p) => p.handle === handle) ?? view?.outputs?.[0] ?? null;
}

// The input port (a slot or a mixed row) behind a target handle, or null.
export function inputOf(view, handle) {
  // a zone's outputs take any inner node (Python checks it is inside)
  if (view?.type === "group" && handle?.startsWith("out:")) return { handle, accepts: null, many: true };
  const slot = (view?.inputs ?? []).find((p) => p.handle === handle);
  if (slot) return slot;
  for (const row of view?.rows ?? []) {
    const rowSlot = (row.inputs ?? []).find((p) => p.handle === handle);
    if (rowSlot) return rowSlot;
    if (row.handle === handle) return { handle, accepts: row.accepts ?? null, many: false };
  }
  return null;
}

// True when `accepts` (null: anything) takes an output of `kind` (null: not built yet).
export function accepts(acceptList, kind) {
  if (!kind || !Array.isArray(acceptList) || acceptList.length === 0) return true;
  return acceptList.includes(kind);
}

// React Flow's isValidConnection, given a lookup id -> node view.
export function validConnection(connection, viewOf) {
  const { source, target, sourceHandle, targetHandle } = connection;
  if (!source || !target || source === target) return false;
  const port = inputOf(viewOf(target), targetHandle);
  if (!port) return false;
  return accepts(port.accepts, outputOf(viewOf(source), sourceHandle)?.kind ?? null);
}

// Palette entries with a slot that accepts an output of `kind` (for the search opened by
// a link dropped on empty canvas), each with that slot.
export function layersAccepting(palette, kind) {
  return (palette ?? []).filter((entry) =>
    (entry.inputs ?? []).some((slot) => accepts(slot.accepts, kind)));
}

// Output kinds a handle may be highlighted for while a link of that kind is dragged.
export const KINDS = ["dense", "sequence", "ids", "ids_sequence"];
export function acceptClasses(acceptList) {
  const list = Array.isArray(acceptList) && acceptList.length ? acceptList : KINDS;
  return list.map((k) => `fs-acc-${k}`).join(" ");
}
