// Element creation shared by every front end.

// <tag class=className>text</tag>; className and text are optional.
export function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// <input class=className type=type placeholder=... title=...>.
export function input(className, type, placeholder, title) {
  const node = make("input", className);
  node.type = type;
  if (placeholder) node.placeholder = placeholder;
  if (title) node.title = title;
  return node;
}
