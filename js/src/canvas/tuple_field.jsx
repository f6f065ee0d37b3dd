// The property panel's field for the tuple attributes of image layers (`int_or_ints`:
// filter_size, stride, dilation, pool_size; `padding`): "5", "3, 3", "SAME". The text goes
// to Python as typed (set_attr_text), which reads it by the attribute's type
// (widgets/canvas/attr_text.py) and refuses a bad text with a message naming the
// attribute: the field then keeps the text, turns red and shows the reason under it.
import { useState } from "react";

export const TUPLE_TYPES = new Set(["int_or_ints", "padding"]);

// A value as it is typed: 3 -> "3", [3, 5] -> "3, 5", [[0, 0], [1, 1]] -> "[0, 0], [1, 1]".
export function tupleText(value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map((v) => (Array.isArray(v) ? `[${v.join(", ")}]` : String(v))).join(", ");
  return String(value);
}

export function TupleField({ node, attr, message, send }) {
  const shown = tupleText(attr.value);
  const [draft, setDraft] = useState(shown);
  const [sent, setSent] = useState(null);
  const commit = () => {
    if (draft === shown && sent === null) return;
    setSent(draft);
    send("set_attr_text", { node, name: attr.name, text: draft });
  };
  // the reason Python gave for this field's text (the field is keyed by the value, so
  // an accepted text starts a fresh field)
  const refused = sent !== null && sent === draft && typeof message === "string"
    && message.includes(`: ${attr.name} `) ? message : "";
  return (
    <span className="fs-tuple">
      <input className={`fs-field nokey nodrag nowheel${refused ? " fs-field-bad" : ""}`} type="text"
        value={draft} data-attr={attr.name} aria-invalid={refused ? "true" : "false"}
        placeholder={attr.default === null || attr.default === undefined ? (attr.required ? "required" : "None")
          : tupleText(attr.default)}
        title={'one int, or ints separated by commas ("3" or "3, 5")' + (attr.type === "padding" ? '; or SAME / VALID' : "")}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") { e.preventDefault(); commit(); }
          if (e.key === "Escape") { setDraft(shown); setSent(null); }
        }} />
      {refused ? <span className="fs-field-error" role="alert">{refused.replace(/^set_attr_text: (node '[^']*': )?/, "")}</span> : null}
    </span>
  );
}
