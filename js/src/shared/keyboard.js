// Keys pressed inside a widget stay inside it.
//
// JupyterLab runs command-mode shortcuts ("d d" deletes the cell, "a", "b", "x", "m", ...)
// on a focused element inside a cell. Lumino walks up from the event's target and stops
// at an element marked `data-lm-suppress-shortcuts`, but the binding's selector matches
// the focused element itself first, so marking only the widget's root does nothing: the
// mark goes on whatever takes the focus. keydown is not stopped here, since a widget's
// own document-level handlers still need it.

// Mark every element that takes the focus inside `el`; returns the cleanup.
export function keepKeysInside(el) {
  const mark = (e) => e.target.setAttribute("data-lm-suppress-shortcuts", "true");
  el.addEventListener("focusin", mark);
  return () => el.removeEventListener("focusin", mark);
}

// True when a key goes to a form field (letters there are typing, not shortcuts).
export function isTyping(event) {
  return /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
}
