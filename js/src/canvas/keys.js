// The canvas's keys. They are read by the widget's root on keydown, so they act only
// while the focus is inside the canvas; a key typed into a field is the field's. The
// root marks whatever takes the focus with data-lm-suppress-shortcuts (shared/keyboard),
// so JupyterLab's command-mode keys ("d d", "x", "a", "b", ...) never reach the notebook.
import { isTyping } from "../shared/keyboard.js";

// keydown -> the name of a canvas command, or null.
export function commandOf(event) {
  if (isTyping(event) || event.target.closest?.(".nokey")) return null;
  const mod = event.ctrlKey || event.metaKey;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  if (mod && key === "z") return event.shiftKey ? "redo" : "undo";
  if (mod && key === "y") return "redo";
  if (mod && key === "c") return "copy";
  if (mod && key === "v") return "paste";
  if (mod && key === "d") return "duplicate";
  if (mod && key === "a") return "select_all";
  if (mod && key === "g") return "group";
  if (mod && key === "f") return "find";
  if (!mod && (key === "Delete" || key === "Backspace")) return "remove";
  if (!mod && key === "Escape") return "deselect";
  return null;
}
