// The property panel of the one selected node (the `inspector` trait): every attribute
// with a control that fits its type. A field keeps what is typed locally and sends
// set_attr only on commit (Enter, or leaving the field; a choice or a checkbox at once).
// A value Python refuses changes nothing there, and its reason shows in `message`, which
// the panel repeats under the fields. Fields carry `nokey`: typing never reaches the
// canvas's keys (Backspace in a field deletes a character, not the node).
import { memo, useState } from "react";
import { useSend } from "./context.js";
import { TUPLE_TYPES, TupleField } from "./tuple_field.jsx";

const FIELD = "fs-field nokey nodrag nowheel";
const NUMBER_TYPES = new Set(["int", "float", "number", "integer"]);
const LIST_TYPES = new Set(["list", "ints", "floats", "shape", "tuple"]);

// The text a value is edited as.
export function toText(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

// Typed text -> the JSON value sent (a number for a number attribute, a list for a list,
// null for an empty field; JSON where it parses, else the text itself).
export function fromText(text, type) {
  const t = text.trim();
  if (t === "" || t === "None" || t === "null") return null;
  if (NUMBER_TYPES.has(type)) {
    const n = Number(t);
    return Number.isFinite(n) ? n : t; // not a number: Python says why
  }
  if (LIST_TYPES.has(type) && !t.startsWith("[")) {
    return t.split(/[,\s]+/).filter(Boolean).map((x) => (Number.isFinite(Number(x)) ? Number(x) : x));
  }
  if (type === "str" || type === "string") return text;
  try { return JSON.parse(t.replace(/\bTrue\b/g, "true").replace(/\bFalse\b/g, "false").replace(/\bNone\b/g, "null")); }
  catch { return text; }
}

// A new value from Python replaces what was typed, in place: the field is not mounted
// again, so after Enter the focus stays in it. (Mounted again, the focus fell to the
// page's body, and the next press anywhere made JupyterLab focus the notebook and then
// the cell: each a style recalculation of every element of a 1,000-node canvas.)
function TextField({ attr, onCommit }) {
  const value = toText(attr.value);
  const [draft, setDraft] = useState(value);
  const [shown, setShown] = useState(value);
  if (shown !== value) { // React's "adjust state when a prop changes", during render
    setShown(value);
    setDraft(value);
  }
  const commit = () => { if (draft !== value) onCommit(fromText(draft, attr.type)); };
  return (
    <input className={FIELD} type="text" value={draft} data-attr={attr.name}
      inputMode={NUMBER_TYPES.has(attr.type) ? "decimal" : undefined}
      placeholder={attr.default === null || attr.default === undefined ? (attr.required ? "required" : "None") : toText(attr.default)}
      onChange={(e) => setDraft(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === "Enter") { e.preventDefault(); commit(); }
        if (e.key === "Escape") setDraft(value);
      }} />
  );
}

function Control({ attr, onCommit }) {
  if (Array.isArray(attr.choices) && attr.choices.length) {
    const index = attr.choices.findIndex((c) => toText(c) === toText(attr.value));
    return (
      <select className={FIELD} data-attr={attr.name} value={index < 0 ? "" : String(index)}
        onChange={(e) => onCommit(attr.choices[Number(e.target.value)])}>
        {index < 0 ? <option value="">{toText(attr.value) || "—"}</option> : null}
        {attr.choices.map((c, i) => <option key={i} value={String(i)}>{c === null ? "None" : toText(c)}</option>)}
      </select>
    );
  }
  if (attr.type === "bool") {
    return (
      <input className={FIELD} type="checkbox" data-attr={attr.name} checked={!!attr.value}
        onChange={(e) => onCommit(e.target.checked)} />
    );
  }
  return <TextField attr={attr} onCommit={onCommit} />;
}

// A mixed_layer's rows: kind (a projection or operator of the palette), attributes,
// order, removal.
function Rows({ node, rows, kinds, send }) {
  if (!rows) return null;
  return (
    <div className="fs-inspector-rows">
      <div className="fs-inspector-sub">projections</div>
      {rows.map((row, i) => (
        <div key={`${i}:${row.kind}`} className="fs-inspector-row" data-row={i}>
          <label className="fs-inspector-attr">
            <span>row {i}</span>
            <Control attr={{ name: "kind", value: row.kind, type: "str", choices: kinds.includes(row.kind) ? kinds : [row.kind, ...kinds] }}
              onCommit={(value) => send("set_row", { node, index: i, name: "kind", value })} />
          </label>
          {(row.attrs ?? []).map((attr) => (
            <label key={attr.name} className="fs-inspector-attr">
              <span className={attr.required ? "fs-required" : ""}>{attr.name}</span>
              <Control attr={attr} onCommit={(value) => send("set_row", { node, index: i, name: attr.name, value })} />
            </label>
          ))}
          <div className="fs-row-buttons">
            <button type="button" disabled={i === 0} title="move up"
              onClick={() => send("move_row", { node, index: i, to: i - 1 })}>↑</button>
            <button type="button" disabled={i === rows.length - 1} title="move down"
              onClick={() => send("move_row", { node, index: i, to: i + 1 })}>↓</button>
            <button type="button" title="remove this row" onClick={() => send("remove_row", { node, index: i })}>✕</button>
          </div>
        </div>
      ))}
    </div>
  );
}

const ROW_CATEGORIES = new Set(["projection", "operator"]);

export const Inspector = memo(function Inspector({ inspector, message, count, palette }) {
  const send = useSend();
  if (!inspector || !inspector.id) {
    return (
      <div className="fs-inspector fs-inspector-empty">
        {count > 1 ? `${count} nodes selected` : "select a node to edit its attributes"}
      </div>
    );
  }
  const node = inspector.id;
  const kinds = (palette ?? []).filter((e) => ROW_CATEGORIES.has(e.category)).map((e) => e.name);
  return (
    <div className="fs-inspector nowheel" data-node={node}>
      <div className="fs-inspector-title">
        <b>{node}</b> <span className="fs-node-layer">{inspector.layer}</span>
      </div>
      {inspector.doc ? <div className="fs-inspector-doc">{inspector.doc.split("\n")[0]}</div> : null}
      {(inspector.attrs ?? []).map((attr) => (
        <label key={`${node}:${attr.name}`} className="fs-inspector-attr" title={attr.required ? "required" : undefined}>
          <span className={attr.required ? "fs-required" : ""}>{attr.name}</span>
          {TUPLE_TYPES.has(attr.type) && !attr.choices?.length
            ? <TupleField key={toText(attr.value)} node={node} attr={attr} message={message} send={send} />
            : <Control attr={attr} onCommit={(value) => send("set_attr", { node, name: attr.name, value })} />}
        </label>
      ))}
      <Rows node={node} rows={inspector.rows} kinds={kinds} send={send} />
      {message ? <div className="fs-inspector-error" role="alert">{message}</div> : null}
    </div>
  );
});
